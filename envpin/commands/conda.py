"""`envpin conda`: conda environments for a target, solved, locked and created with py-rattler (envpin[conda]),
or created by the user's conda / mamba / micromamba.

    envpin conda virtual-packages [target] [-o virtual-packages.yml]   conda-lock's --virtual-package-spec file
    envpin conda solve environment.yml [target] [--channels DIR]       does it solve for the target? (exit 1 if not)
    envpin conda lock environment.yml -o pixi.lock|conda-lock.yml|explicit.txt [target]
    envpin conda create environment.yml|LOCK --prefix DIR [--backend rattler|conda|mamba|micromamba] [target]  (= envpin install)

Also `conda_environment_yml`, which `envpin solve --conda-source conda-forge|pytorch-channel` renders with.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.commands.common import add_db_option, add_target_options, read_text, target_facts, write_atomically
from envpin.errors import EnvpinInputError
from envpin.provision.backends import CONDA_FAMILY

LOCK_FORMATS = ("pixi.lock", "conda-lock.yml", "explicit")


def conda_environment_yml(answer, request, args: argparse.Namespace, project, source_args) -> str:
    """`envpin solve --format environment.yml --conda-source conda-forge|pytorch-channel`."""
    from envpin.compat.loader import load_database
    from envpin.conda.specs import conda_environment
    from envpin.emit import conda_env

    database = load_database(getattr(args, "db", None))
    environment = conda_environment(answer, database, args.conda_source, request.policy, project)
    return conda_env.render(environment, answer, request, args.output, name=args.name, source_args=source_args)


def register(commands, parser_class) -> None:
    conda = commands.add_parser("conda", help="conda environments for a target: solve, lock, create (py-rattler)")
    actions = conda.add_subparsers(dest="conda_command", required=True, parser_class=parser_class)

    virtual = actions.add_parser("virtual-packages", help="the target's conda virtual packages (conda-lock's spec file)")
    virtual.add_argument("--format", choices=("yaml", "json"), default="yaml")
    virtual.add_argument("-o", "--output", help="write to FILE (atomically), e.g. virtual-packages.yml")
    add_conda_target(virtual)
    virtual.set_defaults(handler=run_virtual_packages)

    solve = actions.add_parser("solve", help="solve an environment.yml for the target")
    solve.add_argument("file", help="an environment.yml")
    solve.add_argument("--format", choices=("text", "json"), default="text")
    add_channels(solve)
    add_conda_target(solve)
    solve.set_defaults(handler=run_solve)

    lock = actions.add_parser("lock", help="solve an environment.yml for the target and write a lock")
    lock.add_argument("file", help="an environment.yml")
    lock.add_argument("-o", "--output", required=True, help="pixi.lock, conda-lock.yml or an @EXPLICIT file (*.txt)")
    lock.add_argument("--format", choices=LOCK_FORMATS, help="default: from the file name")
    lock.add_argument("--public-urls", action="store_true",
                      help="record packages solved from a local channel folder at https://conda.anaconda.org/NAME/")
    add_channels(lock)
    add_conda_target(lock)
    lock.set_defaults(handler=run_lock)

    create = actions.add_parser("create", help="create the environment at a prefix, atomically")
    create.add_argument("file", help="an environment.yml, pixi.lock or conda-lock.yml (an @EXPLICIT file for conda tools)")
    create.add_argument("--prefix", required=True,
                        help="the environment's folder: new, empty, or an environment to replace atomically")
    create.add_argument("--backend", choices=CONDA_FAMILY, default="rattler")
    create.add_argument("--environment", dest="conda_environment", default="default",
                        help="the environment of a pixi.lock")
    create.add_argument("--timeout", type=float, default=3600, metavar="S", help="stop a step after S seconds")
    create.add_argument("-q", "--quiet", action="store_true", help="no progress, only errors")
    add_channels(create)
    add_conda_target(create)
    create.set_defaults(handler=run_create)


def add_conda_target(parser: argparse.ArgumentParser) -> None:
    add_target_options(parser)
    add_conda_facts(parser)
    add_db_option(parser)


def add_conda_facts(parser: argparse.ArgumentParser) -> None:
    """What a conda target has beyond envpin's target options: its glibc and macOS versions."""
    parser.add_argument("--glibc", help="the target's glibc version, for __glibc (when --facts does not say)")
    parser.add_argument("--macos-version", help="the target's macOS version, for __osx")


