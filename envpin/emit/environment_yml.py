"""`--format environment.yml`: a conda environment with python, pip and a `pip:` section of full pins."""

from __future__ import annotations

import json

from envpin.emit.common import file_header
from envpin.resolver.plan import Plan
from envpin.resolver.request import Request


def render(plan: Plan, request: Request, output: str | None = None, name: str = "envpin") -> str:
    pip_lines = [f"--extra-index-url {url}" for url in dict.fromkeys(p.index_url for p in plan.packages if p.index_url)]
    pip_lines += [package.requirement for package in plan.packages]
    lines = [f"# {line}" for line in file_header(plan, request, output)]
    lines += [
        f"name: {_scalar(name)}",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={plan.target.python}",
        "  - pip",
        "  - pip:",
    ]
    lines += [f"      - {_scalar(line)}" for line in pip_lines]
    return "\n".join(lines) + "\n"


def _scalar(text: str) -> str:
    """Plain YAML where that is safe, a JSON (= YAML) quoted string otherwise."""
    risky = text[:1] in "?:,[]{}#&*!|>'\"%@`" or text.startswith("- ") or ": " in text or " #" in text
    return json.dumps(text) if risky else text
