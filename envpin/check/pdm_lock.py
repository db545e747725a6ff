"""pdm.lock: text → Contents.

The fields are those pdm writes (pdm-project/pdm src/pdm/models/repositories/lock.py and its fixtures,
lock_version 4.x): `[metadata]` with `lock_version`, `groups`, `strategy` and `content_hash`
("sha256:…", see envpin.check.staleness); `[[package]]` with `name`, `version`, `marker`, `groups` and
`files = [{file or url, hash}]` (`url` under the `static_urls` strategy, which names the index directory:
…/whl/cu121/torch-…). lock_version 3.x kept the files in `[metadata.files]`, keyed "name version".
"""

from __future__ import annotations

from typing import Any

from envpin.check.locked import hash_problems, locked_pin, named_packages, table
from envpin.check.pylock import load_toml
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem

REFRESH = "pdm lock"


def parse(text: str) -> Contents:
    return read(load_toml(text))


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a table")
    problems: list[Problem] = []
    metadata = table(data.get("metadata"))
    lock_version = str(metadata.get("lock_version", ""))
    if not lock_version.startswith(("3.", "4.")):
        problems.append(problem("CHK-STRUCTURE", "metadata.lock_version", f"lock_version {lock_version or 'missing'}: envpin "
                                "reads pdm's 3.x and 4.x", f"regenerate it with `{REFRESH}`", severity="warning"))
    legacy_files = table(metadata.get("files"))
    pins: list[Pin] = []
    for where, package in named_packages(data, problems, REFRESH):
        name: str = package["name"]
        version = package.get("version") if isinstance(package.get("version"), str) else None
        files = package.get("files")
        if files is None:
            files = legacy_files.get(f"{name} {version}", [])
        files = [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []
        locations = [str(f.get("url") or f.get("file") or "") for f in files]
        urls = [u for u in locations if "://" in u]
        local = any(k in package for k in ("path", "url", "git", "editable"))  # a direct reference, no index
        if not local:
            if not files:
                problems.append(problem("CHK-HASH-MISSING", f"{where}.files", f"{name} {version} is locked without "
                                        "files, so without hashes", f"regenerate the lock with `{REFRESH}`",
                                        severity="warning"))
            for number, entry in enumerate(files):
                value = entry.get("hash")
                problems += hash_problems(str(entry.get("file") or entry.get("url") or name), [value] if value else [],
                                          f"{where}.files[{number}].hash", REFRESH)
        marker = package.get("marker") if isinstance(package.get("marker"), str) else None
        pins.append(locked_pin(name, version, where, files=locations, marker=marker,
                               index=urls[0].rsplit("/", 1)[0] if urls else None))
    return Contents("pdm.lock", pins=tuple(pins), problems=tuple(problems), binds_indexes=True)
