"""uv.lock (uv's own TOML lock): text → Contents.

Every `[[package]]` names its `source` (a `registry` index URL, `git`, `path`, `directory`, `editable`,
`virtual` or `url`); files from a registry carry `hash = "sha256:…"`. A project that offers conflicting
extras or groups (`cpu` / `cu124`, the layout of uv's PyTorch guide) lists both builds of torch in one lock
and declares them in `conflicts`; each package here is scoped by the conflicting extras that reach it, so the
cu118 world and the cu124 world are checked apart.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from envpin.check.pylock import load_toml
from envpin.readers.hashes import digest_problem, split_hash
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import (
    PLATFORM_SENSITIVE,
    file_name,
    parse_wheel,
    requires_python_of,
    requires_python_pins,
    wheels_pythons,
)

SOURCE_KINDS = ("registry", "git", "path", "directory", "editable", "virtual", "url")
_LOCAL_SOURCES = frozenset({"path", "directory", "editable", "virtual"})


def parse(text: str) -> Contents:
    return read(load_toml(text))


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a table")
    problems: list[Problem] = []
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        problems.append(problem("CHK-STRUCTURE", "version", "uv.lock has no integer `version`",
                                "regenerate it with `uv lock`"))
    elif version != 1:
        problems.append(problem("CHK-STRUCTURE", "version", f"uv.lock version {version}: envpin reads version 1 and "
                                "checks only the fields it shares", "update envpin", severity="warning"))
    packages = data.get("package", [])
    if not isinstance(packages, list):
        problems.append(problem("CHK-STRUCTURE", "package", "package must be an array of tables ([[package]])",
                                "regenerate it with `uv lock`"))
        packages = []
    entries = [(i, p) for i, p in enumerate(packages) if isinstance(p, dict)]
    for position, package in enumerate(packages):
        if not isinstance(package, dict):
            problems.append(problem("CHK-STRUCTURE", f"package[{position}]", "a package entry is not a table",
                                    "regenerate it with `uv lock`"))
    scopes = conflict_scopes(data, entries)
    extras = requested_extras(entries)
    pins = []
    for position, package in entries:
        where = f"package[{position}]"
        problems += _entry_problems(package, where)
        pin = _pin(package, where, scopes.get(position, frozenset()), extras)
        if pin is not None:
            pins.append(pin)
    pins += requires_python_pins(data)
    return Contents("uv.lock", pins=tuple(pins), problems=tuple(problems), binds_indexes=True,
                    requires_python=requires_python_of(data))


def _source_kind(package: dict[str, Any]) -> str | None:
    source = package.get("source")
    if not isinstance(source, dict):
        return None
    return next((kind for kind in SOURCE_KINDS if kind in source), None)


def _entry_problems(package: dict[str, Any], where: str) -> list[Problem]:
    problems = []
    name = package.get("name")
    if not isinstance(name, str):
        problems.append(problem("CHK-STRUCTURE", f"{where}.name", "a package has no name", "regenerate it with `uv lock`"))
    kind = _source_kind(package)
    if kind is None:
        problems.append(problem("CHK-STRUCTURE", f"{where}.source", f"{name or 'a package'} has no source "
                                f"({' / '.join(SOURCE_KINDS)})", "regenerate it with `uv lock`"))
    elif kind == "registry" and not isinstance(package.get("version"), str):
        problems.append(problem("CHK-STRUCTURE", f"{where}.version", f"{name} comes from an index but has no version",
                                "regenerate it with `uv lock`"))
    if kind == "registry":
        problems += _artifact_problems(package, where, str(name))
    return problems


def _artifact_problems(package: dict[str, Any], where: str, name: str) -> list[Problem]:
    artifacts = []
    if isinstance(package.get("sdist"), dict):
        artifacts.append((f"{where}.sdist", package["sdist"]))
    wheels = package.get("wheels")
    if isinstance(wheels, list):
        artifacts += [(f"{where}.wheels[{i}]", w) for i, w in enumerate(wheels) if isinstance(w, dict)]
    problems = []
    for here, artifact in artifacts:
        shown = file_name(str(artifact.get("url") or artifact.get("filename") or artifact.get("path") or name))
        value = artifact.get("hash")
        if not value:
            problems.append(problem("CHK-HASH-MISSING", f"{here}.hash", f"{shown} comes from an index and has no hash",
                                    "regenerate the lock with `uv lock` (uv records the index's sha256)"))
            continue
        parts = split_hash(value) if isinstance(value, str) else None
        reason = "not algorithm:hex" if parts is None else digest_problem(*parts)
        if reason:
            problems.append(problem("CHK-HASH-MALFORMED", f"{here}.hash", f"{shown}: hash {value!r}: {reason}",
                                    "regenerate the lock with `uv lock`"))
    return problems


def _pin(package: dict[str, Any], where: str, scope: frozenset[str], extras: dict[str, frozenset[str]]) -> Pin | None:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a pin needs it

    name = package.get("name")
    if not isinstance(name, str):
        return None
    canonical = canonicalize_name(name)
    version = package.get("version") if isinstance(package.get("version"), str) else None
    written_source = package.get("source")
    source: dict[str, Any] = written_source if isinstance(written_source, dict) else {}
    platforms: set[str] = set()
    wheels = []
    for wheel in package.get("wheels") or [] if canonical in PLATFORM_SENSITIVE else ():
        if isinstance(wheel, dict):
            parsed = parse_wheel(file_name(str(wheel.get("url") or wheel.get("filename") or wheel.get("path") or "")))
            wheels.append(parsed)
            if parsed:
                platforms.update(parsed[2])
    return Pin(
        name=canonical,
        where=where,
        label=f"{name} {version}" if version else name,
        version=version,
        index=source.get("registry") or source.get("url"),
        extras=extras.get(canonical, frozenset()),
        scope=scope,
        platforms=tuple(sorted(platforms)),
        pythons=wheels_pythons(wheels),
    )


def _edges(package: dict[str, Any], *, extras: frozenset[str] | None = None, groups: bool = False):
    """The dependency tables of a package: base dependencies, the optional dependencies of the given extras
    (all when None), and the dev groups when asked."""
    yield from package.get("dependencies") or []
    optional = package.get("optional-dependencies") or {}
    for extra, entries in optional.items() if isinstance(optional, dict) else ():
        if extras is None or extra in extras:
            yield from entries or []
    if groups:
        dev = package.get("dev-dependencies") or {}
        for entries in dev.values() if isinstance(dev, dict) else ():
            yield from entries or []


def requested_extras(entries: list[tuple[int, dict[str, Any]]]) -> dict[str, frozenset[str]]:
    """Which extras of each package some edge asks for (`{ name = "tensorflow", extra = ["and-cuda"] }`)."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a pin needs it

    wanted: dict[str, set[str]] = {}
    for _, package in entries:
        for edge in _edges(package, groups=True):
            if isinstance(edge, dict) and isinstance(edge.get("name"), str) and isinstance(edge.get("extra"), list):
                wanted.setdefault(canonicalize_name(edge["name"]), set()).update(
                    canonicalize_name(e) for e in edge["extra"] if isinstance(e, str))
    return {name: frozenset(extras) for name, extras in wanted.items()}


