"""Readers for the files a repository declares its requirements in. Pure: text in, entries out.

Each reader returns `Entries`: PEP 508 requirements with their origin, pip options, verbatim lines that are
not requirements (editable installs, URLs), conda packages and notes. Bad input is an EnvpinInputError that
names the file and line.
"""

from __future__ import annotations

import configparser
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from envpin.errors import EnvpinInputError
from envpin.escapes import shown
from envpin.project.model import CONDA_CUDA_PACKAGES, GPU_PACKAGE_ALIASES, ProjectRequirement

# pip options that take a value and only steer where packages come from.
INDEX_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host"}
FLAG_OPTIONS = {"--pre", "--prefer-binary", "--no-binary", "--only-binary", "--require-hashes"}


@dataclass
class Entries:
    requirements: list[ProjectRequirement] = field(default_factory=list)
    constraints: list[ProjectRequirement] = field(default_factory=list)
    other_lines: list[str] = field(default_factory=list)
    index_options: list[str] = field(default_factory=list)
    conda_packages: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    python: str | None = None
    notes: list[str] = field(default_factory=list)

    def extend(self, other: Entries) -> None:
        for name in ("requirements", "constraints", "other_lines", "index_options", "conda_packages", "channels", "notes"):
            getattr(self, name).extend(getattr(other, name))
        self.python = self.python or other.python


def parse_requirement(text: str, origin: str) -> ProjectRequirement:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - packaging.requirements is heavy (~20 ms): only a requirement needs it
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a requirement needs it

    try:
        requirement = Requirement(text)
    except InvalidRequirement as error:
        raise EnvpinInputError(f"{origin}: '{shown(text)}' is not a valid requirement "
                               f"({shown(str(error).splitlines()[0])})") from None
    return ProjectRequirement(
        name=canonicalize_name(requirement.name),
        text=str(requirement),
        specifier=str(requirement.specifier),
        extras=tuple(sorted(requirement.extras)),
        marker=str(requirement.marker) if requirement.marker else None,
        origin=origin,
    )


# ---------------------------------------------------------------- requirements.txt


def read_requirements_txt(text: str, name: str, include: Callable[[str, bool], Entries]) -> Entries:
    """pip's requirements format: `-r`/`-c` includes (through `include(path, is_constraint)`), index options,
    line continuations, comments and per-line `--hash` options."""
    entries = Entries()
    for number, line in _logical_lines(text):
        origin = f"{name}:{number}"
        words = _split(line, origin) if line.startswith("-") else line.split()
        option = words[0]
        if option in ("-r", "--requirement", "-c", "--constraint") or option.startswith(("-r", "-c")) and len(words) == 1:
            target = words[1] if len(words) > 1 else option[2:]
            entries.extend(include(target, option.startswith(("-c", "--constraint"))))
        elif option.split("=", 1)[0] in INDEX_OPTIONS:
            key, _, value = option.partition("=")
            entries.index_options.append(f"{key} {value or (words[1] if len(words) > 1 else '')}".strip())
        elif option.split("=", 1)[0] in FLAG_OPTIONS:
            entries.notes.append(f"{origin}: pip option {line!r} not carried over")
        elif option in ("-e", "--editable") or _looks_like_path_or_url(option):
            entries.other_lines.append(line)
        else:
            # Not shlex: a marker's quotes (`; sys_platform != "win32"`) are part of the requirement.
            requirement_text = re.sub(r"\s+--hash(=|\s+)\S+", "", line).strip()
            entries.requirements.append(parse_requirement(requirement_text, origin))
    return entries


def _logical_lines(text: str) -> list[tuple[int, str]]:
    lines, pending, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical = (pending + stripped).strip()
        pending = ""
        if logical:
            lines.append((start, logical))
    if pending.strip():
        lines.append((start, pending.strip()))
    return lines


