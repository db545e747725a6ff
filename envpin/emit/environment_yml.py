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
) -> str:
    """`project` adds the repository's own requirements (pip) and conda packages, and keeps its channels."""
    channels = list(project.channels) if project is not None and project.channels else ["conda-forge"]
    conda = sorted(project.conda_packages) if project is not None else []
    lines = [f"# {line}" for line in file_header(plan, request, output, source_args, "environment.yml", name)]
    lines += [f"name: {_scalar(name)}", "channels:"]
    lines += [f"  - {_scalar(channel)}" for channel in channels]
    lines += ["dependencies:", f"  - python={plan.target.python}", "  - pip"]
    lines += [f"  - {_scalar(package)}" for package in conda]
    lines += ["  - pip:"]
    lines += [f"      - {_scalar(line)}" for line in pip_lines(plan, project)]
    return "\n".join(lines) + "\n"


def _scalar(text: str) -> str:
    """Plain YAML where that is safe, a JSON (= YAML) quoted string otherwise."""
    risky = (text[:1] in "?:,[]{}#&*!|>'\"%@`" or text.startswith("- ") or ": " in text or " #" in text
             or text != text.strip() or any(c.isspace() and c != " " for c in text) or has_control(text))
    return json.dumps(text) if risky else text
