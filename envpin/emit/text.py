"""`--format text`: a short table of pins, the install command and the reasons."""

from __future__ import annotations

import shlex

from envpin import __version__
from envpin.emit.commands import pip_command
from envpin.escapes import printable
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request


def render(answer: Plan | Unsatisfiable, request: Request) -> str:
    lines = [f"envpin {__version__} · database {answer.db_version}", f"target: {answer.target.describe()}", ""]
    if isinstance(answer, Unsatisfiable):
        lines.append(f"no solution ({answer.code}): {printable(answer.message)}")
        lines += ["", "fixes:"] + [f"  - {printable(fix)}" for fix in answer.fixes] if answer.fixes else []
        return "\n".join(lines) + "\n"
    if answer.channel != "pip":
        return _conda_plan(answer, request, lines)
    names = [p.name + (f"[{','.join(p.extras)}]" if p.extras else "") for p in answer.packages]
    width = max(len(name) for name in names)
    version_width = max(len(p.version) for p in answer.packages)
    for name, package in zip(names, answer.packages, strict=True):
        lines.append(f"  {name:<{width}}  {package.version:<{version_width}}  {package.index_url or 'PyPI'}")
    accelerators = answer.accelerators or {}
    accelerator = ", ".join(f"{f} {a}" for f, a in accelerators.items()) if len(accelerators) > 1 else answer.accelerator
    lines += ["", f"accelerator: {accelerator}", "", "install:"]
    lines += [f"  {printable(note)}" for note in answer.notes]
    lines += [f"  {pip_command(answer)}", "", "why:"]
    lines += [f"  - {printable(reason)}" for reason in answer.reasons]  # each one line: they quote names from elsewhere
    lines += _warning_lines(answer.warnings)
    return "\n".join(lines) + "\n"


def _conda_plan(answer: Plan, request: Request, lines: list[str]) -> str:
    """A plan of conda builds: its match specs, the conda command that makes the environment, and why."""
    from envpin.conda.specs import conda_environment  # noqa: PLC0415 - the conda model, for conda plans only

    environment = conda_environment(answer, None, answer.channel, request.policy)
    lines += [f"  {spec}" for spec in environment.dependencies]
    accelerators = answer.accelerators or {}
    accelerator = ", ".join(f"{f} {a}" for f, a in accelerators.items()) if len(accelerators) > 1 else answer.accelerator
    channels = [word for channel in environment.channels for word in ("-c", channel)]
    command = shlex.join(["conda", "create", "-n", "envpin", "--override-channels", *channels, *environment.dependencies])
    lines += ["", f"accelerator: {accelerator} ({answer.channel} builds)", "", "install:", f"  {command}", "", "why:"]
    lines += [f"  - {printable(reason)}" for reason in (*answer.reasons, *environment.reasons)]
    lines += _warning_lines(answer.warnings)
    return "\n".join(lines) + "\n"


UNVERIFIED = "unverified: "  # the prefix envpin.resolver.choice gives a doubt the chosen builds rest on


def _warning_lines(warnings: tuple[str, ...]) -> list[str]:
    """Known issues and notes as warnings; the unverified facts the chosen builds rest on once, under one heading."""
    others = [w for w in warnings if not w.startswith(UNVERIFIED)]
    doubts = [w[len(UNVERIFIED):] for w in warnings if w.startswith(UNVERIFIED)]
    lines = ["", "warnings:", *(f"  - {printable(w)}" for w in others)] if others else []
    if doubts:
        lines += ["", "not confirmed at a primary source, and this plan rests on it:", *(f"  - {printable(d)}" for d in doubts)]
    return lines

