"""`envpin install`: create the environment of a lock (or of solve options, locked on the way) at --prefix,
atomically, with hashes enforced, and verify it before it replaces anything.

The conda family (`--backend rattler|conda|mamba|micromamba`) also installs conda inputs: an environment.yml
(`--environment-yml`), a pixi.lock or conda-lock.yml (rattler) or an @EXPLICIT file (conda tools) as `--lock`.
They create for the target's conda subdir and virtual packages, which must be this machine's."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

from envpin.commands.common import read_text
from envpin.errors import EnvpinInputError
from envpin.provision.backends import BACKENDS, CONDA_FAMILY, CONDA_TOOLS

CONDA_INPUTS = {  # each conda input (named as envpin.check.formats names kinds) and the backends that read it
    "environment.yml": CONDA_FAMILY,
    "pixi.lock": ("rattler",),
    "conda-lock": ("rattler",),
    "explicit": CONDA_TOOLS,
}


def register(commands, parser_class) -> None:
    from envpin.commands.conda import add_channels, add_conda_facts
    from envpin.commands.lock import add_lock_options

    install = commands.add_parser("install", help="create the environment of a lock at a prefix, atomically")
    install.add_argument("--prefix", required=True, metavar="DIR", help="where the environment goes")
    install.add_argument("--lock", metavar="FILE", help="a PEP 751 lock (from `envpin lock`); else solve and lock now")
    install.add_argument("--backend", choices=BACKENDS,
                         help="uv (default when installed), venv (+ pip), rattler (in-process conda, envpin[conda]), "
                              "conda, mamba or micromamba")
    install.add_argument("--environment-yml", metavar="FILE",
                         help="conda backends: create from this environment.yml instead of a lock (no hashes)")
    install.add_argument("--conda-environment", default="default", metavar="NAME",
                         help="the environment of a pixi.lock to install (default: default)")
    install.add_argument("--interpreter", metavar="PATH", help="the base Python to build the environment from")
    install.add_argument("--timeout", type=float, default=3600, metavar="S", help="stop a step after S seconds")
    install.add_argument("-q", "--quiet", action="store_true", help="no progress, only errors")
    add_lock_options(install)
    add_conda_facts(install)
    add_channels(install)
    install.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    previous = signal.signal(signal.SIGTERM, _interrupt)  # a kill cleans up like Ctrl-C does
    try:
        return _install(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _install(args: argparse.Namespace) -> int:
    from envpin.provision.install import choose_backend

    if args.environment_yml:
        return install_conda_file(args, Path(args.environment_yml), "environment.yml")
    lock_kind = file_kind(args.lock, as_lock=True) if args.lock else None
    if lock_kind not in (None, "pylock"):
        return install_conda_file(args, Path(args.lock), lock_kind)
    with tempfile.TemporaryDirectory(prefix="envpin-install-") as workdir:
        document = _lock_document(args)
        if document is None:
            return 1
        inputs = _inputs(document, Path(workdir), args.interpreter)
        conda_target = conda_target_of(args) if args.backend in CONDA_FAMILY else None
        backend = choose_backend(args.backend, inputs.python, args.interpreter, conda_target)
        return _provision(args, backend, inputs, document)


def install_conda_file(args: argparse.Namespace, path: Path, kind: str | None = None) -> int:
    """Create the environment of an environment.yml, pixi.lock, conda-lock.yml or @EXPLICIT file at --prefix with
    a conda-family backend (rattler when none was chosen). Also `envpin conda create`."""
    from envpin.provision.install import choose_backend

    kind = kind or file_kind(str(path), as_lock=False)
    backend_name = args.backend or "rattler"
    if backend_name not in CONDA_INPUTS[kind]:
        readers = ", ".join(CONDA_INPUTS[kind])
        raise EnvpinInputError(f"{path}: {kind} files are installed with --backend {readers} (not {backend_name})")
    if not path.is_file():
        raise EnvpinInputError(f"{path}: no such file")
    with tempfile.TemporaryDirectory(prefix="envpin-install-") as workdir:
        inputs = _conda_inputs(args, backend_name, kind, path, Path(workdir))
        backend = choose_backend(backend_name, inputs.python, None, conda_target_of(args))
        return _provision(args, backend, inputs, None)


def _provision(args: argparse.Namespace, backend, inputs, document) -> int:
    from envpin.provision.install import provision
    from envpin.provision.progress import make_progress

    progress = make_progress(args.quiet, total=len(backend.steps(Path(args.prefix), inputs)) + 2)
    installed = provision(Path(args.prefix), backend, inputs, document, progress, args.timeout)
    progress.finish(f"installed {installed.prefix} ({installed.backend}): {installed.verification.summary()}")
    return 0


def file_kind(path: str, as_lock: bool) -> str:
    """pylock, or one of CONDA_INPUTS. `envpin.check.formats.kind_of` tells the kinds `envpin check` reads (by name,
    then by content); pixi.lock, which check does not read, goes by its name, and any .toml given as --lock is read
    as PEP 751 (uv.lock too, which the PEP 751 reader then names as not one)."""
    from envpin.check.formats import kind_of
    from envpin.conda.backends import is_explicit_lock

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


def _conda_inputs(args: argparse.Namespace, backend: str, kind: str, path: Path, workdir: Path):
    """InstallInputs of a conda input; for rattler, an environment.yml's pip: lines as a requirements file."""
    from envpin.conda.envfile import parse_environment_yml
    from envpin.provision.backends import InstallInputs

    python = args.python or ""
    if kind != "environment.yml":
        return InstallInputs(python=python, conda_lock=path, conda_environment=args.conda_environment)
    pip_section = None
    if backend == "rattler":
        pip_lines = parse_environment_yml(read_text(path), str(path)).pip
        if pip_lines:
            pip_section = workdir / "pip-section.txt"
            pip_section.write_text("".join(f"{line}\n" for line in pip_lines), encoding="utf-8")
    return InstallInputs(python=python, environment_yml=path, pip_section=pip_section)


