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

from envpin.check import check_text
from envpin.check.config import CheckConfig, find_config, read_config
from envpin.check.formats import KINDS, kind_of
from envpin.check.included import beside
from envpin.check.model import FileReport, Problem
from envpin.check.rules import PROBLEMS, problem
from envpin.check.targets import CheckTarget, command_line_target, configured_target
from envpin.compat.drivers import POLICIES
from envpin.compat.loader import load_database
from envpin.compat.model import Database
from envpin.conda.channels import Channels
from envpin.conda.errors import CondaSolveFailed
from envpin.conda.target import solve_for_target
from envpin.conda.virtual import DEFAULT_GLIBC
from envpin.errors import EnvpinInputError
from envpin.escapes import hidden, printable
from envpin.options import add_channel_options, add_db_option, add_target_options, channels, target_spec
from envpin.record import replace
from envpin.target_spec import TargetSpec
from envpin.userfiles import Boundary, UnreadableFile, read_text, repository_boundary


def register(check: argparse.ArgumentParser, parser_class) -> None:
    check.add_argument("files", nargs="+", metavar="FILE", help="requirements*.txt, environment*.yml, pylock*.toml, "
                       "conda-lock.yml, @EXPLICIT files, uv.lock, pyproject.toml, pixi.toml, setup.cfg, setup.py")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--kind", help="read every FILE as this kind: environment.yml, requirements, conda-specs, "
                       "pylock, conda-lock, explicit, uv.lock, pyproject.toml, pixi.toml, setup.py, setup.cfg (default: from the file name)")
    check.add_argument("--ignore", action="append", default=[], metavar="ID", help="drop this problem id (repeatable)")
    check.add_argument("--config", help="pyproject.toml with [tool.envpin] (default: the nearest one above the "
                       "current directory, up to the repository root)")
    check.add_argument("--no-config", action="store_true", help="do not read [tool.envpin]")
    check.add_argument("--driver-policy", help="minor or strict, for the target checks (default: minor)")
    check.add_argument(Boundary.OPTION, action="store_true",
                       help="read the files an include (-r, -c) names, and checked files that are symbolic links, also "
                       "where they lie outside the checked file's git repository (default: refused, so that a pull "
                       "request cannot make the hook read a file of the machine it runs on)")
    check.add_argument("--solve", action="store_true",
                       help="also solve each environment.yml for the target with py-rattler (envpin[conda])")
    add_channel_options(check)
    add_target_options(check, conda=True)
    add_db_option(check)
    check.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.kind is not None and args.kind not in KINDS:
        raise EnvpinInputError(f"--kind {args.kind!r}: expected one of {', '.join(KINDS)}")
    unknown = [i for i in args.ignore if i not in PROBLEMS]
    if unknown:
        raise EnvpinInputError(f"--ignore {unknown[0]}: not an envpin check id (see docs/check.md)")
    config = _config(args)
    policy = args.driver_policy if args.driver_policy is not None else config.driver_policy or "minor"
    if policy not in POLICIES:
        raise EnvpinInputError(f"--driver-policy {policy!r}: expected one of {', '.join(POLICIES)}")
    spec = target_spec(args, conda=True)
    database = _OneDatabase(args.db)
    targets = _targets(spec, config, database)
    conda_channels = channels(args) if args.solve else None
    assumed = None
    if args.solve and _glibc_unknown(spec):
        spec, assumed = replace(spec, glibc=DEFAULT_GLIBC), problem(
            "CHK-SOLVE-ASSUMED", "", f"the target's glibc is not given: --solve assumes glibc {DEFAULT_GLIBC} "
            "(`__glibc`), the default pixi and conda-lock solve with", "pass --glibc X.Y (or --facts from the target) "
            "to solve for its own")
    reports = []
    for path in args.files:
        text = _read(path, args.allow_outside_repo)
        if isinstance(text, FileReport):  # the file could not be read
            reports.append(text)
            continue
        ignore = config.ignored_for(path) | frozenset(args.ignore)
        report = check_text(path, text, load_database=database.get, kind=args.kind, targets=targets, policy=policy,
                            ignore=ignore, include=None if path == "-" else beside(path, args.allow_outside_repo))
        if conda_channels is not None and not report.unreadable:
            report = _with_conda_solve(report, text, args.kind, spec, database.get(), conda_channels, ignore,
                                       assumed)
        reports.append(report)
    for report in reports:
        if report.unreadable:
            print(f"envpin: error: {printable(report.path)}: {printable(report.problems[0].message)}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(report_json(reports), indent=2))
    else:
        sys.stdout.write(render_text(reports))
    if any(r.unreadable for r in reports):
        return 2
    return 1 if any(r.errors for r in reports) else 0


class _OneDatabase:
    """The database of --db, loaded the first time a file or a target needs it (a plain requirements file
    without GPU pins is checked without it), and then the same one for every file and target."""

    def __init__(self, directory: str | None):
        self.directory = directory
        self.loaded: Database | None = None

    def get(self) -> Database:
        if self.loaded is None:
            self.loaded = load_database(self.directory)
        return self.loaded


def _glibc_unknown(spec: TargetSpec) -> bool:
    """A Linux target described by flags alone, without --glibc: nothing says its glibc."""
    return spec.glibc is None and not spec.facts_file and not spec.probes_this_machine and spec.os == "linux"


def _with_conda_solve(report: FileReport, text: str, kind: str | None, spec: TargetSpec, database: Database,
                      conda_channels: Channels, ignore: frozenset[str], assumed: Problem | None) -> FileReport:
    """`--solve`: an environment.yml must solve for the target, with the virtual packages envpin builds."""
    if (kind or kind_of(report.path, text)) != "environment.yml" or "CHK-CONDA-UNSOLVABLE" in ignore:
        return report
    if assumed is not None and assumed.id not in ignore:
        report = replace(report, problems=report.problems + (assumed,))
    try:
        solve_for_target(text, report.path, spec, database, conda_channels)
    except CondaSolveFailed as error:
        found = problem("CHK-CONDA-UNSOLVABLE", "dependencies", str(error),
                        "regenerate it for this target (envpin solve --conda-source …) or relax the pins named")
        return replace(report, problems=report.problems + (found,))
    return report


def _read(path: str, allow_outside: bool) -> str | FileReport:
    """The file's text, or the report that it cannot be read. A file in a git work tree that is a symbolic link
    out of it is not read: the hook is given a pull request's files, and git stores links."""
    try:
        boundary = repository_boundary(path, allow_outside) if path != "-" else None
        if boundary is not None and boundary.repository:
            boundary.admit(path, path)
        return read_text(path)
    except UnreadableFile as error:
        found = problem("CHK-FILE-UNREADABLE", "", f"cannot be read ({error.reason})", "check the path and that it is UTF-8 text")
        return FileReport(path, (found,), unreadable=True)


def _config(args: argparse.Namespace) -> CheckConfig:
    if args.no_config:
        return CheckConfig()
    path = Path(args.config) if args.config else find_config(Path.cwd())
    if path is None:
        return CheckConfig()
    if args.config and not path.is_file():
        raise EnvpinInputError(f"--config {args.config}: no such file")
    if not args.config:  # found in the checked repository: a link out of it is not read, as for a checked file
        boundary = repository_boundary(path, args.allow_outside_repo)
        if boundary.repository:
            boundary.admit(path, str(path))
    return read_config(path, required=bool(args.config))


def _targets(spec: TargetSpec, config: CheckConfig, database: _OneDatabase) -> tuple[CheckTarget, ...]:
    """The machines to check against: the target options when any is given, else the config's targets, each
    resolved against the one database of --db."""
    if spec.given:
        return (command_line_target(spec, database.get()),)
    return tuple(configured_target(named, database.get()) for named in config.targets)


def report_json(reports) -> dict:
    """The contract of docs/contracts.md: {"files": [{"path", "problems": [{"id", "severity", "message", "where"}]}]};
    each message ends with its fix ("… Fix: …")."""
    return {"files": [
        {"path": hidden(r.path), "problems": [
            {"id": p.id, "severity": p.severity, "message": hidden(p.text), "where": hidden(p.where)} for p in r.problems
        ]}
        for r in reports
    ]}


def render_text(reports) -> str:
    lines = []
    for report in reports:
        if report.unreadable:
            continue  # said on stderr, one line each
        for p in report.problems:  # each field one line: a path, a pixi key or a quoted line may hold any character
            where = f":{printable(p.where)}" if p.where else ""
            lines.append(f"{printable(report.path)}{where}: {p.severity} {p.id}: {printable(p.message)}")
            lines.append(f"    fix: {printable(p.fix)}")
    counts = {s: sum(1 for r in reports for p in r.problems if p.severity == s) for s in ("error", "warning", "info")}
    failing = sum(1 for r in reports if r.errors or r.unreadable)
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n) or "no problems"
    lines.append(f"envpin check: {summary} in {len(reports)} file{'s' if len(reports) != 1 else ''}"
                 + (f" ({failing} failing)" if failing else ""))
    return "\n".join(lines) + "\n"
