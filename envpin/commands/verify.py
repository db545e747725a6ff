"""`envpin verify`: probe an environment's frameworks inside its own interpreter; does the build fit this machine?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.app.database import run_database
from envpin.base.escapes import terminal
from envpin.base.record import replace
from envpin.commands.options import add_node_report_option, add_probe_options
from envpin.facts.env import env_facts_to_json
from envpin.host import detect_host
from envpin.lock.pylock import read_lock
from envpin.verify.report import lock_checks, render_text, report_json, verify
from envpin.verify.run import interpreter_for, run_probe


def register(verify: argparse.ArgumentParser, parser_class) -> None:
    verify.add_argument("--format", choices=("text", "json"), default="text")
    add_probe_options(verify)
    verify.add_argument("--lock", metavar="FILE", help="also compare what is installed with this pylock.toml")
    add_node_report_option(verify)
    verify.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    timeout = args.timeout
    interpreter = interpreter_for(args.interpreter, args.prefix)
    locked_document = read_lock(args.lock) if args.lock else None  # a bad lock is reported before any probing
    database = run_database(args.db)
    env = run_probe(interpreter, import_timeout=timeout, smoke=not args.no_smoke)
    host = detect_host(probe_environment=False)
    report = verify(env, host, database)
    if args.lock and locked_document is not None:
        locked = {p["name"]: p["version"] for p in locked_document.get("packages", []) if "version" in p}
        report = replace(report, checks=report.checks + tuple(lock_checks(env.packages.pip, locked, Path(args.lock).name)))
    if args.node_report_dir:  # one task of a provision job: the report as NODE.json for `envpin fleet status`
        from envpin.fleet.node_report import write_node_report  # noqa: PLC0415 - for a cluster's tasks only

        text = json.dumps({**env_facts_to_json(env), **report_json(report)}, indent=2) + "\n"
        print(f"wrote {write_node_report(args.node_report_dir, text)}", file=sys.stderr)
    elif args.format == "json":
        print(json.dumps({**env_facts_to_json(env), **report_json(report)}, indent=2))
    else:
        print(terminal(render_text(env, host, report)), end="")
    return 0 if report.ok else 1
