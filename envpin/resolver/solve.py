"""`solve`: the request and the target in, a Plan (or an Unsatisfiable answer with fixes) out."""

from __future__ import annotations

from envpin.compat.model import Database
from envpin.resolver.choice import build_plan
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.queries import resolve
from envpin.resolver.request import Request
from envpin.resolver.target import Target


def solve(database: Database, target: Target, request: Request) -> Plan | Unsatisfiable:
    resolution = resolve(database, target, request)
    if resolution.chosen is None:
        from envpin.resolver.explain import explain_failure  # only on the unhappy path: keeps a solve's imports small

        return explain_failure(database, target, request, resolution.provider)
    return build_plan(database, target, request, resolution.provider, resolution.chosen)
