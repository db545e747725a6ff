"""What several commands share: the target options, reading a facts file, atomic writes."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from envpin.errors import EnvpinInputError


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """The target options of DESIGN.md: flags override --facts, which overrides detection."""
    group = parser.add_argument_group("target (default: this machine)")
    group.add_argument("--os", help="linux, windows or macos")
    group.add_argument("--arch", help="x86_64, aarch64 or arm64")
    group.add_argument("--driver", help="NVIDIA driver version, or 'none'")
    group.add_argument("--gpu", action="append", default=[], help="GPU name as nvidia-smi prints it (repeatable)")
    group.add_argument("--compute-capability", action="append", default=[], help="X.Y (repeatable)")
    group.add_argument("--python", help="Python version, e.g. 3.11")
    group.add_argument("--facts", help="a file from `envpin detect --format json` taken on the target")


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="use the compatibility database in this directory")


def add_probe_options(parser: argparse.ArgumentParser) -> None:
    """Which environment the verify probe runs in, and how: shared by `verify` and `doctor`."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help="the environment's interpreter (default: the one running envpin)")
    where.add_argument("--prefix", metavar="DIR", help="the environment's root directory (a venv or conda env)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for each framework's import (default 120)")
    parser.add_argument("--no-smoke", action="store_true", help="skip the small GPU computations of the probe")
    add_db_option(parser)


def target_facts(args: argparse.Namespace):
    """HostFacts for the target the options describe (detecting this machine only for what they leave open)."""
    from envpin.resolver.target import TargetOverrides, apply_overrides

    overrides = TargetOverrides(
        os=args.os,
        arch=args.arch,
        driver=args.driver,
        gpus=tuple(args.gpu),
        compute_capabilities=tuple(args.compute_capability),
        python=args.python,
    )
    return apply_overrides(_base_facts(args, overrides), overrides)


def _base_facts(args: argparse.Namespace, overrides):
    from envpin.facts import HostFacts, PythonInfo

    if args.facts:
        return read_facts(args.facts)
    fully_given = overrides.os and overrides.arch and overrides.python and overrides.driver is not None
    if fully_given and (overrides.gpus or overrides.compute_capabilities or overrides.driver == "none"):
        # Every fact a solve needs was given: a solve for another machine does not probe this one.
        return HostFacts(os=overrides.os, arch=overrides.arch, python=PythonInfo(overrides.python))
    from envpin.host import detect_host

    return detect_host(probe_environment=False)


def read_facts(path: str):
    from envpin.facts import from_json

    return from_json(read_json(path, "--facts"), origin=f"--facts {path}")


def read_text(path: str | Path, option: str = "") -> str:
    """A UTF-8 file's text; unreadable is a one-line error naming the option (if any) and the path."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        where = f"{option} {path}" if option else str(path)
        raise EnvpinInputError(f"{where}: cannot be read ({error.__class__.__name__})") from None


def read_json(path: str, option: str):
    """A JSON document from a file, or stdin for `-`; unreadable or malformed input is a one-line error."""
    text = sys.stdin.read() if path == "-" else read_text(path, option)
    try:
        return json.loads(text)
    except ValueError as error:
        raise EnvpinInputError(f"{option} {path}: not JSON ({error})") from None
    except RecursionError:  # json raises this, not ValueError, for arrays or objects nested too deep
        raise EnvpinInputError(f"{option} {path}: not JSON (nested too deep)") from None


def write_atomically(path: Path, text: str) -> None:
    """Write beside the target and rename, so a failure never leaves a half-written file."""
    temporary = path.with_name(f".{path.name}.envpin-{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:  # a read-only file system refuses even the unlink of a file it never created
            pass
        raise EnvpinInputError(f"-o {path}: cannot write ({error.strerror or error})") from None


def fleet_targets(args: argparse.Namespace, database) -> list:
    """(name, Target) for every entry of a `--targets` inventory; target flags apply to every entry."""
    from envpin.facts import from_json
    from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

    document = read_json(args.targets, "--targets")
    entries = document.get("targets") if isinstance(document, dict) else document
    if not isinstance(entries, list) or not entries:
        raise EnvpinInputError(f"--targets {args.targets}: expected a non-empty JSON list of facts documents")
    overrides = TargetOverrides(
        os=args.os, arch=args.arch, driver=args.driver, gpus=tuple(args.gpu),
        compute_capabilities=tuple(args.compute_capability), python=args.python,
    )
    machines = []
    for position, entry in enumerate(entries):
        origin = f"--targets {args.targets}: targets[{position}]"
        facts = apply_overrides(from_json(entry, origin=origin), overrides)
        name = entry.get("name") if isinstance(entry, dict) and isinstance(entry.get("name"), str) else f"target {position}"
        machines.append((name, make_target(database, facts)))
    return machines
