#!/usr/bin/env python3
"""Write docs/commands/<command>.md, one page per command, from the command's own `--help` (and its subcommands'),
at 100 columns. tests/unit/test_docs.py fails when a page differs from what this writes, so a changed option
comes with its page:

    .venv/bin/python scripts/docs_commands.py          # rewrite the pages
    .venv/bin/python scripts/docs_commands.py --check  # exit 1 and name the pages that are out of date
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "docs" / "commands"
COLUMNS = "100"
# argparse words its help a little differently across Pythons (3.13: `-o, --output OUTPUT`): the pages are written
# on one, and the test compares them in full on that one and by their options and commands on the others
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers there only
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    return {}


def pages() -> dict[str, str]:
    """The page of each command: its summary, its --help, and each subcommand's --help."""
    os.environ["COLUMNS"] = COLUMNS  # the front door's formatter reads the width from here
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from envpin.cli import build_parser  # noqa: PLC0415 - after sys.path names this checkout
    from envpin.commands import COMMANDS  # noqa: PLC0415

    commands = subparsers(build_parser())
    written = {}
    for name, summary in COMMANDS.items():
        parser = commands[name]
        parts = [f"# envpin {name}", "",
                 f"<!-- written by scripts/docs_commands.py from `envpin {name} --help` on Python {PYTHON}; "
                 "tests/unit/test_docs.py checks that it matches -->", "",
                 f"{summary[:1].upper()}{summary[1:]}.", "", "```text", parser.format_help().rstrip(), "```"]
        for word, subparser in subparsers(parser).items():
            parts += ["", f"## envpin {name} {word}", "", "```text", subparser.format_help().rstrip(), "```"]
        written[f"{name}.md"] = "\n".join(parts) + "\n"
    return written


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for name, text in pages().items():
        path = PAGES / name
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not check:
            PAGES.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if check and stale:
        print(f"out of date: {', '.join(f'docs/commands/{n}' for n in stale)} (run scripts/docs_commands.py)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
