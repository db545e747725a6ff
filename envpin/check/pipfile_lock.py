"""Pipfile.lock (pipenv's JSON lock): text → Contents.

The fields are those pipenv writes (pypa/pipenv pipenv/project.py and its tests, `pipfile-spec` 6):
`_meta` with `hash.sha256` (of the Pipfile), `pipfile-spec`, `requires` and `sources` (`name`, `url`,
`verify_ssl`); `default` and `develop` map each package to `version` ("==2.1.0+cu121"), `hashes`
(["sha256:…"]), `index` (the name of the source it comes from, where not the first), `markers` and
`extras`. `develop` is installed only with `pipenv install --dev`, so its pins are checked as their own
environment.
"""

from __future__ import annotations

import json
from typing import Any

from envpin.base.record import replace
from envpin.check.locked import array, hash_problems, index_of, locked_pin, table
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem

REFRESH = "pipenv lock"
SECTIONS = ("default", "develop")


def parse(text: str) -> Contents:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise MalformedFile(f"malformed JSON ({error})") from None
    return read(data)


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a JSON object")
    problems: list[Problem] = []
    meta = table(data.get("_meta"))
    if not meta:
        problems.append(problem("CHK-STRUCTURE", "_meta", "Pipfile.lock has no _meta object",
                                f"regenerate it with `{REFRESH}`"))
    sources = [s for s in array(meta.get("sources")) if isinstance(s, dict)]
    by_name = {s.get("name"): index_of(s.get("url")) for s in sources}
    first = index_of(sources[0].get("url")) if sources else None  # pipenv's default index: the first source
    pins: list[Pin] = []
    for section in SECTIONS:
        packages = data.get(section, {})
        if not isinstance(packages, dict):
            problems.append(problem("CHK-STRUCTURE", section, f"{section} is not an object of packages",
                                    f"regenerate it with `{REFRESH}`"))
            continue
        for name, entry in packages.items():
            where = f"{section}.{name}"
            if not isinstance(entry, dict):
                problems.append(problem("CHK-STRUCTURE", where, f"{name} is not an object", f"regenerate it with `{REFRESH}`"))
                continue
            written = entry.get("version")
            version = written[2:] if isinstance(written, str) and written.startswith("==") else None
            direct = any(k in entry for k in ("git", "path", "file", "editable"))
            if not direct:
                hashes = array(entry.get("hashes"))
                problems += hash_problems(f"{name} {version}", hashes, f"{where}.hashes", REFRESH)
            index = by_name.get(entry.get("index"), first) if entry.get("index") else first
            marker = entry.get("markers") if isinstance(entry.get("markers"), str) else None
            extras = frozenset(e for e in entry.get("extras", []) if isinstance(e, str)) \
                if isinstance(entry.get("extras"), list) else frozenset()
            pin = locked_pin(name, version, where, index=None if direct else index, marker=marker, extras=extras)
            # develop is its own environment (default + develop with --dev): apart from default's pins only
            # where default has the same package, which pipenv resolves once for both
            pins.append(replace(pin, scope=pin.scope | {"group:develop"}) if section == "develop" else pin)
    return Contents("Pipfile.lock", pins=tuple(pins), problems=tuple(problems), binds_indexes=True)