def add_channels(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--channels", metavar="DIR", help="a folder with one local channel per channel name")
    parser.add_argument("--channel", action="append", default=[], metavar="NAME=LOCATION",
                        help="where one channel of the file is (a folder or URL); repeatable")
    parser.add_argument("--cache-dir", help="rattler's cache (default: rattler's own)")


# ---------------------------------------------------------------- the target


def target_and_virtual_packages(args: argparse.Namespace):
    """(Target, conda subdir, virtual packages) for the target options, built from envpin's facts."""
    from dataclasses import replace

    from envpin.compat.loader import load_database
    from envpin.conda.virtual import conda_subdir, virtual_packages
    from envpin.facts import Libc
    from envpin.resolver.target import make_target

    facts = target_facts(args)
    if args.glibc:
        facts = replace(facts, libc=Libc("glibc", args.glibc))
    elif facts.libc is None and _detected_here(args):
        from envpin.host import platform_info  # the target is this machine: its own glibc

        facts = replace(facts, libc=platform_info.libc(facts.os))
    target = make_target(load_database(args.db), facts)
    return target, conda_subdir(target), virtual_packages(target, facts.libc, args.macos_version)


def _detected_here(args: argparse.Namespace) -> bool:
    """Whether target_facts probed this machine (no --facts, and the flags leave facts open): the same rule as
    envpin.commands.common._base_facts."""
    if args.facts:
        return False
    fully_given = args.os and args.arch and args.python and args.driver is not None
    return not (fully_given and (args.gpu or args.compute_capability or args.driver == "none"))


def channels_of(args: argparse.Namespace):
    """--channels DIR or --channel NAME=LOCATION ...: where the files' channels are (None: as conda has them)."""
    if args.channels and args.channel:
        raise EnvpinInputError("give --channels DIR or --channel NAME=LOCATION, not both")
    if args.channel:
        mapping = {}
        for item in args.channel:
            name, sep, location = item.partition("=")
            if not sep or not name or not location:
                raise EnvpinInputError(f"--channel {item!r}: expected NAME=LOCATION")
            mapping[name] = location
        return mapping
    return args.channels


def _solve(args: argparse.Namespace):
    return solve_file(args, args.file, read_text(args.file))


def solve_file(args: argparse.Namespace, origin: str, text: str):
    """(Target, Solution) of an environment.yml's text for the target the options describe."""
    from envpin.conda.rattler_solve import solve_environment

    target, subdir, packages = target_and_virtual_packages(args)
    solution = solve_environment(text, channels_of(args), packages, subdir, origin=origin, cache_dir=args.cache_dir)
    return target, solution


# ---------------------------------------------------------------- handlers


def run_virtual_packages(args: argparse.Namespace) -> int:
    from envpin.conda.virtual import conda_lock_spec
    from envpin.emit.conda_env import render_virtual_packages
    from envpin import __version__

    target, subdir, packages = target_and_virtual_packages(args)
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
        sys.stdout.write(text)
    return 0


def run_solve(args: argparse.Namespace) -> int:
    target, solution = _solve(args)
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
    print(f"{args.file} solves for {solution.subdir} with {', '.join(str(p) for p in solution.virtual_packages)}: "
          f"{len(solution.records)} packages")
    for record in solution.records:
        print(f"  {record.name} {record.version} {record.build}")
    if solution.pip:
        print(f"  (and a pip: section of {len(solution.pip)} lines, which a conda solve does not cover)")
    return 0


def run_lock(args: argparse.Namespace) -> int:
    from envpin import __version__
    from envpin.conda import locks
    from envpin.conda.rattler_solve import write_pixi_lock

    output_format = args.format or _lock_format(args.output)
    target, solution = _solve(args)
    bases = _public_bases(solution.channels) if args.public_urls else {}
    header = [f"Generated by envpin {__version__} from {args.file} for {target.describe()}.",
              f"Virtual packages: {', '.join(str(p) for p in solution.virtual_packages)}."]
    if output_format == "pixi.lock":
        write_pixi_lock(solution, args.output, url_bases=bases)
    else:
        records = locks.relocate(solution.records, bases)
        if output_format == "conda-lock.yml":
            digest = locks.input_hash(solution.channels, solution.specs,
                                      tuple(str(p) for p in solution.virtual_packages), solution.subdir)
            channels = tuple(_public_name(c, bases) for c in solution.channels)
            text = locks.conda_lock_yml(records, solution.subdir, channels, digest, header, Path(args.file).name)
        else:
            text = locks.explicit(records, solution.subdir, header)
        write_atomically(Path(args.output), text)
    pip = f"; its pip: section ({len(solution.pip)} lines) is not in the lock" if solution.pip else ""
    print(f"wrote {args.output} ({len(solution.records)} packages for {solution.subdir}{pip})", file=sys.stderr)
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


def _public_bases(channels: tuple[str, ...]) -> dict[str, str]:
    """file:// URL of each local channel folder -> https://conda.anaconda.org/<folder name>/."""
    bases = {}
    for channel in channels:
        if "://" in channel:
            continue
        path = Path(channel)
        bases[path.as_uri().rstrip("/") + "/"] = f"https://conda.anaconda.org/{path.name}/"
    return bases


def _public_name(channel: str, bases: dict[str, str]) -> str:
    if "://" in channel:
        return channel
    url = Path(channel).as_uri().rstrip("/") + "/"
    return bases.get(url, url)


def run_create(args: argparse.Namespace) -> int:
    """`envpin conda create FILE --prefix DIR`: `envpin install` of a conda input, which it is."""
    from envpin.commands.install import install_conda_file

    return install_conda_file(args, Path(args.file))
