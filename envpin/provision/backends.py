"""Environment backends: uv, venv + pip, and conda / mamba / micromamba. Pure: each turns a location and the
install inputs into the commands to run; `install.provision` runs them.

Every backend installs with hashes enforced: uv syncs the PEP 751 lock (`--require-hashes`); pip installs
the lock's requirements export (`--require-hashes --no-deps`); conda-family backends make a conda Python and
then do the same with its pip. Only `--environment-yml` installs without hashes (conda has none to check for
the pip section of an environment.yml).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

CONDA_TOOLS = ("conda", "mamba", "micromamba")
BACKENDS = ("uv", "venv") + CONDA_TOOLS


@dataclass(frozen=True)
class Step:
    title: str
    argv: tuple[str, ...]


@dataclass(frozen=True)
class InstallInputs:
    python: str  # the Python version of the lock: "3.11"
    lock_file: Path | None = None  # PEP 751 lock (uv)
    requirements_file: Path | None = None  # the lock exported with --hash lines (pip)
    interpreter: str | None = None  # a base Python to build from (uv, venv)
    environment_yml: Path | None = None  # conda backends, instead of a lock


class Backend(Protocol):
    name: str

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


@dataclass(frozen=True)
class UvBackend:
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


@dataclass(frozen=True)
class VenvBackend:
    interpreter: str
    name: str = "venv"

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]:
        if inputs.requirements_file is None:
            raise ValueError("the venv backend installs a requirements file with hashes")
        create = (self.interpreter, "-m", "venv", str(location))
        return [Step("create the environment (venv)", create),
                Step("install the lock (pip --require-hashes)", pip_install(python_in(location), inputs.requirements_file))]


@dataclass(frozen=True)
class CondaBackend:
    tool: str  # conda, mamba or micromamba
    binary: str
    channel: str = "conda-forge"

    @property
    def name(self) -> str:
        return self.tool

    def steps(self, location: Path, inputs: InstallInputs) -> list[Step]:
        if inputs.environment_yml is not None:
            return [Step(f"create the environment ({self.tool}, {inputs.environment_yml.name})",
                         self.create_from_file(location, inputs.environment_yml))]
        if inputs.requirements_file is None:
            raise ValueError("a conda backend installs a requirements file with hashes, or an environment.yml")
        create = (self.binary, "create", "--yes", "--prefix", str(location), "--override-channels",
                  "--channel", self.channel, f"python={inputs.python}", "pip")
        return [Step(f"create the environment ({self.tool}, python={inputs.python})", create),
                Step("install the lock (pip --require-hashes)", pip_install(python_in(location), inputs.requirements_file))]

    def create_from_file(self, location: Path, environment_yml: Path) -> tuple[str, ...]:
        if self.tool == "micromamba":
            return (self.binary, "create", "--yes", "--prefix", str(location), "--file", str(environment_yml))
        # `conda env create` reads the pip: section too; it asks no questions, so it takes no --yes.
        return (self.binary, "env", "create", "--prefix", str(location), "--file", str(environment_yml))
