"""`envpin lock`: the solved GPU stack plus the project's own requirements, locked through uv (or pip) into
a PEP 751 `pylock.<accelerator>.toml`, or a requirements file with hashes."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from envpin.commands.common import add_db_option, add_target_options, target_facts, write_atomically
from envpin.errors import EnvpinInputError

FORMATS = ("pylock", "requirements")


def register(commands, parser_class) -> None:
    lock = commands.add_parser("lock", help="lock the GPU stack and the project's requirements (PEP 751 pylock.toml)")
    add_lock_options(lock)
    lock.add_argument("--format", choices=FORMATS, default="pylock",
                      help="pylock (PEP 751, default) or requirements (pip, with --hash lines)")
    lock.add_argument("-o", "--output", help="file to write, or - for stdout (default: pylock.<accelerator>.toml)")
    lock.set_defaults(handler=run)


def add_lock_options(parser: argparse.ArgumentParser) -> None:
    """What a lock is made of; `envpin install` takes the same options."""
    parser.add_argument("--framework", action="append", default=[], help="torch, tensorflow or jax (repeatable)")
    parser.add_argument("--spec", action="append", default=[], help="a PEP 508 requirement on a framework")
    parser.add_argument("--project", nargs="?", const=".", metavar="DIR",
                        help="lock a repository's requirements (requirements*.txt, pyproject.toml …; default: .)")
    parser.add_argument("-r", "--requirement", action="append", default=[], metavar="FILE",
                        help="a requirements file of the project (repeatable)")
    parser.add_argument("--extra", action="append", default=[], help="a pyproject optional-dependencies group")
    parser.add_argument("--group", action="append", default=[], help="a PEP 735 dependency group")
    parser.add_argument("--driver-policy", default="minor", help="minor (default) or strict")
    parser.add_argument("--torch-index-url", help="base URL of the PyTorch index (or ENVPIN_TORCH_INDEX_URL)")
    parser.add_argument("--index-url", help="the default index: PyPI or a mirror of it (or ENVPIN_INDEX_URL)")
    parser.add_argument("--allow-insecure-index", action="store_true",
                        help="accept a plain-http index URL on a remote host (with a warning)")
    parser.add_argument("--locker", choices=("uv", "pip"), help="uv (default when installed) or pip >= 25.1")
    parser.add_argument("--lock-timeout", type=float, default=900, metavar="S", help="give up locking after S seconds")
    add_target_options(parser)
    add_db_option(parser)


def run(args: argparse.Namespace) -> int:
    from envpin.emit.text import render as render_text
    from envpin.lock.export import requirements_text
    from envpin.lock.pylock import lock_file_name, render
    from envpin.resolver.plan import Unsatisfiable

    answer, request, lock, header = lock_from_args(args, output=args.output)
    if isinstance(answer, Unsatisfiable):
        sys.stdout.write(render_text(answer, request))
        return 1
    if args.format == "requirements":
        text = requirements_text(lock.document, header)
    else:
        text = render(lock.document, header)
    output = args.output or lock_file_name(answer.accelerator, args.format)
    if output == "-":
        sys.stdout.write(text)
    else:
        write_atomically(Path(output), text)
    pins = ", ".join(f"{p.requirement}" + (f" from {p.index_url}" if p.index_url else "") for p in answer.packages)
    where = "stdout" if output == "-" else output
    print(f"wrote {where}: {len(lock.document['packages'])} packages; {pins} ({lock.engine})", file=sys.stderr)
    return 0


def lock_from_args(args: argparse.Namespace, output: str | None = None):
    """(answer, request, Lock or None, header lines): solve, then lock the plan with the project."""
    from envpin.commands.solve import name_project_pins, read_project
    from envpin.compat.loader import load_database
    from envpin.emit.common import file_header
    from envpin.lock.engines import choose_engine
    from envpin.lock.make import make_lock
    from envpin.resolver.plan import Unsatisfiable
    from envpin.resolver.request import parse_request
    from envpin.resolver.solve import solve
    from envpin.resolver.target import make_target

    project, project_specs, origins = read_project(args)
    frameworks = args.framework or ([] if args.spec or project else ["torch"])
    request = parse_request(frameworks, project_specs + args.spec, args.driver_policy, args.torch_index_url,
                            args.allow_insecure_index)
    database = load_database(args.db)
    target = make_target(database, target_facts(args))
    answer = name_project_pins(solve(database, target, request), origins)
    if isinstance(answer, Unsatisfiable):
        return answer, request, None, []
    requirements, left_out, default_index = project_inputs(project, args.index_url)
    if default_index is not None:
        from envpin.resolver.urls import checked_index_url

        default_index = checked_index_url(default_index, "index URL", args.allow_insecure_index)
    engine = choose_engine(args.locker)
    regenerate = regenerate_command(args, request, answer, output)
    lock = make_lock(answer, requirements, engine, default_index, regenerate, left_out, args.lock_timeout)
    header = file_header(answer, request, output)[:2] + [f"Locked with {lock.engine}.", f"Regenerate: {regenerate}"]
    for line in left_out:
        print(f"envpin: note: not locked: {line}", file=sys.stderr)
    return answer, request, lock, header


def project_inputs(project, index_url: str | None) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    """(requirements to lock, lines left out, default index) from a Project (or none)."""
    default = index_url or os.environ.get("ENVPIN_INDEX_URL")
    if project is None:
        return (), (), default
    for option in project.index_options:
        key, _, value = option.partition(" ")
        if key in ("-i", "--index-url") and not default:
            default = value
        elif key not in ("-i", "--index-url"):
            raise EnvpinInputError(
                f"`{option}` in the project: a lock has one default index plus the accelerator index; "
                "mirror the packages there and pass --index-url"
            )
    requirements = tuple(dict.fromkeys(r.text for r in project.other_requirements))
    return requirements, tuple(project.other_lines), default


def regenerate_command(args: argparse.Namespace, request, plan, output: str | None) -> str:
    from envpin.emit.common import regenerate_command as solve_command

    words = shlex.split(solve_command(request, plan.target, None, source_args=getattr(args, "source_args", None)))
    words[1] = "lock"
    if args.index_url:
        words += ["--index-url", args.index_url]
    if args.locker:
        words += ["--locker", args.locker]
    if getattr(args, "format", None) == "requirements":
        words += ["--format", "requirements"]
    if output:
        words += ["-o", output]
    return shlex.join(words)
