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
    from envpin import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms): only a pyproject.toml needs it

    try:
        document = _toml.loads(text)
    except _toml.TOMLDecodeError as error:
        raise EnvpinInputError(f"{name}: not valid TOML ({error})") from None
    entries = Entries()
    project = document.get("project") or {}
    for position, text_ in enumerate(project.get("dependencies") or []):
        entries.requirements.append(parse_requirement(text_, f"{name}: project.dependencies[{position}]"))
    optional = project.get("optional-dependencies") or {}
    for extra in extras:
        if extra not in optional:
            raise EnvpinInputError(f"{name}: no optional-dependencies group {extra!r} (has: {', '.join(optional) or 'none'})")
        for position, text_ in enumerate(optional[extra]):
            entries.requirements.append(parse_requirement(text_, f"{name}: project.optional-dependencies.{extra}[{position}]"))
    dependency_groups = document.get("dependency-groups") or {}
    for group in groups:
        for origin, text_ in _group_requirements(dependency_groups, group, name, ()):
            entries.requirements.append(parse_requirement(text_, origin))
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
