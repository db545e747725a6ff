"""`envpin verify`: probe an environment's frameworks inside its own interpreter; does the build fit this machine?"""

from __future__ import annotations

import argparse
import json


def register(commands, parser_class) -> None:
    verify = commands.add_parser("verify", help="check that an environment's torch / TensorFlow / JAX works on this machine")
    where = verify.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help="the environment's interpreter (default: the one running envpin)")
    where.add_argument("--prefix", metavar="DIR", help="the environment's root directory (a venv or conda env)")
    verify.add_argument("--format", choices=("text", "json"), default="text")
    verify.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for each framework's import (default 120)")
    verify.add_argument("--no-smoke", action="store_true", help="skip the small GPU computations")
    verify.add_argument("--db", help="use the compatibility database in this directory")
    verify.add_argument("--lock", metavar="FILE", help="also compare what is installed with this pylock.toml")
    verify.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from envpin.compat.loader import load_database
    from envpin.errors import EnvpinInputError
    from envpin.facts import env_facts_to_json
    from envpin.host import detect_host
    from envpin.verify.report import render_text, report_json, verify
    from envpin.verify.run import interpreter_for, run_probe

    if args.timeout <= 0:
        raise EnvpinInputError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    interpreter = interpreter_for(args.python, args.prefix)
    database = load_database(args.db)
    env = run_probe(interpreter, import_timeout=args.timeout, smoke=not args.no_smoke)
    host = detect_host(probe_environment=False)
    report = verify(env, host, database)
    if args.lock:
        from dataclasses import replace
        from pathlib import Path

        from envpin.lock.pylock import read_lock
        from envpin.verify.report import lock_checks

        locked = {p["name"]: p["version"] for p in read_lock(args.lock).get("packages", []) if "version" in p}
        report = replace(report, checks=report.checks + tuple(lock_checks(env.packages.pip, locked, Path(args.lock).name)))
    if args.format == "json":
        print(json.dumps({**env_facts_to_json(env), **report_json(report)}, indent=2))
    else:
        print(render_text(env, host, report), end="")
    return 0 if report.ok else 1