def _split(line: str, origin: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as error:
        raise EnvpinInputError(f"{origin}: cannot read {line!r} ({error})") from None


def _looks_like_path_or_url(word: str) -> bool:
    return "://" in word or word.startswith((".", "/", "file:")) or word.endswith((".whl", ".tar.gz", ".zip"))


# ---------------------------------------------------------------- pyproject.toml and setup.cfg


def read_pyproject(text: str, name: str, extras: tuple[str, ...], groups: tuple[str, ...]) -> Entries:
    """A pyproject.toml or pixi.toml for a solve: `[project]` dependencies, the extras and dependency groups
    asked for, pixi's default feature (conda and PyPI dependencies), read by read_manifest, which `check` uses
    too. uv's and pixi's index bindings are noted: the solve chooses the framework's index itself."""
    from envpin import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms): only a pyproject.toml needs it

    manifest = read_manifest(text, name)
    document = _toml.loads(text)
    project = _table(document.get("project"))
    optional = _table(project.get("optional-dependencies"))
    for extra in extras:
        if extra not in optional:
            raise EnvpinInputError(f"{name}: no optional-dependencies group {extra!r} (has: {', '.join(optional) or 'none'})")
    dependency_groups = _table(document.get("dependency-groups"))
    for group in groups:
        _group_requirements(dependency_groups, group, name, ())  # refuses an unknown group or an include cycle
    wanted = {f"extra:{e}" for e in extras} | {f"group:{g}" for g in groups}
    entries = Entries(channels=list(manifest.channels), notes=list(manifest.notes))
    seen: set[tuple[str, str]] = set()
    features: set[str] = set()
    for entry in manifest.entries:
        labels = [s for s in entry.scope if s.startswith(("extra:", "group:", "feature:"))]
        if any(label.startswith("feature:") for label in labels):
            features.update(label.split(":", 1)[1] for label in labels)
            continue
        if labels and not set(labels) & wanted:
            continue
        origin = f"{name}: {entry.where}"
        if entry.manager == "conda":
            if entry.text.startswith("__cuda "):
                entries.notes.append(f"{origin}: pixi's system-requirements cuda {entry.text.split(' ', 1)[1]} "
                                     "is decided by the target's driver instead")
            elif entry.platforms:
                entries.notes.append(f"{origin}: conda `{entry.text}` is only for {', '.join(entry.platforms)}; "
                                     "left out")
            else:
                _conda_dependency(entry.text, origin, entries)
            continue
        if (entry.text, ",".join(labels)) in seen:
            continue  # one line with a uv source per extra: the same requirement once
        seen.add((entry.text, ",".join(labels)))
        if entry.index:
            entries.notes.append(f"{origin}: its index {entry.index} is replaced by the index of the solved build")
        entries.requirements.append(parse_requirement(entry.text, origin))
    if features:
        entries.notes.append(f"{name}: pixi features {', '.join(sorted(features))} are not solved (only the default "
                             "feature is)")
    return entries


def _group_requirements(groups: dict, group: str, name: str, seen: tuple[str, ...]) -> list[tuple[str, str]]:
    """PEP 735 dependency groups, with `{include-group = "…"}` followed (and cycles refused)."""
    if group in seen:
        raise EnvpinInputError(f"{name}: dependency group {group!r} includes itself")
    if group not in groups:
        raise EnvpinInputError(f"{name}: no dependency group {group!r} (has: {', '.join(groups) or 'none'})")
    found = []
    for position, item in enumerate(groups[group]):
        if isinstance(item, dict) and "include-group" in item:
            found.extend(_group_requirements(groups, item["include-group"], name, seen + (group,)))
        elif isinstance(item, str):
            found.append((f"{name}: dependency-groups.{group}[{position}]", item))
        else:
            raise EnvpinInputError(f"{name}: dependency-groups.{group}[{position}] is neither a string nor an include")
    return found


def read_setup_cfg(text: str, name: str, extras: tuple[str, ...]) -> Entries:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as error:
        raise EnvpinInputError(f"{name}: not a valid setup.cfg ({str(error).splitlines()[0]})") from None
    entries = Entries()
    lines = [(f"{name}: options.install_requires", parser.get("options", "install_requires", fallback=""))]
    for extra in extras:
        if parser.has_option("options.extras_require", extra):
            lines.append((f"{name}: options.extras_require.{extra}", parser.get("options.extras_require", extra)))
    for origin, block in lines:
        for text_ in (line.strip() for line in block.splitlines()):
            if text_ and not text_.startswith("#"):
                entries.requirements.append(parse_requirement(text_, origin))
    return entries


