"""The locking engines: uv (`uv pip compile --format pylock.toml`) and pip ≥ 25.1 (`pip lock`).

Both get the same LockInput and return the PEP 751 document they wrote, as a dict; `pylock` completes it.
The argv and the input files are built by pure functions (tested on their own); `run_engine` is the only
I/O. Index-steering environment variables are removed from the engine's environment, because the lock's
indexes are the ones envpin names, not whatever a shell happens to export.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Protocol

from envpin.base.errors import EnvpinError, EnvpinInputError, Unreachable, looks_unreachable
from envpin.base.escapes import exit_status
from envpin.base.record import Record, record
from envpin.host.runner import CommandTimeout, run_command
from envpin.lock.indexes import IndexPlan, index_name
from envpin.vocabulary.platforms import (
    LINUX_AARCH64,
    LINUX_X86_64,
    MACOS_ARM64,
    MACOS_X86_64,
    WINDOWS_ARM64,
    WINDOWS_X86_64,
)

# uv's names for the platforms envpin solves for (`uv pip compile --help`, --python-platform).
UV_PLATFORMS = {
    LINUX_X86_64: "x86_64-unknown-linux-gnu",
    LINUX_AARCH64: "aarch64-unknown-linux-gnu",
    WINDOWS_X86_64: "x86_64-pc-windows-msvc",
    WINDOWS_ARM64: "aarch64-pc-windows-msvc",
    MACOS_ARM64: "aarch64-apple-darwin",
    MACOS_X86_64: "x86_64-apple-darwin",
}
INDEX_VARIABLES = (
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX",
    "UV_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_FIND_LINKS", "UV_NO_INDEX",
    "UV_INDEX_STRATEGY", "UV_CONSTRAINT", "UV_OVERRIDE", "UV_TORCH_BACKEND",
)
PIP_LOCK_MINIMUM = (25, 1)  # `pip lock` first shipped in pip 25.1


class LockFailed(EnvpinError):
    """The engine found no solution (exit 1: a real negative answer, not bad input)."""

    exit_code = 1

    def __init__(self, message: str, conflict: str = ""):
        super().__init__(message)
        self.conflict = conflict  # the engine's whole explanation, on one line (the message shortens it)


@record
class LockInput(Record):
    pins: tuple[str, ...]  # the plan's requirements: "torch==2.5.1+cu124"
    requirements: tuple[str, ...]  # the project's other requirements, PEP 508
    indexes: IndexPlan
    python: str  # "3.11"
    platform: str  # "linux-x86_64"
    macos: str | None = None  # the macOS a Mac's lock is resolved for: "14.5"
    offline: bool = False  # uv: resolve from its cache only (`uv --offline`), never asking an index
    # False for a resolution that only answers (`--resolve`): uv must not download a Python of the target's version to
    # answer it (where there is no network, each try waits on DNS: 25 s against 9 s, measured)
    python_downloads: bool = True
    # uv: indexes asked before the default one for every package (a manifest's non-explicit [[tool.uv.index]], which
    # uv's first-index strategy asks first); a plan's lock has none
    searched_indexes: tuple[str, ...] = ()


class Engine(Protocol):
    @property
    def name(self) -> str: ...  # read-only: the engines are records

    def version(self) -> str: ...

    def lock(self, lock_input: LockInput, workdir: Path, timeout: float) -> str:
        """Write the lock in workdir and return its TOML text."""


# ---------------------------------------------------------------- uv


def find_uv() -> str | None:
    """The uv binary of the `uv` package (PyPI), else one on PATH."""
    try:
        from uv import find_uv_bin  # noqa: PLC0415 - uv may be missing: its ImportError falls back to PATH here

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def uv_input_project(lock_input: LockInput) -> dict:
    """A throwaway pyproject.toml for `uv pip compile`: the pins and requirements as dependencies, each
    accelerator index declared `explicit` (only packages bound to it by [tool.uv.sources] may use it)."""
    names = _index_names(lock_input.indexes.accelerator_indexes)
    return {
        "project": {
            "name": "envpin-lock-input",  # resolution.LOCK_PROJECT: uv's conflicts name it
            "version": "0",
            "requires-python": f"=={lock_input.python}.*",
            "dependencies": list(lock_input.pins) + list(lock_input.requirements),
        },
        "tool": {
            "uv": {
                "index": [{"name": names[url], "url": url, "explicit": True} for url in names],
                "sources": {name: {"index": names[url]} for name, url in lock_input.indexes.bindings},
            }
        },
    }


def uv_compile_argv(uv: str, lock_input: LockInput, project: Path, constraints: Path, output: Path) -> list[str]:
    platform = UV_PLATFORMS.get(lock_input.platform)
    if platform is None:
        raise EnvpinInputError(f"uv cannot lock for {lock_input.platform}; known: {', '.join(UV_PLATFORMS)}")
    return [
        uv, "pip", "compile", str(project),
        "--constraints", str(constraints),  # the GPU pins again, so no other requirement can move them
        "--no-config",  # a uv.toml or pyproject of the user's must not add indexes
        *[word for url in lock_input.searched_indexes for word in ("--index", url)],
        "--default-index", lock_input.indexes.default_index,
        "--index-strategy", "first-index",
        "--python-version", lock_input.python,
        "--python-platform", platform,
        "--format", "pylock.toml",
        "--generate-hashes",
        "--no-header", "--quiet",
        "--output-file", str(output),
    ] + (["--offline"] if lock_input.offline else [])


def uv_check_argv(uv: str, requirements: Path, indexes: tuple[str, ...], python: str, platform: str, output: Path,
                  offline: bool = False) -> list[str]:
    """`check --resolve`: a file's own lines resolved as pip reads them: its first index the default, the others
    extra indexes, the best version from any of them (pip's rule, uv's `unsafe-best-match`)."""
    uv_platform = UV_PLATFORMS.get(platform)
    if uv_platform is None:
        raise EnvpinInputError(f"uv cannot resolve for {platform}; known: {', '.join(UV_PLATFORMS)}")
    argv = [uv, "pip", "compile", str(requirements), "--no-config", "--index-url", indexes[0]]
    for url in indexes[1:]:
        argv += ["--extra-index-url", url]
    return argv + ["--index-strategy", "unsafe-best-match", "--python-version", python, "--python-platform",
                   uv_platform, "--no-header", "--quiet", "--output-file", str(output)] + (["--offline"] if offline else [])


@record
class UvEngine(Record):
    binary: str
    name: str = "uv"

    def version(self) -> str:
        return _first_line([self.binary, "--version"]).split(" (")[0]

    def lock(self, lock_input: LockInput, workdir: Path, timeout: float) -> str:
        import tomli_w  # noqa: PLC0415 - tomli_w (~3 ms) only for a uv lock's input

        project = workdir / "pyproject.toml"
        constraints = workdir / "constraints.txt"
        output = workdir / "pylock.toml"
        project.write_text(tomli_w.dumps(uv_input_project(lock_input)), encoding="utf-8")
        constraints.write_text("".join(f"{pin}\n" for pin in lock_input.pins), encoding="utf-8")
        run_engine(uv_compile_argv(self.binary, lock_input, project, constraints, output), workdir, timeout,
                   uv_environment(lock_input))
        return output.read_text(encoding="utf-8")


# ---------------------------------------------------------------- pip


def pip_lock_argv(python: str, lock_input: LockInput, requirements: Path, output: Path) -> list[str]:
    # pip cannot bind a package to an index: the accelerator index is an extra index. The full local
    # versions (2.5.1+cu124) exist only there (PyPI refuses local versions), so the pins still cannot be
    # met by another build; `pylock.check_pins` confirms it on the result.
    argv = [python, "-m", "pip", "lock", "--no-input", "--disable-pip-version-check", "--only-binary", ":all:",
            "--index-url", lock_input.indexes.default_index]
    for url in lock_input.indexes.accelerator_indexes:
        argv += ["--extra-index-url", url]
    return argv + ["--quiet", "-r", str(requirements), "-o", str(output)]


def pip_version(python: str) -> tuple[int, ...] | None:
    try:
        text = _first_line([python, "-m", "pip", "--version"])
    except EnvpinError:
        return None
    found = re.match(r"pip (\d+)\.(\d+)", text)
    return (int(found[1]), int(found[2])) if found else None


@record
class PipEngine(Record):
    python: str = sys.executable
    name: str = "pip"

    def version(self) -> str:
        return _first_line([self.python, "-m", "pip", "--version"]).split(" from ")[0]

    def lock(self, lock_input: LockInput, workdir: Path, timeout: float) -> str:
        running = f"{sys.version_info[0]}.{sys.version_info[1]}"
        if self.python == sys.executable and lock_input.python != running:
            raise EnvpinInputError(
                f"--locker pip locks for the Python it runs on ({running}); the target is Python "
                f"{lock_input.python}: use --locker uv, which locks for any target"
            )
        requirements = workdir / "requirements.in"
        output = workdir / "pylock.toml"
        requirements.write_text("".join(f"{r}\n" for r in lock_input.pins + lock_input.requirements), encoding="utf-8")
        run_engine(pip_lock_argv(self.python, lock_input, requirements, output), workdir, timeout)
        return output.read_text(encoding="utf-8")


def choose_engine(name: str | None) -> Engine:
    """`--locker uv|pip`; by default uv when it is installed, else pip ≥ 25.1."""
    if name not in (None, "uv", "pip"):
        raise EnvpinInputError(f"--locker {name!r}: expected uv or pip")
    if name in (None, "uv"):
        uv = find_uv()
        if uv:
            return UvEngine(uv)
        if name == "uv":
            raise EnvpinInputError("--locker uv: uv is not installed (pip install uv)")
    found = pip_version(sys.executable)
    if found is None or found < PIP_LOCK_MINIMUM:
        have = ".".join(map(str, found)) if found else "none"
        raise EnvpinInputError(f"locking needs uv (pip install uv) or pip >= 25.1 for `pip lock` (found pip {have})")
    return PipEngine()


# ---------------------------------------------------------------- running


def engine_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in INDEX_VARIABLES}


def uv_environment(lock_input: LockInput) -> dict[str, str]:
    """uv resolves a macOS platform for macOS 13.0 unless MACOSX_DEPLOYMENT_TARGET says otherwise, and torch
    2.12+'s arm64 wheels are tagged macosx_14_0: a Mac's lock is resolved for the macOS it is for."""
    environment = engine_environment()
    environment.pop("MACOSX_DEPLOYMENT_TARGET", None)  # this machine's setting says nothing about the target
    if lock_input.macos and lock_input.platform.startswith("macos"):
        environment["MACOSX_DEPLOYMENT_TARGET"] = lock_input.macos
    if not lock_input.python_downloads:
        environment["UV_PYTHON_DOWNLOADS"] = "never"
    return environment


ENGINE_OUTPUT = 64 * 1024 * 1024  # what a locking engine may print (uv and pip print kilobytes; their locks go to files)


def run_engine(argv: list[str], cwd: Path, timeout: float, environment: dict[str, str] | None = None) -> None:
    """Run a locking engine; its failure becomes one line naming the cause."""
    try:
        result = run_command(argv, timeout, cwd=cwd, env=environment or engine_environment(), max_output=ENGINE_OUTPUT)
    except CommandTimeout:
        raise EnvpinInputError(f"{Path(argv[0]).name} lock: no answer after {timeout:g} s (is the index reachable?)") from None
    except OSError as error:
        raise EnvpinInputError(f"{argv[0]}: cannot run ({error.strerror or error})") from None
    if result.returncode != 0:
        raise engine_error(Path(argv[0]).name, result.stderr or result.stdout)


def engine_error(engine: str, output: str) -> EnvpinError:
    """One line from an engine's failure: a conflict is exit 1, anything else (unreachable index) exit 2."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.lstrip().startswith(("WARNING", "hint:"))]
    whole = re.sub(r"\s+", " ", re.sub(r"\x1b\[[0-9;]*m", "", " ".join(lines)))
    text = whole[:600] or "failed without a message"
    if looks_unreachable(text):
        return Unreachable("an index", f"{engine}: {text}")
    if re.search(r"No solution found|ResolutionImpossible|conflicting dependencies|No matching distribution", text):
        return LockFailed(f"{engine}: no solution: {text}", whole)
    return EnvpinInputError(f"{engine}: {text}")


def _first_line(argv: list[str]) -> str:
    try:
        result = run_command(argv, 60, env=engine_environment())
    except (OSError, CommandTimeout) as error:
        raise EnvpinInputError(f"{argv[0]}: cannot run ({error})") from None
    if result.returncode != 0:
        raise EnvpinInputError(f"{' '.join(argv)}: {exit_status(result.returncode)}")
    return (result.stdout.strip().splitlines() or ["?"])[0]


def _index_names(urls: tuple[str, ...]) -> dict[str, str]:
    names: dict[str, str] = {}
    for url in urls:
        name = index_name(url)
        while name in names.values():
            name += "-2"
        names[url] = name
    return names
