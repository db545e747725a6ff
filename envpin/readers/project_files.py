"""Readers for the files a repository declares its requirements in. Pure: text in, entries out.

Each reader returns `Entries`: PEP 508 requirements with their origin, pip options, verbatim lines that are
not requirements (editable installs, URLs), conda packages and notes. Bad input is an EnvpinInputError that
names the file and line.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import hidden, shown
from envpin.base.limits import MAX_CONTINUATIONS, LimitExceeded, check_specifiers, continuation_limit_message
from envpin.base.record import Record, record, replace
from envpin.readers.project import CONDA_CUDA_SUPPLIERS, GPU_PACKAGE_ALIASES, PYTHON_ABI, ProjectRequirement

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
    requires_python: str | None = None  # a pyproject.toml's `requires-python`: pip and uv install it on no other
    notes: list[str] = field(default_factory=list)
    python_tied: list[str] = field(default_factory=list)  # exported conda specs whose build named the Python
    exported_pip: list[str] = field(default_factory=list)  # the origins of an export's pip pins (made for its Python)
    platforms: list[str] = field(default_factory=list)  # pixi's workspace platforms (conda subdirs): where it installs
    python_spec: str | None = None  # pixi's `python` dependency, as PEP 440
    python_origin: str = ""
    gpu_asked: list[tuple[str, str]] = field(default_factory=list)  # (package, the line) a conda CUDA build string asks
    # the CUDA X.Y a conda `cudatoolkit=11.3` / `pytorch-cuda=11.8` pins for torch, and that line
    torch_cuda: tuple[str, str] | None = None
    # pixi `target.<selector>` lines: (conda subdirs, manager, text, origin), joined once the target is known
    by_platform: list[tuple[tuple[str, ...], str, str, str]] = field(default_factory=list)

    def extend(self, other: Entries) -> None:
        for name in ("requirements", "constraints", "other_lines", "index_options", "conda_packages", "channels", "notes",
                     "python_tied", "exported_pip", "platforms", "by_platform", "gpu_asked"):
            getattr(self, name).extend(getattr(other, name))
        self.python = self.python or other.python
        self.torch_cuda = self.torch_cuda or other.torch_cuda
        if other.python_spec and not self.python_spec:
            self.python_spec, self.python_origin = other.python_spec, other.python_origin
        self.requires_python = self.requires_python or other.requires_python


def parse_requirement(text: str, origin: str) -> ProjectRequirement:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - packaging.requirements is heavy (~20 ms): only a requirement needs it
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a requirement needs it

    try:
        requirement = Requirement(text)
    except InvalidRequirement as error:
        raise EnvpinInputError(f"{origin}: '{shown(text)}' is not a valid requirement "
                               f"({shown(str(error).splitlines()[0])})") from None
    check_specifiers(len(requirement.specifier), origin)
    return ProjectRequirement(
        name=canonicalize_name(requirement.name),
        text=str(requirement),
        specifier=str(requirement.specifier),
        extras=tuple(sorted(requirement.extras)),
        marker=str(requirement.marker) if requirement.marker else None,
        origin=origin,
    )


# ---------------------------------------------------------------- requirements.txt


def read_requirements_txt(text: str, name: str, include: Callable[[str, bool], Entries],
                          origin_of: Callable[[int], str] | None = None) -> Entries:
    """pip's requirements format: `-r`/`-c` includes (through `include(path, is_constraint)`), index options,
    line continuations, comments and per-line `--hash` options. A line's origin is `NAME:LINE`, or what
    `origin_of(LINE)` says (an environment.yml's `dependencies[3].pip[1]`)."""
    entries = Entries()
    for number, written in _logical_lines(text, name):
        origin = origin_of(number) if origin_of else f"{name}:{number}"
        line, unset = _expanded(written, origin, entries) if "${" in written else (written, ())
        values = _expanded_values(written) if line != written else {}
        as_written = len(entries.requirements), len(entries.other_lines)
        words = _split(line, origin) if line.startswith("-") else line.split()
        option = words[0]
        includes = option in ("-r", "--requirement", "-c", "--constraint") or option.startswith(("-r", "-c")) and len(words) == 1
        if includes:
            target = words[1] if len(words) > 1 else option[2:]
            entries.extend(include(target, option.startswith(("-c", "--constraint"))))
        elif option.split("=", 1)[0] in INDEX_OPTIONS:
            key, _, value = option.partition("=")
            entries.index_options.append(f"{key} {value or (words[1] if len(words) > 1 else '')}".strip())
        elif option.split("=", 1)[0] in FLAG_OPTIONS:
            entries.notes.append(f"{origin}: pip option {line!r} not carried over")
        elif option in ("-e", "--editable"):
            entries.other_lines.append(line)
        elif _looks_like_path_or_url(option):
            wheel = _framework_wheel(option)
            if wheel is None:
                entries.other_lines.append(line)
            else:
                entries.requirements.append(parse_requirement(wheel, origin))
                entries.notes.append(f"{origin}: the wheel URL {shown(option)} is {wheel}, solved as that framework")
        else:
            # Not shlex: a marker's quotes (`; sys_platform != "win32"`) are part of the requirement.
            requirement_text, ignored = _requirement_and_options(line)
            if ignored:
                entries.notes.append(f"{origin}: pip ignores {shown(ignored)} on a requirement line (only --hash, "
                                     "--config-settings and --global-option act on one requirement); not used")
            try:
                entries.requirements.append(parse_requirement(requirement_text, origin))
            except EnvpinInputError as error:
                if not unset:
                    raise
                raise EnvpinInputError(f"{error}: {', '.join(f'${{{n}}}' for n in unset)} is not set (or is empty) "
                                       "here, and pip reads the line as written; set it to solve for the line pip "
                                       "will read") from None
        if values and not includes:  # the output carries the line as written: pip expands it where it installs
            _keep_as_written(entries, as_written, values)
    return entries


def _expanded_values(written: str) -> dict[str, str]:
    from envpin.readers.requirements import expanded_values  # noqa: PLC0415 - only a line with ${…} needs it

    return expanded_values(written)


def _keep_as_written(entries: Entries, since: tuple[int, int], values: dict[str, str]) -> None:
    """The requirements and verbatim lines one line added, as written: each expanded value back as its `${NAME}`
    (envpin.base.escapes.hidden). A requirement keeps the values in its `text`, which the solve and a lock read."""
    requirements, others = since
    entries.requirements[requirements:] = [replace(r, written=hidden(r.text, values))
                                           for r in entries.requirements[requirements:]]
    entries.other_lines[others:] = [hidden(line, values) for line in entries.other_lines[others:]]


def _expanded(line: str, origin: str, entries: Entries) -> tuple[str, tuple[str, ...]]:
    """The line with its `${NAME}` variables expanded as pip expands them (envpin.readers.requirements.expand_variables);
    the ones not set are left as written, as pip leaves them, and said: never a guessed value."""
    from envpin.readers.requirements import VARIABLE, expand_variables  # noqa: PLC0415 - only a line with ${…} needs it

    expanded, unset = expand_variables(line)
    named = [n for n in dict.fromkeys(VARIABLE.findall(line)) if n not in unset]
    if named:
        entries.notes.append(f"{origin}: {', '.join(f'${{{n}}}' for n in named)} expanded from the environment, "
                             "as pip expands it")
    for variable in unset:
        entries.notes.append(f"{origin}: ${{{variable}}} is not set (or is empty) here: pip passes it on "
                             "as written, and so it is read; set it to solve for the line pip will read there")
    return expanded, unset


def _requirement_and_options(line: str) -> tuple[str, str]:
    """(the requirement, the options pip ignores on it): pip's break_args_options takes the requirement up to
    the first word that starts with `-`; of the options, --hash (and --config-settings, --global-option) act
    on it, index options are ignored."""
    words = line.split(" ")
    position = next((n for n, word in enumerate(words) if word.startswith("-")), len(words))
    requirement, options = " ".join(words[:position]).strip(), " ".join(words[position:])
    ignored = re.sub(r"(--hash|--config-settings|-C|--global-option)(=|\s+)\S+", "", options).strip()
    return requirement, ignored


def _framework_wheel(url: str) -> str | None:
    """`https://download.pytorch.org/whl/cpu/torch-1.8.1%2Bcpu-cp37-cp37m-linux_x86_64.whl` as the requirement it
    installs (`torch==1.8.1+cpu`), for the GPU frameworks' wheels only; other URLs stay verbatim."""
    from envpin.readers.variants import file_name, parse_wheel  # noqa: PLC0415 - wheel names need packaging.tags

    location = url.split("#", 1)[0]
    if not location.endswith(".whl"):
        return None
    wheel = parse_wheel(file_name(location))
    if wheel is None or wheel[0] not in GPU_PACKAGE_ALIASES:
        return None
    return f"{wheel[0]}=={wheel[1]}"


def _logical_lines(text: str, name: str) -> list[tuple[int, str]]:
    lines, pending, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not pending:
            start = number
        elif number - start >= MAX_CONTINUATIONS:
            raise LimitExceeded(f"{name}: {continuation_limit_message(start)}")
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
    from envpin.base import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms): only a pyproject.toml needs it

    manifest = read_manifest(text, name)
    document = _toml.loads_manifest(text)
    project = _table(document.get("project"))
    optional = _table(project.get("optional-dependencies"))
    for extra in extras:
        if extra not in optional:
            raise EnvpinInputError(f"{name}: no optional-dependencies group {extra!r} (has: {', '.join(optional) or 'none'})")
    dependency_groups = _table(document.get("dependency-groups"))
    for group in groups:
        _group_requirements(dependency_groups, group, name, ())  # refuses an unknown group or an include cycle
    wanted = {f"extra:{e}" for e in extras} | {f"group:{g}" for g in groups}
    defaults = _uv_default_groups(document, dependency_groups)
    wanted |= {f"group:{g}" for g in defaults}
    pixi = _table(_table(document.get("tool")).get("pixi")) if name.replace("\\", "/").rsplit("/", 1)[-1] != "pixi.toml" \
        else document
    default = _table(pixi.get("environments")).get("default")
    default_features = default.get("features") if isinstance(default, dict) else default
    wanted |= {f"feature:{f}" for f in default_features or [] if isinstance(f, str)}
    entries = Entries(channels=list(manifest.channels), notes=list(manifest.notes), platforms=list(manifest.platforms),
                      requires_python=manifest.requires_python)
    seen: set[tuple[str, str]] = set()
    features: set[str] = set()
    for entry in manifest.entries:
        labels = [s for s in entry.scope if s.startswith(("extra:", "group:", "feature:"))]
        if any(label.startswith("feature:") and label not in wanted for label in labels):
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
                entries.by_platform.append((entry.platforms, "conda", entry.text, origin))
            else:
                conda_dependency(entry.text, origin, entries)
                spec = pixi_python_spec(entry.text)
                if spec is not None and not entries.python_spec:
                    entries.python_spec, entries.python_origin = spec, origin
            continue
        if entry.platforms:
            entries.by_platform.append((entry.platforms, "pip", entry.text, origin))
            continue
        if (entry.text, ",".join(labels)) in seen:
            continue  # one line with a uv source per extra: the same requirement once
        seen.add((entry.text, ",".join(labels)))
        if entry.index:
            entries.notes.append(f"{origin}: its index {entry.index} is replaced by the index of the solved build")
        entries.requirements.append(parse_requirement(entry.text, origin))
    if defaults:
        entries.notes.append(f"{name}: the dependency groups uv installs by default ({', '.join(defaults)}) are "
                             "solved too")
    if features:
        entries.notes.append(f"{name}: pixi features {', '.join(sorted(features))} are not solved (only the default "
                             "environment's)")
    return entries


