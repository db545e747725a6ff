"""Provision: run a backend's steps into a staging directory, verify, swap into the prefix."""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envpin.base.errors import EnvpinError, EnvpinInputError, Unreachable, looks_unreachable
from envpin.base.record import Record, record
from envpin.conda.backends import find_tool
from envpin.conda.virtual import override_environment
from envpin.host.runner import CommandTimeout, run_command
from envpin.lock.engines import engine_environment, find_uv
from envpin.provision.atomic import Staging
from envpin.provision.backends import (
    CONDA_FAMILY,
    Backend,
    CondaBackend,
    CondaTarget,
    InstallInputs,
    Step,
    UvBackend,
    VenvBackend,
    python_in,
)
from envpin.provision.check import Verification, verify_conda_environment, verify_environment
from envpin.provision.progress import Progress
from envpin.provision.rattler import RattlerBackend
from envpin.provision.runner import run_streaming


class InstallFailed(EnvpinError):
    """An installer step failed (unreachable index, hash mismatch, no wheel): exit 2, prefix untouched."""


class VerifyFailed(EnvpinError):
    """The new environment does not hold the lock or its framework does not import: exit 1."""

    exit_code = 1


@record
class Installed(Record):
    prefix: Path
    backend: str
    verification: Verification


def provision(staging: Staging, backend: Backend, inputs: InstallInputs, document: Mapping[str, Any] | None,
              progress: Progress, timeout: float = 3600) -> Installed:
    """Build into `staging` (from `staged(prefix)`, whose lock the caller holds), verify, swap into place."""
    environment = engine_environment()
    for step in backend.steps(staging.path, inputs):
        progress.step(step.title)
        if step.action is not None:
            step.action(staging.prefix)  # in-process (rattler): its EnvpinErrors carry their own exit codes
        else:
            run_step(step, step_environment(environment, step), progress, timeout, staging.lock_fd)
    progress.step("verify the environment")
    if document is not None:
        verification = verify_environment(python_in(staging.path), document)
    else:  # conda inputs: an environment.yml or a conda lock
        verification = verify_conda_environment(staging.path, python_in(staging.path))
    if not verification.ok:
        raise VerifyFailed(f"the new environment is wrong, nothing replaced: {'; '.join(verification.problems[:4])}")
    progress.step(f"move into place at {staging.prefix}")
    staging.commit()
    return Installed(staging.prefix, backend.name, verification)


def run_step(step: Step, environment: dict[str, str], progress: Progress, timeout: float,
             lock_fd: int | None = None) -> None:
    try:
        result = run_streaming(step.argv, progress.output, timeout, environment,
                               keep_fds=(lock_fd,) if lock_fd is not None else ())
    except OSError as error:
        raise InstallFailed(f"{step.argv[0]}: cannot run ({error.strerror or error})") from None
    if result.timed_out:
        raise InstallFailed(f"{step.title}: stopped after {timeout:g} s (is the index reachable?)")
    if result.returncode != 0 and looks_unreachable(" ".join(result.tail)):
        raise Unreachable("an index", f"{step.title}: {failure_line(result.tail)}")
    if result.returncode != 0:
        raise InstallFailed(f"{step.title} failed: {failure_line(result.tail)}")


def step_environment(base: dict[str, str], step: Step) -> dict[str, str]:
    """A conda tool's step sees the target's virtual packages as CONDA_OVERRIDE_*, and answers no questions."""
    if step.conda_target is None:
        return base
    return {**override_environment(base, step.conda_target), "CONDA_ALWAYS_YES": "true"}


def failure_line(tail: tuple[str, ...]) -> str:
    """The most telling lines of an installer's failure, as one line (pure)."""
    text = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in tail]
    text = [line for line in text if line and not set(line) <= set("━─- ") and not line.startswith("warning:")]
    telling = [line for line in text if re.search(r"error|hash|expected|got|mismatch|not found|failed|No solution|"
                                                 r"connect|timed out|refused", line, re.IGNORECASE)]
    chosen = telling or text[-3:] or ["no output"]
    return re.sub(r"\s+", " ", " ".join(dict.fromkeys(chosen)))[:500]


def choose_backend(name: str | None, python: str, interpreter: str | None, conda_target: CondaTarget | None = None,
                   ) -> Backend:
    """`--backend`; by default uv when it is installed, else venv + pip. The conda family needs the target's
    subdir and virtual packages (`conda_target`)."""
    if name in (None, "uv"):
        uv = find_uv()
        if uv:
            return UvBackend(uv)
        if name == "uv":
            raise EnvpinInputError("--backend uv: uv is not installed (pip install uv), or use --backend venv")
    if name in (None, "venv"):
        return VenvBackend(find_interpreter(python, interpreter))
    if name not in CONDA_FAMILY:
        raise EnvpinInputError(f"--backend {name!r}: expected uv, venv, {', '.join(CONDA_FAMILY)}")
    if conda_target is None:
        raise ValueError("a conda backend needs the target's subdir and virtual packages")
    if name == "rattler":
        return RattlerBackend(conda_target)
    binary = find_tool(name)
    if not binary:
        raise EnvpinInputError(f"--backend {name}: `{name}` is not on PATH; install it, or use --backend rattler")
    return CondaBackend(name, binary, conda_target.virtual_packages)


def find_interpreter(python: str, given: str | None) -> str:
    """A base Python of the lock's version: --interpreter, the running one, or pythonX.Y on PATH."""
    candidates = [given] if given else [sys.executable, shutil.which(f"python{python}")]
    for candidate in filter(None, candidates):
        if interpreter_version(candidate) == python:
            return candidate
    if given:
        raise EnvpinInputError(f"--interpreter {given}: not Python {python}, which the lock is for")
    raise EnvpinInputError(f"no Python {python} found (the lock is for it): pass --interpreter PATH")


def interpreter_version(python: str) -> str | None:
    try:
        result = run_command([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], 60)
    except (OSError, CommandTimeout):
        return None
    return result.stdout.strip() or None
