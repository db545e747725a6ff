"""`--format text`: a short table of pins, the install command and the reasons."""

from __future__ import annotations

from envpin import __version__
from envpin.emit.commands import pip_command
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request


def render(answer: Plan | Unsatisfiable, request: Request) -> str:
    lines = [f"envpin {__version__} · database {answer.db_version}", f"target: {answer.target.describe()}", ""]
    if isinstance(answer, Unsatisfiable):
        lines.append(f"no solution ({answer.code}): {answer.message}")
        lines += ["", "fixes:"] + [f"  - {fix}" for fix in answer.fixes] if answer.fixes else []
        return "\n".join(lines) + "\n"
    names = [p.name + (f"[{','.join(p.extras)}]" if p.extras else "") for p in answer.packages]
    width = max(len(name) for name in names)
    version_width = max(len(p.version) for p in answer.packages)
    for name, package in zip(names, answer.packages):
        lines.append(f"  {name:<{width}}  {package.version:<{version_width}}  {package.index_url or 'PyPI'}")
    accelerators = answer.accelerators or {}
    accelerator = ", ".join(f"{f} {a}" for f, a in accelerators.items()) if len(accelerators) > 1 else answer.accelerator
    lines += ["", f"accelerator: {accelerator}", "", "install:"]
    lines += [f"  {note}" for note in answer.notes]
    lines += [f"  {pip_command(answer)}", "", "why:"]
    lines += [f"  - {reason}" for reason in answer.reasons]
    if answer.warnings:
        lines += ["", "warnings:"] + [f"  - {warning}" for warning in answer.warnings]
    return "\n".join(lines) + "\n"
