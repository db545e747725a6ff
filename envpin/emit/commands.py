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
    # The PyTorch index serves torch's own dependencies too, so alone it can be the only index, as on
    # pytorch.org; beside TensorFlow or JAX (PyPI only) it is an extra index, and the full local versions
    # (2.5.1+cu124) exist only there.
    if not plan.index_url:
        return []
    if all(p.index_url for p in plan.packages):
        return ["--index-url", plan.index_url]
    return ["--extra-index-url", plan.index_url]
