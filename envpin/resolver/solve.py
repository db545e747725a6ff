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
        # Only a failed solve explains itself: explain and the packaging.specifiers it needs cost ~4 ms of imports
        # (python -X importtime), which a solve that succeeds does not pay.
        from envpin.resolver.explain import explain_failure  # noqa: PLC0415 - see above

        return explain_failure(database, target, request, resolution.provider)
    return build_plan(database, target, request, resolution.provider, resolution.chosen)