def _uv_default_groups(document: dict, groups: dict) -> list[str]:
    """The dependency groups `uv sync` installs unasked: `tool.uv.default-groups` (a list, or "all"), else `dev`
    where there is one (uv's documented default, docs.astral.sh/uv/concepts/projects/dependencies/#default-groups)."""
    chosen = _table(_table(document.get("tool")).get("uv")).get("default-groups", ["dev"])
    names = list(groups) if chosen == "all" else _strings(chosen)
    return [g for g in names if g in groups]


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
    from envpin.readers.setup_files import read_setup_cfg as read  # noqa: PLC0415 - only a setup.cfg needs it

    return _setup_entries(lambda: read(text), name, extras)


def read_setup_py(text: str, name: str, extras: tuple[str, ...]) -> Entries:
    """setup.py's literal install_requires and the asked extras_require, parsed, never run; what only running it
    gives is a note."""
    from envpin.readers.setup_files import read_setup_py as read  # noqa: PLC0415 - only a setup.py needs it

    return _setup_entries(lambda: read(text), name, extras)


def _setup_entries(read: Callable, name: str, extras: tuple[str, ...]) -> Entries:
    from envpin.readers.model import MalformedFile  # noqa: PLC0415 - with the setup files' reader
    from envpin.readers.setup_files import unread_note  # noqa: PLC0415 - with the setup files' reader

    try:
        found = read()
    except MalformedFile as error:
        raise EnvpinInputError(f"{name}: {error.message}") from None
    entries = Entries()
    for requirement in found.requirements:
        if requirement.extra is None or requirement.extra in extras:
            entries.requirements.append(parse_requirement(requirement.text, f"{name}: {requirement.where}"))
    if found.unread:
        entries.notes.append(f"{name}: {unread_note(found.unread)}")
    return entries


