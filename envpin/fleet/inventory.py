"""A `--targets` inventory: a Kubernetes node list (`kubectl get nodes -o json`) or a JSON list of facts documents
(or {"targets": [...]}, what `envpin fleet detect` writes), each with a "name" and, from Slurm, a "partition".
The one reader of that file, for the solve of a fleet, its matrix and the cluster commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envpin.base.errors import EnvpinInputError
from envpin.base.userfiles import read_json
from envpin.facts.host import from_json
from envpin.fleet.kubernetes import is_node_list, read_nodes
from envpin.fleet.names import checked_machine_name
from envpin.fleet.nodes import ClusterNode
from envpin.resolver.target import apply_overrides

if TYPE_CHECKING:
    from envpin.machine.spec import TargetSpec


def read_inventory(path: str, spec: TargetSpec) -> tuple[list[ClusterNode], bool]:
    """(every machine, whether the file is a Kubernetes node list); the target flags apply to every machine."""
    document = read_json(path, "--targets")
    if is_node_list(document):
        nodes = read_nodes(document, f"--targets {path}", spec.python, spec.os, spec.arch)
        return [ClusterNode(n.name, apply_overrides(n.facts, spec), n.group, n.labels) for n in nodes], True
    entries = document.get("targets") if isinstance(document, dict) else document
    if not isinstance(entries, list) or not entries:
        raise EnvpinInputError(f"--targets {path}: expected a non-empty JSON list of facts documents, or a Kubernetes "
                               "node list")
    nodes = []
    for position, entry in enumerate(entries):
        facts = apply_overrides(from_json(entry, origin=f"--targets {path}: targets[{position}]"), spec)
        name = entry.get("name")  # from_json took only a JSON object
        group = entry.get("partition") or entry.get("group")
        where = f"--targets {path}: targets[{position}]"
        nodes.append(ClusterNode(checked_machine_name(name, f"{where}.name") if isinstance(name, str) else
                                 f"target-{position}", facts,
                                 checked_machine_name(group, f"{where}.partition") if isinstance(group, str) else None))
    return nodes, False
