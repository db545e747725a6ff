"""`--format environment.yml`: a conda environment with python, pip and a `pip:` section of full pins."""

from __future__ import annotations

import json

from envpin.base.escapes import has_control
from envpin.emit.common import file_header, pip_lines
from envpin.resolver.plan import Plan
from envpin.resolver.request import Request


def render(
    plan: Plan,
    request: Request,
    output: str | None = None,
    name: str = "envpin",
    project=None,
    source_args: tuple[str, ...] | None = None,
    extra: tuple[str, ...] = (),
    pip: list[str] | None = None,
    conda: tuple[str, ...] = (),
) -> str:
    """`project` adds the repository's own requirements (pip) and conda packages, and keeps its channels. A resolved
    plan (`solve --resolve`) gives the `pip` section it resolved and, where the conda part was solved, the `conda`
    records (`name=version=build`) that replace the conda dependencies; `extra`: the regenerate line's words for it."""
    channels = list(project.channels) if project is not None and project.channels else ["conda-forge"]
    lines = [f"# {line}" for line in file_header(plan, request, output, source_args, "environment.yml", name, extra)]
    lines += [f"name: {_scalar(name)}", "channels:"]
    lines += [f"  - {_scalar(channel)}" for channel in channels]
    lines += ["dependencies:"]
    lines += [f"  - {_scalar(package)}" for package in (conda or conda_dependencies(plan, project))]
    lines += ["  - pip:"]
    lines += [f"      - {_scalar(line)}" for line in (pip if pip is not None else pip_lines(plan, project))]
    return "\n".join(lines) + "\n"


def conda_dependencies(plan: Plan, project=None) -> list[str]:
    """The conda side of the environment written: the target's Python, pip, and the project's conda packages. This
    is what `solve --resolve` has rattler solve, so what it proves is what the file holds."""
    return [f"python={plan.target.python}", "pip", *sorted(project.conda_packages if project is not None else ())]


def _scalar(text: str) -> str:
    """Plain YAML where that is safe, a JSON (= YAML) quoted string otherwise."""
    risky = (text[:1] in "?:,[]{}#&*!|>'\"%@`" or text.startswith("- ") or ": " in text or " #" in text
             or text != text.strip() or any(c.isspace() and c != " " for c in text) or has_control(text))
    return json.dumps(text) if risky else text
