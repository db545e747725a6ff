"""`envpin detect`: what envpin sees on this machine (HostFacts)."""

from __future__ import annotations

import argparse
import json
import sys

from envpin.base.escapes import terminal
from envpin.commands.options import add_node_report_option, seconds
from envpin.facts.host import to_json
from envpin.host import detect_host
from envpin.host.summary import render_summary


def register(detect: argparse.ArgumentParser, parser_class) -> None:
    detect.add_argument("--format", choices=("text", "json"), default="text")
    detect.add_argument("--timeout", type=seconds, default=10.0, help="seconds per probe command (default 10)")
    add_node_report_option(detect)
    detect.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    facts = detect_host(timeout=args.timeout)
    if args.node_report_dir:  # one task of `envpin fleet detect --slurm`: the facts as NODE.json
        from envpin.fleet.node_report import write_node_report  # noqa: PLC0415 - for a cluster's tasks only

        path = write_node_report(args.node_report_dir, json.dumps(to_json(facts), indent=2) + "\n")
        print(f"wrote {path}", file=sys.stderr)
        return 0
    print(json.dumps(to_json(facts), indent=2) if args.format == "json" else terminal(render_summary(facts)))
    return 0
