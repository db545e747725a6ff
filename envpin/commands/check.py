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

from envpin.app.check import check_files
from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import hidden, printable
from envpin.base.userfiles import Boundary, repository_boundary
from envpin.check.config import CheckConfig, find_config, read_config
from envpin.check.formats import KINDS
from envpin.commands.options import (
    add_channel_options,
    add_db_option,
    add_target_options,
    channels,
    check_resolve_options,
    target_spec,
)
from envpin.compat.drivers import POLICIES
from envpin.readers.rules import PROBLEMS


def register(check: argparse.ArgumentParser, parser_class) -> None:
    check.add_argument("files", nargs="+", metavar="FILE", help="requirements*.txt, environment*.yml, pylock*.toml, "
                       "conda-lock.yml, @EXPLICIT files, uv.lock, pixi.lock, poetry.lock, Pipfile.lock, pdm.lock, "
                       "pyproject.toml, pixi.toml, setup.cfg, setup.py")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("--kind", help="read every FILE as this kind: environment.yml, requirements, conda-specs, "
                       "pylock, conda-lock, explicit, uv.lock, pixi.lock, poetry.lock, Pipfile.lock, pdm.lock, "
                       "pyproject.toml, pixi.toml, setup.py, setup.cfg "
                       "(default: from the file name)")
    check.add_argument("--ignore", action="append", default=[], metavar="ID", help="drop this problem id (repeatable)")
    check.add_argument("--config", help="pyproject.toml with [tool.envpin] (default: the nearest one above the "
                       "current directory, up to the repository root)")
    check.add_argument("--no-config", action="store_true", help="do not read [tool.envpin]")
    check.add_argument("--driver-policy", help="minor or strict, for the target checks (default: minor)")
    check.add_argument("--fix", action="store_true",
                       help="rewrite the failing torch lines of requirements files, environment.yml pip sections and "
                       "a pyproject's PyTorch index URLs to the solve's answer for the targets (a lock: print the "
                       "manifest edit and the tool's lock command); what cannot be fixed still fails")
    check.add_argument(Boundary.OPTION, action="store_true",
                       help="read the files an include (-r, -c) names, and checked files that are symbolic links, also "
                       "where they lie outside the checked file's git repository (default: refused, so that a pull "
                       "request cannot make the hook read a file of the machine it runs on)")
    check.add_argument("--solve", action="store_true",
                       help="also solve each environment.yml for the target with py-rattler (envpin[conda])")
    check.add_argument("--resolve", action="store_true",
                       help="also resolve each requirements file's lines (an environment.yml's pip section, a "
                            "pyproject.toml's dependencies with each extra and group) with uv for "
                            "the target's Python and platform "
                            "(asks the index: a pin it does not serve, lines that conflict); off by default, so that "
                            "the hook stays offline")
    check.add_argument("--offline", action="store_true", help="with --resolve: from uv's cache only (uv --offline)")
    check.add_argument("--index-url", help="with --resolve: the default index, PyPI or a mirror of it (default: the "
                                           "file's -i, else ENVPIN_INDEX_URL, else PyPI)")
    check.add_argument("--allow-insecure-index", action="store_true",
                       help="with --resolve: allow a plain-http --index-url on another host")
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
    reports = check_files(args.files, args.kind, target_spec(args, conda=True), config, policy,
                          frozenset(args.ignore), args.db, channels(args) if args.solve else None, fix=args.fix,
                          allow_outside=args.allow_outside_repo, resolve=check_resolve_options(args))
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