# ---------------------------------------------------------------- environment.yml


def read_environment_yml(text: str, name: str, include: Callable[[str, bool], Entries]) -> Entries:
    import yaml  # noqa: PLC0415 - yaml is heavy (~20 ms): only an environment.yml needs it

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise EnvpinInputError(f"{name}: not valid YAML ({str(error).splitlines()[0]})") from None
    except RecursionError:
        raise EnvpinInputError(f"{name}: not valid YAML (nested too deep)") from None
    except ValueError as error:  # a value the reader cannot make: an integer past Python's digit limit, a 13th month
        raise EnvpinInputError(f"{name}: not valid YAML ({shown(str(error), 160)})") from None
    if not isinstance(document, dict) or not isinstance(document.get("dependencies", []), list):
        raise EnvpinInputError(f"{name}: not a conda environment file (no `dependencies:` list)")
    return _environment_document(document, name, include)


def read_conda_spec_list(text: str, name: str, include: Callable[[str, bool], Entries]) -> Entries:
    """A `conda list --export` spec list (often committed as requirements.txt, which pip cannot read): the same
    packages as the `conda env export` of that environment, its `pypi_0` ones in the pip part, translated alike.
    Every package keeps its own line's number (`requirements.txt:77`), as a requirements file's lines do."""
    specs, origins, pip = [], [], []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        package, _, rest = line.partition("=")
        version, _, build = rest.partition("=")
        # the pip part is read as a requirements text whose line N is the file's line N (the others left blank)
        pip.append(f"{package}=={version}" if line and build == "pypi_0" else "")
        if line and build != "pypi_0":
            specs.append(line if build else f"{package}={version}")
            origins.append(f"{name}:{number}")
    dependencies: list = specs + ([{"pip": pip}] if any(pip) else [])
    entries = _environment_document({"dependencies": dependencies, "prefix": name}, name, include, origins, name)
    entries.notes.insert(0, f"{name}: a conda spec list (`conda list --export`), which pip cannot read: read as "
                            "that environment's conda packages")
    return entries


