"""`envpin check FILE...`: validate committed environment files and lockfiles, offline (the pre-commit hook).

Exit 0: no errors (warnings are printed); 1: at least one error; 2: a file could not be read or parsed, or a
bad option or config. Every file is checked even when an earlier one fails. Nothing from the checked
repository is executed: files are read as text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.commands.common import add_db_option, add_target_options
from envpin.errors import EnvpinInputError

_TARGET_OPTIONS = ("os", "arch", "driver", "gpu", "compute_capability", "python", "facts")


def register(commands, parser_class) -> None:
    check = commands.add_parser("check", help="check environment files and lockfiles (pre-commit hook)")
    check.add_argument("files", nargs="+", metavar="FILE", help="requirements*.txt, environment*.yml, pylock*.toml, "
                       "conda-lock.yml, @EXPLICIT files, uv.lock")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--kind", help="read every FILE as this kind: environment.yml, requirements, pylock, "
                       "conda-lock, explicit, uv.lock (default: from the file name)")
    check.add_argument("--ignore", action="append", default=[], metavar="ID", help="drop this problem id (repeatable)")
    check.add_argument("--config", help="pyproject.toml with [tool.envpin] (default: the nearest one above the "
                       "current directory, up to the repository root)")
    check.add_argument("--no-config", action="store_true", help="do not read [tool.envpin]")
    check.add_argument("--driver-policy", help="minor or strict, for the target checks (default: minor)")
    check.add_argument("--solve", action="store_true",
                       help="also solve each environment.yml for the target with py-rattler (envpin[conda])")
    from envpin.commands.conda import add_channels

    add_channels(check)
    check.add_argument("--glibc", help="with --solve: the target's glibc version (when --facts does not say)")
    check.add_argument("--macos-version", help="with --solve: the target's macOS version, for __osx")
    add_target_options(check)
    add_db_option(check)
    check.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from envpin.check import check_text
    from envpin.check.formats import KINDS
    from envpin.check.rules import PROBLEMS

    if args.kind is not None and args.kind not in KINDS:
        raise EnvpinInputError(f"--kind {args.kind!r}: expected one of {', '.join(KINDS)}")
    unknown = [i for i in args.ignore if i not in PROBLEMS]
    if unknown:
        raise EnvpinInputError(f"--ignore {unknown[0]}: not an envpin check id (see docs/check.md)")
    config = _config(args)
    policy = args.driver_policy or config.driver_policy or "minor"
    targets = _targets(args, config, policy)
    reports = []
    for path in args.files:
        text, failure = _read(path)
        if failure is not None:
            reports.append(failure)
            continue
        ignore = config.ignored_for(path) | frozenset(args.ignore)
        report = check_text(path, text, load_database=lambda: _database(args), kind=args.kind,
                            targets=targets, policy=policy, ignore=ignore)
        if args.solve and not report.unreadable:
            report = _with_conda_solve(report, text, args, ignore)
        reports.append(report)
    for report in reports:
        if report.unreadable:
            print(f"envpin: error: {report.path}: {report.problems[0].message}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(report_json(reports), indent=2))
    else:
        sys.stdout.write(render_text(reports))
    if any(r.unreadable for r in reports):
        return 2
    return 1 if any(r.errors for r in reports) else 0


def _with_conda_solve(report, text: str, args: argparse.Namespace, ignore: frozenset[str]):
    """`--solve`: an environment.yml must solve for the target, with the virtual packages envpin builds."""
    from dataclasses import replace

    from envpin.check.formats import kind_of
    from envpin.check.rules import problem
    from envpin.conda.errors import CondaSolveFailed
    from envpin.commands.conda import solve_file

    if (args.kind or kind_of(report.path, text)) != "environment.yml" or "CHK-CONDA-UNSOLVABLE" in ignore:
        return report
    try:
        solve_file(args, report.path, text)
    except CondaSolveFailed as error:
        found = problem("CHK-CONDA-UNSOLVABLE", "dependencies", str(error),
                        "regenerate it for this target (envpin solve --conda-source …) or relax the pins named")
        return replace(report, problems=report.problems + (found,))
    return report


def _database(args: argparse.Namespace):
    from envpin.compat.loader import load_database

    return load_database(args.db)  # cached per process by the loader


def _read(path: str):
    from envpin.check.model import FileReport
    from envpin.check.rules import problem

    try:
        return Path(path).read_text(encoding="utf-8"), None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error.__class__.__name__
        found = problem("CHK-FILE-UNREADABLE", "", f"cannot be read ({reason})", "check the path and that it is UTF-8 text")
        return None, FileReport(path, (found,), unreadable=True)


def _config(args: argparse.Namespace):
    from envpin.check.config import CheckConfig, find_config, read_config

    if args.no_config:
        return CheckConfig()
    path = Path(args.config) if args.config else find_config(Path.cwd())
    if path is None:
        return CheckConfig()
    if args.config and not path.is_file():
        raise EnvpinInputError(f"--config {args.config}: no such file")
    return read_config(path)


def _targets(args: argparse.Namespace, config, policy: str):
    """The machines to check against: the target options when any is given, else the config's targets."""
    if args.driver_policy is not None:  # the default and the config's value need no check (and no import)
        from envpin.compat.drivers import POLICIES

        if policy not in POLICIES:
            raise EnvpinInputError(f"--driver-policy {policy!r}: expected one of {', '.join(POLICIES)}")
    given = [name for name in _TARGET_OPTIONS if getattr(args, name)]
    if given:
        return (_command_line_target(args),)
    return tuple(_config_target(spec) for spec in config.targets)


