"""Whether a lock still matches the manifest beside it, as the tool's own `--check` decides, with the tool's
command to refresh it.

- poetry.lock: `metadata.content-hash` is sha256 of the JSON of the manifest's relevant content, exactly as
  poetry's Locker._get_content_hash (python-poetry/poetry src/poetry/packages/locker.py): `[project]`'s
  requires-python, dependencies and optional-dependencies; `[tool.poetry]`'s dependencies, source, extras,
  dev-dependencies (the legacy keys, kept as null when absent unless `[project]` or `[dependency-groups]`
  has content) and group; `[dependency-groups]`, which a lock written by poetry before 2.3.0 leaves out
  (its first line says the version); `json.dumps(…, sort_keys=True)`.
- pdm.lock: `metadata.content_hash` is "sha256:" + sha256 of `json.dumps(…, sort_keys=True)` of the
  sources, dependencies, dev-dependencies (dependency-groups and `[tool.pdm.dev-dependencies]`, by normalized
  group name), optional-dependencies, requires-python and `[tool.pdm.resolution]` (pdm-project/pdm
  src/pdm/project/project_file.py, `content_hash`). A lock with `metadata.lock_inputs` (pdm's newer
  freshness record) and a `[tool.pdm.workspace]` root's lock (its hash takes in each member) are not compared.
- Pipfile.lock: `_meta.hash.sha256` is sha256 of the compact sorted JSON of the Pipfile's sources, requires
  and package sections, package names canonicalized (pypa/pipenv pipenv/utils/pipfile.py, `calculate_hash`).
- uv.lock: the workspace member's `[package.metadata] requires-dist` (and `requires-dev`) is what uv
  locked the project's requirements as; a requirement the manifest adds, drops or re-specifies since is what
  `uv lock --check` refuses. envpin compares names and version specifiers per extra and group.
- pixi.lock: every environment the manifest defines, and every platform it lists, must be in the lock, and
  its default environment must hold each package `[dependencies]` and `[pypi-dependencies]` name.

Each reads the manifest beside the lock (pyproject.toml, Pipfile, pixi.toml); without one nothing is said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from envpin.readers.model import Problem
from envpin.readers.rules import problem

# the manifest a lock kind is locked from, in the order the tool looks for it, and the tool's refresh command
MANIFESTS = {"poetry.lock": (("pyproject.toml",), "poetry lock"), "pdm.lock": (("pyproject.toml",), "pdm lock"),
             "Pipfile.lock": (("Pipfile",), "pipenv lock"), "uv.lock": (("pyproject.toml",), "uv lock"),
             "pixi.lock": (("pixi.toml", "pyproject.toml"), "pixi lock")}
ReadBeside = Callable[[str], "str | None"]  # a file name beside the lock -> its text, None when there is none


def stale_problems(kind: str, text: str, read_beside: ReadBeside) -> list[Problem]:
    """The lock's mismatch with its manifest, or nothing when it matches or there is no manifest to compare."""
    if kind not in MANIFESTS:
        return []
    from envpin.base import _toml  # noqa: PLC0415 - the TOML parser (tomllib, datetime): only a lock's check needs it

    names, refresh = MANIFESTS[kind]
    for name in names:
        manifest_text = read_beside(name)
        if manifest_text is None:
            continue
        try:
            manifest = _toml.loads(manifest_text)
            lock = json.loads(text) if kind == "Pipfile.lock" else (_yaml(text) if kind == "pixi.lock" else _toml.loads(text))
        except (ValueError, TypeError, RecursionError):
            return []  # the file's own reader says what is malformed; a malformed manifest is not this file's
        if not isinstance(lock, dict) or not isinstance(manifest, dict):
            return []
        if kind == "pixi.lock" and name == "pyproject.toml" and "pixi" not in manifest.get("tool", {}):
            continue
        reasons = _CHECKS[kind](lock, manifest, text)
        return [problem("CHK-LOCK-STALE", where, f"the lock no longer matches {name}: {reason}",
                        f"run `{refresh}` and commit the lock it writes") for where, reason in reasons]
    return []


