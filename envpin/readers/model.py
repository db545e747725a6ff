"""The values `envpin check` passes between its stages: file text → Contents (pins + what the format found)
→ Problems. Every value is frozen and JSON-friendly; nothing here reads a file or the database."""

from __future__ import annotations

from envpin.base.record import Record, field, record

SEVERITIES = ("error", "warning", "info")


@record
class Problem(Record):
    id: str  # a stable id from rules.PROBLEMS, e.g. CHK-TORCH-COMPANION-MISMATCH
    severity: str  # error / warning / info
    message: str  # what is wrong, naming the facts that show it
    where: str  # the path of the bad field: "packages[3].wheels[0].hashes", "line 12", "dependencies[4].pip[1]"
    fix: str  # a concrete action

    @property
    def text(self) -> str:
        """The message and its fix in one sentence pair, as the JSON contract carries them."""
        return f"{self.message}. Fix: {self.fix}"


@record
class Pin(Record):
    """One package a file installs (or asks for), reduced to what the cross-format rules need."""

    name: str  # canonical project name; conda's `pytorch` is `torch`
    where: str
    label: str = ""  # the requirement as written, for messages ("torch==2.5.1+cu121", "pytorch=2.1.0=py3.10_cuda12.1_0")
    version: str | None = None  # the exact version ("2.5.1+cu124"); None when a range or unpinned
    specifier: str = ""  # a pip range as written (">=2.7,<2.13"); empty for an exact pin or none
    manager: str = "pip"  # pip or conda
    index: str | None = None  # the index this entry is bound to (uv.lock source, pylock `index`, a file URL's directory)
    build: str | None = None  # the conda build string
    extras: frozenset[str] = frozenset()
    scope: frozenset[str] = frozenset()  # the exclusive environments it belongs to (marker, platform, extra); empty: all
    platforms: tuple[str, ...] = ()  # envpin platforms its files are for, where the entry says (wheel tags, conda subdir)
    pythons: tuple[str, ...] = ()  # CPython minors its wheels are limited to (cp311 tags); empty: any, or not said

    @property
    def shown(self) -> str:
        return self.label or (f"{self.name}=={self.version}" if self.version else self.name)


def can_coexist(first: Pin, second: Pin) -> bool:
    """Whether two pins can land in one environment. Scopes are labels of mutually exclusive environments
    (a marker, a conda platform, a conflicting extra): pins with disjoint labels never meet. The extras, groups
    and features (`extra:cu126`) and the other labels are compared apart, so two extras' lines that share a
    marker (`group:cu126` and `group:cu130`, each with `sys_platform == 'linux'`) stay apart. Comparing
    labels, not marker logic, can miss a clash between two different markers; it never invents one."""
    first_sets, second_sets = _environments(first.scope), _environments(second.scope)
    return all(not a or not b or bool(a & b) for a, b in zip(first_sets, second_sets, strict=True))


def _environments(scope: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    named = frozenset(s for s in scope if s.startswith(("extra:", "group:", "feature:")))
    return named, scope - named


OS_MARKERS = {"linux": ("linux",), "windows": ("win32", "windows"), "macos": ("darwin",)}


def scope_oses(pin: Pin) -> set[str]:
    """The operating systems a pin's markers plainly name (`sys_platform == 'darwin'`, `platform_system ==
    'Windows'`); empty when they name none. Other marker logic is not evaluated."""
    text = " ".join(pin.scope).lower().replace('"', "'")
    return {os_name for os_name, words in OS_MARKERS.items() if any(f"== '{w}'" in text for w in words)}


@record
class IndexOption(Record):
    """A requirement-file option that decides where pip looks: --index-url, --extra-index-url, --find-links, --no-index."""

    option: str  # index-url / extra-index-url / find-links / no-index
    url: str | None
    where: str


@record
class LockedPlatform(Record):
    """One platform a pixi.lock environment is locked for: its pins are scoped `pixi:<environment>@<name>`."""

    environment: str
    name: str  # the platform's name in the lock: the conda subdir, or a version 7 name (`cuda-linux-64`)
    subdir: str  # the conda subdir its packages are for
    cuda: str | None = None  # the `__cuda` a version 7 platform declares (pixi selects it only where it holds)


@record
class Contents(Record):
    kind: str  # environment.yml / requirements / pylock / conda-lock / explicit / uv.lock / pixi.lock / …
    pins: tuple[Pin, ...] = ()
    indexes: tuple[IndexOption, ...] = ()  # file-wide index options (requirements, environment.yml pip section)
    platforms: tuple[str, ...] = ()  # the platforms the whole file is for, when it says (conda-lock, @EXPLICIT)
    channels: tuple[str, ...] = ()  # the conda channels the file names, in order (environment.yml, pixi)
    problems: tuple[Problem, ...] = ()  # what the format's own checks found (structure, hashes)
    binds_indexes: bool = False  # True for locks: every entry names its own source, file-wide indexes do not apply
    requires_python: str | None = None  # `requires-python` of a lock (uv.lock, pylock.toml) or a pyproject.toml, as written
    requires_python_where: str = "project.requires-python"  # a pyproject.toml's: or poetry's tool.poetry.dependencies.python
    exported_on: str | None = None  # a `conda env export`: the OS its platform-only packages are for (linux, …)
    exported_only: tuple[str, ...] = ()  # those packages, as written
    environments: tuple[LockedPlatform, ...] = ()  # a pixi.lock: each environment's platforms, in the lock's order


@record
class FileReport(Record):
    path: str
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    unreadable: bool = False  # the file could not be read or parsed at all (exit 2)

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")


class MalformedFile(Exception):
    """The text is not the format at all (YAML/TOML syntax, wrong top-level type): bad input, exit 2."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.where = where


class UnreadableInclude(Exception):
    """A file that `-r`/`-c` includes cannot be read, or the includes pass their bounds: bad input, exit 2, as for
    the checked file itself. The message names the line, the option and the file."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
