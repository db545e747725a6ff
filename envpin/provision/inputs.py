"""What an install is made from, and the install itself: a PEP 751 lock for uv or venv + pip, or a conda input
(environment.yml, pixi.lock, conda-lock.yml, @EXPLICIT) for the conda family.

`envpin install` and `envpin conda create` both end in `install()`, which builds in a staging folder,
verifies, and swaps the result in atomically (envpin.provision.install.provision).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record
from envpin.base.userfiles import read_text
from envpin.check.formats import kind_of
from envpin.conda.backends import is_explicit_lock
from envpin.conda.channels import Channels
from envpin.conda.envfile import parse_environment_yml
from envpin.conda.target import CondaTargetFacts
from envpin.lock.export import requirements_text
from envpin.lock.pylock import lock_python, render
from envpin.provision.atomic import Staging, staged
from envpin.provision.backends import CONDA_FAMILY, CONDA_TOOLS, CondaTarget, InstallInputs
from envpin.provision.install import Installed, choose_backend, provision
from envpin.provision.progress import make_progress

CONDA_INPUTS = {  # each conda input (named as envpin.check.formats names kinds) and the backends that read it
    "environment.yml": CONDA_FAMILY,
    "pixi.lock": ("rattler",),
    "conda-lock": ("rattler",),
    "explicit": CONDA_TOOLS,
}


@record
class InstallOptions(Record):
    prefix: Path
    backend: str | None = None  # None: uv when installed, else venv; rattler for a conda input
    interpreter: str | None = None  # the base Python to build from
    python: str | None = None  # the target's Python (--python), for a conda input without one
    conda_environment: str = "default"  # the environment of a pixi.lock
    timeout: float = 3600
    quiet: bool = False


def file_kind(path: str, as_lock: bool) -> str:
    """pylock, or one of CONDA_INPUTS. `envpin.check.formats.kind_of` tells the kinds `envpin check` reads (by name,
    then by content); pixi.lock, which check does not read, goes by its name, and any .toml given as --lock is read
    as PEP 751 (uv.lock too, which the PEP 751 reader then names as not one)."""
    name = Path(path).name.lower()
    if as_lock and (name.endswith(".toml") or name == "uv.lock"):
        return "pylock"
    if name.endswith(".lock") and not name.startswith("conda-"):
        return "pixi.lock"
    if not Path(path).is_file():
        raise EnvpinInputError(f"{path}: no such file")
    kind = kind_of(path, read_text(path))
    if as_lock and kind == "environment.yml":
        raise EnvpinInputError(f"{path}: an environment.yml, not a lock; pass it as --environment-yml")
    if kind == "explicit" and not is_explicit_lock(Path(path)):  # named conda-*.lock, without the marker
        raise EnvpinInputError(f"{path}: no @EXPLICIT line, so it is not a conda lock a tool installs")
    if kind not in CONDA_INPUTS:
        raise EnvpinInputError(f"{path}: not a file envpin installs (pylock.toml, environment.yml, pixi.lock, "
                               "conda-lock.yml or an @EXPLICIT file)")
    return kind


def conda_backend_target(found: CondaTargetFacts, channels: Channels) -> CondaTarget:
    return CondaTarget(found.subdir, found.virtual_packages, channels.location, channels.cache_dir)


def install_lock(document: Mapping[str, Any], options: InstallOptions, conda_target: CondaTarget | None) -> Installed:
    """The environment of a PEP 751 lock document, with hashes enforced."""
    python = install_python(document)  # a bad lock or backend is said before the prefix is touched
    backend = choose_backend(options.backend, python, options.interpreter, conda_target)
    with staged(options.prefix) as staging:
        inputs = lock_inputs(document, python, staging.inputs, options.interpreter)
        return install(staging, backend, inputs, document, options)


def install_conda_file(path: Path, kind: str | None, options: InstallOptions, conda_target: CondaTarget) -> Installed:
    """The environment of an environment.yml, pixi.lock, conda-lock.yml or @EXPLICIT file, with a conda-family
    backend (rattler when none was chosen)."""
    kind = kind or file_kind(str(path), as_lock=False)
    backend_name = options.backend or "rattler"
    if backend_name not in CONDA_INPUTS[kind]:
        readers = ", ".join(CONDA_INPUTS[kind])
        raise EnvpinInputError(f"{path}: {kind} files are installed with --backend {readers} (not {backend_name})")
    if not path.is_file():
        raise EnvpinInputError(f"{path}: no such file")
    pip_lines = environment_pip_lines(backend_name, kind, path)
    backend = choose_backend(backend_name, options.python or "", None, conda_target)
    with staged(options.prefix) as staging:
        inputs = conda_inputs(kind, path, pip_lines, staging.inputs, options)
        return install(staging, backend, inputs, None, options)


def install(staging: Staging, backend, inputs: InstallInputs, document: Mapping[str, Any] | None,
            options: InstallOptions) -> Installed:
    progress = make_progress(options.quiet, total=len(backend.steps(options.prefix, inputs)) + 2)
    installed = provision(staging, backend, inputs, document, progress, options.timeout)
    progress.finish(f"installed {installed.prefix} ({installed.backend}): {installed.verification.summary()}")
    return installed


def environment_pip_lines(backend: str, kind: str, path: Path) -> tuple[str, ...]:
    """An environment.yml's pip: lines, which rattler (no pip of its own) installs from a requirements file."""
    if backend != "rattler" or kind != "environment.yml":
        return ()
    return tuple(parse_environment_yml(read_text(path), str(path)).pip)


def conda_inputs(kind: str, path: Path, pip_lines: tuple[str, ...], workdir: Path, options: InstallOptions) -> InstallInputs:
    """InstallInputs of a conda input; an environment.yml's pip: lines (for rattler) as a requirements file."""
    python = options.python or ""
    if kind != "environment.yml":
        return InstallInputs(python=python, conda_lock=path, conda_environment=options.conda_environment)
    pip_section = None
    if pip_lines:
        pip_section = workdir / "pip-section.txt"
        pip_section.write_text("".join(f"{line}\n" for line in pip_lines), encoding="utf-8")
    return InstallInputs(python=python, environment_yml=path, pip_section=pip_section)


def install_python(document: Mapping[str, Any]) -> str:
    """The Python the environment of a lock is built with: this one's, which the lock's requires-python must allow."""
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    python = lock_python(document, running)
    if not python:
        raise EnvpinInputError(f"the lock's requires-python {document.get('requires-python')!r} excludes Python {running}; "
                               "pass --interpreter or lock for this Python")
    return python


def lock_inputs(document: Mapping[str, Any], python: str, workdir: Path, interpreter: str | None) -> InstallInputs:
    """The lock as both installers want it: pylock.toml for uv, a --hash requirements file for pip."""
    lock_file = workdir / "pylock.toml"  # uv recognises a PEP 751 lock by this name
    lock_file.write_text(render(document, []), encoding="utf-8")
    requirements = workdir / "requirements.txt"
    requirements.write_text(requirements_text(document, []), encoding="utf-8")
    return InstallInputs(python=python, lock_file=lock_file, requirements_file=requirements, interpreter=interpreter)
