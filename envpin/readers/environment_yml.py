"""environment.yml (conda's environment file): text → Contents.

conda reads only the keys name, dependencies, prefix, channels and variables, and ignores any other with an
"EnvironmentSectionNotValid" note (VALID_KEYS in conda/conda conda/env/env.py), so a misspelt `dependecies:`
makes an environment with nothing in it. A `pip:` list without `pip` among the conda dependencies makes conda
warn "you have pip-installed dependencies in your environment file, but you do not list pip itself" (same
file). The `pip:` items are requirement lines, read as pip reads them (envpin.readers.requirements).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from envpin.readers import requirements
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import CONDA_NAMES

VALID_KEYS = ("name", "dependencies", "prefix", "channels", "variables")
# conda-lock reads its target platforms from the same file (its own test input,
# conda/conda-lock tests/test-install-with-pip-deps/environment.yml, has `platforms:`); conda ignores the key.
EXTENSION_KEYS = ("platforms",)
# The spaces around an operator go (`numpy >= 1.2` -> `numpy>=1.2`), in two passes that each try a run of spaces
# once, from its start: `\s*([=<>!~,|])\s*` tried every space of a run and scanned the rest of it (n²/2 steps).
# A run is removed when it touches an operator on either side, as that pattern removed it.
# tests/unit/test_regex_bounds.py; the bracket field starts only where its word starts (the same matches).
_SPACES_AFTER_OPERATOR = re.compile(r"(?<=[=<>!~,|])\s+")
_SPACES_BEFORE_OPERATOR = re.compile(r"(?<!\s)\s+(?=[=<>!~,|])")
_NAME = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]*)(.*)$")
_BRACKET = re.compile(r"^(?P<head>[^\[]+)\[(?P<body>.*)\]\s*$")
_BRACKET_FIELD = re.compile(r"(?<!\w)(\w+)\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|([^,\s]+))")


def parse(text: str, include: requirements.IncludeReader | None = None) -> Contents:
    return read(load_yaml(text), include)


def read(data: Any, include: requirements.IncludeReader | None = None) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised). A
    `- -r file.txt` pip item is read through `include`: conda's pip step writes the items to a requirements file
    beside the environment.yml, so its paths are relative to that directory."""
    if data is None:
        return Contents("environment.yml", problems=(problem(
            "CHK-STRUCTURE", "", "the file is empty; conda refuses it (EnvironmentFileEmpty)",
            "add `dependencies:` with the packages, or delete the file"),))
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a mapping with `dependencies:`")
    problems = _key_problems(data)
    dependencies = data.get("dependencies")
    if dependencies is None:
        return Contents("environment.yml", problems=tuple(problems))
    if not isinstance(dependencies, list):
        problems.append(problem("CHK-STRUCTURE", "dependencies", f"dependencies is a {type(dependencies).__name__}, not a list",
                                "write one `- package` item per line under dependencies:"))
        return Contents("environment.yml", problems=tuple(problems))
    pins, pip_lines, lists_pip = _dependencies(dependencies, problems)
    pip_contents = requirements.read_lines(pip_lines, kind="environment.yml", include=include)
    if pip_lines and not lists_pip:
        problems.append(problem(
            "CHK-ENV-PIP-MISSING", "dependencies",
            "there is a pip: section but pip is not among the conda dependencies; conda may use another pip and "
            "install the packages in the wrong place",
            "add `- pip` to dependencies",
        ))
    exported_on, exported_only = _exported_platform(data, dependencies)
    return Contents(
        kind="environment.yml",
        pins=tuple(pins) + pip_contents.pins,
        indexes=pip_contents.indexes,
        problems=tuple(problems) + pip_contents.problems,
        channels=_channel_names(data.get("channels")),
        exported_on=exported_on,
        exported_only=exported_only,
    )


