"""`envpin matrix`'s run: the grid for the target, or one per machine of an inventory, refused where `envpin solve`
refuses the machine (its NVIDIA driver does not answer): the machines read, and the driver judged, by the planning
layer's own functions."""

from __future__ import annotations

from envpin.app.planning import SolveOptions, broken_driver, inventory_machines, request_for
from envpin.base.errors import DriverBroken
from envpin.base.terminal import StatusLine
from envpin.compat.model import Database
from envpin.machine.spec import TargetSpec
from envpin.matrix.grid import Grid, grid_for
from envpin.resolver.target import Target, make_target


def grids(options: SolveOptions, target_spec: TargetSpec, database: Database, inventory: str | None = None) -> list[Grid]:
    """The grid for the target, or with `inventory` (`--targets FILE`, the target flags laid over each machine) one
    grid per machine class: machines that look the same to the solver share one. A machine whose NVIDIA GPU has a
    driver that does not answer gets no grid, as it gets no solve (DriverBroken, exit 3)."""
    request = request_for(options)
    if len(request.solved_frameworks) != 1:
        raise AssertionError("a grid is of one framework")
    if inventory is None:
        facts = target_spec.facts()
        refusal = None if target_spec.driver is not None else broken_driver(facts, request)
        if refusal is not None:  # as `envpin solve` refuses: a CPU grid would pass a GPU machine off as none
            message, fixes = refusal
            raise DriverBroken(f"{message}; {fixes[0]}, or give --driver VERSION (or --driver none for the CPU view)")
        return [grid_for(database, make_target(database, facts), request)]
    classes: dict[Target, list[str]] = {}
    refused: list[str] = []
    for node in inventory_machines(inventory, target_spec):
        refusal = None if node.driver_given else broken_driver(node.facts, request, in_fleet=True)
        if refusal is not None:  # as for one machine: its CPU grid would pass a GPU machine off as one without
            refused.append(f"{node.name} ({refusal[0].split(': ', 1)[1]})")
            continue
        classes.setdefault(make_target(database, node.facts), []).append(node.name)
    if refused:
        raise DriverBroken(f"--targets {inventory}: not showing the CPU grid for a machine with an NVIDIA GPU whose driver "
                           f"does not answer: {'; '.join(refused)}; run `envpin doctor` there and detect it again, or "
                           "give --driver none for the CPU view")
    status = StatusLine("envpin matrix: machine classes")  # on a terminal's stderr only: a big inventory takes a while
    made: list[Grid] = []
    try:
        for target, names in classes.items():
            status.update(f"{len(made) + 1}/{len(classes)}: {', '.join(names)[:60]}")
            made.append(grid_for(database, target, request, tuple(names)))
    finally:
        status.clear()
    return made