def conda_target_of(args: argparse.Namespace):
    """The conda subdir and virtual packages of the target, which must be this machine: the environment is made
    here, and a conda environment runs only where its subdir does."""
    from envpin.commands.conda import channels_of, target_and_virtual_packages
    from envpin.conda.backends import native_subdir
    from envpin.provision.backends import CondaTarget

    target, subdir, packages = target_and_virtual_packages(args)
    if subdir != native_subdir():
        raise EnvpinInputError(f"the target is {subdir}, and an environment made here is for {native_subdir()}: "
                               "install on the target, or write a lock for it (envpin conda lock)")
    return CondaTarget(subdir, packages, channels_of(args), args.cache_dir)


def _lock_document(args: argparse.Namespace):
    """The lock to install: --lock FILE, or solve and lock the options now (None: no solution, printed)."""
    from envpin.lock.pylock import read_lock

    if args.lock:
        return read_lock(args.lock)
    from envpin.commands.lock import lock_from_args
    from envpin.emit.text import render
    from envpin.resolver.plan import Unsatisfiable

    answer, request, lock, _ = lock_from_args(args)
    if isinstance(answer, Unsatisfiable):
        sys.stdout.write(render(answer, request))
        return None
    return lock.document


def _inputs(document: dict, workdir: Path, interpreter: str | None):
    """The lock as both installers want it: pylock.toml for uv, a --hash requirements file for pip."""
    from envpin.lock.export import requirements_text
    from envpin.lock.pylock import lock_python, render
    from envpin.provision.backends import InstallInputs

    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    python = lock_python(document, running)
    if not python:
        raise EnvpinInputError(f"the lock's requires-python {document.get('requires-python')!r} excludes Python {running}; "
                               "pass --interpreter or lock for this Python")
    lock_file = workdir / "pylock.toml"  # uv recognises a PEP 751 lock by this name
    lock_file.write_text(render(document, []), encoding="utf-8")
    requirements = workdir / "requirements.txt"
    requirements.write_text(requirements_text(document, []), encoding="utf-8")
    return InstallInputs(python=python, lock_file=lock_file, requirements_file=requirements, interpreter=interpreter)
