"""conda-lock.yml (conda-lock's unified lock): text → Contents.

The fields are those of conda-lock's own model (conda/conda-lock conda_lock/lockfile/v1/models.py; its
`parse_conda_lock_file` reads versions 1 and 2, `write_conda_lock_file` writes 1): `version`;
`metadata` with `content_hash`, `channels`, `platforms`, `sources`; `package`, a list of entries with `name`,
`version`, `manager` (conda or pip), `platform`, `url`, `hash` and `optional`. conda-lock itself refuses a conda
entry without an md5 ("conda package hashes must use MD5"). Each entry is scoped by its platform, so the
linux-64 and osx-arm64 solutions are checked apart; pip entries keep their wheel URL, which names the
PyTorch index for `+cuXXX` builds.
"""

from __future__ import annotations

from typing import Any

from envpin.readers.environment_yml import load_yaml
from envpin.readers.hashes import digest_problem
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import CONDA_NAMES, CONDA_SUBDIRS, file_name, parse_wheel

_REQUIRED = ("name", "version", "manager", "platform", "url", "hash")
_METADATA = ("content_hash", "channels", "platforms", "sources")
_REGENERATE = "regenerate it with `conda-lock lock`"


def parse(text: str) -> Contents:
    return read(load_yaml(text))


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a conda-lock mapping")
    problems = _header_problems(data)
    platforms = _platforms(data)
    pins: list[Pin] = []
    packages = data.get("package")
    if not isinstance(packages, list):
        problems.append(problem("CHK-STRUCTURE", "package", "there is no package list", _REGENERATE))
        packages = []
    for position, entry in enumerate(packages):
        where = f"package[{position}]"
        if not isinstance(entry, dict):
            problems.append(problem("CHK-STRUCTURE", where, "a package entry is not a mapping", _REGENERATE))
            continue
        problems += _entry_problems(entry, where, platforms)
        pin = _pin(entry, where)
        if pin is not None:
            pins.append(pin)
    return Contents(
        "conda-lock",
        pins=tuple(pins),
        platforms=tuple(sorted({CONDA_SUBDIRS[p] for p in platforms if p in CONDA_SUBDIRS})),
        problems=tuple(problems),
        binds_indexes=True,
    )


def _header_problems(data: dict[str, Any]) -> list[Problem]:
    problems = []
    if data.get("version") not in (1, 2):
        problems.append(problem("CHK-STRUCTURE", "version", f"conda-lock file version {data.get('version')!r}; "
                                "conda-lock reads versions 1 and 2 and writes 1", _REGENERATE))
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        problems.append(problem("CHK-STRUCTURE", "metadata", "there is no metadata mapping", _REGENERATE))
        return problems
    for key in _METADATA:
        if key not in metadata:
            problems.append(problem("CHK-STRUCTURE", f"metadata.{key}", f"metadata has no {key}", _REGENERATE))
    return problems


def _platforms(data: dict[str, Any]) -> list[str]:
    metadata = data.get("metadata")
    platforms = metadata.get("platforms") if isinstance(metadata, dict) else None
    return [p for p in platforms if isinstance(p, str)] if isinstance(platforms, list) else []


def _entry_problems(entry: dict[str, Any], where: str, platforms: list[str]) -> list[Problem]:
    problems = [
        problem("CHK-STRUCTURE", f"{where}.{key}", f"{entry.get('name', 'a package')} has no {key}", _REGENERATE)
        for key in _REQUIRED if key not in entry
    ]
    manager = entry.get("manager")
    if manager is not None and manager not in ("conda", "pip"):
        problems.append(problem("CHK-STRUCTURE", f"{where}.manager", f"manager {manager!r} is neither conda nor pip",
                                _REGENERATE))
    platform = entry.get("platform")
    if platforms and isinstance(platform, str) and platform not in platforms:
        problems.append(problem("CHK-STRUCTURE", f"{where}.platform", f"{entry.get('name')} is locked for {platform}, "
                                f"which metadata.platforms ({', '.join(platforms)}) does not list", _REGENERATE,
                                severity="warning"))
    hashes = entry.get("hash")
    if "hash" in entry:
        problems += _hash_problems(entry, hashes, where)
    return problems


def _hash_problems(entry: dict[str, Any], hashes: Any, where: str) -> list[Problem]:
    name = entry.get("name", "a package")
    if not isinstance(hashes, dict) or not any(hashes.get(k) for k in ("md5", "sha256")):
        return [problem("CHK-HASH-MISSING", f"{where}.hash", f"{name} has no md5 or sha256", _REGENERATE)]
    problems = []
    if entry.get("manager") == "conda" and not hashes.get("md5"):
        problems.append(problem("CHK-HASH-MISSING", f"{where}.hash.md5",
                                f"{name} is a conda package without an md5, which conda-lock requires", _REGENERATE))
    for algorithm in ("md5", "sha256"):
        if hashes.get(algorithm) is not None:
            reason = digest_problem(algorithm, hashes[algorithm])
            if reason:
                problems.append(problem("CHK-HASH-MALFORMED", f"{where}.hash.{algorithm}", f"{name}: {reason}",
                                        _REGENERATE))
    return problems


def _pin(entry: dict[str, Any], where: str) -> Pin | None:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a pin needs it

    name, version, platform = entry.get("name"), entry.get("version"), entry.get("platform")
    if not isinstance(name, str):
        return None
    version = str(version) if isinstance(version, (str, int, float)) else None
    written_url = entry.get("url")
    url = written_url if isinstance(written_url, str) else ""
    scope = frozenset({platform}) if isinstance(platform, str) else frozenset()
    own_platform = (CONDA_SUBDIRS[platform],) if platform in CONDA_SUBDIRS else ()
    if entry.get("manager") == "pip":
        wheel = parse_wheel(file_name(url)) if url.endswith(".whl") else None
        return Pin(name=canonicalize_name(name), where=where, label=f"{name} {version}", version=version,
                   index=url.rsplit("/", 1)[0] if url else None, scope=scope,
                   platforms=wheel[2] if wheel and wheel[2] else own_platform)
    build = conda_build_of(file_name(url), name, version) if url else entry.get("build")
    return Pin(name=CONDA_NAMES.get(name, name), where=where, label=f"{name} {version} {build or ''}".strip(),
               version=version, manager="conda", build=build if isinstance(build, str) else None, scope=scope,
               platforms=own_platform)


def conda_build_of(filename: str, name: str | None = None, version: str | None = None) -> str | None:
    """The build string of a conda package file `NAME-VERSION-BUILD.conda` / `.tar.bz2`."""
    stem = filename
    for extension in (".conda", ".tar.bz2"):
        if stem.endswith(extension):
            stem = stem[: -len(extension)]
            break
    else:
        return None
    if name and version and stem.startswith(f"{name}-{version}-"):
        return stem[len(name) + len(version) + 2:]
    parts = stem.rsplit("-", 2)
    return parts[2] if len(parts) == 3 else None
