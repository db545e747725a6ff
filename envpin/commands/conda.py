"""`envpin conda`: conda environments for a target, solved, locked and created with py-rattler (envpin[conda]),
or created by the user's conda / mamba / micromamba.

    envpin conda virtual-packages [target] [-o virtual-packages.yml]   conda-lock's --virtual-package-spec file
    envpin conda solve environment.yml [target] [--channels DIR]       does it solve for the target? (exit 1 if not)
    envpin conda lock environment.yml -o pixi.lock|conda-lock.yml|explicit.txt [target]
    envpin conda create environment.yml|LOCK --prefix DIR [--backend rattler|conda|mamba|micromamba] [target]  (= envpin install)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin import __version__
from envpin.app.database import run_database
from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import printable, terminal
from envpin.base.userfiles import read_text, write_atomically
from envpin.commands.options import (
    add_channel_options,
    add_db_option,
    add_target_options,
    channels,
    seconds,
    target_spec,
)
from envpin.conda import locks
from envpin.conda.rattler_solve import write_pixi_lock
from envpin.conda.render import render_virtual_packages
from envpin.conda.target import CondaTargetFacts, conda_target, native_conda_target, solve_for_target
from envpin.conda.virtual import conda_lock_spec
from envpin.provision.backends import CONDA_FAMILY
from envpin.provision.inputs import InstallOptions, conda_backend_target, install_conda_file

LOCK_FORMATS = ("pixi.lock", "conda-lock.yml", "explicit")


def register(conda: argparse.ArgumentParser, parser_class) -> None:
    actions = conda.add_subparsers(dest="conda_command", metavar="COMMAND", required=True, parser_class=parser_class)

    virtual = actions.add_parser("virtual-packages", help="the target's conda virtual packages (conda-lock's spec file)")
    virtual.add_argument("--format", choices=("yaml", "json"), default="yaml")
    virtual.add_argument("-o", "--output", help="write to FILE (atomically), e.g. virtual-packages.yml, or - for stdout")
    add_conda_target(virtual)
    virtual.set_defaults(handler=run_virtual_packages)

    solve = actions.add_parser("solve", help="solve an environment.yml for the target")
    solve.add_argument("file", help="an environment.yml")
    solve.add_argument("--format", choices=("text", "json"), default="text")
    add_channel_options(solve)
    add_conda_target(solve)
    solve.set_defaults(handler=run_solve)

    lock = actions.add_parser("lock", help="solve an environment.yml for the target and write a lock")
    lock.add_argument("file", help="an environment.yml")
    lock.add_argument("-o", "--output", required=True, help="pixi.lock, conda-lock.yml or an @EXPLICIT file (*.txt); - for stdout with --format")
    lock.add_argument("--format", choices=LOCK_FORMATS, help="default: from the file name")
    lock.add_argument("--public-urls", action="store_true",
                      help="record packages solved from a local channel folder at https://conda.anaconda.org/NAME/")
    add_channel_options(lock)
    add_conda_target(lock)
    lock.set_defaults(handler=run_lock)

    create = actions.add_parser("create", help="create the environment at a prefix, atomically")
    create.add_argument("file", help="an environment.yml, pixi.lock or conda-lock.yml (an @EXPLICIT file for conda tools)")
    create.add_argument("--prefix", required=True,
                        help="the environment's folder: new, empty, or an environment to replace atomically")
    create.add_argument("--backend", choices=CONDA_FAMILY, default="rattler")
    create.add_argument("--environment", dest="conda_environment", default="default",
                        help="the environment of a pixi.lock")
    create.add_argument("--timeout", type=seconds, default=3600, metavar="S", help="stop a step after S seconds")
    create.add_argument("-q", "--quiet", action="store_true", help="no progress, only errors")
    add_channel_options(create)
    add_conda_target(create)
    create.set_defaults(handler=run_create)


def add_conda_target(parser: argparse.ArgumentParser) -> None:
    add_target_options(parser, conda=True)
    add_db_option(parser)


def _solve(args: argparse.Namespace):
    """(CondaTargetFacts, Solution) of the environment.yml argument for the target the options describe."""
    return solve_for_target(read_text(args.file), args.file, target_spec(args, conda=True), run_database(args.db),
                            channels(args))


# ---------------------------------------------------------------- handlers


def run_virtual_packages(args: argparse.Namespace) -> int:
    found: CondaTargetFacts = conda_target(target_spec(args, conda=True), run_database(args.db))
    target, subdir, packages = found.target, found.subdir, found.virtual_packages
    if args.format == "json":
        text = json.dumps(conda_lock_spec(packages, subdir), indent=2) + "\n"
    else:
        header = [f"Generated by envpin {__version__}: the conda virtual packages of the target.",
                  f"Target: {target.describe()}."]
        text = render_virtual_packages(packages, subdir, header)
    if args.output:
        write_atomically(Path(args.output), text)
        print(f"wrote {args.output} ({', '.join(str(p) for p in packages)})", file=sys.stderr)
    else:
        sys.stdout.write(terminal(text))
    return 0


def run_solve(args: argparse.Namespace) -> int:
    _, solution = _solve(args)
    if args.format == "json":
        document = {
            "status": "ok",
            "subdir": solution.subdir,
            "virtual_packages": [str(p) for p in solution.virtual_packages],
            "packages": [{"name": r.name, "version": r.version, "build": r.build, "url": r.url} for r in solution.records],
            "pip": list(solution.pip),
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
        return 0
    print(printable(f"{args.file} solves for {solution.subdir} with "
                    f"{', '.join(str(p) for p in solution.virtual_packages)}: {len(solution.records)} packages"))
    for record in solution.records:  # a channel's repodata says these
        print(printable(f"  {record.name} {record.version} {record.build}"))
    if solution.pip:
        print(f"  (and a pip: section of {len(solution.pip)} lines, which a conda solve does not cover)")
    return 0


def run_lock(args: argparse.Namespace) -> int:
    output_format = args.format or _lock_format(args.output)
    found, solution = _solve(args)
    target = found.target
    bases = locks.public_bases(solution.channels) if args.public_urls else {}
    header = [f"Generated by envpin {__version__} from {args.file} for {target.describe()}.",
              f"Virtual packages: {', '.join(str(p) for p in solution.virtual_packages)}."]
    if output_format == "pixi.lock" and args.output == "-":
        raise EnvpinInputError("-o -: rattler writes a pixi.lock only to a file; for stdout give --format "
                               "conda-lock.yml or --format explicit")
    if output_format == "pixi.lock":
        write_pixi_lock(solution, args.output, url_bases=bases)
    else:
        if output_format == "conda-lock.yml":
            text = locks.conda_lock_of(solution, Path(args.file).name, header, bases)
        else:
            text = locks.explicit(locks.relocate(solution.records, bases), solution.subdir, header)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            write_atomically(Path(args.output), text)
    pip = f"; its pip: section ({len(solution.pip)} lines) is not in the lock" if solution.pip else ""
    where = "stdout" if args.output == "-" else args.output
    print(f"wrote {where} ({len(solution.records)} packages for {solution.subdir}{pip})", file=sys.stderr)
    return 0


def _lock_format(output: str) -> str:
    name = Path(output).name.lower()
    if name.endswith(".lock") and "pixi" in name:
        return "pixi.lock"
    if name.endswith((".yml", ".yaml")):
        return "conda-lock.yml"
    if name.endswith((".txt", ".lock")):
        return "explicit"
    raise EnvpinInputError(f"-o {output}: cannot tell the lock format from the name; add --format")


def run_create(args: argparse.Namespace) -> int:
    """`envpin conda create FILE --prefix DIR`: `envpin install` of a conda input, which it is."""
    options = InstallOptions(prefix=Path(args.prefix), backend=args.backend, python=args.python,
                             conda_environment=args.conda_environment, timeout=args.timeout, quiet=args.quiet)
    found = native_conda_target(target_spec(args, conda=True), run_database(args.db))
    install_conda_file(Path(args.file), None, options, conda_backend_target(found, channels(args)))
    return 0
