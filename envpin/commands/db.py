"""`envpin db info|validate`: the compatibility database itself."""

from __future__ import annotations

import argparse
import json
import sys

from envpin.commands.common import add_db_option


def register(commands, parser_class) -> None:
    db = commands.add_parser("db", help="the compatibility database")
    db_commands = db.add_subparsers(dest="db_command", required=True, parser_class=parser_class)
    info = db_commands.add_parser("info", help="version, counts and what is unverified")
    add_db_option(info)
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(handler=run_info)
    validate = db_commands.add_parser("validate", help="check a database directory against the schema")
    validate.add_argument("path", nargs="?", help="database directory (default: the one envpin ships)")
    validate.set_defaults(handler=run_validate)


def run_info(args: argparse.Namespace) -> int:
    from envpin.compat.info import database_info, render_info
    from envpin.compat.loader import load_database

    info = database_info(load_database(args.db))
    print(json.dumps(info, indent=2) if args.format == "json" else render_info(info))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from envpin.compat.loader import validate_database

    problems = validate_database(args.path)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "database is valid", file=sys.stderr)
    return 1 if problems else 0
