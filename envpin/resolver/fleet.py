"""Solve for a fleet: many machine classes, one answer per distinct result.

Machines that look the same to the solver (same platform, Python, driver and GPU capabilities) are solved
once, and machines whose answers are the same share one result, which is how a cluster ends up with one
environment file per kind of node rather than one per node. The same answer means everything a file or a
report says of it: the pins, where they come from, what each framework runs on, the steps outside pip, and
the platform and Python the environment is for (a macOS laptop and a Linux node can both pin torch==2.15.0,
from PyPI, and still need two files).
"""

from __future__ import annotations

from collections.abc import Sequence

from envpin.compat.model import Database
from envpin.record import Record, record
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request
from envpin.resolver.solve import solve
from envpin.resolver.target import Target


@record
class FleetResult(Record):
    names: tuple[str, ...]  # the machine classes this answer serves
    answer: Plan | Unsatisfiable


def solve_fleet(database: Database, machines: Sequence[tuple[str, Target | Unsatisfiable]],
                request: Request) -> list[FleetResult]:
    """One result per distinct answer. A machine is a Target to solve for, or the answer it already has (a machine
    refused before any solve: its NVIDIA driver does not answer), which groups with the same refusal only."""
    answers: dict[Target, Plan | Unsatisfiable] = {}
    for _, machine in machines:
        if isinstance(machine, Target) and machine not in answers:
            answers[machine] = solve(database, machine, request)
    grouped: dict[object, list[str]] = {}
    representative: dict[object, Plan | Unsatisfiable] = {}
    for name, machine in machines:
        answer = answers[machine] if isinstance(machine, Target) else machine
        key = _answer_key(answer)
        grouped.setdefault(key, []).append(name)
        representative.setdefault(key, answer)
    return [FleetResult(tuple(names), representative[key]) for key, names in grouped.items()]


def _answer_key(answer: Plan | Unsatisfiable) -> object:
    machine = (answer.target.platform, answer.target.python)
    if isinstance(answer, Unsatisfiable):
        return ("unsatisfiable", machine, answer.code, answer.message)
    return ("plan", machine, answer.channel, answer.packages, answer.accelerator,
            tuple(sorted((answer.accelerators or {}).items())), answer.notes)
