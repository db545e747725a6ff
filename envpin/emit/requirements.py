"""`--format requirements.txt`: pins with the index line, for `pip install -r`."""

from __future__ import annotations

from envpin.emit.common import file_header, pip_lines
from envpin.resolver.plan import Plan
from envpin.resolver.request import Request


def render(
    plan: Plan, request: Request, output: str | None = None, project=None, source_args: tuple[str, ...] | None = None
) -> str:
    # --extra-index-url, not --index-url: the file may hold other requirements that live on PyPI, and the
    # full local versions (2.5.1+cu124) exist only on the PyTorch index, so no other build can satisfy them.
    lines = [f"# {line}" for line in file_header(plan, request, output, source_args)]
    lines += pip_lines(plan, project)
    return "\n".join(lines) + "\n"
