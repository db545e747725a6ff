"""Cluster nodes and the machine classes they form.

A node is one machine as its cluster describes it: a name, its facts, the group the cluster puts it in (a
Kubernetes node pool, a Slurm partition) and, on Kubernetes, the labels that select it. A machine class is
what one environment serves: the nodes of one group (or, without groups, the nodes with the same facts) on
one platform. The class's facts are its weakest member's: the oldest driver of its nodes and every GPU model
among them, so its answer runs on each node; the nodes whose facts differ from the rest are named, never
averaged away.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from envpin.base.record import Record, field, record, replace
from envpin.compat.drivers import parse_driver_version
from envpin.facts.host import Gpu, HostFacts


@record
class ClusterNode(Record):
    """One machine of a cluster."""

    name: str
    facts: HostFacts
    group: str | None = None  # the node pool or Slurm partition
    labels: Mapping[str, str] = field(default_factory=dict)  # Kubernetes: every label of the node


@record
class MachineClass(Record):
    """Nodes that share one environment, and the facts it is solved for."""

    name: str  # a DNS-1123 label: it names Kubernetes objects, folders and Slurm jobs
    nodes: tuple[ClusterNode, ...]
    facts: HostFacts  # the oldest driver among the nodes, every GPU model among them
    group: str | None = None
    differences: tuple[str, ...] = ()  # "node gpu-3: driver 470.57.02 (the others: 535.104.05)"

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(node.name for node in self.nodes)


def machine_description(facts: HostFacts) -> str:
    """How a node's solver-relevant facts read in a difference: its driver and GPUs."""
    driver = f"driver {facts.driver.version}" if facts.driver else "no NVIDIA driver"
    gpus = ", ".join(sorted({f"{gpu.name} (sm {gpu.compute_capability or '?'})" for gpu in facts.gpus}))
    return f"{driver}, {gpus or 'no GPU'}"


def group_classes(nodes: list[ClusterNode], broken: Mapping[str, str] | None = None) -> list[MachineClass]:
    """The machine classes of a cluster, in the order their first node appears. `broken`: node name -> what is wrong
    with its NVIDIA driver (it does not answer), for nodes whose facts would pass a GPU node off as one without a
    GPU: they stay in their class, named in its differences, and the class is solved for its other nodes."""
    broken = broken or {}
    members: dict[tuple, list[ClusterNode]] = {}
    for node in nodes:
        facts = node.facts
        platform = (facts.os, facts.arch, facts.python.version)
        described = "driver broken" if node.name in broken else machine_description(facts)
        key = (node.group, *platform) if node.group is not None else (None, *platform, described)
        members.setdefault(key, []).append(node)
    classes = [_machine_class(group, broken) for group in members.values()]
    return _unique_names(classes)


def _machine_class(nodes: list[ClusterNode], broken: Mapping[str, str]) -> MachineClass:
    healthy = [node for node in nodes if node.name not in broken]
    left_out = tuple(f"node {node.name}: its NVIDIA driver does not answer ({broken[node.name]}); the class is solved "
                     "without its facts: run `envpin doctor` there" for node in nodes if node.name in broken)
    if not healthy:  # every node's driver is broken: the class has no facts to solve for (plan_classes refuses it)
        return replace(_machine_class_of(nodes), differences=left_out)
    machine_class = _machine_class_of(healthy)
    return replace(machine_class, nodes=tuple(nodes), differences=machine_class.differences + left_out)


def _machine_class_of(nodes: list[ClusterNode]) -> MachineClass:
    first = nodes[0]
    facts = weakest_facts([node.facts for node in nodes])
    return MachineClass(_class_name(first, facts), tuple(nodes), facts, first.group, _differences(nodes))


def weakest_facts(every: list[HostFacts]) -> HostFacts:
    """What one environment for all these machines (of one platform) is solved for: the oldest driver among them and
    every GPU model among them; the rest as the first says."""
    drivers = [facts.driver for facts in every]
    if any(driver is None for driver in drivers):
        oldest = None  # a node without a driver holds the class to what runs without one
    else:
        oldest = min((d for d in drivers if d is not None), key=lambda d: parse_driver_version(d.version))
    gpus: list[Gpu] = []
    for facts in every:
        for gpu in facts.gpus:
            if all((gpu.name, gpu.compute_capability) != (seen.name, seen.compute_capability) for seen in gpus):
                gpus.append(replace(gpu, index=len(gpus)))
    return replace(every[0], driver=oldest, gpus=tuple(gpus), notes=())


def _differences(nodes: list[ClusterNode]) -> tuple[str, ...]:
    described = {node.name: machine_description(node.facts) for node in nodes}
    counts = Counter(described.values())
    if len(counts) < 2:
        return ()
    usual = counts.most_common(1)[0][0]
    return tuple(f"node {name}: {text} (the others: {usual})" for name, text in described.items() if text != usual)


def _class_name(first: ClusterNode, facts: HostFacts) -> str:
    if first.group:
        return slug(first.group)
    if not facts.gpus:
        return "cpu"
    count = sum(1 for gpu in first.facts.gpus)
    driver = facts.driver.version if facts.driver else "no-driver"
    return slug(f"{facts.gpus[0].name}-x{count}-{driver}")


def slug(text: str) -> str:
    """A DNS-1123 label (lowercase letters, digits and '-', at most 63, starting and ending alphanumeric)."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:63].rstrip("-") or "class"


def _unique_names(classes: list[MachineClass]) -> list[MachineClass]:
    seen: dict[str, int] = {}
    named = []
    for machine_class in classes:
        seen[machine_class.name] = seen.get(machine_class.name, 0) + 1
        if seen[machine_class.name] > 1:
            suffix = f"-{seen[machine_class.name]}"
            machine_class = replace(machine_class, name=machine_class.name[:63 - len(suffix)] + suffix)
        named.append(machine_class)
    return named