def _exported_platform(data: dict, dependencies: list) -> tuple[str | None, tuple[str, ...]]:
    """A `conda env export` (every conda package NAME=VERSION=BUILD) pins the runtime packages conda installs for
    its own platform only (`ld_impl_linux-64`, `vc`): the OS they are for, and which they are."""
    from envpin.readers.project_files import PLATFORM_ONLY, is_export  # noqa: PLC0415 - the export's words are the project reader's

    if not is_export(data, dependencies):
        return None, ()
    found: dict[str, list[str]] = {}
    for item in dependencies:
        if not isinstance(item, str):
            continue
        name = item.strip().split("=", 1)[0].lower()
        for os_name, names in PLATFORM_ONLY.items():
            if any(name == n or (n.endswith("*") and name.startswith(n[:-1])) for n in names):
                found.setdefault(os_name, []).append(item.strip())
    if len(found) != 1:
        return None, ()
    [(os_name, packages)] = found.items()
    return os_name, tuple(packages)


def _channel_names(channels: Any) -> tuple[str, ...]:
    """The channels as conda names them: `pytorch`, `nvidia`, `conda-forge` (a channel URL by its last segment)."""
    if not isinstance(channels, list):
        return ()
    return tuple(str(c).rstrip("/").rsplit("/", 1)[-1] for c in channels if isinstance(c, str))


def load_yaml(text: str) -> Any:
    import yaml  # noqa: PLC0415 - yaml is heavy (~20 ms): only a YAML file needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        reason = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise MalformedFile(f"malformed YAML ({reason})", where) from None
    except (ValueError, RecursionError) as error:  # an integer of more than 4300 digits; nesting too deep
        raise MalformedFile(f"malformed YAML ({str(error).splitlines()[0] if str(error) else type(error).__name__})") from None


def _key_problems(data: dict) -> list[Problem]:
    problems = []
    for key in data:
        if key not in VALID_KEYS and key not in EXTENSION_KEYS:
            close = next((k for k in VALID_KEYS if _similar(str(key), k)), None)
            problems.append(problem(
                "CHK-STRUCTURE", str(key),
                f"conda ignores the key {key!r} (it reads {', '.join(VALID_KEYS)})"
                + (f"; did you mean {close!r}?" if close else ""),
                f"rename it to {close!r}" if close else "remove it",
                severity="error" if close == "dependencies" else "warning",
            ))
    if "dependencies" not in data and not any(_similar(str(k), "dependencies") for k in data):
        problems.append(problem("CHK-STRUCTURE", "dependencies", "there is no dependencies: list; conda creates an "
                                "empty environment", "add `dependencies:` with the packages"))
    channels = data.get("channels")
    if channels is not None and not (isinstance(channels, list) and all(isinstance(c, str) for c in channels)):
        problems.append(problem("CHK-STRUCTURE", "channels", "channels must be a list of channel names",
                                "write one `- channel` item per line"))
    return problems


def _similar(key: str, valid: str) -> bool:
    """A misspelling: same first letter and at most two letters apart (dependecies, dependancies, channel)."""
    return key != valid and key[:1] == valid[:1] and difflib.SequenceMatcher(None, key, valid).ratio() >= 0.8


def _dependencies(dependencies: list, problems: list[Problem]) -> tuple[list[Pin], list[tuple[str, str]], bool]:
    pins: list[Pin] = []
    pip_lines: list[tuple[str, str]] = []
    lists_pip = False
    for position, item in enumerate(dependencies):
        where = f"dependencies[{position}]"
        if isinstance(item, str):
            pin = conda_pin(item, where)
            if pin is None:
                problems.append(problem("CHK-STRUCTURE", where, f"{item!r} is not a conda package spec",
                                        "write NAME, NAME=VERSION or NAME=VERSION=BUILD"))
            elif pin.name == "pip":
                lists_pip = True
            else:
                pins.append(pin)
        elif isinstance(item, dict) and set(item) == {"pip"}:
            pip_lines += _pip_section(item["pip"], where, problems)
        else:
            shown = f"a mapping with {', '.join(map(str, item))}" if isinstance(item, dict) else f"a {type(item).__name__}"
            problems.append(problem(
                "CHK-STRUCTURE", where, f"dependency {position} is {shown}, not a package spec or a pip: list",
                "write `- name=version` (a colon makes YAML read a mapping), or `- pip:` followed by a list",
            ))
    return pins, pip_lines, lists_pip


