"""A cluster's machine classes and the answer for each: the inventory read (a Kubernetes node list, or the
fleet facts `envpin fleet detect` writes), grouped into classes, each class answered by `plan_machines`, the
function `envpin solve --targets` answers a machine with, so a class is refused wherever a single solve of its
facts is refused."""

from __future__ import annotations

from dataclasses import dataclass

from envpin.compat.model import Database
from envpin.fleet.inventory import read_inventory
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes
from envpin.planning import (
    TROUBLE_WORDS,
    Machine,
    Planned,
    SolveOptions,
    broken_driver,
    exit_code_of,
    plan_machines,
    read_project,
    request_for,
)
from envpin.project.model import Project
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request
from envpin.target_spec import TargetSpec


@dataclass(frozen=True)
class ClassAnswer:
    machine_class: MachineClass
    planned: Planned  # the class's answer, with the project as read for it

    @property
    def answer(self) -> Plan | Unsatisfiable:
        return self.planned.answer


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
    """Each class answered once for its facts. A node whose facts show an NVIDIA GPU with a driver that does not
    answer (as `envpin solve` refuses such a machine) is left out of its class's facts and named; a class of such
    nodes only keeps their facts, so that its answer is the single solve's `driver-broken` refusal."""
    nodes, kubernetes = read_inventory(path, spec)
    driver_given = spec.driver is not None
    broken: dict[str, str] = {}  # node -> what is broken, for its class's differences
    if not driver_given:
        project, project_specs, _ = read_project(options.project, database)
        request = request_for(options, project_specs, project)  # whether a +cpu requirement asks for the CPU build
        for node in nodes:
            trouble = node.facts.driver_trouble
            if trouble is not None and broken_driver(node.facts, request, in_fleet=True) is not None:
                broken[node.name] = TROUBLE_WORDS[trouble.state]
    classes = group_classes(nodes, broken)
    planned = plan_machines(options, [Machine(c.name, c.facts, driver_given) for c in classes], database)
    answers = tuple(ClassAnswer(c, p) for c, p in zip(classes, planned.answers, strict=True))
    first = planned.answers[0]
    return PlannedClasses(answers, tuple(nodes), first.request, first.project, kubernetes)
