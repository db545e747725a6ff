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
    solve.add_argument("--allow-insecure-index", action="store_true",
                       help="accept a plain-http index URL on a remote host (with a warning)")
    solve.add_argument("--conda-source", choices=("pip", "conda-forge", "pytorch-channel"),
                       help="environment.yml: frameworks as pip wheels (pip, the default), conda-forge builds, "
                            "or the pytorch channel (torch <= 2.5.1)")
    solve.add_argument("--project", nargs="?", const=".", metavar="DIR",
                       help="solve a repository's requirements: its GPU frameworks pinned, the rest kept (default: .)")
    solve.add_argument("-r", "--requirement", action="append", default=[], metavar="FILE",
                       help="a requirements file of the project (repeatable)")
    solve.add_argument("--extra", action="append", default=[], help="a pyproject optional-dependencies group (repeatable)")
    solve.add_argument("--group", action="append", default=[], help="a PEP 735 dependency group (repeatable)")
    solve.add_argument(
        "--targets", help="a fleet inventory: JSON list of facts documents (each may have a \"name\"); one answer per distinct result"
    )
    add_target_options(solve)
    add_db_option(solve)
    solve.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from envpin.resolver.plan import Unsatisfiable

    if args.targets:
        return run_fleet(args, *prepare(args))
    answer, text = solve_to_text(args)
    if args.output and not isinstance(answer, Unsatisfiable):
        write_atomically(Path(args.output), text)
        print(f"wrote {args.output} ({answer.packages[0].requirement}, {answer.accelerator})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if isinstance(answer, Unsatisfiable) else 0


def prepare(args: argparse.Namespace):
    """(database, request, output format) from the options, the project's files included."""
    from envpin.compat.loader import load_database
    from envpin.resolver.request import parse_request

    output_format = output_format_for(args.format, args.output)
    project, project_specs, origins = read_project(args)
    args.origins = origins
    frameworks = args.framework or ([] if args.spec or project else ["torch"])
    request = parse_request(frameworks, project_specs + args.spec, args.driver_policy, args.torch_index_url,
                            getattr(args, "allow_insecure_index", False))
    return load_database(args.db), request, output_format


def solve_to_text(args: argparse.Namespace):
    """(answer, rendered text) for one target: what `solve` prints or writes, and what `init` writes."""
    from envpin.resolver.solve import solve
    from envpin.resolver.target import make_target

    database, request, output_format = prepare(args)
    target = make_target(database, target_facts(args))
    answer = name_project_pins(solve(database, target, request), args.origins)
    return answer, render(output_format, answer, request, args)


def read_project(args: argparse.Namespace):
    """(Project or None, its GPU specs, where each GPU package is asked for); fills --python from an
    environment.yml's `python=X.Y` when no --python was given."""
    if args.project is None and not args.requirement:
        args.project_object, args.source_args = None, None
        return None, [], {}
    from envpin.project.collect import collect_project
    from envpin.project.gpu import gpu_specs

    directory = Path(args.project) if args.project is not None else None
    project = collect_project(directory, tuple(args.requirement), tuple(args.extra), tuple(args.group))
    specs, notes, origins = gpu_specs(project)
    if project.python and args.python is None and not args.facts:
        args.python = project.python
    args.project_object = _with_notes(project, notes)
    args.source_args = source_args(args)
    return args.project_object, specs, origins


def _with_notes(project, notes: list[str]):
    from dataclasses import replace

    return replace(project, notes=project.notes + tuple(notes))


def source_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The request as the user phrased it, for the regenerate command of a project's file."""
    words: list[str] = []
    if args.project is not None:
        words += ["--project", args.project]
    for option, values in (("-r", args.requirement), ("--extra", args.extra), ("--group", args.group),
                           ("--framework", args.framework), ("--spec", args.spec)):
        for value in values:
            words += [option, value]
    return tuple(words)


def name_project_pins(answer, origins: dict[str, list[str]]):
    """An unsatisfiable answer for a project says which of its lines asked for what."""
    from dataclasses import replace

    from envpin.resolver.plan import Unsatisfiable

    if not origins or not isinstance(answer, Unsatisfiable):
        return answer
    asked = "; ".join(", ".join(where) for where in origins.values())
    return replace(answer, message=f"the project asks for {asked}: {answer.message}")


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
    project, words = getattr(args, "project_object", None), getattr(args, "source_args", None)
    if getattr(args, "conda_source", None) not in (None, "pip"):
        from envpin.commands.conda import conda_environment_yml  # the conda-native strategies

        if output_format != "environment.yml":
            raise EnvpinInputError("--conda-source is for environment.yml output (--format environment.yml or -o *.yml)")
        return conda_environment_yml(answer, request, args, project, words)
    if output_format == "environment.yml":
        return environment_yml.render(answer, request, args.output, name=args.name, project=project, source_args=words)
    if output_format == "requirements.txt":
        return requirements.render(answer, request, args.output, project=project, source_args=words)
    if output_format == "index-url":
        return commands.index_url(answer) + "\n"
    if output_format == "pip":
        return commands.pip_command(answer) + "\n"
    return commands.uv_command(answer) + "\n"


def run_fleet(args: argparse.Namespace, database, request, output_format: str) -> int:
    """`--targets FILE`: solve every machine class, print or write one result per distinct answer."""
    from envpin.commands.common import fleet_targets
    from envpin.emit.common import answer_json
    from envpin.resolver.fleet import solve_fleet
    from envpin.resolver.plan import Unsatisfiable

    results = solve_fleet(database, fleet_targets(args, database), request)
    failed = any(isinstance(r.answer, Unsatisfiable) for r in results)
    if args.output:
        for path, result in zip(fleet_paths(Path(args.output), results), results):
            if isinstance(result.answer, Unsatisfiable):
                continue
            write_atomically(path, render(output_format, result.answer, request, _with_output(args, path)))
            print(f"wrote {path} for {', '.join(result.names)}", file=sys.stderr)
    if output_format == "json" and not args.output:
        document = {"results": [{"targets": list(r.names), **answer_json(r.answer)} for r in results]}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif not args.output or failed:
        for result in results:
            if args.output and not isinstance(result.answer, Unsatisfiable):
                continue
            sys.stdout.write(f"== {', '.join(result.names)}\n")
            sys.stdout.write(render("text" if args.output else output_format, result.answer, request, args) + "\n")
    return 1 if failed else 0


def fleet_paths(output: Path, results) -> list[Path]:
    """`environment.yml` → `environment.cu126.yml`, `environment.cpu.yml` …, numbered if two share an accelerator."""
    paths, seen = [], {}
    for result in results:
        label = getattr(result.answer, "accelerator", "none")
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}-{seen[label]}"
        paths.append(output.with_name(f"{output.stem}.{label}{output.suffix}"))
    return paths


def _with_output(args: argparse.Namespace, path: Path) -> argparse.Namespace:
    return argparse.Namespace(**{**vars(args), "output": str(path)})
