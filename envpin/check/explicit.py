"""conda @EXPLICIT files (`conda list --explicit`, `conda-lock render`): text → Contents.

After the `@EXPLICIT` line, every line is the URL of one conda package file (`NAME-VERSION-BUILD.conda` or
`.tar.bz2`), optionally followed by `#<md5>` or `#sha256:<hex>`, which conda checks after download.
`# platform: linux-64` says which platform the file is for. A file that hashes some packages and not others
verifies only part of the environment, so a partial set of hashes is reported as missing hashes.
"""

from __future__ import annotations

import re

from envpin.check.conda_lock import conda_build_of
from envpin.readers.hashes import digest_problem
from envpin.readers.model import Contents, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import CONDA_NAMES, CONDA_SUBDIRS, file_name

_PLATFORM = re.compile(r"^#\s*platform:\s*(\S+)")
_FILE = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)\.(?:conda|tar\.bz2)$")
_HINT = "regenerate it with `conda list --explicit --md5` or `conda-lock render`"


def parse(text: str) -> Contents:
    platform = None
    explicit_at = None
    entries: list[tuple[str, str]] = []
    early: list[int] = []
    problems: list[Problem] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            match = _PLATFORM.match(line)
            platform = platform or (match.group(1) if match else None)
            continue
        if line == "@EXPLICIT":
            explicit_at = number
            continue
        if explicit_at is None:
            early.append(number)
            continue
        entries.append((f"line {number}", line))
    if explicit_at is None:
        return Contents("explicit", problems=(problem(
            "CHK-STRUCTURE", "line 1", "there is no @EXPLICIT line, so conda reads this file as a list of specs "
            "to solve, not as the package files of a lock", _HINT),), binds_indexes=True)
    if early:
        problems.append(problem("CHK-STRUCTURE", f"line {early[0]}", f"{len(early)} line(s) come before the @EXPLICIT "
                                "line; conda reads package URLs only after it", "put @EXPLICIT first"))
    pins = []
    hashed = [where for where, line in entries if "#" in line]
    for where, line in entries:
        pin, found = _entry(line, where, platform)
        problems += found
        if pin is not None:
            pins.append(pin)
        if hashed and "#" not in line:
            problems.append(problem("CHK-HASH-MISSING", where, f"{file_name(line)} has no hash while "
                                    f"{len(hashed)} other package(s) here have one; conda verifies only those", _HINT))
    platforms = (CONDA_SUBDIRS[platform],) if platform in CONDA_SUBDIRS else ()
    return Contents("explicit", pins=tuple(pins), platforms=platforms, problems=tuple(problems), binds_indexes=True)


def _entry(line: str, where: str, platform: str | None) -> tuple[Pin | None, list[Problem]]:
    url, _, fragment = line.partition("#")
    name = file_name(url.strip())
    match = _FILE.match(name)
    if "://" not in url and not url.startswith(("/", "file:")) or match is None:
        return None, [problem("CHK-STRUCTURE", where, f"{line!r} is not the URL of a conda package file "
                              "(NAME-VERSION-BUILD.conda or .tar.bz2)", _HINT)]
    problems = _hash_problems(fragment.strip(), name, where) if fragment else []
    subdir = url.rstrip("/").rsplit("/", 2)[-2] if url.count("/") >= 2 else None
    own = CONDA_SUBDIRS.get(subdir or "") or CONDA_SUBDIRS.get(platform or "")
    package = match.group("name")
    build = conda_build_of(name, package, match.group("version"))
    return Pin(
        name=CONDA_NAMES.get(package, package),
        where=where,
        label=f"{package} {match.group('version')} {build}",
        version=match.group("version"),
        manager="conda",
        build=build,
        platforms=(own,) if own else (),
    ), problems


def _hash_problems(fragment: str, name: str, where: str) -> list[Problem]:
    algorithm, _, digest = fragment.partition(":") if fragment.startswith("sha256:") else ("md5", "", fragment)
    reason = digest_problem(algorithm, digest)
    return [problem("CHK-HASH-MALFORMED", where, f"{name}: {reason}", _HINT)] if reason else []