def _pip_section(items: Any, where: str, problems: list[Problem]) -> list[tuple[str, str]]:
    if not isinstance(items, list):
        problems.append(problem("CHK-STRUCTURE", f"{where}.pip", "pip: must be a list of requirements",
                                "write one `- requirement` item per line under pip:"))
        return []
    lines = []
    for position, item in enumerate(items):
        here = f"{where}.pip[{position}]"
        if isinstance(item, str):
            lines.append((here, item.strip()))
        else:
            problems.append(problem("CHK-STRUCTURE", here, f"pip item {position} is a {type(item).__name__}, not a string",
                                    "quote it: `- \"name==version\"`"))
    return lines


# conda-forge's metapackages that choose pytorch's build: pytorch-gpu depends on a `cuda*` pytorch, pytorch-cpu
# on a `cpu*` one (conda-forge/pytorch-cpu-feedstock recipe outputs); an export's metapackage carries the build
# string of the pytorch it chose (`pytorch-gpu=1.9.0=cuda112py38h0bbbad9_1`)
CONDA_METAPACKAGES = {"pytorch-gpu": "cuda*", "pytorch-cpu": "cpu*"}


def conda_pin(spec: str, where: str) -> Pin | None:
    parsed = parse_match_spec(spec)
    if parsed is None:
        return None
    name, version, build = parsed
    if name in CONDA_METAPACKAGES:
        name, build = "pytorch", build or CONDA_METAPACKAGES[name]
    channel = spec.strip().rsplit("::", 1)[0].rstrip("/").rsplit("/", 1)[-1] if "::" in spec else None
    return Pin(name=CONDA_NAMES.get(name, name), where=where, label=spec.strip(), version=version, manager="conda",
               build=build, index=channel)


def parse_match_spec(spec: str) -> tuple[str, str | None, str | None] | None:
    """(name, version, build) of a conda MatchSpec: `pytorch`, `pytorch=2.1.0`, `pytorch==2.1.0`,
    `pytorch=2.1.0=py3.10_cuda12.1_0`, `pytorch 2.1.0 py3.10_cuda12.1_0`, `pytorch::pytorch>=2`,
    `pytorch[version='2.1.0', build=*cuda*]`, `python = 3.10`. The version is None for a range; a trailing
    `*` or `.*` is dropped (`2.1.*` -> `2.1`), since conda's `=2.1` means 2.1.* anyway."""
    text = spec.strip()
    if "::" in text:
        text = text.rsplit("::", 1)[1]
    fields: dict[str, str] = {}
    bracket = _BRACKET.match(text)
    if bracket:
        text = bracket.group("head").strip()
        fields = {m.group(1): next(g for g in m.groups()[1:] if g is not None)
                  for m in _BRACKET_FIELD.finditer(bracket.group("body"))}
    text = _SPACES_BEFORE_OPERATOR.sub("", _SPACES_AFTER_OPERATOR.sub("", text))
    match = _NAME.match(text)
    if match is None:
        return None
    name, rest = match.group(1).lower(), match.group(2).strip()
    version, build = _version_and_build(rest)
    version = fields.get("version", version)
    build = fields.get("build", build)
    if version is not None:
        version = _plain_version(version)
    return name, version, build


def _version_and_build(rest: str) -> tuple[str | None, str | None]:
    if not rest:
        return None, None
    if " " in rest:  # the space-separated form: NAME VERSION [BUILD]
        parts = rest.split()
        return parts[0], parts[1] if len(parts) > 1 else None
    if rest.startswith("=="):
        version, _, build = rest[2:].partition("=")
        return version, build or None
    if rest.startswith("="):
        version, _, build = rest[1:].partition("=")
        return version, build or None
    return None, None  # >=, <, !=, ~=: a range, not one version


def _plain_version(version: str) -> str | None:
    version = version.strip().lstrip("=")
    if version.endswith(".*"):
        version = version[:-2]
    elif version.endswith("*"):
        version = version[:-1]
    if not version or re.search(r"[<>!~,|*]", version):
        return None
    return version
