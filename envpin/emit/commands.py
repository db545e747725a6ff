"""`--format pip|uv|index-url`: ready-to-run install commands, or just the index URL."""

from __future__ import annotations

import shlex

from envpin.emit.common import PYPI_SIMPLE
from envpin.resolver.plan import Plan


def pip_command(plan: Plan) -> str:
    return shlex.join(["pip", "install", *_requirements(plan), *_index_options(plan)])


def uv_command(plan: Plan) -> str:
    return shlex.join(["uv", "pip", "install", *_requirements(plan), *_index_options(plan)])


def index_url(plan: Plan) -> str:
    return plan.index_url or PYPI_SIMPLE


def _requirements(plan: Plan) -> list[str]:
    return [package.requirement for package in plan.packages]


def _index_options(plan: Plan) -> list[str]:
    # The PyTorch index serves torch's own dependencies too, so it can be the only index, as on pytorch.org.
    return ["--index-url", plan.index_url] if plan.index_url else []