def _environment_document(document: dict, name: str, include: Callable[[str, bool], Entries],
                          origins: Sequence[str] = (), pip_name: str = "") -> Entries:
    """`origins` names each conda dependency's place where it is not `dependencies[N]` (a spec list's lines), and
    `pip_name` the pip part's (`NAME (pip)` unless given)."""
    entries = Entries(channels=[str(c) for c in document.get("channels") or []])
    dependencies = document.get("dependencies") or []
    export = is_export(document, dependencies)
    moved: dict[str, list[str]] = {}
    for position, item in enumerate(dependencies):
        origin = origins[position] if position < len(origins) else f"{name}: dependencies[{position}]"
        if isinstance(item, dict) and "pip" in item:
            items = [str(line) for line in item["pip"] or []]
            pip = read_requirements_txt("\n".join(items), pip_name or f"{name} (pip)", include,
                                        None if pip_name else _pip_item_origin(name, position, items))
            if export:
                pip.requirements = [r for r in pip.requirements if not _platform_only(r.name, r.text, moved)
                                    and not _framework_dependency(r.name, r.text, moved)]
                pip.exported_pip = [r.origin for r in pip.requirements]
            entries.extend(pip)
        elif isinstance(item, str):
            spec = _exported_spec(item.strip(), moved) if export else item.strip()
            if spec is not None:
                conda_dependency(spec, origin, entries)
                # a build for one Python (`numpy=1.26.4=py39h…`), and python_abi, hold only beside that Python:
                # an export's, or a hand-kept one's (a file whose `prefix:` line was removed before committing)
                parts = item.strip().split("=")
                tied = (len(parts) == 3 and _names_python(parts[2])) or parts[0].strip().lower() == PYTHON_ABI
                if tied and spec in entries.conda_packages:
                    entries.python_tied.append(spec)
        else:
            raise EnvpinInputError(f"{origin}: expected a conda package or a `pip:` list")
    if export:
        entries.notes.extend(_export_notes(name, moved))
    return entries


def _pip_item_origin(name: str, position: int, items: list[str]) -> Callable[[int], str]:
    """Line N of a `pip:` list's text as the item it is of, named as `envpin check` names it: `dependencies[3].pip[1]`."""
    item_of = [n for n, text in enumerate(items) for _ in text.split("\n")]

    def origin(line: int) -> str:
        return f"{name}: dependencies[{position}].pip[{item_of[line - 1]}]"

    return origin


# A `conda env export` pins every package of one machine: `numpy=1.23.5=py39h5f9d8c6_0`. Its build strings name
# that machine's Python (py39) and platform builds, and some packages exist only for its platform (the C runtimes
# and compilers' runtime libraries conda installs by itself as dependencies). Solved for another Python or platform,
# those no longer hold: they are dropped, each said, and every other package is kept at its version.
# (intel-openmp is not among them: anaconda's defaults build it for linux-64 too, `intel-openmp=2021.4.0=h06a4308_3561`
# in Linux exports, anaconda.org/anaconda/intel-openmp/files)
PLATFORM_ONLY = {
    "linux": ("_libgcc_mutex", "_openmp_mutex", "libgcc-ng", "libgcc", "libstdcxx-ng", "libstdcxx", "libgomp",
              "libgfortran-ng", "libgfortran5", "ld_impl_linux-64", "ld_impl_linux-aarch64", "sysroot_linux-64",
              "kernel-headers_linux-64", "libnsl", "libxcrypt", "libcap"),
    "windows": ("vc", "vs2015_runtime", "vc14_runtime", "ucrt", "msys2-conda-epoch", "pywin32", "pywin32-ctypes",
                "win_inet_pton", "wincertstore", "winpty", "pywinpty", "pyreadline", "pyreadline3", "menuinst",
                "libwinpthread", "m2w64-*", "vs20*", "icc_rt"),
    "macos": ("libcxx", "appnope", "llvm-openmp", "libgfortran", "pyobjc-*", "cctools*", "ld64*", "tapi"),
}
# CUDA packages of the nvidia and pytorch channels (and conda-forge's CUDA runtime split): the pinned pip wheels
# bring their own CUDA libraries, and the nvidia channel is dropped
CUDA_RUNTIME_PREFIXES = ("cuda-", "libcublas", "libcufft", "libcufile", "libcurand", "libcusolver", "libcusparse",
                         "libnpp", "libnvjpeg", "libnvjitlink", "libnvfatbin", "libnvvm", "nsight-compute", "cudnn",
                         "nccl", "cutensor", "pytorch-mutex", "torchtriton", "triton", "cupti")


