"""From a Plan and a project's requirements to a complete lock document (the engine is the only I/O)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envpin import __version__
from envpin.base.record import Record, record
from envpin.emit.common import target_json
from envpin.lock.engines import Engine, LockInput
from envpin.lock.indexes import IndexPlan, index_plan
from envpin.lock.pylock import LockFacts, complete
from envpin.vocabulary.platforms import MACOS_ARM64


@record
class Lock(Record):
    document: Mapping[str, Any]
    engine: str  # "uv 0.13.9"


def make_lock(
    plan,
    requirements: tuple[str, ...],
    engine: Engine,
    default_index: str | None = None,
    regenerate: str | None = None,
    left_out: tuple[str, ...] = (),
    timeout: float = 900,
) -> Lock:
    indexes = index_plan(plan.packages, default_index)
    pins = tuple(p.requirement for p in plan.packages)
    lock_input = LockInput(pins, tuple(requirements), indexes, plan.target.python, plan.target.platform,
                           lock_macos(plan))
    engine_version = engine.version()
    with tempfile.TemporaryDirectory(prefix="envpin-lock-") as workdir:
        text = engine.lock(lock_input, Path(workdir), timeout)
    return Lock(lock_document(plan, text, indexes, engine_version, regenerate, left_out), engine_version)


def lock_document(plan, engine_text: str, indexes: IndexPlan, engine_version: str, regenerate: str | None = None,
                  left_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The engine's lock of a plan completed (pylock.complete) with envpin's [tool.envpin] table: what `envpin lock`
    writes, and what `solve --resolve` carries in its resolution."""
    pins = tuple(p.requirement for p in plan.packages)
    tool = {
        "envpin": __version__,
        "db-version": plan.db_version,
        "accelerator": plan.accelerator,
        "target": _toml_target(target_json(plan.target)),
        "pins": list(pins),
        "default-index": indexes.default_index,
        "locker": engine_version,
        "regenerate": regenerate,
        "left-out": list(left_out) or None,
    }
    facts = LockFacts(plan.target.python, plan.target.platform, indexes, tuple((p.name, p.version) for p in plan.packages if not p.bound), tool)
    return complete(engine_text, facts)


def lock_macos(plan) -> str | None:
    """The macOS a Mac's lock is resolved for: the Mac's own (--macos), else the oldest the solved torch wheel
    installs on (the database's macOS tag of its arm64 wheels), which the plan already assumed."""
    if not plan.target.platform.startswith("macos"):
        return None
    if plan.target.macos:
        return plan.target.macos
    torch = plan.builds.get("torch")
    if plan.target.platform != MACOS_ARM64 or torch is None or torch.channel != "pip":
        return None
    release, _ = torch.torch_record
    return release.macos.wheel_macos_for(plan.target.python) if release.macos is not None else None


def _toml_target(target: dict[str, Any]) -> dict[str, Any]:
    """The solve JSON's target, in TOML (no nulls: a missing driver is "none")."""
    table = {k.replace("_", "-"): v for k, v in target.items() if v is not None}
    table.setdefault("driver", "none")
    table["gpus"] = [{k.replace("_", "-"): v for k, v in g.items()} for g in target["gpus"]]
    return table
