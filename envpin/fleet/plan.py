"""A cluster's machine classes and the answer for each: the inventory read (a Kubernetes node list, or the
fleet facts `envpin fleet detect` writes), grouped into classes, each class solved once for its facts."""

from __future__ import annotations

from dataclasses import dataclass

from envpin.compat.model import Database
from envpin.fleet.inventory import read_inventory
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes
from envpin.planning import (
    DRIVER_BROKEN,
    TROUBLE_WORDS,
    SolveOptions,
    broken_driver,
    exit_code_of,
    read_project,
    request_for,
)
from envpin.project.model import Project
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target
from envpin.target_spec import TargetSpec


@dataclass(frozen=True)
class ClassAnswer:
    machine_class: MachineClass
    answer: Plan | Unsatisfiable


@dataclass(frozen=True)
class PlannedClasses:
    classes: tuple[ClassAnswer, ...]
    nodes: tuple[ClusterNode, ...]  # every node of the inventory, for selectors that must tell classes apart
    request: Request
    project: Project | None
    kubernetes: bool  # the inventory was a Kubernetes node list

    @property
    def ok(self) -> bool:
        return all(isinstance(c.answer, Plan) for c in self.classes)

    @property
    def exit_code(self) -> int:
        """As `solve --targets`: 3 when a class is refused for its nodes' broken drivers, else 1 when one has no answer."""
        return exit_code_of(tuple(c.answer for c in self.classes))


def plan_classes(options: SolveOptions, path: str, spec: TargetSpec, database: Database) -> PlannedClasses:
    """Each class solved once for its facts. A node whose facts show an NVIDIA GPU with a driver that does not answer
    (as `envpin solve` refuses such a machine) is left out of its class's facts and named; a class of such nodes
    only is refused, with the single solve's `driver-broken` answer."""
    project, project_specs, _ = read_project(options.project, database)
    request = request_for(options, project_specs, project)
    nodes, kubernetes = read_inventory(path, spec)
    refusals: dict[str, tuple[str, tuple[str, ...]]] = {}  # node -> the refusal a single solve gives it
    broken: dict[str, str] = {}  # node -> what is broken, for its class's differences
    for node in nodes:
        refusal = broken_driver(node.facts, spec, request, in_fleet=True)
        trouble = node.facts.driver_trouble
        if refusal is not None and trouble is not None:
            refusals[node.name], broken[node.name] = refusal, TROUBLE_WORDS[trouble.state]
    answers = []
    solved: dict = {}
    for machine_class in group_classes(nodes, broken):
        target = make_target(database, machine_class.facts)
        first = machine_class.node_names[0]
        if all(name in refusals for name in machine_class.node_names):
            answer: Plan | Unsatisfiable = Unsatisfiable(target, database.version, DRIVER_BROKEN, *refusals[first])
        else:
            if target not in solved:
                solved[target] = solve(database, target, request)
            answer = solved[target]
        answers.append(ClassAnswer(machine_class, answer))
    return PlannedClasses(tuple(answers), tuple(nodes), request, project, kubernetes)
