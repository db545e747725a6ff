"""`envpin install`: create the environment of a lock (or of solve options, locked on the way) at --prefix,
atomically, with hashes enforced, and verify it before it replaces anything."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

from envpin.errors import EnvpinInputError


def register(commands, parser_class) -> None:
    from envpin.commands.lock import add_lock_options

    install = commands.add_parser("install", help="create the environment of a lock at a prefix, atomically")
    install.add_argument("--prefix", required=True, metavar="DIR", help="where the environment goes")
    install.add_argument("--lock", metavar="FILE", help="a PEP 751 lock (from `envpin lock`); else solve and lock now")
    install.add_argument("--backend", choices=("uv", "venv", "conda", "mamba", "micromamba"),
                         help="uv (default when installed), venv (+ pip), conda, mamba or micromamba")
    install.add_argument("--environment-yml", metavar="FILE",
                         help="conda backends: create from this environment.yml instead of a lock (no hashes)")
    install.add_argument("--interpreter", metavar="PATH", help="the base Python to build the environment from")
    install.add_argument("--timeout", type=float, default=3600, metavar="S", help="stop a step after S seconds")
    install.add_argument("-q", "--quiet", action="store_true", help="no progress, only errors")
    add_lock_options(install)
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
    from envpin.provision.backends import CONDA_TOOLS, InstallInputs
    from envpin.provision.install import choose_backend, provision
    from envpin.provision.progress import make_progress

    with tempfile.TemporaryDirectory(prefix="envpin-install-") as workdir:
        if args.environment_yml:
            if args.backend not in CONDA_TOOLS:
                raise EnvpinInputError("--environment-yml needs --backend conda, mamba or micromamba")
            if not Path(args.environment_yml).is_file():
                raise EnvpinInputError(f"--environment-yml {args.environment_yml}: no such file")
            document, inputs = None, InstallInputs(python=args.python or "", environment_yml=Path(args.environment_yml))
        else:
            document = _lock_document(args)
            if document is None:
                return 1
            inputs = _inputs(document, Path(workdir), args.interpreter)
        backend = choose_backend(args.backend, inputs.python, args.interpreter)
        progress = make_progress(args.quiet, total=len(backend.steps(Path(args.prefix), inputs)) + 2)
        installed = provision(Path(args.prefix), backend, inputs, document, progress, args.timeout)
    progress.finish(f"installed {installed.prefix} ({installed.backend}): {installed.verification.summary()}")
    return 0


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
