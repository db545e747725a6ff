"""`envpin init`: write a pinned environment file for a repository, never clobbering one silently."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from envpin.commands.common import add_db_option, add_target_options, write_atomically

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


def register(commands, parser_class) -> None:
    init = commands.add_parser("init", help="write a pinned environment file for a repository")
    init.add_argument("directory", nargs="?", default=".", help="the repository (default: .)")
    init.add_argument("--format", choices=tuple(DEFAULT_FILES), default="environment.yml")
    init.add_argument("-o", "--output", help="file to write (default: DIR/environment.yml or DIR/requirements-gpu.txt)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file that differs")
    init.add_argument("--framework", action="append", default=[], help="add a framework the project does not list")
    init.add_argument("--spec", action="append", default=[], help="an extra PEP 508 requirement on a framework")
    init.add_argument("--extra", action="append", default=[], help="a pyproject optional-dependencies group")
    init.add_argument("--group", action="append", default=[], help="a PEP 735 dependency group")
    init.add_argument("--driver-policy", default="minor", help="minor (default) or strict")
    init.add_argument("--torch-index-url", help="base URL of the PyTorch index")
    init.add_argument("--name", default=None, help="environment name (default: the directory's name)")
    add_target_options(init)
    add_db_option(init)
    init.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from envpin.commands.solve import solve_to_text
    from envpin.resolver.plan import Unsatisfiable

    directory = Path(args.directory)
    output = Path(args.output) if args.output else directory / DEFAULT_FILES[args.format]
    solve_args = argparse.Namespace(
        **{**vars(args), "project": args.directory, "requirement": [], "output": str(output), "targets": None}
    )
    if solve_args.name is None:
        solve_args.name = directory.resolve().name or "envpin"
    answer, text = solve_to_text(solve_args)
    if isinstance(answer, Unsatisfiable):
        sys.stdout.write(text)
        return 1
    if output.exists():
        current = output.read_text(encoding="utf-8", errors="replace")
        if current == text:
            print(f"{output} is up to date", file=sys.stderr)
            return 0
        if not args.force:
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True), str(output), f"{output} (new)"))
            print(f"envpin: {output} exists and differs (diff above); rerun with --force to overwrite", file=sys.stderr)
            return 1
    write_atomically(output, text)
    print(f"wrote {output} ({answer.packages[0].requirement}, {answer.accelerator})", file=sys.stderr)
    print(PRE_COMMIT_SNIPPET.format(name=output.name, pattern=output.name.replace(".", r"\.")))
    return 0
