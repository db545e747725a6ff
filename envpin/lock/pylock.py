"""Complete, check, render and read PEP 751 locks (pure, but for `read_lock`).

An engine's lock is completed with what PEP 751 allows and envpin knows: `index` for every package (from the
index bindings), `requires-python` and `environments` for the one target the lock was solved for,
`created-by = "envpin"`, and a `[tool.envpin]` table (envpin and database versions, the target, the
accelerator, the GPU pins, the engine and the command that regenerates it). The result is validated with
`packaging.pylock` before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from envpin.base.errors import EnvpinError, EnvpinInputError
from envpin.base.escapes import shown
from envpin.base.record import Record, record
from envpin.base.userfiles import read_text
from envpin.lock.indexes import IndexPlan
from envpin.vocabulary.names import canonical_name
from envpin.vocabulary.platforms import MARKER_ENVIRONMENTS, marker

# PEP 508 markers of each platform envpin solves for (the values CPython reports there).
PLATFORM_MARKERS = {platform: marker(platform) for platform in MARKER_ENVIRONMENTS}


@record
class LockFacts(Record):
    """What envpin adds to an engine's lock."""

    python: str  # "3.11"
    platform: str  # "linux-x86_64"
    indexes: IndexPlan
    pins: tuple[tuple[str, str], ...]  # (name, full version) of the GPU stack
    tool: Mapping[str, Any]  # the [tool.envpin] table


def lock_file_name(accelerator: str, kind: str = "pylock") -> str:
    """`pylock.cu124.toml` (PEP 751 names: one dotless word between `pylock.` and `.toml`), or
    `requirements.cu124.txt`."""
    word = re.sub(r"[^A-Za-z0-9_-]+", "-", accelerator) or "default"
    return f"pylock.{word}.toml" if kind == "pylock" else f"requirements.{word}.txt"


def complete(engine_text: str, facts: LockFacts) -> dict[str, Any]:
    from envpin.base import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms); a solve imports this module and reads no TOML

    try:
        raw = _toml.loads(engine_text)
    except _toml.TOMLDecodeError as error:
        raise EnvpinError(f"the lock the engine wrote is not TOML ({error})") from None
    packages = []
    for package in raw.get("packages", []):
        urls = tuple(f.get("url", "") for f in package.get("wheels", []) + [package.get("sdist", {})] if f)
        completed = {"name": package["name"], "version": package["version"]}
        completed["index"] = facts.indexes.index_of(package["name"], urls)
        completed.update({k: v for k, v in package.items() if k not in completed and k != "index"})
        packages.append(completed)
    document: dict[str, Any] = {
        "lock-version": "1.0",
        "environments": [f"{PLATFORM_MARKERS[facts.platform]} and python_version == '{facts.python}'"],
        "requires-python": f"=={facts.python}.*",
        "created-by": "envpin",
        "packages": sorted(packages, key=lambda p: p["name"]),
        "tool": {**raw.get("tool", {}), "envpin": facts.tool},
    }
    problems = validate(document) + check_pins(document, facts)
    if problems:
        raise EnvpinError(f"the lock is not complete: {'; '.join(problems[:5])}")
    return document


def validate(document: Mapping[str, Any], own: bool = True) -> list[str]:
    """Problems `packaging.pylock` and envpin's own rules find: a spec-valid document where every file has a
    sha256 and (for the locks envpin writes, `own`) every package names its index."""
    from packaging.pylock import Pylock, PylockValidationError  # noqa: PLC0415 - packaging.pylock is heavy (~25 ms): only validation needs it

    try:
        Pylock.from_dict(document)
    except PylockValidationError as error:
        return [f"not PEP 751: {error}"]
    problems = []
    for number, package in enumerate(document.get("packages", [])):
        where = f"packages[{number}] ({package.get('name')})"
        if own and "index" not in package:
            problems.append(f"{where}: no index")
        files = package.get("wheels", []) + ([package["sdist"]] if "sdist" in package else [])
        if not files:
            problems.append(f"{where}: no wheel or sdist (envpin locks only files from an index)")
        for file in files:
            if "sha256" not in file.get("hashes", {}):
                problems.append(f"{where}: {file.get('name') or file.get('url')}: no sha256 hash")
    return problems


def check_pins(document: Mapping[str, Any], facts: LockFacts) -> list[str]:
    """Every GPU pin is in the lock at its full version, from the index it is bound to."""
    by_name = {canonical_name(p["name"]): p for p in document.get("packages", [])}
    problems = []
    for name, version in facts.pins:
        locked = by_name.get(canonical_name(name))
        if locked is None:
            problems.append(f"{name}=={version} is missing")
            continue
        if locked["version"] != version:
            problems.append(f"{name} is {locked['version']}, not the pinned {version}")
        bound = facts.indexes.index_for(name)
        if bound and locked.get("index") != bound:
            problems.append(f"{name} comes from {locked.get('index')}, not {bound}")
    return problems


def render(document: Mapping[str, Any], header: list[str]) -> str:
    import tomli_w  # noqa: PLC0415 - tomli_w (~3 ms) only to write a lock

    comments = "".join(f"# {line}\n" for line in header)
    return comments + tomli_w.dumps(_without_none(document))


def read_lock(path: str) -> dict[str, Any]:
    """A lock file from disk, checked; any problem is one EnvpinInputError naming the file."""
    from envpin.base import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms); a solve imports this module and reads no TOML

    text = read_text(path, "--lock")  # capped, and one line for a missing, special or undecodable file
    try:
        document = _toml.loads(text)
    except (_toml.TOMLDecodeError, ValueError, RecursionError) as error:
        raise EnvpinInputError(f"--lock {path}: not TOML ({shown(str(error).splitlines()[0] if str(error) else type(error).__name__)})") from None
    problems = validate(document, own=False)  # a lock from another tool may leave out `index`
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise EnvpinInputError(f"--lock {path}: {'; '.join(problems[:3])}{more}")
    return document


def lock_python(document: Mapping[str, Any], running: str | None = None) -> str | None:
    """The Python version a lock is for ("3.11"): envpin's `requires-python = "==3.11.*"`, else the running
    Python's when another tool's range admits it."""
    requires = str(document.get("requires-python", "")).strip()
    found = re.fullmatch(r"==\s*(\d+\.\d+)(\.\*)?", requires)
    if found:
        return found[1]
    target = document.get("tool", {}).get("envpin", {}).get("target", {})
    if target.get("python"):
        return target["python"]
    if running:
        from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - packaging.specifiers is heavy (~5 ms): only this fallback needs it

        if not requires or SpecifierSet(requires).contains(f"{running}.0", prereleases=True):
            return running
    return None


def _without_none(value):
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value if v is not None]
    return value