# ---------------------------------------------------------------- environment.yml


def read_environment_yml(text: str, name: str, include: Callable[[str, bool], Entries]) -> Entries:
    import yaml  # noqa: PLC0415 - yaml is heavy (~20 ms): only an environment.yml needs it

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise EnvpinInputError(f"{name}: not valid YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(document, dict) or not isinstance(document.get("dependencies", []), list):
        raise EnvpinInputError(f"{name}: not a conda environment file (no `dependencies:` list)")
    entries = Entries(channels=[str(c) for c in document.get("channels") or []])
    for position, item in enumerate(document.get("dependencies") or []):
        origin = f"{name}: dependencies[{position}]"
        if isinstance(item, dict) and "pip" in item:
            pip_text = "\n".join(str(line) for line in item["pip"] or [])
            entries.extend(read_requirements_txt(pip_text, f"{name} (pip)", include))
        elif isinstance(item, str):
            _conda_dependency(item.strip(), origin, entries)
        else:
            raise EnvpinInputError(f"{origin}: expected a conda package or a `pip:` list")
    return entries


def _conda_dependency(spec: str, origin: str, entries: Entries) -> None:
    channel, _, rest = spec.rpartition("::")
    match = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", rest)
    if not match:
        raise EnvpinInputError(f"{origin}: {spec!r} is not a conda package spec")
    package, version = match.group(1).lower(), match.group(2).strip()
    if package == "python":
        exact = re.match(r"^=?=?(3\.\d+)(\.\*|\.\d+)?$", version)
        entries.python = exact.group(1) if exact else None
    elif package == "pip":
        return
    elif package in CONDA_CUDA_PACKAGES:
        entries.notes.append(f"{origin}: conda `{spec}` dropped: the pinned pip wheels bring their own CUDA libraries")
    elif package in GPU_PACKAGE_ALIASES:
        pip_spec = conda_version_to_pip(version)
        entries.requirements.append(parse_requirement(f"{package}{pip_spec}", origin))
        entries.notes.append(f"{origin}: conda `{spec}` is solved as pip `{package}{pip_spec}`")
    else:
        entries.conda_packages.append(spec if not channel else f"{channel}::{rest}")


def conda_version_to_pip(version: str) -> str:
    """conda match specs to PEP 440: `=1.12` and `1.12` → `==1.12.*`, `==1.12.1` → `==1.12.1`, `>=1.10` as is;
    a build string (`=1.12=py3.9_cuda11.3*`) is dropped."""
    version = version.replace(" ", "")
    if not version:
        return ""
    if version.startswith("=="):
        return "==" + version[2:].split("=", 1)[0]
    if version.startswith("="):
        version = version[1:]
    if version[0].isdigit():
        base = version.split("=", 1)[0]
        return f"=={base}" if base.endswith("*") else f"=={base}.*"
    return version


# ---------------------------------------------------------------- manifests: pyproject.toml and pixi.toml, whole


@dataclass(frozen=True)
class ManifestEntry:
    """One requirement a manifest declares, wherever it is: a PEP 508 line (pip) or a conda match spec."""

    text: str  # `torch>=2.7`, `pytorch 2.4.*` (conda: name, then the version spec, then the build)
    where: str  # `project.optional-dependencies.cu128[0]`, `feature.cuda.dependencies.pytorch`
    manager: str = "pip"  # pip / conda
    scope: tuple[str, ...] = ()  # `extra:cu128`, `group:dev`, `feature:cuda`, a marker: the environments it is in
    index: str | None = None  # the one index it comes from (a uv source, a pixi pypi `index`)
    channel: str | None = None  # conda: the channel it comes from
    build: str | None = None  # conda: the build string the table names
    platforms: tuple[str, ...] = ()  # conda subdirs of a pixi `target.<subdir>` table


@dataclass(frozen=True)
class ManifestIndex:
    name: str
    url: str
    explicit: bool = False  # uv: used only by the packages whose source names it
    default: bool = False  # uv: replaces PyPI


@dataclass(frozen=True)
class Manifest:
    """What a pyproject.toml (`[project]`, PEP 735 groups, uv's indexes and sources, `[tool.pixi]`) or a
    pixi.toml declares, every extra, group and feature included, each entry labelled with where it is."""

    entries: tuple[ManifestEntry, ...]
    indexes: tuple[ManifestIndex, ...] = ()  # uv's [[tool.uv.index]], in order
    channels: tuple[str, ...] = ()  # pixi's workspace channels
    requires_python: str | None = None
    notes: tuple[str, ...] = ()


def read_manifest(text: str, name: str) -> Manifest:
    """A pyproject.toml or pixi.toml (by `name`'s file name), read whole. Bad TOML is an EnvpinInputError."""
    from envpin import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms): only a manifest needs it

    try:
        document = _toml.loads(text)
    except _toml.TOMLDecodeError as error:
        raise EnvpinInputError(f"{name}: not valid TOML ({error})") from None
    if name.replace("\\", "/").rsplit("/", 1)[-1] == "pixi.toml":
        return _pixi(document, "")
    entries: list[ManifestEntry] = []
    notes: list[str] = []
    project = _table(document.get("project"))
    uv = _table(_table(document.get("tool")).get("uv"))
    indexes = tuple(_uv_indexes(uv))
    sources = _table(uv.get("sources"))
    for position, line in enumerate(_strings(project.get("dependencies"))):
        entries += _uv_sourced(line, f"project.dependencies[{position}]", (), sources, indexes, notes)
    for extra, lines in _table(project.get("optional-dependencies")).items():
        for position, line in enumerate(_strings(lines)):
            entries += _uv_sourced(line, f"project.optional-dependencies.{extra}[{position}]", (f"extra:{extra}",),
                                   sources, indexes, notes)
    groups = _table(document.get("dependency-groups"))
    for group in groups:
        for where, line in _group_requirements(groups, group, "", ()):
            entries += _uv_sourced(line, where.lstrip(": "), (f"group:{group}",), sources, indexes, notes)
    requires_python = project.get("requires-python")
    pixi = _table(_table(document.get("tool")).get("pixi"))
    manifest = Manifest(tuple(entries), indexes, (), requires_python if isinstance(requires_python, str) else None,
                        tuple(notes))
    if pixi:
        inner = _pixi(pixi, "tool.pixi.")
        manifest = Manifest(manifest.entries + inner.entries, indexes, inner.channels, manifest.requires_python,
                            manifest.notes + inner.notes)
    return manifest


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}


