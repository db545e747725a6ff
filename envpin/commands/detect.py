"""`envpin detect`: what envpin sees on this machine (HostFacts)."""

from __future__ import annotations

import argparse
import json

from envpin.facts import to_json
from envpin.host import detect_host
from envpin.host.summary import render_summary
from envpin.options import seconds


def register(detect: argparse.ArgumentParser, parser_class) -> None:
    detect.add_argument("--format", choices=("text", "json"), default="text")
    detect.add_argument("--timeout", type=seconds, default=10.0, help="seconds per probe command (default 10)")
    detect.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    facts = detect_host(timeout=args.timeout)
    print(json.dumps(to_json(facts), indent=2) if args.format == "json" else render_summary(facts))
    return 0
