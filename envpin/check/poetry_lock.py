"""poetry.lock: text → Contents.

The fields are those poetry writes (python-poetry/poetry src/poetry/packages/locker.py, lock-version 1.1 to
2.1): `[[package]]` with `name`, `version`, `files = [{file, hash}]` (lock-version 2; 1.x kept them under
`[metadata.files]`), `[package.source]` (`type` legacy / url / git / file / directory, `url`, `reference`:
the `[[tool.poetry.source]]` name) where the package does not come from PyPI, and, from lock-version 2.1,
`markers` (one string, or one per dependency group); `[metadata]` holds `lock-version`, `python-versions`
and `content-hash` (see envpin.check.staleness). A source's priority (`explicit`, `supplemental`, the older
`secondary`) decides where poetry looks when it locks; the lock then names the one source each package was
taken from, which is what is judged.
"""

from __future__ import annotations

from typing import Any

from envpin.check.locked import array, hash_problems, index_of, locked_pin, named_packages, table
from envpin.check.pylock import load_toml
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import single_python_minor

REFRESH = "poetry lock"
_INDEXED_SOURCES = ("legacy", None)  # a package index; None: PyPI


def parse(text: str) -> Contents:
    return read(load_toml(text))


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a table")
    problems: list[Problem] = []
    metadata = table(data.get("metadata"))
    if not metadata:
        problems.append(problem("CHK-STRUCTURE", "metadata", "poetry.lock has no [metadata] table",
                                f"regenerate it with `{REFRESH}`"))
    lock_version = str(metadata.get("lock-version", ""))
    if metadata and not lock_version.startswith(("1.", "2.")):
        problems.append(problem("CHK-STRUCTURE", "metadata.lock-version", f"lock-version {lock_version or 'missing'}: "
                                "poetry reads 1.x and 2.x", f"regenerate it with `{REFRESH}`", severity="warning"))
    legacy_files = table(metadata.get("files"))
    pins: list[Pin] = []
    reached_under = _edge_markers(array(data.get("package")))
    for where, package in named_packages(data, problems, REFRESH):
        found, entry_problems = _package(package, where, legacy_files, reached_under)
        pins += found
        problems += entry_problems
    python = single_python_minor(metadata.get("python-versions") if isinstance(metadata.get("python-versions"), str)
                                 else None)
    if python:
        pins.append(Pin("python", "metadata.python-versions", f"python-versions {metadata['python-versions']}", python))
    return Contents("poetry.lock", pins=tuple(pins), problems=tuple(problems), binds_indexes=True,
                    requires_python=metadata.get("python-versions") if isinstance(metadata.get("python-versions"), str)
                    else None)


def _edge_markers(packages: list[Any]) -> dict[str, str]:
    """package name -> the one marker every dependency edge to it carries (`triton = {version = "2.0.0", markers =
    "platform_system == \"Linux\""}` under torch): before lock-version 2.1 the lock keeps a package's markers
    only on the edges that reach it. A package some edge reaches unconditionally, or under two markers, gets none."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms)

    markers: dict[str, set[str | None]] = {}
    for package in packages:
        dependencies = package.get("dependencies") if isinstance(package, dict) else None
        for name, edge in dependencies.items() if isinstance(dependencies, dict) else ():
            edges = edge if isinstance(edge, list) else [edge]
            for one in edges:
                marker = one.get("markers") if isinstance(one, dict) else None
                markers.setdefault(canonicalize_name(str(name)), set()).add(marker if isinstance(marker, str) else None)
    return {name: next(iter(found)) for name, found in markers.items() if len(found) == 1 and None not in found}  # type: ignore[misc]


def _package(package: dict[str, Any], where: str, legacy_files: dict[str, Any],
             reached_under: dict[str, str]) -> tuple[list[Pin], list[Problem]]:
    name = package["name"]
    version = package.get("version") if isinstance(package.get("version"), str) else None
    source = table(package.get("source"))
    kind = source.get("type")
    files = package.get("files")
    if files is None:
        files = legacy_files.get(name, [])  # lock-version 1.x
    files = [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []
    names = [str(f.get("file") or "") for f in files]
    index = index_of(source.get("url")) if kind == "legacy" else None
    if kind in ("url", "file") and isinstance(source.get("url"), str) and "://" in source["url"]:
        index = source["url"].rsplit("/", 1)[0]  # a wheel's directory names its PyTorch index (…/whl/cu118/torch-…)
        names = names or [source["url"]]
    problems: list[Problem] = []
    if kind in _INDEXED_SOURCES:
        if not files:
            problems.append(problem("CHK-HASH-MISSING", f"{where}.files", f"{name} {version} is locked without files, "
                                    "so without hashes: poetry installs what the index serves unverified",
                                    f"regenerate the lock with `{REFRESH}`", severity="warning"))
        for number, entry in enumerate(files):
            value = entry.get("hash")
            problems += hash_problems(str(entry.get("file") or name), [value] if value else [],
                                      f"{where}.files[{number}].hash", REFRESH)
    markers = package.get("markers")
    marker_texts = [markers] if isinstance(markers, str) else \
        sorted({m for m in markers.values() if isinstance(m, str)}) if isinstance(markers, dict) else []
    # lock-version 2.1 writes a marker per group; the package is installed where any of them holds
    marker = marker_texts[0] if len(marker_texts) == 1 else None
    if not marker_texts:
        from packaging.utils import canonicalize_name  # noqa: PLC0415

        marker = reached_under.get(canonicalize_name(name))
    pin = locked_pin(name, version, where, files=names, index=index, marker=marker)
    return [pin], problems
