"""The user's conda, mamba or micromamba as `envpin install` backends: their command lines (pure).

conda's default solver is conda-libmamba-solver, which is not on PyPI: envpin uses it by running the installed
tool (`envpin.provision.backends.CondaBackend`). The target's `__cuda` / `__glibc` / `__osx` reach the tool as
CONDA_OVERRIDE_* built from envpin's facts (`envpin.provision.install.step_environment`).

The tool creates the environment in provision's staging folder beside the prefix; before the swap, provision
rewrites the staging path in every file conda records as holding the prefix (text, and binary files NUL-padded
as conda itself does), so the environment is built elsewhere and renamed into place like the others.
"""

from __future__ import annotations

import os
import platform as host_platform
import shutil
from pathlib import Path

from envpin.conda.errors import CondaInputError
from envpin.vocabulary.platforms import conda_subdir, platform_key

TOOLS = ("conda", "mamba", "micromamba")


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
    from envpin.base.userfiles import UnreadableFile, read_text  # noqa: PLC0415 - only an install from a file

    try:
        text = read_text(source)  # a regular file only: a FIFO or a device is refused, never opened
    except UnreadableFile as error:
        raise CondaInputError(str(error)) from None
    return any(line.strip() == "@EXPLICIT" for line in text.splitlines())


def native_subdir() -> str:
    """The conda subdir of the machine envpin runs on: the only one a conda tool creates working environments for."""
    system = {"linux": "linux", "darwin": "macos", "windows": "windows"}.get(host_platform.system().lower(), "?")
    return conda_subdir(platform_key(system, host_platform.machine()))


def find_tool(tool: str) -> str | None:
    """The tool's executable on PATH (micromamba also as $MAMBA_EXE), or None."""
    found = shutil.which(tool)
    if found is None and tool == "micromamba" and os.environ.get("MAMBA_EXE"):
        candidate = os.environ["MAMBA_EXE"]
        found = candidate if os.access(candidate, os.X_OK) else None
    return found
