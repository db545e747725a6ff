"""What the pip-side lockfiles (poetry.lock, Pipfile.lock, pdm.lock) share: one locked package with its
files → a Pin, and its recorded hashes → problems, the same way whichever tool wrote them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from envpin.readers.hashes import digest_problem, split_hash
from envpin.readers.model import Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import PLATFORM_SENSITIVE, file_name, parse_wheel, wheels_pythons


def locked_pin(name: str, version: str | None, where: str, *, files: Iterable[str] = (), index: str | None = None,
               marker: str | None = None, extras: frozenset[str] = frozenset()) -> Pin:
    """A locked package: its wheels' names say the platforms and Pythons it serves; `index` is the source it
    was locked from (None: PyPI or not said)."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a pin needs it

    canonical = canonicalize_name(name)
    platforms: set[str] = set()
    wheels = []
    if canonical in PLATFORM_SENSITIVE:  # reading wheel tags is costly; only these pins' platforms are used
        for file in files:
            if file.endswith(".whl"):
                parsed = parse_wheel(file_name(file))
                wheels.append(parsed)
                platforms.update(parsed[2] if parsed else ())
    return Pin(name=canonical, where=where, label=f"{name} {version}" if version else name, version=version,
               index=index, extras=extras, scope=frozenset({marker}) if marker else frozenset(),
               platforms=tuple(sorted(platforms)), pythons=wheels_pythons(wheels))


def hash_problems(shown: str, hashes: list[object], where: str, refresh: str) -> list[Problem]:
    """The `algorithm:hex` values one file (or package) is locked with: none is said, a malformed one is an error."""
    if not hashes:
        return [problem("CHK-HASH-MISSING", where, f"{shown} is locked without a hash, so the installer cannot verify "
                        "what it downloads", f"regenerate the lock with `{refresh}`")]
    problems = []
    for value in hashes:
        parts = split_hash(value) if isinstance(value, str) else None
        reason = "not algorithm:hex" if parts is None else digest_problem(*parts)
        if reason:
            problems.append(problem("CHK-HASH-MALFORMED", where, f"{shown}: hash {value!r}: {reason}",
                                    f"regenerate the lock with `{refresh}`"))
    return problems


def index_of(url: str | None) -> str | None:
    """A source URL as the index it names, without the trailing slash poetry and pipenv keep."""
    return url.rstrip("/") if isinstance(url, str) and url else None


def table(value: object) -> dict[str, Any]:
    """A mapping the format says is one, or an empty one (what it is instead is reported where it matters)."""
    return value if isinstance(value, dict) else {}


def array(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def named_packages(data: dict[str, Any], problems: list[Problem], refresh: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The `[[package]]` tables of a TOML lock (poetry.lock, pdm.lock) that have a name, each with its path
    (`package[3]`), in order; the array or an entry that is not the format's is a problem (appended as it is met,
    among the caller's own), never raised."""
    packages = data.get("package", [])
    if not isinstance(packages, list):
        problems.append(problem("CHK-STRUCTURE", "package", "package must be an array of tables ([[package]])",
                                f"regenerate it with `{refresh}`"))
        return
    for position, package in enumerate(packages):
        where = f"package[{position}]"
        if not isinstance(package, dict) or not isinstance(package.get("name"), str):
            problems.append(problem("CHK-STRUCTURE", where, "a package entry is not a table with a name",
                                    f"regenerate it with `{refresh}`"))
            continue
        yield where, package