def _yaml(text: str) -> Any:
    from envpin.readers.environment_yml import load_yaml  # noqa: PLC0415 - only a pixi.lock needs YAML
    from envpin.readers.model import MalformedFile  # noqa: PLC0415

    try:
        return load_yaml(text)
    except MalformedFile:
        return None


def _digest(content: Any, **dumps: Any) -> str:
    import hashlib  # noqa: PLC0415 - every check of a file that can include others imports this module

    return hashlib.sha256(json.dumps(content, sort_keys=True, **dumps).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- poetry

_POETRY_LEGACY_KEYS = ("dependencies", "source", "extras", "dev-dependencies")
_POETRY_KEYS = (*_POETRY_LEGACY_KEYS, "group")
_POETRY_PROJECT_KEYS = ("requires-python", "dependencies", "optional-dependencies")
_POETRY_GROUPS_SINCE = (2, 3, 0)  # poetry 2.3.0 put [dependency-groups] into the content hash


def poetry_content_hash(manifest: dict[str, Any], *, with_dependency_groups: bool = True) -> str:
    project = _table(manifest.get("project"))
    groups = _table(manifest.get("dependency-groups")) if with_dependency_groups else {}
    tool_poetry = _table(_table(manifest.get("tool")).get("poetry"))
    relevant_project = {key: project[key] for key in _POETRY_PROJECT_KEYS if project.get(key) is not None}
    relevant_poetry = {}
    for key in _POETRY_KEYS:
        data = tool_poetry.get(key)
        if data is None and (key not in _POETRY_LEGACY_KEYS or relevant_project or groups):
            continue
        relevant_poetry[key] = data
    content: dict[str, Any] = {}
    if relevant_project:
        content["project"] = relevant_project
    if groups:
        content["dependency-groups"] = groups
    if content:
        content["tool"] = {"poetry": relevant_poetry}
    else:
        content = relevant_poetry  # poetry keeps [tool.poetry]'s content at the top level here
    return _digest(content)


def _poetry(lock: dict[str, Any], manifest: dict[str, Any], text: str) -> list[tuple[str, str]]:
    recorded = _table(lock.get("metadata")).get("content-hash")
    if not isinstance(recorded, str):
        return []
    current = poetry_content_hash(manifest)
    if recorded == current:
        return []
    written_by = re.search(r"Poetry ([0-9][^ ]*)", text.split("\n", 1)[0])
    if written_by and _version_key(written_by.group(1)) < _POETRY_GROUPS_SINCE and \
            recorded == poetry_content_hash(manifest, with_dependency_groups=False):
        return []
    return [("metadata.content-hash", f"its content-hash {recorded[:12]}… is not the manifest's {current[:12]}… "
             "(`poetry check --lock` fails: pyproject.toml changed significantly since poetry.lock was last generated)")]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


# ---------------------------------------------------------------- pdm


def pdm_content_hash(manifest: dict[str, Any]) -> str:
    project = _table(manifest.get("project"))
    settings = _table(_table(manifest.get("tool")).get("pdm"))
    groups: dict[str, list[Any]] = {}
    for group, dependencies in _table(manifest.get("dependency-groups")).items():
        groups[_pdm_name(group)] = dependencies
    for group, dependencies in _table(settings.get("dev-dependencies")).items():
        groups.setdefault(_pdm_name(group), []).extend(dependencies if isinstance(dependencies, list) else [])
    return _digest({
        "sources": settings.get("source", []),
        "dependencies": project.get("dependencies", []),
        "dev-dependencies": groups,
        "optional-dependencies": project.get("optional-dependencies", {}),
        "requires-python": project.get("requires-python", ""),
        "resolution": settings.get("resolution", {}),
    })


def _pdm_name(name: str) -> str:
    """pdm.utils.normalize_name: runs of other characters than letters, digits and dots become one `-`."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).lower()


def _pdm(lock: dict[str, Any], manifest: dict[str, Any], text: str) -> list[tuple[str, str]]:
    metadata = _table(lock.get("metadata"))
    recorded = metadata.get("content_hash")
    if not isinstance(recorded, str) or not recorded.startswith("sha256:"):
        return []
    if "lock_inputs" in metadata or _table(_table(manifest.get("tool")).get("pdm")).get("workspace"):
        # a lock pdm judges by its recorded inputs (src/pdm/project/lockfile/freshness.py), or a workspace root's,
        # whose hash takes in every member's manifest: not compared here
        return []
    current = pdm_content_hash(manifest)
    if recorded[len("sha256:"):] == current:
        return []
    return [("metadata.content_hash", f"its content_hash {recorded[7:19]}… is not the manifest's {current[:12]}… "
             "(`pdm lock --check` fails)")]


# ---------------------------------------------------------------- pipenv

_PIPFILE_SECTIONS = frozenset({"source", "packages", "dev-packages", "requires", "scripts", "pipfile", "pipenv",
                               "default", "develop"})


def pipfile_hash(pipfile: dict[str, Any]) -> str:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms)

    def normalized(section: Any) -> dict[str, Any]:
        return {canonicalize_name(k): v for k, v in _table(section).items()}

    data = {"_meta": {"sources": pipfile.get("source", {}), "requires": pipfile.get("requires", {})},
            "default": normalized(pipfile.get("packages")), "develop": normalized(pipfile.get("dev-packages"))}
    for category, values in pipfile.items():
        if category not in _PIPFILE_SECTIONS:
            data[category] = normalized(values)
    return _digest(data, separators=(",", ":"))


def _pipfile(lock: dict[str, Any], manifest: dict[str, Any], text: str) -> list[tuple[str, str]]:
    recorded = _table(_table(lock.get("_meta")).get("hash")).get("sha256")
    if not isinstance(recorded, str):
        return []
    current = pipfile_hash(manifest)
    if recorded == current:
        return []
    return [("_meta.hash.sha256", f"its hash {recorded[:12]}… is not the Pipfile's {current[:12]}… "
             f"(pipenv: Pipfile.lock ({recorded[-6:]}) out of date)")]


# ---------------------------------------------------------------- uv


def _uv(lock: dict[str, Any], manifest: dict[str, Any], text: str) -> list[tuple[str, str]]:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - only a uv.lock beside a manifest
    from packaging.utils import canonicalize_name  # noqa: PLC0415

    project = _table(manifest.get("project"))
    name = project.get("name")
    if not isinstance(name, str):
        return []
    member = next((p for p in _list(lock.get("package")) if isinstance(p, dict)
                   and canonicalize_name(str(p.get("name", ""))) == canonicalize_name(name)
                   and isinstance(p.get("source"), dict)
                   and any(k in p["source"] for k in ("editable", "virtual", "directory"))), None)
    if member is None:
        return [("package", f"it has no entry for the project {name} (`uv lock --check` fails)")]
    if not isinstance(member.get("metadata"), dict):
        return []  # a lock from a uv that did not record what it locked from: nothing to compare
    metadata = _table(member.get("metadata"))
    locked: set[tuple[str, str, str]] = set()
    for entry in _list(metadata.get("requires-dist")):
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            extra = re.search(r"extra == '([^']+)'", str(entry.get("marker", "")))
            locked.add((f"extra {canonicalize_name(extra.group(1))}" if extra else "dependencies",
                        canonicalize_name(entry["name"]), _specifier(entry.get("specifier"))))
    for group, entries in _table(metadata.get("requires-dev")).items():
        for entry in _list(entries):
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                locked.add((f"group {canonicalize_name(group)}", canonicalize_name(entry["name"]),
                            _specifier(entry.get("specifier"))))
    wanted: set[tuple[str, str, str]] = set()
    sections = [("dependencies", project.get("dependencies"))]
    sections += [(f"extra {canonicalize_name(k)}", v) for k, v in _table(project.get("optional-dependencies")).items()]
    sections += [(f"group {canonicalize_name(k)}", v) for k, v in _table(manifest.get("dependency-groups")).items()]
    for section, requirements in sections:
        for line in _list(requirements):
            try:
                requirement = Requirement(line) if isinstance(line, str) else None
            except InvalidRequirement:
                requirement = None
            if requirement is not None:
                wanted.add((section, canonicalize_name(requirement.name), _specifier(str(requirement.specifier))))
    if not wanted and not locked:
        return []
    reasons = []
    for section, package, specifier in sorted(wanted - locked):
        was = next((s for sec, p, s in locked if (sec, p) == (section, package)), None)
        reasons.append(f"{section}: {package}{specifier or ''} is locked as {package}{was or ' (any version)'}"
                       if was is not None else f"{section}: {package}{specifier} is not in the lock")
    for section, package, specifier in sorted(locked - wanted):
        if not any((sec, p) == (section, package) for sec, p, _ in wanted):
            reasons.append(f"{section}: {package}{specifier} is locked but no longer required")
    if not reasons:
        return []
    return [(f"package[{_list(lock.get('package')).index(member)}].metadata",
             "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else "")
             + " (`uv lock --check` fails)")]


def _specifier(value: Any) -> str:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415

    if not isinstance(value, str) or not value:
        return ""
    try:
        return ",".join(sorted(str(s) for s in SpecifierSet(value)))
    except InvalidSpecifier:
        return value


# ---------------------------------------------------------------- pixi


def _pixi(lock: dict[str, Any], manifest: dict[str, Any], text: str) -> list[tuple[str, str]]:
    workspace = _table(manifest.get("workspace") or manifest.get("project"))
    if not workspace and "tool" in manifest:  # [tool.pixi] in a pyproject.toml
        manifest = _table(_table(manifest.get("tool")).get("pixi"))
        workspace = _table(manifest.get("workspace") or manifest.get("project"))
    environments = _table(lock.get("environments"))
    reasons = []
    for name in ["default", *_table(manifest.get("environments"))]:
        if name not in environments:
            reasons.append(("environments", f"the manifest's environment {name} is not in the lock"))
    subdirs = {str(p.get("subdir") or p.get("name")) for p in _list(lock.get("platforms")) if isinstance(p, dict)}
    for environment in environments.values():
        subdirs.update(str(k) for k in _table(_table(environment).get("packages")))
    if any(_table(e).get("packages") for e in environments.values()):
        for platform in _list(workspace.get("platforms")):
            subdir = platform.get("platform") if isinstance(platform, dict) else platform
            if isinstance(subdir, str) and subdir not in subdirs:
                reasons.append(("environments", f"the manifest's platform {subdir} is not locked"))
    return reasons + _pixi_missing_dependencies(lock, manifest)


def _pixi_missing_dependencies(lock: dict[str, Any], manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """The default environment must hold every package the manifest's `[dependencies]` and
    `[pypi-dependencies]` name, on each platform it is locked for (pixi's own "missing dependency"
    unsatisfiability; the per-platform `[target.*]` tables are left out)."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415

    from envpin.check.pixi_lock import read, scope_label  # noqa: PLC0415
    from envpin.readers.model import MalformedFile  # noqa: PLC0415
    from envpin.readers.variants import CONDA_NAMES  # noqa: PLC0415

    try:
        contents = read(lock)
    except MalformedFile:
        return []
    wanted = [(CONDA_NAMES.get(str(n), str(n)), "conda") for n in _table(manifest.get("dependencies"))]
    wanted += [(canonicalize_name(str(n)), "pip") for n in _table(manifest.get("pypi-dependencies"))]
    reasons = []
    for platform in (p for p in contents.environments if p.environment == "default"):
        label = scope_label(platform)
        locked = {(pin.name, pin.manager) for pin in contents.pins if label in pin.scope}
        missing = [name for name, manager in wanted if (name, manager) not in locked]
        if missing:
            reasons.append((f"environments.default.packages.{platform.name}",
                            f"the manifest's {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not locked "
                            f"for {platform.name}"))
    return reasons


_CHECKS = {"poetry.lock": _poetry, "pdm.lock": _pdm, "Pipfile.lock": _pipfile, "uv.lock": _uv, "pixi.lock": _pixi}


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
