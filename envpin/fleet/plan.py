"""A cluster's machine classes and the answer for each: the inventory read (a Kubernetes node list, or the
fleet facts `envpin fleet detect` writes), grouped into classes, each class solved once for its facts."""

from __future__ import annotations

from dataclasses import dataclass

from envpin.compat.model import Database
from envpin.errors import EnvpinInputError
from envpin.facts import from_json
from envpin.fleet.kubernetes import is_node_list, read_nodes
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes
from envpin.planning import SolveOptions, read_project, request_for
from envpin.project.model import Project
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request
from envpin.resolver.solve import solve
from envpin.resolver.target import apply_overrides, make_target
from envpin.target_spec import TargetSpec
from envpin.userfiles import read_json


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


def read_cluster(path: str, spec: TargetSpec) -> tuple[list[ClusterNode], bool]:
    """(every node, whether it is a Kubernetes node list). A fleet facts file is a JSON list of facts documents
    (or {"targets": [...]}), each with a "name" and, from Slurm, a "partition"; the target flags apply to all."""
    document = read_json(path, "--targets")
    if is_node_list(document):
        nodes = read_nodes(document, f"--targets {path}", spec.python, spec.os, spec.arch)
        return [ClusterNode(n.name, apply_overrides(n.facts, spec), n.group, n.labels) for n in nodes], True
    entries = document.get("targets") if isinstance(document, dict) else document
    if not isinstance(entries, list) or not entries:
        raise EnvpinInputError(f"--targets {path}: expected a Kubernetes node list or a non-empty JSON list of facts "
                               "documents")
    nodes = []
    for position, entry in enumerate(entries):
        facts = apply_overrides(from_json(entry, origin=f"--targets {path}: targets[{position}]"), spec)
        name = entry.get("name") if isinstance(entry.get("name"), str) else f"target-{position}"
        group = entry.get("partition") or entry.get("group")
        nodes.append(ClusterNode(name, facts, group if isinstance(group, str) else None))
    return nodes, False


def plan_classes(options: SolveOptions, path: str, spec: TargetSpec, database: Database) -> PlannedClasses:
    project, project_specs, _ = read_project(options.project)
    request = request_for(options, project_specs, project)
    nodes, kubernetes = read_cluster(path, spec)
    answers = []
    solved: dict = {}
    for machine_class in group_classes(nodes):
        target = make_target(database, machine_class.facts)
        if target not in solved:
            solved[target] = solve(database, target, request)
        answers.append(ClassAnswer(machine_class, solved[target]))
    return PlannedClasses(tuple(answers), tuple(nodes), request, project, kubernetes)
