"""The front door: parse arguments, call one function, render. Nothing else lives here.

Exit codes (DESIGN.md): 0 success, 1 a real negative answer (no solution), 2 bad input — always a one-line
message, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from envpin import __version__
from envpin.errors import EnvpinError, EnvpinInputError

SOLVE_FORMATS = ("text", "json", "environment.yml", "requirements.txt", "index-url", "pip", "uv")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as for every other bad input
        self.exit(2, f"envpin: error: {message} (see `{self.prog} --help`)\n")


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
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


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="envpin", description="Pick, pin and verify the right GPU build for a machine.")
    parser.add_argument("--version", action="version", version=f"envpin {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    solve = commands.add_parser("solve", help="pick the exact framework build for a machine")
    solve.add_argument("--framework", action="append", default=[], help="torch (repeatable)")
    solve.add_argument("--spec", action="append", default=[], help="a PEP 508 requirement, e.g. 'torch>=2.4'")
    solve.add_argument("--format", choices=SOLVE_FORMATS, help="output format (default: text, or from -o)")
    solve.add_argument("-o", "--output", help="write to FILE; the format follows the file name")
    solve.add_argument("--driver-policy", default="minor", help="minor (default) or strict")
    solve.add_argument("--torch-index-url", help="base URL of the PyTorch index (or ENVPIN_TORCH_INDEX_URL)")
    solve.add_argument("--name", default="envpin", help="environment name in environment.yml")
    _add_target_options(solve)
    _add_db_option(solve)
    solve.set_defaults(handler=_solve)

    detect = commands.add_parser("detect", help="show what envpin sees on this machine")
    detect.add_argument("--format", choices=("text", "json"), default="text")
    detect.add_argument("--timeout", type=float, default=10.0, help="seconds per probe command (default 10)")
    detect.set_defaults(handler=_detect)

    db = commands.add_parser("db", help="the compatibility database")
    db_commands = db.add_subparsers(dest="db_command", required=True, parser_class=_Parser)
    info = db_commands.add_parser("info", help="version, counts and what is unverified")
    _add_db_option(info)
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(handler=_db_info)
    validate = db_commands.add_parser("validate", help="check a database directory against the schema")
    validate.add_argument("path", nargs="?", help="database directory (default: the one envpin ships)")
    validate.set_defaults(handler=_db_validate)
    return parser


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("target (default: this machine)")
    group.add_argument("--os", help="linux, windows or macos")
    group.add_argument("--arch", help="x86_64, aarch64 or arm64")
    group.add_argument("--driver", help="NVIDIA driver version, or 'none'")
    group.add_argument("--gpu", action="append", default=[], help="GPU name as nvidia-smi prints it (repeatable)")
    group.add_argument("--compute-capability", action="append", default=[], help="X.Y (repeatable)")
    group.add_argument("--python", help="Python version, e.g. 3.11")
    group.add_argument("--facts", help="a file from `envpin detect --format json` taken on the target")


def _add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="use the compatibility database in this directory")


# ---------------------------------------------------------------- solve


def _solve(args: argparse.Namespace) -> int:
    from envpin.compat.loader import load_database
    from envpin.resolver.plan import Unsatisfiable
    from envpin.resolver.request import parse_request
    from envpin.resolver.solve import solve
    from envpin.resolver.target import make_target

    output_format = _output_format(args.format, args.output)
    frameworks = args.framework or ([] if args.spec else ["torch"])
    request = parse_request(frameworks, args.spec, args.driver_policy, args.torch_index_url)
    database = load_database(args.db)
    target = make_target(database, _target_facts(args))
    answer = solve(database, target, request)
    text = _render(output_format, answer, request, args)
    if args.output and not isinstance(answer, Unsatisfiable):
        _write_atomically(Path(args.output), text)
        print(f"wrote {args.output} ({answer.packages[0].requirement}, {answer.accelerator})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if isinstance(answer, Unsatisfiable) else 0


def _output_format(chosen: str | None, output: str | None) -> str:
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


def _render(output_format: str, answer, request, args: argparse.Namespace) -> str:
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


def _target_facts(args: argparse.Namespace):
    from envpin.resolver.target import TargetOverrides, apply_overrides

    overrides = TargetOverrides(
        os=args.os,
        arch=args.arch,
        driver=args.driver,
        gpus=tuple(args.gpu),
        compute_capabilities=tuple(args.compute_capability),
        python=args.python,
    )
    return apply_overrides(_base_facts(args, overrides), overrides)


def _base_facts(args: argparse.Namespace, overrides):
    from envpin.facts import HostFacts, PythonInfo

    if args.facts:
        return _read_facts(args.facts)
    fully_given = overrides.os and overrides.arch and overrides.python and overrides.driver is not None
    if fully_given and (overrides.gpus or overrides.compute_capabilities or overrides.driver == "none"):
        # Every fact a solve needs was given: a solve for another machine does not probe this one.
        return HostFacts(os=overrides.os, arch=overrides.arch, python=PythonInfo(overrides.python))
    from envpin.host import detect_host

    return detect_host(probe_environment=False)


def _read_facts(path: str):
    from envpin.facts import from_json

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EnvpinInputError(f"--facts {path}: cannot be read ({error.__class__.__name__})") from None
    try:
        document = json.loads(text)
    except ValueError as error:
        raise EnvpinInputError(f"--facts {path}: not JSON ({error})") from None
    return from_json(document, origin=f"--facts {path}")


def _write_atomically(path: Path, text: str) -> None:
    """Write beside the target and rename, so a failure never leaves a half-written file."""
    temporary = path.with_name(f".{path.name}.envpin-{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise EnvpinInputError(f"-o {path}: cannot write ({error.strerror or error})") from None


# ---------------------------------------------------------------- detect and db


def _detect(args: argparse.Namespace) -> int:
    from envpin.facts import to_json
    from envpin.host import detect_host
    from envpin.host.summary import render_summary

    facts = detect_host(timeout=args.timeout)
    if args.format == "json":
        print(json.dumps(to_json(facts), indent=2))
    else:
        print(render_summary(facts))
    return 0


def _db_info(args: argparse.Namespace) -> int:
    from envpin.compat.info import database_info, render_info
    from envpin.compat.loader import load_database

    info = database_info(load_database(args.db))
    print(json.dumps(info, indent=2) if args.format == "json" else render_info(info))
    return 0


def _db_validate(args: argparse.Namespace) -> int:
    from envpin.compat.loader import validate_database

    problems = validate_database(args.path)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s)" if problems else "database is valid", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
