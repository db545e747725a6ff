"""Environment backends: uv, venv + pip, conda / mamba / micromamba, and rattler (envpin.provision.rattler).
Pure: each turns a location and the install inputs into the steps to run; `install.provision` runs them.

Every backend installs with hashes enforced: uv syncs the PEP 751 lock (`--require-hashes`); pip installs
the lock's requirements export (`--require-hashes --no-deps`); conda-family backends make a conda Python and
then do the same with its pip. Only `--environment-yml` installs without hashes (conda has none to check for
the pip section of an environment.yml).

conda-family steps run with the target's CONDA_OVERRIDE_CUDA / _GLIBC / _OSX, built from envpin's facts; any
CONDA_OVERRIDE_* of the user's shell is dropped (`envpin.conda.virtual.override_environment`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from envpin.base.record import Record, record
from envpin.conda.backends import create_command

if TYPE_CHECKING:  # envpin's start-up registers `install`, which reads BACKENDS: keep this module light
    from envpin.conda.rattler_solve import ChannelSource
    from envpin.conda.virtual import VirtualPackage

CONDA_TOOLS = ("conda", "mamba", "micromamba")
CONDA_FAMILY = ("rattler",) + CONDA_TOOLS
BACKENDS = ("uv", "venv") + CONDA_FAMILY


@record
class Step(Record):
    """A command to run, or (rattler) an in-process action called with the environment's final prefix."""

    title: str
    argv: tuple[str, ...] = ()
    action: Callable[[Path], None] | None = None
    conda_target: tuple[VirtualPackage, ...] | None = None  # run with these as CONDA_OVERRIDE_*


@record
class InstallInputs(Record):
    python: str  # the Python version of the lock: "3.11"
    lock_file: Path | None = None  # PEP 751 lock (uv)
    requirements_file: Path | None = None  # the lock exported with --hash lines (pip)
    interpreter: str | None = None  # a base Python to build from (uv, venv)
    environment_yml: Path | None = None  # conda backends, instead of a lock
    conda_lock: Path | None = None  # rattler: pixi.lock / conda-lock.yml; conda tools: an @EXPLICIT file
    conda_environment: str = "default"  # the environment of a pixi.lock
    pip_section: Path | None = None  # rattler: the environment.yml's pip: lines, installed after the conda packages


@record
class CondaTarget(Record):
    """What a conda-family backend creates for: the target's subdir, its virtual packages, and the channels."""

    subdir: str
    virtual_packages: tuple[VirtualPackage, ...]
    channels: ChannelSource = None  # rattler: a channel folder or {name: location}; None = the channel names as conda has them
    cache_dir: str | None = None


class Backend(Protocol):
    @property
    def name(self) -> str: ...  # read-only: the backends are records

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]: ...


def python_in(location: Path) -> Path:
    """The interpreter of an environment (venv or conda layout)."""
    if os.name == "nt":
        venv = location / "Scripts" / "python.exe"
        return venv if venv.exists() else location / "python.exe"
    return location / "bin" / "python"


def pip_install(python: Path, requirements: Path) -> tuple[str, ...]:
    return (str(python), "-m", "pip", "install", "--require-hashes", "--no-deps", "--no-input",
            "--disable-pip-version-check", "-r", str(requirements))


@record
class UvBackend(Record):
    uv: str
    name: str = "uv"

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]:
        if inputs.lock_file is None:
            raise ValueError("the uv backend installs a PEP 751 lock")
        create = (self.uv, "venv", "--no-config", "--no-python-downloads", "--quiet",
                  "--python", inputs.interpreter or inputs.python, str(location))
        # `sync` makes the environment exactly the lock; every file is checked against the lock's sha256.
        sync = (self.uv, "pip", "sync", "--no-config", "--require-hashes", "--python", str(python_in(location)),
                str(inputs.lock_file))
        return [Step("create the environment (uv venv)", create), Step("install the lock (uv pip sync)", sync)]


@record
class VenvBackend(Record):
    interpreter: str
    name: str = "venv"

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]:
        if inputs.requirements_file is None:
            raise ValueError("the venv backend installs a requirements file with hashes")
        create = (self.interpreter, "-m", "venv", str(location))
        return [Step("create the environment (venv)", create),
                Step("install the lock (pip --require-hashes)", pip_install(python_in(location), inputs.requirements_file))]


@record
class CondaBackend(Record):
    tool: str  # conda, mamba or micromamba
    binary: str
    virtual_packages: tuple[VirtualPackage, ...] = ()  # the target's, from envpin's facts
    channel: str = "conda-forge"

    @property
    def name(self) -> str:
        return self.tool

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]:
        source = inputs.environment_yml or inputs.conda_lock
        if source is not None:
            return [Step(f"create the environment ({self.tool}, {source.name})",
                         create_command(self.tool, self.binary, source, location), conda_target=self.virtual_packages)]
        if inputs.requirements_file is None:
            raise ValueError("a conda backend installs a requirements file with hashes, an environment.yml or an "
                             "@EXPLICIT lock")
        create = (self.binary, "create", "--yes", "--prefix", str(location), "--override-channels",
                  "--channel", self.channel, f"python={inputs.python}", "pip")
        return [Step(f"create the environment ({self.tool}, python={inputs.python})", create,
                     conda_target=self.virtual_packages),
                Step("install the lock (pip --require-hashes)", pip_install(python_in(location), inputs.requirements_file))]
