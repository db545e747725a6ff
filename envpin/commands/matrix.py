"""`envpin matrix`: every release × build of one framework on a machine (or on each class of a fleet), each cell
judged by the solver's own fitness checks, as a terminal grid, a JSON document or a static HTML page."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.app.database import run_database
from envpin.app.matrix import grids
from envpin.app.planning import SolveOptions
from envpin.base.errors import EnvpinInputError
from envpin.base.terminal import wants_colour as terminal_wants_colour
from envpin.base.userfiles import write_atomically
from envpin.commands.options import (
    add_db_option,
    add_driver_policy_option,
    add_fleet_option,
    add_target_options,
    target_spec,
)
from envpin.matrix import page, terminal
from envpin.matrix.grid import Grid, grid_json

FORMATS = ("text", "json", "html")
_SUFFIXES = {".txt": "text", ".json": "json", ".html": "html", ".htm": "html"}


def register(matrix: argparse.ArgumentParser, parser_class) -> None:
    matrix.add_argument("--framework", action="append", default=[], help="torch (default), tensorflow or jax")
    add_driver_policy_option(matrix)
    matrix.add_argument("--format", choices=FORMATS, help="text (default, or from -o), json or html")
    matrix.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically), or - for stdout; the format follows its name")
    add_fleet_option(matrix, "one grid per machine class")
    add_target_options(matrix)
    add_db_option(matrix)
    matrix.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if len(args.framework) > 1:
        raise EnvpinInputError("--framework: envpin matrix shows one framework at a time")
    output_format = args.format or grid_format_for_path(args.output)
    options = SolveOptions(frameworks=tuple(args.framework) or ("torch",), driver_policy=args.driver_policy)
    spec = target_spec(args)
    database = run_database(args.db)
    made = grids(options, spec, database, args.targets)
    text = rendered(made, output_format, colour=not args.output and wants_colour(sys.stdout))
    if args.output:
        write_atomically(Path(args.output), text)
        print(f"wrote {args.output} ({len(made)} grid{'s' if len(made) != 1 else ''})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0 if all(grid.pick is not None for grid in made) else 1


def rendered(made: list[Grid], output_format: str, colour: bool) -> str:
    if output_format == "json":
        if len(made) == 1 and not made[0].names:
            return json.dumps(grid_json(made[0]), indent=2) + "\n"
        return json.dumps({"results": [{"targets": list(g.names), **grid_json(g)} for g in made]}, indent=2) + "\n"
    if output_format == "html":
        return page.render(made)
    return terminal.render(made, colour=colour)


def grid_format_for_path(output: str | None) -> str:
    if not output:
        return "text"
    chosen = _SUFFIXES.get(Path(output).suffix.lower())
    if chosen is None:
        raise EnvpinInputError(f"-o {output}: cannot tell the format from the file name (.txt, .json, .html); add --format")
    return chosen


def wants_colour(stream) -> bool:
    """Colour by --color, NO_COLOR, FORCE_COLOR and whether `stream` is a terminal (envpin/base/terminal.py)."""
    return terminal_wants_colour(stream)
