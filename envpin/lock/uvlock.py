"""A uv project's own lock of a resolved plan: the `uv.lock` that `uv lock` writes for its pyproject.toml.

A uv.lock holds only beside the pyproject.toml it was locked from: uv keeps the project's requirements, sources
and indexes in it, and `uv lock --check`, `uv sync --locked` and a plain `uv sync` (which relocks) compare them. A
project's own pyproject.toml neither pins the solved GPU builds nor binds them to their indexes, so `uv lock` runs
on a copy with envpin's changes (`lock_project`, pure), the changes `engines.uv_input_project` makes for a
resolution:

- the GPU framework lines the solve read (`project.dependencies`, and those of the extras and dependency groups it
  was asked for) are replaced by the plan's pins in `project.dependencies`, where the first of them was;
- each package bound to an accelerator index has a `[tool.uv.sources]` entry naming it, and the index is a
  `[[tool.uv.index]]` with `explicit = true` (the project's own entry for that URL where it has one), so only the
  packages bound to it come from it and no CPU build of the same version from another index can be chosen;
- the default index the resolution was asked (--index-url, ENVPIN_INDEX_URL) is the one `default = true` index;
- `[tool.uv] environments` and `required-environments` are the target's platform and Python: uv resolves for the
  target alone, and fails where a package has no file that installs there.

Everything else is kept as the project wrote it (its other lines, extras, groups, indexes, `conflicts`). `uv lock`
runs in a temporary folder holding that copy and the project's uv.lock (whose versions uv prefers, as it does in
the project), never in the project; the user's uv.toml is not read, so the indexes are the ones the written
pyproject.toml names. `check_lock` then confirms that every pin is in the
lock at its version, from its index.
"""

from __future__ import annotations

import copy
import re
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from envpin.base.errors import EnvpinInputError
from envpin.lock.engines import engine_environment, run_engine
from envpin.lock.indexes import IndexPlan, index_name, index_plan
from envpin.readers.project import Project
from envpin.resolver.plan import PinnedPackage
from envpin.vocabulary.names import canonical_name
from envpin.vocabulary.platforms import marker

LOCK_NAME = "uv.lock"  # uv reads its lock under this name only, beside pyproject.toml
PYPROJECT = "pyproject.toml"

# A GPU line's origin as the pyproject reader labels it: `pyproject.toml: project.dependencies[0]`,
# `pyproject.toml: project.optional-dependencies.cu118[0] (tool.uv.sources.torch[1])`, `… dependency-groups.dev[2]`
_ORIGIN = re.compile(r"^(?P<list>project\.dependencies|project\.optional-dependencies\.(?P<extra>.+?)|"
                     r"dependency-groups\.(?P<group>.+?))\[(?P<position>\d+)\](?: \(tool\.uv\.sources\..*\))?$")

Place = tuple[str, str, int]  # ("dependencies" | "extra" | "group", its name or "", the position in its list)


def check_uv_project(document: Mapping[str, Any], where: str) -> None:
    """A pyproject.toml uv can lock from another folder: a `[project]` with a name and static dependencies, no
    workspace and no local (path, workspace) source, whose paths would not be found from there."""
    project = document.get("project")
    if not isinstance(project, dict) or not isinstance(project.get("name"), str):
        raise EnvpinInputError(f"{where}: no [project] table with a name, which a uv.lock locks")
    if "dependencies" in (project.get("dynamic") or []):
        raise EnvpinInputError(f"{where}: its dependencies are dynamic (project.dynamic), so envpin cannot pin them "
                               "in the pyproject.toml a uv.lock is locked from")
    for key, value, kind in (("project.dependencies", project.get("dependencies", []), list),
                             ("tool", document.get("tool", {}), dict),
                             ("tool.uv", _table(document.get("tool")).get("uv", {}), dict),
                             ("tool.uv.index", _table(_table(document.get("tool")).get("uv")).get("index", []), list),
                             ("tool.uv.sources", _table(_table(document.get("tool")).get("uv")).get("sources", {}), dict)):
        if not isinstance(value, kind):
            raise EnvpinInputError(f"{where}: {key} is not a {'list' if kind is list else 'table'}")
    uv = _table(_table(document.get("tool")).get("uv"))
    if "workspace" in uv:
        raise EnvpinInputError(f"{where}: a uv workspace is locked with its members, in its own folder; envpin writes "
                               "the uv.lock of a single project")
    for name, source in _table(uv.get("sources")).items():
        for item in source if isinstance(source, list) else [source]:
            local = next((key for key in ("path", "workspace") if isinstance(item, dict) and key in item), None)
            if local:
                raise EnvpinInputError(f"{where}: tool.uv.sources.{name} is a local source ({local}), which the "
                                       "pyproject.toml written beside the uv.lock in another folder would not find")


def replaced_lines(project: Project, label: str = PYPROJECT) -> frozenset[Place]:
    """Where the pyproject.toml's GPU framework lines the solve read are (the lines its pins replace)."""
    places = set()
    for requirement in project.gpu_requirements:
        where, _, rest = requirement.origin.partition(": ")
        found = _ORIGIN.match(rest) if where == label else None
        if found is None:
            continue
        kind = "extra" if found["extra"] else "group" if found["group"] else "dependencies"
        places.add((kind, found["extra"] or found["group"] or "", int(found["position"])))
    return frozenset(places)


def target_marker(platform: str, python: str) -> str:
    """The target as one PEP 508 marker: `sys_platform == 'linux' and platform_machine == 'x86_64' and
    python_version == '3.11'`."""
    return f"{marker(platform)} and python_version == '{python}'"


