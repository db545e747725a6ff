"""`--format requirements.txt`: pins with the index line, for `pip install -r`."""

from __future__ import annotations

from envpin.emit.common import file_header
from envpin.resolver.plan import Plan
from envpin.resolver.request import Request


def render(plan: Plan, request: Request, output: str | None = None) -> str:
    lines = [f"# {line}" for line in file_header(plan, request, output)]
    # --extra-index-url, not --index-url: the file may grow other requirements that live on PyPI, and the
    # full local versions (2.5.1+cu124) exist only on the PyTorch index, so no other build can satisfy them.
    lines += [f"--extra-index-url {url}" for url in _indexes(plan)]
    lines += [package.requirement for package in plan.packages]
    return "\n".join(lines) + "\n"


def _indexes(plan: Plan) -> list[str]:
    return list(dict.fromkeys(p.index_url for p in plan.packages if p.index_url))