def _strings(value) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _uv_indexes(uv: dict) -> list[ManifestIndex]:
    found = []
    for item in uv.get("index") or []:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            found.append(ManifestIndex(str(item.get("name") or item["url"]), item["url"], bool(item.get("explicit")),
                                       bool(item.get("default"))))
    return found


def _uv_sourced(line: str, where: str, scope: tuple[str, ...], sources: dict, indexes: tuple[ManifestIndex, ...],
                notes: list[str]) -> list[ManifestEntry]:
    """A requirement with its uv source: `torch = { index = "pytorch-cu128" }` binds it to that index;
    a list of sources with `extra = …` or `marker = …` makes one entry per source, each in its environment
    (uv's documented layout for one torch build per extra or per platform)."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a manifest needs it

    head = re.split(r"[\s\[<>=!~;@(]", line.strip(), maxsplit=1)[0]
    source = {canonicalize_name(k): v for k, v in sources.items()}.get(canonicalize_name(head)) if head else None
    if source is None:
        return [ManifestEntry(line, where, scope=scope)]
    listed = source if isinstance(source, list) else [source]
    by_name = {i.name: i.url for i in indexes}
    entries = []
    for position, item in enumerate(x for x in listed if isinstance(x, dict)):
        index = by_name.get(str(item.get("index"))) if item.get("index") else None
        if item.get("index") and index is None:
            notes.append(f"{where}: tool.uv.sources names index {item.get('index')!r}, which no [[tool.uv.index]] defines")
        if not item.get("index"):
            continue  # a git, path or URL source: not an index build
        extra = item.get("extra")
        group = item.get("group")
        marker = item.get("marker")
        if extra and scope and scope != (f"extra:{extra}",) and scope[0].startswith("extra:"):
            continue  # the source is for another extra than the one this line is in
        own = scope
        if extra:
            own = (f"extra:{extra}",)
        elif group:
            own = (f"group:{group}",)
        if marker:
            own = own + (str(marker),)
        entries.append(ManifestEntry(line, f"{where} (tool.uv.sources.{head}[{position}])" if isinstance(source, list)
                                     else where, scope=own, index=index))
    return entries or [ManifestEntry(line, where, scope=scope)]


def _pixi(document: dict, prefix: str) -> Manifest:
    """pixi's manifest: `[dependencies]` (conda), `[pypi-dependencies]`, `[system-requirements]`, the same
    under `[feature.NAME]` and `[target.SUBDIR]` (and `[feature.NAME.target.SUBDIR]`), channels from
    `[workspace]` (or the older `[project]`)."""
    workspace = _table(document.get("workspace")) or _table(document.get("project"))
    channels = tuple(str(c.get("channel") if isinstance(c, dict) else c) for c in workspace.get("channels") or [])
    entries: list[ManifestEntry] = []
    entries += _pixi_tables(document, prefix, ())
    for feature, table in _table(document.get("feature")).items():
        entries += _pixi_tables(_table(table), f"{prefix}feature.{feature}.", (f"feature:{feature}",))
    return Manifest(tuple(entries), (), channels)


def _pixi_tables(table: dict, prefix: str, scope: tuple[str, ...], platforms: tuple[str, ...] = ()) -> list[ManifestEntry]:
    entries = []
    for name, value in _table(table.get("dependencies")).items():
        entries.append(_pixi_conda(name, value, f"{prefix}dependencies.{name}", scope, platforms))
    for name, value in _table(table.get("pypi-dependencies")).items():
        entry = _pixi_pypi(name, value, f"{prefix}pypi-dependencies.{name}", scope)
        if entry is not None:
            entries.append(entry)
    cuda = _table(table.get("system-requirements")).get("cuda")
    if isinstance(cuda, (str, int, float)):
        entries.append(ManifestEntry(f"__cuda {cuda}", f"{prefix}system-requirements.cuda", "conda", scope,
                                     platforms=platforms))
    if not platforms:
        for subdir, inner in _table(table.get("target")).items():
            entries += _pixi_tables(_table(inner), f"{prefix}target.{subdir}.", scope, (str(subdir),))
    return entries


def _pixi_conda(name: str, value, where: str, scope: tuple[str, ...], platforms: tuple[str, ...]) -> ManifestEntry:
    if isinstance(value, dict):
        version, channel, build = value.get("version", "*"), value.get("channel"), value.get("build")
    else:
        version, channel, build = value, None, None
    spec = str(version).strip() if version is not None else "*"
    text = name if spec in ("", "*") else f"{name} {spec}"
    return ManifestEntry(text, where, "conda", scope, channel=str(channel) if channel else None,
                         build=str(build) if build else None, platforms=platforms)


def _pixi_pypi(name: str, value, where: str, scope: tuple[str, ...]) -> ManifestEntry | None:
    if isinstance(value, dict):
        if any(key in value for key in ("path", "git", "url")):
            return None  # a local, git or URL package: not a release from an index
        extras = value.get("extras") or []
        version = str(value.get("version", "*"))
        index = value.get("index")
    else:
        extras, version, index = [], str(value), None
    extra_text = f"[{','.join(str(e) for e in extras)}]" if extras else ""
    specifier = "" if version.strip() in ("", "*") else version.strip()
    return ManifestEntry(f"{name}{extra_text}{specifier}", where, "pip", scope, index=str(index) if index else None)
