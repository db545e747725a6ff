"""`envpin doctor`: name the cause of a broken GPU environment, with evidence and a fix."""

from __future__ import annotations

import argparse
import json

from envpin.app.database import run_database
from envpin.base.escapes import printable, terminal
from envpin.base.userfiles import read_json, read_log, read_text
from envpin.commands.options import add_probe_options, add_target_options, target_spec
from envpin.doctor.engine import diagnose
from envpin.doctor.model import Case
from envpin.facts.env import EnvFacts, env_facts_from_json, has_env_facts
from envpin.facts.host import HostFacts, from_json
from envpin.host import detect_host
from envpin.verify.run import interpreter_for, run_probe


def register(doctor: argparse.ArgumentParser, parser_class) -> None:
    doctor.add_argument("--facts", metavar="FILE", help="replay a machine: HostFacts (envpin detect) plus, optionally, "
                                                         "EnvFacts keys (envpin verify --format json)")
    doctor.add_argument("--error-text", metavar="FILE", help="the error the program printed (a file, or - for stdin)")
    doctor.add_argument("--script", metavar="FILE", help="the program that failed, for static checks (multiprocessing guard)")
    doctor.add_argument("--format", choices=("text", "json"), default="text")
    add_probe_options(doctor)
    add_target_options(doctor, facts=False)  # the machine as every command takes it; --facts is declared above
    doctor.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    timeout = args.timeout
    error_text = read_log(args.error_text, "--error-text") if args.error_text else ""
    script_text = read_text(args.script, "--script", errors="replace") if args.script else None
    database = run_database(args.db)
    flags = target_spec(args)
    host, env = gather_facts(args, timeout)
    host = flags.laid_over(host)  # the target flags win over --facts, which wins over detection, as in every command
    case = Case(host=host, env=env, database=database, error_text=error_text, script_path=args.script,
                script_text=script_text, flags=flags)
    diagnosis = diagnose(case)
    if args.format == "json":
        print(terminal(json.dumps(diagnosis.to_json(), indent=2, ensure_ascii=False)))  # C1 and DEL stay raw in it
    else:
        print(terminal(render_text(case, diagnosis)), end="")
    return 1 if diagnosis.has_error else 0


def gather_facts(args: argparse.Namespace, timeout: float) -> tuple[HostFacts, EnvFacts | None]:
    """(HostFacts, EnvFacts | None): replayed from --facts, or detected here and probed in the target interpreter."""
    probe_target = args.interpreter or args.prefix
    if args.facts:
        document = read_json(args.facts, "--facts")
        host = from_json(document, origin=f"--facts {args.facts}")
        env = env_facts_from_json(document, origin=f"--facts {args.facts}") if has_env_facts(document) else None
        if probe_target:
            env = run_probe(interpreter_for(args.interpreter, args.prefix), import_timeout=timeout, smoke=not args.no_smoke)
        return host, env
    interpreter = interpreter_for(args.interpreter, args.prefix)  # a bad --interpreter is reported before any probing
    env = run_probe(interpreter, import_timeout=timeout, smoke=not args.no_smoke)
    return detect_host(), env


def render_text(case, diagnosis) -> str:
    env = case.env
    lines = []
    if env is not None:
        lines.append(printable(f"environment: {env.python.executable or '?'} (Python {env.python.version}, "
                               f"{env.python.env_type})"))
    gpus = ", ".join(g.name for g in case.host.gpus) or "no NVIDIA GPU"
    lines.append(printable(f"machine: {case.host.os}-{case.host.arch}{' (WSL2)' if case.host.wsl else ''}, "
                           f"{case.driver_line}, {gpus}"))  # one line: the GPU names are the machine's
    if env is not None:
        for name in ("torch", "tensorflow", "jax"):
            facts = env.framework(name)
            if facts is not None:
                build = f"CUDA {facts.cuda}" if facts.cuda else "CPU build" if facts.import_ok else "import failed"
                lines.append(f"{name}: {facts.version or '?'} ({build})")
    lines.append("")
    for number, finding in enumerate(diagnosis.findings, 1):
        lines.append(f"{number}. [{finding.severity}] {printable(finding.title)}  ({finding.id})")
        lines += ["   evidence:"] + [f"     - {printable(item)}" for item in finding.evidence]  # a tool's words
        lines += ["   fix:"] + [f"     - {printable(item)}" for item in finding.fix]
        lines.append("")
    lines.append(f"verdict: {printable(diagnosis.verdict)}")
    return "\n".join(lines) + "\n"
