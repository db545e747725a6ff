"""A cluster's machine classes and the answer for each: the inventory read (a Kubernetes node list, or the
fleet facts `envpin fleet detect` writes), grouped into classes, each class solved once for its facts."""

from __future__ import annotations

from dataclasses import dataclass

from envpin.compat.model import Database
from envpin.fleet.inventory import read_inventory
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes
from envpin.planning import SolveOptions, read_project, request_for
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


def plan_classes(options: SolveOptions, path: str, spec: TargetSpec, database: Database) -> PlannedClasses:
    project, project_specs, _ = read_project(options.project)
    request = request_for(options, project_specs, project)
    nodes, kubernetes = read_inventory(path, spec)
    answers = []
    solved: dict = {}
    for machine_class in group_classes(nodes):
        target = make_target(database, machine_class.facts)
        if target not in solved:
            solved[target] = solve(database, target, request)
        answers.append(ClassAnswer(machine_class, solved[target]))
    return PlannedClasses(tuple(answers), tuple(nodes), request, project, kubernetes)
