"""`--format text`: a short table of pins, the install command and the reasons."""

from __future__ import annotations

from envpin import __version__
from envpin.base.escapes import printable
from envpin.emit.commands import pip_command
from envpin.resolver.plan import RESOLVED, Plan, Unsatisfiable
from envpin.resolver.request import Request


def render(answer: Plan | Unsatisfiable, request: Request, install: str | None = None) -> str:
    """`install`: the command that installs the plan's resolution (envpin.app.resolved.install_command), where uv
    resolved it; else the command is the plan's pins."""
    lines = head(answer)
    if isinstance(answer, Unsatisfiable):
        lines.append(f"no solution ({answer.code}): {printable(answer.message)}")
        lines += ["", "fixes:"] + [f"  - {printable(fix)}" for fix in answer.fixes] if answer.fixes else []
        return "\n".join(lines) + "\n"
    if answer.headline:
        lines += [answer.headline, ""]
    if answer.channel != "pip":
        raise AssertionError("a conda plan's text is conda's own (emit.render.render_text)")
    names = [p.name + (f"[{','.join(p.extras)}]" if p.extras else "") for p in answer.packages]
    width = max(len(name) for name in names)
    version_width = max(len(p.version) for p in answer.packages)
    for name, package in zip(names, answer.packages, strict=True):
        lines.append(f"  {name:<{width}}  {package.version:<{version_width}}  {package.index_url or 'PyPI'}")
    accelerators = answer.accelerators or {}
    accelerator = ", ".join(f"{f} {a}" for f, a in accelerators.items()) if len(accelerators) > 1 else answer.accelerator
    lines += ["", f"accelerator: {accelerator}", "", "install:"]
    lines += [f"  {printable(note)}" for note in answer.notes]
    if install is not None:  # a shell comment, so that copying both lines runs the command alone
        lines.append("  # every package of the resolution below, pinned"
                     + (", into the conda part (-o environment.yml writes both)" if answer.resolution is not None
                        and answer.resolution.conda else ""))
    lines += [f"  {install or pip_command(answer)}", "", "why:"]
    lines += [f"  - {printable(reason)}" for reason in answer.reasons]  # each one line: they quote names from elsewhere
    lines += warning_lines(answer.warnings)
    lines += resolution_lines(answer)
    return "\n".join(lines) + "\n"


def head(answer: Plan | Unsatisfiable) -> list[str]:
    return [f"envpin {__version__} · database {answer.db_version}", f"target: {answer.target.describe()}", ""]


def resolution_lines(answer: Plan) -> list[str]:
    """Whether the whole environment was resolved (docs/resolution.md): every package pinned, or why not."""
    resolution = answer.resolution
    if resolution is None:
        return []
    if resolution.status != RESOLVED:
        return ["", f"not resolved end to end: {resolution.detail}"]
    return ["", f"resolution: {resolution.detail}", *(f"  {package}" for package in resolution.packages),
            *(["conda part:"] if resolution.conda else []), *(f"  {record}" for record in resolution.conda)]


UNVERIFIED = "unverified: "  # the prefix envpin.resolver.choice gives a doubt the chosen builds rest on


def warning_lines(warnings: tuple[str, ...]) -> list[str]:
    """Known issues and notes as warnings; the unverified facts the chosen builds rest on once, under one heading."""
    others = [w for w in warnings if not w.startswith(UNVERIFIED)]
    doubts = [w[len(UNVERIFIED):] for w in warnings if w.startswith(UNVERIFIED)]
    lines = ["", "warnings:", *(f"  - {printable(w)}" for w in others)] if others else []
    if doubts:
        lines += ["", "not confirmed at a primary source, and this plan rests on it:", *(f"  - {printable(d)}" for d in doubts)]
    return lines

