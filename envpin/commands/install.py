"""`envpin install`: create the environment of a lock (or of solve options, locked on the way) at --prefix,
atomically, with hashes enforced, and verify it before it replaces anything.

The conda family (`--backend rattler|conda|mamba|micromamba`) also installs conda inputs: an environment.yml
(`--environment-yml`), a pixi.lock or conda-lock.yml (rattler) or an @EXPLICIT file (conda tools) as `--lock`.
They create for the target's conda subdir and virtual packages, which must be this machine's."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envpin.app.database import run_database
from envpin.app.lock import lock_planned, passed_over, plan_to_lock
from envpin.app.planning import Plan
from envpin.app.render import render_text as render
from envpin.base.escapes import printable, terminal
from envpin.commands.options import (
    add_channel_options,
    add_db_option,
    add_lock_options,
    add_project_options,
    add_request_options,
    add_target_options,
    channels,
    lock_options,
    seconds,
    solve_options,
    target_spec,
)
from envpin.conda.target import native_conda_target
from envpin.lock.pylock import read_lock
from envpin.provision.backends import BACKENDS, CONDA_FAMILY
from envpin.provision.inputs import InstallOptions, conda_backend_target, file_kind, install_conda_file, install_lock


def register(install: argparse.ArgumentParser, parser_class) -> None:
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
    install.add_argument("--timeout", type=seconds, default=3600, metavar="S", help="stop a step after S seconds")
    install.add_argument("-q", "--quiet", action="store_true", help="no progress, only errors")
    add_request_options(install)
    add_project_options(install)
    add_lock_options(install)
    add_target_options(install, conda=True)
    add_db_option(install)
    add_channel_options(install)
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
    options = InstallOptions(prefix=Path(args.prefix), backend=args.backend, interpreter=args.interpreter,
                             python=args.python, conda_environment=args.conda_environment, timeout=args.timeout,
                             quiet=args.quiet)
    spec = target_spec(args, conda=True)
    if args.environment_yml:
        return _conda_file(Path(args.environment_yml), "environment.yml", options, spec, args)
    lock_kind = file_kind(args.lock, as_lock=True) if args.lock else None
    if lock_kind not in (None, "pylock"):
        return _conda_file(Path(args.lock), lock_kind, options, spec, args)
    database = run_database(args.db)
    document: Mapping[str, Any]
    facts = None
    if args.lock:
        document = read_lock(args.lock)
    else:
        solving = solve_options(args)
        planned = plan_to_lock(solving, spec, database, lock_options(args))
        for passed in passed_over(planned):
            print(f"envpin: note: {passed}", file=sys.stderr)
        if not isinstance(planned.answer, Plan):
            sys.stdout.write(terminal(render(planned.answer, planned.request)))
            return planned.exit_code  # 1, or 3 for a broken driver
        locked = lock_planned(planned, lock_options(args), None, solving.allow_insecure_index)
        for line in locked.left_out:
            print(f"envpin: note: not locked: {printable(line)}", file=sys.stderr)
        document = locked.lock.document
        facts = planned.facts
    conda_target = None
    if args.backend in CONDA_FAMILY:
        conda_target = conda_backend_target(native_conda_target(spec, database, facts), channels(args))
    install_lock(document, options, conda_target)
    return 0


def _conda_file(path: Path, kind: str, options: InstallOptions, spec, args: argparse.Namespace) -> int:
    found = native_conda_target(spec, run_database(args.db))
    install_conda_file(path, kind, options, conda_backend_target(found, channels(args)))
    return 0
