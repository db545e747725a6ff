"""`envpin db info|validate|refresh`: the compatibility database itself.

`refresh` reads PyPI, proposes records with their sources, validates and writes them, and prints a report.
Its exit codes: 0 every read succeeded and the proposal (if any) was written; 1 the proposal did not validate,
so nothing was written; 2 bad input, or some PyPI reads failed (the report lists each; records that needed a
failed read are held back).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.app.database import run_database
from envpin.base.errors import DatabaseError
from envpin.base.escapes import printable, terminal
from envpin.commands.options import add_db_option, seconds
from envpin.compat.info import database_info, render_info
from envpin.compat.loader import validate_database
from envpin.refresh.client import DEFAULT_JSON_URL, DEFAULT_SIMPLE_URL
from envpin.refresh.plan import PACKAGES
from envpin.refresh.run import RefreshOptions, refresh


def register(db: argparse.ArgumentParser, parser_class) -> None:
    db_commands = db.add_subparsers(dest="db_command", metavar="COMMAND", required=True, parser_class=parser_class)
    info = db_commands.add_parser("info", help="version, counts and what is unverified")
    add_db_option(info)
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(handler=run_info)
    validate = db_commands.add_parser("validate", help="check a database directory against the schema")
    validate.add_argument("path", nargs="?", help="database directory (default: the one envpin ships)")
    validate.set_defaults(handler=run_validate)
    update = db_commands.add_parser("refresh", help="propose new records from PyPI, validate, write, report",
                                    description="Propose compatibility-database records from PyPI.")
    update.add_argument("--db", help="the database to refresh (default: the one envpin ships)")
    update.add_argument("--output", help="where to write the proposal: the database itself (the default) or a "
                                         "new or empty directory that receives a full copy")
    update.add_argument("--dry-run", action="store_true", help="validate the proposal but write nothing")
    update.add_argument("--report", help="write the markdown report here (default: stdout)")
    update.add_argument("--packages", default=",".join(PACKAGES), help=f"comma-separated subset of {', '.join(PACKAGES)}")
    update.add_argument("--recheck", type=int, default=1, metavar="N",
                        help="re-read the N newest releases the database lists per framework and report where PyPI "
                             "disagrees (default 1; 0: none)")
    update.add_argument("--date", help="the read date for sources and the new version, YYYY-MM-DD (default: today, UTC)")
    update.add_argument("--json-url", default=DEFAULT_JSON_URL, help=f"PyPI JSON API base (default {DEFAULT_JSON_URL})")
    update.add_argument("--simple-url", default=DEFAULT_SIMPLE_URL,
                        help=f"PEP 691 simple API base (default {DEFAULT_SIMPLE_URL})")
    update.add_argument("--timeout", type=seconds, default=20.0, help="seconds per request (default 20)")
    update.add_argument("--attempts", type=int, default=3, help="tries per request (default 3)")
    update.add_argument("-v", "--verbose", action="store_true", help="print each read on stderr")
    update.set_defaults(handler=run_refresh)


def run_info(args: argparse.Namespace) -> int:
    info = database_info(run_database(args.db))
    print(json.dumps(info, indent=2) if args.format == "json" else terminal(render_info(info)))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    if args.path is not None and not Path(args.path).is_dir():
        raise DatabaseError(f"database {args.path}: not a directory")  # bad input (2), not a database with problems (1)
    problems = validate_database(args.path)
    for problem in problems:
        print(printable(problem))
    print(f"{len(problems)} problem(s)" if problems else "database is valid", file=sys.stderr)
    return 1 if problems else 0


def run_refresh(args: argparse.Namespace) -> int:
    return refresh(RefreshOptions(
        db=args.db, output=args.output, dry_run=args.dry_run, report=args.report, packages=args.packages,
        recheck=args.recheck, date=args.date, json_url=args.json_url, simple_url=args.simple_url,
        timeout=args.timeout, attempts=args.attempts, verbose=args.verbose,
    ))
