"""From a Plan and a project's requirements to a complete lock document (the engine is the only I/O)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envpin import __version__
from envpin.emit.common import target_json
from envpin.lock.engines import Engine, LockInput
from envpin.lock.indexes import index_plan
from envpin.lock.pylock import LockFacts, complete


@dataclass(frozen=True)
class Lock:
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
    lock_input = LockInput(pins, tuple(requirements), indexes, plan.target.python, plan.target.platform)
    engine_version = engine.version()
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
    with tempfile.TemporaryDirectory(prefix="envpin-lock-") as workdir:
        text = engine.lock(lock_input, Path(workdir), timeout)
    return Lock(complete(text, facts), engine_version)


def _toml_target(target: dict[str, Any]) -> dict[str, Any]:
    """The solve JSON's target, in TOML (no nulls: a missing driver is "none")."""
    table = {k.replace("_", "-"): v for k, v in target.items() if v is not None}
    table.setdefault("driver", "none")
    table["gpus"] = [{k.replace("_", "-"): v for k, v in g.items()} for g in target["gpus"]]
    return table