def is_export(document: dict, dependencies: list) -> bool:
    """`conda env export` writes `prefix:` and NAME=VERSION=BUILD for every conda package."""
    specs = [d for d in dependencies if isinstance(d, str)]
    pinned = [d for d in specs if re.fullmatch(r"[^=\s]+=[^=\s]+=[^=\s]+", d.strip())]
    return bool(specs) and len(pinned) == len(specs) and ("prefix" in document or len(specs) >= 10)


def _platform_only(package: str, shown_as: str, moved: dict[str, list[str]]) -> bool:
    lowered = package.lower()
    for platform, names in PLATFORM_ONLY.items():
        if any(lowered == n or (n.endswith("*") and lowered.startswith(n[:-1])) for n in names):
            moved.setdefault(f"{platform}-only", []).append(shown_as)
            return True
    return False


# The pip wheels torch, TensorFlow and JAX name in their Requires-Dist for CUDA (the `pins:` of the database's
# builds: nvidia-* CUDA libraries, cuda-toolkit) and torch's triton. An export pins the ones its framework build pulled
# in; a solve that moves the framework (another release, CUDA, Python or platform) needs the solved build's own, which
# pip takes from that build's metadata, so the exported pins are dropped, each said.
FRAMEWORK_DEPENDENCIES = re.compile(
    r"^(nvidia-(cublas|cuda-(cupti|nvrtc|runtime|nvcc|cccl|crt)|cudnn|cufft|cufile|curand|cusolver|cusparse|cusparselt"
    r"|nccl|nvjitlink|nvtx|nvshmem)(-cu\d+)?|cuda-toolkit|triton)$")


def _framework_dependency(package: str, shown_as: str, moved: dict[str, list[str]]) -> bool:
    if FRAMEWORK_DEPENDENCIES.match(package.lower()):
        moved.setdefault("framework-dependencies", []).append(shown_as)
        return True
    return False


def _exported_spec(spec: str, moved: dict[str, list[str]]) -> str | None:
    """An exported spec without its build string, or None when the package does not carry over."""
    package, version, build = spec.split("=")
    lowered = package.lower()
    if _platform_only(package, f"{package}={version}", moved):
        return None
    if lowered.startswith(CUDA_RUNTIME_PREFIXES) and lowered not in GPU_PACKAGE_ALIASES:
        moved.setdefault("cuda", []).append(f"{package}={version}")
        return None
    moved.setdefault("builds", []).append(build)
    return f"{package}={version}"


def _names_python(build: str) -> bool:
    """A build string made for one Python: `py39h5f9d8c6_0`, `py3.9_cuda11.7_…`, `cuda120_py312h…`, or for one CPython
    ABI, `2_cp38` (python_abi's) and `cp39h…` (not the noarch `pyhd8ed1ab_0`)."""
    return bool(re.search(r"(^|_)py3\.?\d{1,2}", build) or re.match(r"^py\d{2,3}", build)
                or re.search(r"(^|_)cp3\d{1,2}", build))


def _export_notes(name: str, moved: dict[str, list[str]]) -> list[str]:
    notes = []
    builds = moved.get("builds", [])
    if builds:
        tied = sum(1 for b in builds if _names_python(b))
        notes.append(f"{name} is a `conda env export`: the build strings of its {len(builds)} conda packages are "
                     f"dropped ({tied} of them name the exported machine's Python, the rest its platform builds); "
                     "each package is kept at its version")
    for key, packages in moved.items():
        if key.endswith("-only"):
            notes.append(f"{name}: dropped {key.replace('-only', '')}-only packages {', '.join(packages)} (runtime "
                         "libraries conda installs by itself for the platform it installs on)")
    if moved.get("framework-dependencies"):
        notes.append(f"{name} (pip): dropped the CUDA libraries and triton the exported framework builds brought "
                     f"({', '.join(moved['framework-dependencies'])}): pip installs the ones the solved builds require")
    if moved.get("cuda"):
        notes.append(f"{name}: dropped the conda CUDA packages {', '.join(moved['cuda'])}: the pinned pip wheels "
                     "bring their own CUDA libraries, and the nvidia channel is dropped with them")
    return notes


