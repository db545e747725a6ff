"""`envpin completion bash|zsh|fish`: a shell completion script, generated from envpin's own parser (its
commands, subcommands, options and the choices of each option), printed on stdout."""

from __future__ import annotations

import argparse
import sys

from envpin.commands.conventions import completion_script, completion_shell


def register(completion: argparse.ArgumentParser, parser_class) -> None:
    completion.add_argument("shell", type=completion_shell, metavar="SHELL", help="bash, zsh or fish")
    completion.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # the whole tree, every command's parser: only this command builds it, with the builder the front door hands
    # down (envpin.cli.build_parser, which imports every command)
    sys.stdout.write(completion_script(args.shell, args.whole_parser()))
    return 0