def _command_line_target(args: argparse.Namespace):
    import shlex

    from envpin.check.targets import CheckTarget
    from envpin.commands.common import target_facts
    from envpin.compat.loader import load_database
    from envpin.resolver.target import make_target

    target = make_target(load_database(args.db), target_facts(args))
    words = ["--facts", args.facts] if args.facts else []
    for option in ("os", "arch", "driver", "python"):
        if getattr(args, option):
            words += [f"--{option}", getattr(args, option)]
    words += [w for gpu in args.gpu for w in ("--gpu", gpu)]
    words += [w for cc in args.compute_capability for w in ("--compute-capability", cc)]
    return CheckTarget(f"on {describe(target)}", target, True, shlex.join(words))


def describe(target) -> str:
    """`linux-x86_64, Python 3.11, driver 470.82.01, NVIDIA GeForce RTX 3090 (sm_86)`: the target in a message."""
    driver = f"driver {target.driver}" if target.driver else "no NVIDIA driver"
    gpus = ", ".join(f"{g.name} ({g.compute_capability.sm})" for g in target.gpus) or "no GPU named"
    return f"{target.platform}, Python {target.python}, {driver}, {gpus}"


def _config_target(spec):
    from envpin.check.config import target_facts
    from envpin.check.targets import CheckTarget
    from envpin.compat.loader import load_database
    from envpin.resolver.target import make_target

    facts = target_facts(spec)
    target = make_target(load_database(), facts)
    return CheckTarget(f"on {spec.name}", target, bool(spec.python or spec.facts), spec.flags)


def report_json(reports) -> dict:
    """The contract of DESIGN.md: {"files": [{"path", "problems": [{"id", "severity", "message", "where"}]}]};
    each message ends with its fix ("… Fix: …")."""
    return {"files": [
        {"path": r.path, "problems": [
            {"id": p.id, "severity": p.severity, "message": p.text, "where": p.where} for p in r.problems
        ]}
        for r in reports
    ]}


def render_text(reports) -> str:
    lines = []
    for report in reports:
        if report.unreadable:
            continue  # said on stderr, one line each
        for p in report.problems:
            where = f":{p.where}" if p.where else ""
            lines.append(f"{report.path}{where}: {p.severity} {p.id}: {p.message}")
            lines.append(f"    fix: {p.fix}")
    counts = {s: sum(1 for r in reports for p in r.problems if p.severity == s) for s in ("error", "warning", "info")}
    failing = sum(1 for r in reports if r.errors or r.unreadable)
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n) or "no problems"
    lines.append(f"envpin check: {summary} in {len(reports)} file{'s' if len(reports) != 1 else ''}"
                 + (f" ({failing} failing)" if failing else ""))
    return "\n".join(lines) + "\n"
