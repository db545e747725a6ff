"""`envpin init`: write a pinned environment file for a repository, never clobbering one silently."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from envpin.app.database import run_database
from envpin.app.planning import Plan, plan
from envpin.app.render import RenderOptions, render
from envpin.base.escapes import terminal
from envpin.base.userfiles import read_text, write_atomically
from envpin.commands.options import (
    add_db_option,
    add_project_options,
    add_request_options,
    add_target_options,
    solve_options,
    target_spec,
)

DEFAULT_FILES = {"environment.yml": "environment.yml", "requirements.txt": "requirements-gpu.txt"}

PRE_COMMIT_SNIPPET = """\
# .pre-commit-config.yaml: keep {name} valid on every commit (envpin installed in the hook's environment)
repos:
  - repo: local
    hooks:
      - id: envpin-check
        name: envpin check
        entry: envpin check
        language: system
        files: ^{pattern}$
"""


def register(init: argparse.ArgumentParser, parser_class) -> None:
    init.add_argument("directory", nargs="?", default=".", help="the repository (default: .)")
    init.add_argument("--format", choices=tuple(DEFAULT_FILES), default="environment.yml")
    init.add_argument("-o", "--output", help="file to write, or - for stdout (default: DIR/environment.yml or DIR/requirements-gpu.txt)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file that differs")
    init.add_argument("--name", default=None, help="environment name (default: the directory's name)")
    add_request_options(init, requirements=False)
    add_project_options(init, directory=False)
    add_target_options(init)
    add_db_option(init)
    init.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    to_stdout = args.output == "-"  # the file's text on stdout, nothing written
    output = Path(DEFAULT_FILES[args.format]) if to_stdout else Path(args.output) if args.output else directory / DEFAULT_FILES[args.format]
    database = run_database(args.db)
    planned = plan(solve_options(args, project_directory=args.directory), target_spec(args), database)
    rendering = RenderOptions(format=args.format, output=str(output), name=args.name or directory.resolve().name or "envpin")
    text = render(planned.answer, planned.request, rendering, database, planned.project, planned.source_args)
    answer = planned.answer
    if not isinstance(answer, Plan) or to_stdout:  # not planned.ok, or -o -
        sys.stdout.write(terminal(text))
        return planned.exit_code  # 0; 1, or 3 for a broken driver
    if output.exists():
        current = read_text(output, errors="replace")
        if current == text:
            print(f"{output} is up to date", file=sys.stderr)
            return 0
        if not args.force:
            sys.stdout.writelines(terminal(line) for line in difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True), str(output), f"{output} (new)"))
            print(f"envpin: {output} exists and differs (diff above); rerun with --force to overwrite", file=sys.stderr)
            return 1
    write_atomically(output, text)
    print(f"wrote {output} ({answer.packages[0].requirement}, {answer.accelerator})", file=sys.stderr)
    print(PRE_COMMIT_SNIPPET.format(name=output.name, pattern=output.name.replace(".", r"\.")))
    return 0
