"""The front door: parse arguments, call one handler, turn envpin's errors into one line and an exit code.

Exit codes (DESIGN.md): 0 success, 1 a real negative answer (no solution, a problem found), 2 bad input —
always a one-line message, never a traceback. Each subcommand lives in `envpin/commands/<name>.py`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from envpin import __version__
from envpin.commands import COMMANDS
from envpin.errors import EnvpinError


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for every other bad input
        self.exit(2, f"envpin: error: {message} (see `{self.prog} --help`)\n")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except EnvpinError as error:
        print(f"envpin: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("envpin: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="envpin", description="Pick, pin and verify the right GPU build for a machine.")
    parser.add_argument("--version", action="version", version=f"envpin {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"envpin.commands.{name}").register(commands, Parser)
    return parser


if __name__ == "__main__":
    sys.exit(main())
