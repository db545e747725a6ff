"""`envpin doctor`: name the cause of a broken GPU environment, with evidence and a fix."""

from __future__ import annotations

import argparse
import json
import sys

from envpin.commands.common import add_probe_options


def register(commands, parser_class) -> None:
    doctor = commands.add_parser("doctor", help="diagnose a broken GPU Python environment and say how to fix it")
    doctor.add_argument("--facts", metavar="FILE", help="replay a machine: HostFacts (envpin detect) plus, optionally, "
                                                         "EnvFacts keys (envpin verify --format json)")
    doctor.add_argument("--error-text", metavar="FILE", help="the error the program printed (a file, or - for stdin)")
    doctor.add_argument("--script", metavar="FILE", help="the program that failed, for static checks (multiprocessing guard)")
    doctor.add_argument("--format", choices=("text", "json"), default="text")
    add_probe_options(doctor)
    doctor.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from envpin.compat.loader import load_database
    from envpin.doctor.engine import diagnose
    from envpin.doctor.model import Case
    from envpin.errors import EnvpinInputError

    if args.timeout <= 0:
        raise EnvpinInputError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    error_text = read_text(args.error_text, "--error-text") if args.error_text else ""
    script_text = read_text(args.script, "--script") if args.script else None
    database = load_database(args.db)
    host, env = gather_facts(args)
    case = Case(host=host, env=env, database=database, error_text=error_text, script_path=args.script, script_text=script_text)
    diagnosis = diagnose(case)
    if args.format == "json":
        print(json.dumps(diagnosis.to_json(), indent=2, ensure_ascii=False))
    else:
        print(render_text(case, diagnosis), end="")
    return 1 if diagnosis.has_error else 0


def gather_facts(args: argparse.Namespace):
    """(HostFacts, EnvFacts | None): replayed from --facts, or detected here and probed in the target interpreter."""
    from envpin.facts import env_facts_from_json, from_json, has_env_facts
    from envpin.verify.run import interpreter_for, run_probe

    probe_target = args.python or args.prefix
    if args.facts:
        from envpin.commands.common import read_json

        document = read_json(args.facts, "--facts")
        host = from_json(document, origin=f"--facts {args.facts}")
        env = env_facts_from_json(document, origin=f"--facts {args.facts}") if has_env_facts(document) else None
        if probe_target:
            env = run_probe(interpreter_for(args.python, args.prefix), import_timeout=args.timeout, smoke=not args.no_smoke)
        return host, env
    from envpin.host import detect_host

    interpreter = interpreter_for(args.python, args.prefix)  # a bad --python is reported before any probing
    env = run_probe(interpreter, import_timeout=args.timeout, smoke=not args.no_smoke)
    return detect_host(), env


def read_text(path: str, option: str) -> str:
    from pathlib import Path

    from envpin.errors import EnvpinInputError

    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except (OSError, UnicodeDecodeError) as error:
        raise EnvpinInputError(f"{option} {path}: cannot be read ({getattr(error, 'strerror', None) or error.__class__.__name__})") from None


def render_text(case, diagnosis) -> str:
    env = case.env
    lines = []
    if env is not None:
        lines.append(f"environment: {env.python.executable or '?'} (Python {env.python.version}, {env.python.env_type})")
    gpus = ", ".join(g.name for g in case.host.gpus) or "no NVIDIA GPU"
    lines.append(f"machine: {case.host.os}-{case.host.arch}{' (WSL2)' if case.host.wsl else ''}, {case.driver_line}, {gpus}")
    if env is not None:
        for name in ("torch", "tensorflow", "jax"):
            facts = env.framework(name)
            if facts is not None:
                build = f"CUDA {facts.cuda}" if facts.cuda else "CPU build" if facts.import_ok else "import failed"
                lines.append(f"{name}: {facts.version or '?'} ({build})")
    lines.append("")
    for number, finding in enumerate(diagnosis.findings, 1):
        lines.append(f"{number}. [{finding.severity}] {finding.title}  ({finding.id})")
        lines += ["   evidence:"] + [f"     - {item}" for item in finding.evidence]
        lines += ["   fix:"] + [f"     - {item}" for item in finding.fix]
        lines.append("")
    lines.append(f"verdict: {diagnosis.verdict}")
    return "\n".join(lines) + "\n"
