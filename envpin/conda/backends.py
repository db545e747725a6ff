"""Creating a conda environment with the user's own conda, mamba or micromamba.

conda's default solver is conda-libmamba-solver, which is not on PyPI: envpin uses it by running the installed
tool. The command lines and the environment are pure functions (tested on their own); `CondaToolBackend` runs
them. The target's `__cuda` / `__glibc` / `__osx` reach the tool as CONDA_OVERRIDE_* built from envpin's facts;
any CONDA_OVERRIDE_* the user's shell carries is dropped, since an unvalidated one is the bug envpin prevents.

conda environments embed their own path in scripts and libraries, so an environment made by these tools cannot
be built elsewhere and renamed into place (the rattler backend can): atomicity here means a prefix that did not
exist before is removed again when the tool fails or times out, and an existing non-empty prefix is refused.
"""

from __future__ import annotations

import os
import platform as host_platform
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from envpin.conda.errors import CondaInputError, CondaToolFailed
from envpin.conda.virtual import VirtualPackage, override_environment

TOOLS = ("conda", "mamba", "micromamba")
CREATE_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class ToolRun:
    """One run of a conda tool: what to execute and the environment to execute it in."""

    argv: tuple[str, ...]
    environment: dict[str, str]


def create_command(tool: str, executable: str, source: Path, prefix: Path) -> tuple[str, ...]:
    """The command that creates `prefix` from `source`: an environment.yml (the tool solves it) or an
    `@EXPLICIT` lock (the tool installs exactly those URLs, no solve)."""
    if tool not in TOOLS:
        raise CondaInputError(f"--backend {tool!r}: expected one of {', '.join(TOOLS)}")
    explicit = is_explicit_lock(source)
    if explicit:
        return (executable, "create", "--yes", "--prefix", str(prefix), "--file", str(source))
    if tool == "conda":
        # `conda env create` asks nothing; its --yes is recent, so CONDA_ALWAYS_YES covers older condas.
        return (executable, "env", "create", "--prefix", str(prefix), "--file", str(source))
    if tool == "mamba":
        return (executable, "env", "create", "--yes", "--prefix", str(prefix), "--file", str(source))
    return (executable, "create", "--yes", "--prefix", str(prefix), "--file", str(source))


def is_explicit_lock(source: Path) -> bool:
    try:
        with open(source, encoding="utf-8") as handle:
            return any(line.strip() == "@EXPLICIT" for line in handle)
    except (OSError, UnicodeDecodeError) as error:
        raise CondaInputError(f"{source}: cannot be read ({error.__class__.__name__})") from None


def tool_run(
    tool: str,
    executable: str,
    source: Path,
    prefix: Path,
    virtual_packages: tuple[VirtualPackage, ...],
    base_environment: dict[str, str],
) -> ToolRun:
    environment = override_environment(base_environment, virtual_packages)
    environment["CONDA_ALWAYS_YES"] = "true"
    return ToolRun(create_command(tool, executable, source, prefix), environment)


def native_subdir() -> str:
    """The conda subdir of the machine envpin runs on: the only one a conda tool creates working environments for."""
    system = {"linux": "linux", "darwin": "osx", "windows": "win"}.get(host_platform.system().lower(), "?")
    machine = host_platform.machine().lower()
    arch = {"x86_64": "64", "amd64": "64", "aarch64": "aarch64" if system == "linux" else "arm64",
            "arm64": "aarch64" if system == "linux" else "arm64"}.get(machine, machine)
    return f"{system}-{arch}"


def find_tool(tool: str) -> str | None:
    """The tool's executable on PATH (micromamba also as $MAMBA_EXE), or None."""
    found = shutil.which(tool)
    if found is None and tool == "micromamba" and os.environ.get("MAMBA_EXE"):
        candidate = os.environ["MAMBA_EXE"]
        found = candidate if os.access(candidate, os.X_OK) else None
    return found


class CondaToolBackend:
    """`envpin install --backend conda|mamba|micromamba`: create an environment with the user's tool."""

    def __init__(self, tool: str, executable: str | None = None, timeout_s: float = CREATE_TIMEOUT_S):
        if tool not in TOOLS:
            raise CondaInputError(f"--backend {tool!r}: expected one of {', '.join(TOOLS)}")
        self.tool = tool
        self.executable = executable or find_tool(tool)
        if self.executable is None:
            raise CondaInputError(f"--backend {tool}: `{tool}` is not on PATH; install it or choose --backend rattler")
        self.timeout_s = timeout_s

    def create(self, source: Path, prefix: Path, virtual_packages: tuple[VirtualPackage, ...], subdir: str) -> Path:
        if subdir != native_subdir():
            raise CondaInputError(
                f"{self.tool} creates environments for this machine ({native_subdir()}), not for {subdir}; "
                "write a lock for the target instead"
            )
        final = Path(prefix).absolute()
        existed = final.exists()
        if existed and (not final.is_dir() or any(final.iterdir())):
            raise CondaInputError(f"--prefix {final}: already exists and is not an empty folder; choose another path")
        run = tool_run(self.tool, self.executable, Path(source).absolute(), final, virtual_packages, dict(os.environ))
        try:
            returncode, output = _run(run, self.timeout_s)
        except BaseException:
            _remove(final, existed)
            raise
        if returncode != 0:
            _remove(final, existed)
            raise CondaToolFailed(f"{self.tool} failed (exit {returncode}), nothing was left behind: {_tail(output)}")
        return final


def _run(run: ToolRun, timeout_s: float) -> tuple[int, str]:
    kwargs: dict = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        kwargs["start_new_session"] = True
    try:
        process = subprocess.Popen(list(run.argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, env=run.environment, **kwargs)
    except OSError as error:
        raise CondaToolFailed(f"{run.argv[0]} could not be started ({error.strerror or error})") from None
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill(process)
        process.communicate()
        raise CondaToolFailed(f"{Path(run.argv[0]).name} timed out after {timeout_s:g} s; stopped it, nothing was left behind") from None
    except BaseException:
        _kill(process)
        raise
    return process.returncode, output.decode("utf-8", "replace")


def _kill(process: subprocess.Popen) -> None:
    try:
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass


def _remove(prefix: Path, existed: bool) -> None:
    if existed:
        for child in prefix.iterdir():  # it was empty before: everything in it is the tool's
            shutil.rmtree(child, ignore_errors=True) if child.is_dir() and not child.is_symlink() else child.unlink()
    else:
        shutil.rmtree(prefix, ignore_errors=True)


def _tail(output: str, lines: int = 3) -> str:
    kept = [line.strip() for line in output.strip().splitlines() if line.strip()][-lines:]
    return " / ".join(kept) or "no output"


def tools_on_path(tools: Sequence[str] = TOOLS) -> dict[str, str]:
    return {tool: path for tool in tools if (path := find_tool(tool))}