def conda_dependency(spec: str, origin: str, entries: Entries) -> None:
    channel, _, rest = spec.rpartition("::")
    match = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", rest)
    if not match:
        raise EnvpinInputError(f"{origin}: {spec!r} is not a conda package spec")
    package, version = match.group(1).lower(), match.group(2).strip()
    if package == "python":
        exact = re.match(r"^=?=?(3\.\d+)(\.\*|\.\d+)?(=[^=\s]+)?$", version)  # a build string after it: `=3.9.18=h…`
        entries.python = exact.group(1) if exact else None
    elif package == "pip":
        return
    elif package in CONDA_CUDA_SUPPLIERS:
        cuda = _pinned_cuda(package, version)
        if cuda is not None and entries.torch_cuda is None:
            entries.torch_cuda = (cuda, f"{spec} ({origin})")
            entries.notes.append(f"{origin}: conda `{spec}` is solved as torch's CUDA {cuda} build where it runs here "
                                 "(the pip wheels bring their own CUDA libraries)")
        else:
            entries.notes.append(f"{origin}: conda `{spec}` dropped: the pinned pip wheels bring their own CUDA "
                                 "libraries")
    elif package in GPU_PACKAGE_ALIASES:
        pip_spec = conda_version_to_pip(version)
        entries.requirements.append(parse_requirement(f"{package}{pip_spec}", origin))
        entries.notes.append(f"{origin}: conda `{spec}` is solved as pip `{package}{pip_spec}`")
        build = version.replace(" ", "").lstrip("=").partition("=")[2]
        if "cuda" in build.lower():  # `jaxlib=0.3.15=*cuda*`, `pytorch=1.12=py3.9_cuda11.3*`: this build on purpose
            entries.gpu_asked.append((package, f"{spec} ({origin})"))
    else:
        entries.conda_packages.append(spec if not channel else f"{channel}::{rest}")


# conda packages whose one X.Y version is the CUDA the pytorch channel's torch build was made with
# (`cudatoolkit=11.3` beside `pytorch=1.11.0`: the `py3.9_cuda11.3_cudnn8_0` build; `pytorch-cuda=11.8` from 2.0 on)
TORCH_CUDA_PINS = ("cudatoolkit", "pytorch-cuda")


def _pinned_cuda(package: str, version: str) -> str | None:
    """`11.3` for `cudatoolkit=11.3`, `==11.3.1` or `11.3.*`; None for a range or another package."""
    if package not in TORCH_CUDA_PINS:
        return None
    exact = re.fullmatch(r"=?=?(\d{1,2})\.(\d{1,2})(\.\d{1,4}|\.\*)?(=\S*)?", version.replace(" ", ""))
    return f"{exact.group(1)}.{exact.group(2)}" if exact else None


