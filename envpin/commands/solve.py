"""`envpin solve`: the exact framework builds for a machine, in the format asked for."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.commands.common import add_db_option, add_target_options, target_facts, write_atomically
from envpin.errors import EnvpinInputError

FORMATS = ("text", "json", "environment.yml", "requirements.txt", "index-url", "pip", "uv")


def register(commands, parser_class) -> None:
    solve = commands.add_parser("solve", help="pick the exact framework build for a machine")
    solve.add_argument("--framework", action="append", default=[], help="torch, tensorflow or jax (repeatable)")
    solve.add_argument("--spec", action="append", default=[], help="a PEP 508 requirement, e.g. 'torch>=2.4'")
    solve.add_argument("--format", choices=FORMATS, help="output format (default: text, or from -o)")
    solve.add_argument("-o", "--output", help="write to FILE; the format follows the file name")
    solve.add_argument("--driver-policy", default="minor", help="minor (default) or strict")
    solve.add_argument("--torch-index-url", help="base URL of the PyTorch index (or ENVPIN_TORCH_INDEX_URL)")
    solve.add_argument("--name", default="envpin", help="environment name in environment.yml")
    add_target_options(solve)
    add_db_option(solve)
    solve.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from envpin.compat.loader import load_database
    from envpin.resolver.plan import Unsatisfiable
    from envpin.resolver.request import parse_request
    from envpin.resolver.solve import solve
    from envpin.resolver.target import make_target

    output_format = output_format_for(args.format, args.output)
    frameworks = args.framework or ([] if args.spec else ["torch"])
    request = parse_request(frameworks, args.spec, args.driver_policy, args.torch_index_url)
    database = load_database(args.db)
    target = make_target(database, target_facts(args))
    answer = solve(database, target, request)
    text = render(output_format, answer, request, args)
    if args.output and not isinstance(answer, Unsatisfiable):
        write_atomically(Path(args.output), text)
        print(f"wrote {args.output} ({answer.packages[0].requirement}, {answer.accelerator})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if isinstance(answer, Unsatisfiable) else 0


def output_format_for(chosen: str | None, output: str | None) -> str:
    if chosen:
        return chosen
    if not output:
        return "text"
    name = Path(output).name.lower()
    if name.endswith((".yml", ".yaml")):
        return "environment.yml"
    if name.endswith(".txt"):
        return "requirements.txt"
    if name.endswith(".json"):
        return "json"
    raise EnvpinInputError(f"-o {output}: cannot tell the format from the file name; add --format")


def render(output_format: str, answer, request, args: argparse.Namespace) -> str:
    from envpin.emit import commands, environment_yml, requirements, text
    from envpin.emit.common import answer_json
    from envpin.resolver.plan import Unsatisfiable

    if output_format == "json":
        return json.dumps(answer_json(answer), indent=2) + "\n"
    if output_format == "text" or isinstance(answer, Unsatisfiable):
        return text.render(answer, request)
    if output_format == "environment.yml":
        return environment_yml.render(answer, request, args.output, name=args.name)
    if output_format == "requirements.txt":
        return requirements.render(answer, request, args.output)
    if output_format == "index-url":
        return commands.index_url(answer) + "\n"
    if output_format == "pip":
        return commands.pip_command(answer) + "\n"
    return commands.uv_command(answer) + "\n"