def lock_project(document: Mapping[str, Any], packages: Sequence[PinnedPackage], platform: str, python: str,
                 replaced: Collection[Place], default_index: str | None) -> dict:
    """The pyproject.toml the uv.lock is locked from: `document` with the plan's pins (`packages`), their sources and
    indexes, the default index and the target's environment (the module docstring). Pure; `document` is not
    changed."""
    written = copy.deepcopy(dict(document))
    project = written["project"]
    pins = [p.requirement for p in packages]
    dependencies = list(project.get("dependencies") or [])
    gone = sorted(position for kind, _, position in replaced if kind == "dependencies")
    kept = [line for position, line in enumerate(dependencies) if ("dependencies", "", position) not in replaced]
    at = gone[0] if gone else len(kept)  # where the first GPU line was: every line before it is kept
    project["dependencies"] = kept[:at] + [pin for pin in pins if pin not in kept] + kept[at:]
    for kind, table in (("extra", _table(project.get("optional-dependencies"))),
                        ("group", _table(written.get("dependency-groups")))):
        for name, lines in table.items():
            if isinstance(lines, list):
                table[name] = [line for position, line in enumerate(lines) if (kind, name, position) not in replaced]
    tool = written.setdefault("tool", {})
    uv = tool.setdefault("uv", {})
    indexes: list[dict[str, Any]] = [dict(i) for i in uv.get("index") or [] if isinstance(i, dict)]
    bound = index_plan(packages, default_index)
    names = {url: _index_for(url, indexes) for url in bound.accelerator_indexes}
    if bound.bindings:
        sources = {name: value for name, value in _table(uv.get("sources")).items()
                   if canonical_name(name) not in dict(bound.bindings)}
        sources.update({name: {"index": names[url]} for name, url in bound.bindings})
        uv["sources"] = sources
    if default_index:
        url = default_index.rstrip("/")
        for index in indexes:
            if _same_url(index.get("url"), url):
                index["default"] = True
            else:
                index.pop("default", None)
        if not any(_same_url(index.get("url"), url) for index in indexes):
            indexes.append({"name": _unique("default", indexes), "url": url, "default": True})
    if indexes:
        uv["index"] = indexes
    environment = target_marker(platform, python)
    uv["environments"] = [environment]
    uv["required-environments"] = [environment]
    return written


def lock_uv_project(uv: str, pyproject_text: str, preferred: str | None, offline: bool, timeout: float) -> str:
    """`uv lock` of the pyproject.toml text in a temporary folder (with `preferred`, the project's uv.lock, whose
    versions uv keeps where they still fit); the uv.lock text it wrote. uv's failure is one EnvpinError line
    (engines.run_engine: no solution is exit 1)."""
    with tempfile.TemporaryDirectory(prefix="envpin-uv-lock-") as workdir:
        folder = Path(workdir) / "project"
        folder.mkdir()
        (folder / PYPROJECT).write_text(pyproject_text, encoding="utf-8")
        if preferred is not None:
            (folder / LOCK_NAME).write_text(preferred, encoding="utf-8")
        argv = [uv, "lock", "--quiet"] + (["--offline"] if offline else [])
        run_engine(argv, folder, timeout, _uv_environment(Path(workdir) / "config"))
        return (folder / LOCK_NAME).read_text(encoding="utf-8")


def check_lock(lock_text: str, packages: Sequence[PinnedPackage], indexes: IndexPlan) -> list[str]:
    """What keeps the uv.lock from being the plan's: a pin missing, at another version, or from another index."""
    from envpin.base import _toml  # noqa: PLC0415 - only a written uv.lock is read

    try:
        locked_packages = _toml.loads(lock_text).get("package", [])
    except _toml.TOMLDecodeError as error:
        return [f"the uv.lock uv wrote is not TOML ({error})"]
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for package in locked_packages:
        by_name.setdefault(canonical_name(str(package.get("name", ""))), []).append(package)
    problems = []
    for pin in (p for p in packages if not p.bound):
        locked = by_name.get(canonical_name(pin.name), [])
        if not any(p.get("version") == pin.version for p in locked):
            found = ", ".join(str(p.get("version")) for p in locked) or "missing"
            problems.append(f"{pin.name}=={pin.version} is {found} in the lock")
            continue
        bound = indexes.index_for(pin.name)
        registries = {str(_table(p.get("source")).get("registry", "")).rstrip("/") for p in locked
                      if p.get("version") == pin.version}
        if bound and registries != {bound}:
            problems.append(f"{pin.name} comes from {', '.join(sorted(registries))}, not {bound}")
    return problems


def _uv_environment(empty: Path) -> dict[str, str]:
    """The engines' environment (no index variable of the shell's), with the user's uv.toml out of sight: its folder
    (XDG_CONFIG_HOME, APPDATA on Windows) is an empty one. `--no-config` or `--config-file` would not do, since they
    drop the written pyproject.toml's own `[tool.uv]` settings too (its default index: measured, uv 0.13.9). A macOS
    deployment target of this machine's says nothing about the target's wheels either."""
    environment = engine_environment()
    environment.pop("MACOSX_DEPLOYMENT_TARGET", None)
    environment.update(XDG_CONFIG_HOME=str(empty), APPDATA=str(empty))
    return environment


def _index_for(url: str, indexes: list[dict[str, Any]]) -> str:
    """The name of the project's index with this URL, else of a new explicit one added to `indexes`."""
    for index in indexes:
        if _same_url(index.get("url"), url) and isinstance(index.get("name"), str):
            return index["name"]
    name = _unique(index_name(url), indexes)
    indexes.append({"name": name, "url": url, "explicit": True})
    return name


def _unique(name: str, indexes: list[dict[str, Any]]) -> str:
    taken = {index.get("name") for index in indexes}
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}-{number}"
    return candidate


def _same_url(one, other: str) -> bool:
    return isinstance(one, str) and one.rstrip("/") == other.rstrip("/")


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}