def pixi_python_spec(text: str) -> str | None:
    """A manifest's conda `python` entry (`python 3.10.*`, `python >=3.11,<3.13`) as a PEP 440 specifier of the
    Pythons it allows; None for another package, no version, or a spec PEP 440 cannot say (`3.10|3.11`)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a manifest's python line

    name, _, version = text.strip().partition(" ")
    if name.lower() != "python" or version.strip() in ("", "*"):
        return None
    spec = conda_version_to_pip(version.strip())
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    return spec


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


@record
class ManifestEntry(Record):
    """One requirement a manifest declares, wherever it is: a PEP 508 line (pip) or a conda match spec."""

    text: str  # `torch>=2.7`, `pytorch 2.4.*` (conda: name, then the version spec, then the build)
    where: str  # `project.optional-dependencies.cu128[0]`, `feature.cuda.dependencies.pytorch`
    manager: str = "pip"  # pip / conda
    scope: tuple[str, ...] = ()  # `extra:cu128`, `group:dev`, `feature:cuda`, a marker: the environments it is in
    index: str | None = None  # the one index it comes from (a uv source, a pixi pypi `index`)
    channel: str | None = None  # conda: the channel it comes from
    build: str | None = None  # conda: the build string the table names
    platforms: tuple[str, ...] = ()  # conda subdirs of a pixi `target.<subdir>` table


@record
class ManifestIndex(Record):
    name: str
    url: str
    explicit: bool = False  # uv: used only by the packages whose source names it
    default: bool = False  # uv: replaces PyPI


@record
class Manifest(Record):
    """What a pyproject.toml (`[project]`, PEP 735 groups, uv's indexes and sources, `[tool.poetry]`, `[tool.pixi]`) or a
    pixi.toml declares, every extra, group and feature included, each entry labelled with where it is."""

    entries: tuple[ManifestEntry, ...]
    indexes: tuple[ManifestIndex, ...] = ()  # uv's [[tool.uv.index]], in order
    channels: tuple[str, ...] = ()  # pixi's workspace channels
    requires_python: str | None = None
    notes: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()  # pixi's workspace platforms, as conda subdirs
    pypi_index_url: str | None = None  # pixi's `[pypi-options]` index-url: the default index, in place of PyPI
    pypi_extra_index_urls: tuple[str, ...] = ()  # pixi's `[pypi-options]` extra-index-urls
    unindexed: tuple[str, ...] = ()  # pixi pypi-dependencies from a path, git or URL (where): no index serves them
    requires_python_where: str = "project.requires-python"  # or poetry's `tool.poetry.dependencies.python`


def read_manifest(text: str, name: str) -> Manifest:
    """A pyproject.toml or pixi.toml (by `name`'s file name), read whole. Bad TOML is an EnvpinInputError."""
    from envpin.base import _toml  # noqa: PLC0415 - envpin._toml is the TOML parser (~4 ms): only a manifest needs it

    try:
        document = _toml.loads_manifest(text)
    except _toml.TOMLDecodeError as error:
        raise EnvpinInputError(f"{name}: {error}") from None  # it names the TOML version and the line
    if name.replace("\\", "/").rsplit("/", 1)[-1] == "pixi.toml":
        try:
            return _pixi(document, "")
        except _NotAList as error:
            raise EnvpinInputError(f"{name}: {error}") from None
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
    python_where = "project.requires-python"
    poetry = _table(_table(document.get("tool")).get("poetry"))
    if poetry:
        from envpin.readers.poetry import poetry_lines  # noqa: PLC0415 - only a poetry project needs it

        lines, poetry_python = poetry_lines(poetry, notes, has_project_dependencies="dependencies" in project)
        entries += [ManifestEntry(line, where, scope=scope) for line, where, scope in lines]
        if not isinstance(requires_python, str) and poetry_python:
            requires_python, python_where = poetry_python, "tool.poetry.dependencies.python"
    pixi = _table(_table(document.get("tool")).get("pixi"))
    manifest = Manifest(tuple(entries), indexes, (), requires_python if isinstance(requires_python, str) else None,
                        tuple(notes), requires_python_where=python_where)
    if pixi:
        try:
            inner = _pixi(pixi, "tool.pixi.")
        except _NotAList as error:
            raise EnvpinInputError(f"{name}: {error}") from None
        manifest = Manifest(manifest.entries + inner.entries, indexes, inner.channels, manifest.requires_python,
                            manifest.notes + inner.notes, inner.platforms, inner.pypi_index_url,
                            inner.pypi_extra_index_urls, inner.unindexed, python_where)
    return manifest


class _NotAList(ValueError):
    """A manifest key that must be a list holds another type (`platforms = 5`)."""


def _list(value, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _NotAList(f"{where}: expected a list, not {type(value).__name__}")
    return value


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
    (uv's documented layout for one torch build per extra or per platform). As uv lowers them
    (crates/uv-distribution/src/metadata/lowering.rs), a source naming an extra or a group applies only to the
    lines of that extra or group (a `[project]` dependency keeps PyPI), and where the sources' markers leave
    some machines out, the line comes from the default index there (an entry scoped by the markers' negation)."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a manifest needs it

    from envpin.vocabulary.markers import markers_meet, negated  # noqa: PLC0415 - only a marker-scoped source needs it

    head = re.split(r"[\s\[<>=!~;@(]", line.strip(), maxsplit=1)[0]
    source = {canonicalize_name(k): v for k, v in sources.items()}.get(canonicalize_name(head)) if head else None
    if source is None:
        return [ManifestEntry(line, where, scope=scope)]
    listed = source if isinstance(source, list) else [source]
    # the line's own marker: a source whose marker never holds where the line does is not its source (uv takes,
    # on each machine, the source whose marker holds there: `torch==2.8.0+cu126; platform_machine == 'x86_64'`
    # never meets the aarch64 source beside it)
    own_marker = line.partition(";")[2].strip() if "://" not in line else ""
    by_name = {i.name: i.url for i in indexes}
    entries = []
    markers: list[str] = []
    covers_all = False
    for position, item in enumerate(listed):
        if not isinstance(item, dict):
            continue
        extra, group, marker = item.get("extra"), item.get("group"), item.get("marker")
        if (extra and scope != (f"extra:{extra}",)) or (group and scope != (f"group:{group}",)):
            continue  # a source for another extra or group than the one this line is in (or for none)
        if marker:
            markers.append(str(marker))
            if not markers_meet(own_marker, str(marker)):
                continue
        else:
            covers_all = True
        index = by_name.get(str(item.get("index"))) if item.get("index") else None
        if item.get("index") and index is None:
            notes.append(f"{where}: tool.uv.sources names index {item.get('index')!r}, which no [[tool.uv.index]] defines")
        if not item.get("index"):
            continue  # a git, path or URL source: not an index build
        own = scope + ((str(marker),) if marker else ())
        entries.append(ManifestEntry(line, f"{where} (tool.uv.sources.{head}[{position}])" if isinstance(source, list)
                                     else where, scope=own, index=index))
    if not markers or covers_all:
        return entries or [ManifestEntry(line, where, scope=scope)]
    rest = [negated(m) for m in markers]
    if any(r is None for r in rest):
        return entries or [ManifestEntry(line, where, scope=scope)]  # a marker envpin cannot negate: the sources alone
    elsewhere = " and ".join(f"({r})" if len(rest) > 1 else str(r) for r in rest)
    if not markers_meet(own_marker, elsewhere):
        return entries  # the sources' markers cover every machine the line is installed on
    return entries + [ManifestEntry(line, where, scope=scope + (elsewhere,))]


def _pixi(document: dict, prefix: str) -> Manifest:
    """pixi's manifest: `[dependencies]` (conda), `[pypi-dependencies]`, `[system-requirements]`, the same
    under `[feature.NAME]` and `[target.SELECTOR]` (and `[feature.NAME.target.SELECTOR]`), channels and
    platforms from `[workspace]` (or the older `[project]`). A target selector is a subdir (`linux-64`), an OS
    (`linux`, `win`, `osx`, `unix`), a named platform (`{ name = "linux-64-cuda", platform = "linux-64", cuda =
    "12.0" }`) or a glob of names (`*-cuda`); each target is a scope of its own."""
    key = "workspace" if _table(document.get("workspace")) else "project"
    workspace = _table(document.get(key))
    channels = tuple(str(c.get("channel") if isinstance(c, dict) else c)
                     for c in _list(workspace.get("channels"), f"{prefix}{key}.channels"))
    named: dict[str, str] = {}
    entries: list[ManifestEntry] = []
    for position, platform in enumerate(_list(workspace.get("platforms"), f"{prefix}{key}.platforms")):
        if isinstance(platform, dict) and isinstance(platform.get("platform"), str):
            name = str(platform.get("name") or platform["platform"])
            named[name] = platform["platform"]
            if isinstance(platform.get("cuda"), (str, int, float)):
                entries.append(ManifestEntry(f"__cuda {platform['cuda']}", f"{prefix}workspace.platforms[{position}].cuda",
                                             "conda", (f"target:{name}",), platforms=(platform["platform"],)))
        elif isinstance(platform, str):
            named[platform] = platform
    unindexed: list[str] = []
    entries += _pixi_tables(document, prefix, (), named, unindexed)
    for feature, table in _table(document.get("feature")).items():
        entries += _pixi_tables(_table(table), f"{prefix}feature.{feature}.", (f"feature:{feature}",), named, unindexed)
    options = _table(document.get("pypi-options"))
    index_url = options.get("index-url")
    extra = tuple(_strings(options.get("extra-index-urls")))
    return Manifest(tuple(entries), (), channels, platforms=tuple(dict.fromkeys(named.values())),
                    pypi_index_url=index_url if isinstance(index_url, str) else None, pypi_extra_index_urls=extra,
                    unindexed=tuple(unindexed))


_PIXI_OS: dict[str, tuple[str, ...]] = {"linux": ("linux-",), "win": ("win-",), "osx": ("osx-",), "unix": ("linux-", "osx-")}


def _pixi_subdirs(selector: str, named: dict[str, str]) -> tuple[str, ...]:
    import fnmatch  # noqa: PLC0415 - only a pixi target selector needs it

    if selector in named:
        return (named[selector],)
    if selector in _PIXI_OS:
        known = set(named.values()) or {"linux-64", "linux-aarch64", "win-64", "osx-64", "osx-arm64"}
        return tuple(sorted(s for s in known if s.startswith(_PIXI_OS[selector])))
    matched = sorted({subdir for name, subdir in named.items() if fnmatch.fnmatchcase(name, selector)})
    return tuple(matched) or (selector,)


def _pixi_tables(table: dict, prefix: str, scope: tuple[str, ...], named: dict[str, str], unindexed: list[str],
                 platforms: tuple[str, ...] = ()) -> list[ManifestEntry]:
    """The entries of one table (the manifest, a feature, a target); `unindexed` gathers where a pypi-dependency
    is a path, git or URL package."""
    entries = []
    for name, value in _table(table.get("dependencies")).items():
        entries.append(_pixi_conda(name, value, f"{prefix}dependencies.{name}", scope, platforms))
    for name, value in _table(table.get("pypi-dependencies")).items():
        entry = _pixi_pypi(name, value, f"{prefix}pypi-dependencies.{name}", scope, platforms)
        if entry is not None:
            entries.append(entry)
        else:
            unindexed.append(f"{prefix}pypi-dependencies.{name}")
    cuda = _table(table.get("system-requirements")).get("cuda")
    if isinstance(cuda, (str, int, float)):
        entries.append(ManifestEntry(f"__cuda {cuda}", f"{prefix}system-requirements.cuda", "conda", scope,
                                     platforms=platforms))
    if not platforms:
        for selector, inner in _table(table.get("target")).items():
            entries += _pixi_tables(_table(inner), f"{prefix}target.{selector}.", scope + (f"target:{selector}",),
                                    named, unindexed, _pixi_subdirs(str(selector), named))
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


def _pixi_pypi(name: str, value, where: str, scope: tuple[str, ...], platforms: tuple[str, ...]) -> ManifestEntry | None:
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
    return ManifestEntry(f"{name}{extra_text}{specifier}", where, "pip", scope, index=str(index) if index else None,
                         platforms=platforms)
