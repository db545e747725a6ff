"""`[tool.envpin]` in the checked repository's pyproject.toml: the machines its locks must run on and the
problem ids it ignores.

    [tool.envpin]
    ignore = ["CHK-LOCAL-VERSION-MISSING"]          # problem ids dropped for every file
    driver-policy = "minor"                          # or "strict" (see `envpin solve --driver-policy`)

    [tool.envpin.per-file-ignores]
    "legacy/requirements-*.txt" = ["CHK-HASH-MISSING"]   # glob, relative to the pyproject.toml

    [[tool.envpin.targets]]                          # each lock is checked against each target
    name = "training cluster"
    os = "linux"
    arch = "x86_64"
    driver = "535.104.05"                            # or "none"
    gpu = ["NVIDIA A100-SXM4-80GB"]                  # a name or a list, as nvidia-smi prints them
    compute-capability = "8.0"                       # optional: for a GPU the database does not know
    python = "3.11"                                  # optional: else the Python the lock pins, if any
    # facts = "ops/node.json"                        # or `envpin detect --format json` taken there

Reading is I/O (the file, a facts file); validating is pure and reports every bad field at once, each with
its path (`[tool.envpin].targets[0].os`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, field, record
from envpin.base.userfiles import MAX_INPUT_BYTES, UnreadableFile, open_regular, read_text
from envpin.compat.drivers import POLICIES, parse_driver_version
from envpin.facts.checks import is_glibc_version
from envpin.facts.host import ARCHITECTURES, OPERATING_SYSTEMS, is_compute_capability, is_python_version, normalize_arch
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.rules import PROBLEMS

TABLE = "[tool.envpin]"
_TARGET_KEYS = ("name", "os", "arch", "driver", "gpu", "compute-capability", "python", "glibc", "facts")
_KEYS = ("ignore", "per-file-ignores", "targets", "driver-policy")


@record
class CheckConfig(Record):
    path: Path | None = None
    ignore: frozenset[str] = frozenset()
    per_file_ignores: Mapping[str, frozenset[str]] = field(default_factory=dict)
    targets: tuple[NamedTarget, ...] = ()
    driver_policy: str | None = None

    def ignored_for(self, file: str) -> frozenset[str]:
        """The ids ignored for one file: the global list plus every per-file pattern its path matches
        (relative to the pyproject.toml's directory)."""
        if not self.per_file_ignores:
            return self.ignore
        relative = _relative(Path(file), self.path.parent if self.path else Path.cwd())
        extra = {i for pattern, ids in self.per_file_ignores.items() if fnmatch.fnmatch(relative, pattern) for i in ids}
        return self.ignore | extra


def _relative(file: Path, base: Path) -> str:
    try:
        return PurePosixPath(file.resolve().relative_to(base.resolve())).as_posix()
    except ValueError:
        return file.as_posix()


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.envpin] table, from `start` up to the repository root."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                with open_regular(candidate) as handle:  # a FIFO or a link to a device: read_config reports it
                    if b"[tool.envpin" in handle.read(MAX_INPUT_BYTES):
                        return candidate
            except (OSError, UnreadableFile):
                return candidate  # read_config reports it
        if (directory / ".git").exists():
            return None
    return None


def read_config(path: Path, required: bool = False) -> CheckConfig:
    """`required`: the file was named with --config, so a file without the table is a mistake, not "no config"."""
    from envpin.base import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms): only a found config needs it

    origin = f"{path}"
    text = read_text(path, "--config" if required else "")
    try:
        data = _toml.loads(text)
    except (_toml.TOMLDecodeError, ValueError, RecursionError) as error:
        raise EnvpinInputError(f"{origin}: malformed TOML ({str(error).splitlines()[0] or type(error).__name__})") from None
    table = data.get("tool", {}).get("envpin") if isinstance(data.get("tool"), dict) else None
    if table is None and required:
        raise EnvpinInputError(f"--config {path}: no {TABLE} table in it")
    if table is None:
        return CheckConfig(path=path)
    config, problems = parse_config(table, path.parent)
    if problems:
        more = f" (and {len(problems) - 1} more: {'; '.join(problems[1:])})" if len(problems) > 1 else ""
        raise EnvpinInputError(f"{origin} {problems[0]}{more}")
    return CheckConfig(path=path, ignore=config.ignore, per_file_ignores=config.per_file_ignores,
                       targets=config.targets, driver_policy=config.driver_policy)