def conflict_scopes(data: dict[str, Any], entries: list[tuple[int, dict[str, Any]]]) -> dict[int, frozenset[str]]:
    """package position -> the conflicting extras/groups that reach it, for packages only those reach.
    Packages reached from the project's unconditional dependencies get no scope (they are in every world)."""
    items = _conflict_items(data)
    if not items:
        return {}
    by_name: dict[str, list[int]] = {}
    for position, package in entries:
        if isinstance(package.get("name"), str):
            by_name.setdefault(package["name"], []).append(position)
    packages = dict(entries)
    common = _reach(packages, by_name, _roots(packages, items, None))
    scopes: dict[int, set[str]] = {}
    for label in sorted(set(items.values())):
        for position in _reach(packages, by_name, _roots(packages, items, label)) - common:
            scopes.setdefault(position, set()).add(label)
    return {position: frozenset(labels) for position, labels in scopes.items()}


def _conflict_items(data: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """(package, "extra"/"group", name) -> a label such as "test-proj[cu118]"."""
    items = {}
    conflicts = data.get("conflicts")
    for conflict in conflicts if isinstance(conflicts, list) else []:
        for item in conflict if isinstance(conflict, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("package"), str):
                continue
            for kind in ("extra", "group"):
                if isinstance(item.get(kind), str):
                    label = f"{item['package']}[{item[kind]}]" if kind == "extra" else f"{item['package']}:{item[kind]}"
                    items[(item["package"], kind, item[kind])] = label
    return items


def _roots(packages: dict[int, dict[str, Any]], items: dict[tuple[str, str, str], str], label: str | None) -> list[Any]:
    """The first edges of one world: the workspace members' edges that belong to the conflicting item `label`,
    or (label None) every edge of theirs that belongs to no conflicting item."""
    edges = []
    for package in packages.values():
        if _source_kind(package) not in _LOCAL_SOURCES:
            continue
        name = package.get("name")
        edges += [e for e in package.get("dependencies") or []] if label is None else []
        for kind, table in (("extra", package.get("optional-dependencies")), ("group", package.get("dev-dependencies"))):
            for key, entries in table.items() if isinstance(table, dict) else ():
                owner = items.get((name, kind, key)) if name is not None else None  # every item names its package
                if owner == label:
                    edges += entries or []
    return edges


def _reach(packages: dict[int, dict[str, Any]], by_name: dict[str, list[int]], edges: list[Any]) -> set[int]:
    """The packages a set of edges leads to. An edge names a package; its version and source, when given,
    pick one entry among several of that name (uv writes them where the name alone is ambiguous)."""
    reached: set[int] = set()
    followed: set[tuple[int, frozenset[str]]] = set()
    queue = deque(edges)
    while queue:
        edge = queue.popleft()
        if not isinstance(edge, dict) or not isinstance(edge.get("name"), str):
            continue
        extras = frozenset(e for e in edge.get("extra") or [] if isinstance(e, str))
        for position in by_name.get(edge["name"], []):
            package = packages[position]
            if "version" in edge and package.get("version") != edge["version"]:
                continue
            if "source" in edge and package.get("source") != edge["source"]:
                continue
            reached.add(position)
            if (position, extras) not in followed:
                followed.add((position, extras))
                queue.extend(_edges(package, extras=extras))
    return reached