def parse_config(table: Any, base: Path) -> tuple[CheckConfig, list[str]]:
    """The config and every problem in it, each naming its field."""
    problems: list[str] = []
    if not isinstance(table, dict):
        return CheckConfig(), [f"{TABLE}: must be a table"]
    for key in table:
        if key not in _KEYS:
            problems.append(f"{TABLE}.{key}: unknown key (expected {', '.join(_KEYS)})")
    ignore = _ids(table.get("ignore", []), f"{TABLE}.ignore", PROBLEMS, problems)
    per_file: dict[str, frozenset[str]] = {}
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        problems.append(f"{TABLE}.per-file-ignores: must be a table of glob = [ids]")
    else:
        for pattern, ids in raw_per_file.items():
            per_file[pattern] = _ids(ids, f"{TABLE}.per-file-ignores.{pattern!r}", PROBLEMS, problems)
    policy = table.get("driver-policy")
    if policy is not None and policy not in POLICIES:
        problems.append(f"{TABLE}.driver-policy: {policy!r} is not one of {', '.join(POLICIES)}")
    targets = []
    raw_targets = table.get("targets", [])
    if not isinstance(raw_targets, list):
        problems.append(f"{TABLE}.targets: must be an array of tables ([[tool.envpin.targets]])")
        raw_targets = []
    for position, raw in enumerate(raw_targets):
        target = _target(raw, f"{TABLE}.targets[{position}]", base, problems)
        if target is not None:
            targets.append(target)
    return CheckConfig(ignore=ignore, per_file_ignores=per_file, targets=tuple(targets), driver_policy=policy), problems


def _ids(value: Any, where: str, known: dict, problems: list[str]) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: must be a list of problem ids")
        return frozenset()
    for problem_id in value:
        if problem_id not in known:
            problems.append(f"{where}: {problem_id!r} is not an envpin check id (see docs/check.md)")
    return frozenset(value)


def _target(raw: Any, where: str, base: Path, problems: list[str]) -> NamedTarget | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a table")
        return None
    before = len(problems)
    for key in raw:
        if key not in _TARGET_KEYS:
            problems.append(f"{where}.{key}: unknown key (expected {', '.join(_TARGET_KEYS)})")
    text = {key: raw.get(key) for key in ("name", "os", "arch", "driver", "python", "glibc", "facts")}
    for key, value in text.items():
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}.{key}: must be a string")
    gpus = _strings(raw.get("gpu", []), f"{where}.gpu", problems)
    capabilities = _strings(raw.get("compute-capability", []), f"{where}.compute-capability", problems)
    if len(problems) > before:
        return None
    if not text["facts"]:
        for key in ("os", "arch", "driver"):
            if not text[key]:
                problems.append(f"{where}.{key}: required (or give facts = \"FILE\" from `envpin detect --format json`)")
    if text["os"] and text["os"] not in OPERATING_SYSTEMS:
        problems.append(f"{where}.os: {text['os']!r} is not one of {', '.join(OPERATING_SYSTEMS)}")
    if text["arch"] and normalize_arch(text["arch"]) not in ARCHITECTURES:
        problems.append(f"{where}.arch: {text['arch']!r} is not one of {', '.join(ARCHITECTURES)}")
    if text["driver"] and text["driver"].lower() != "none":
        try:
            parse_driver_version(text["driver"])
        except EnvpinInputError as error:
            problems.append(f"{where}.driver: {error}")
    if text["python"] and not is_python_version(text["python"]):
        problems.append(f"{where}.python: {text['python']!r} is not a Python version such as 3.11")
    if text["glibc"] and not is_glibc_version(text["glibc"]):
        problems.append(f"{where}.glibc: {text['glibc']!r} is not a glibc version such as 2.28")
    for capability in capabilities:
        if not is_compute_capability(capability):
            problems.append(f"{where}.compute-capability: {capability!r} is not X.Y such as 8.6")
    if gpus and capabilities and len(capabilities) not in (1, len(gpus)):
        problems.append(f"{where}.compute-capability: give one for all GPUs, or one per GPU")
    if len(problems) > before:
        return None
    spec = TargetSpec(
        os=text["os"], arch=text["arch"], driver=text["driver"], gpus=gpus, compute_capabilities=capabilities,
        python=text["python"], glibc=text["glibc"], facts_file=str(base / text["facts"]) if text["facts"] else None,
        detect=False, origin=f"{TABLE} facts",
    )
    return NamedTarget(text["name"] or f"target {where.rsplit('[', 1)[-1].rstrip(']')}", spec)


def _strings(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    problems.append(f"{where}: must be a string or a list of strings")
    return ()
