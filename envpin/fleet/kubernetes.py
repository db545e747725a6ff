"""Kubernetes: a recorded `kubectl get nodes -o json` read as it is, and the verify Job of each machine class.

The facts of a node come from its labels. NVIDIA GPU Feature Discovery (GFD; part of NVIDIA's k8s-device-plugin
and of the GPU Operator) labels each GPU node with the driver, the CUDA the driver supports, the GPU model,
count, memory and compute capability (NVIDIA/k8s-device-plugin, internal/lm/nvml.go newVersionLabeler and
internal/lm/resource.go at 03f72f90 / 02f65cca; docs/gfd_labels.md at 592307d8):

- `nvidia.com/cuda.driver-version.{major,minor,revision,full}` (GFD ≥ 0.15), and the deprecated
  `nvidia.com/cuda.driver.{major,minor,rev}` that GFD still writes beside them;
- `nvidia.com/cuda.runtime-version.{major,minor,full}` / deprecated `nvidia.com/cuda.runtime.{major,minor}`:
  the CUDA version the driver supports (GFD reads it with cuDriverGetVersion), not a toolkit;
- `nvidia.com/gpu.product` (the NVML name with spaces turned into '-', `-SHARED` appended under time-slicing,
  `-MIG-<profile>` under the single MIG strategy), `nvidia.com/gpu.count`, `nvidia.com/gpu.memory` (MiB),
  `nvidia.com/gpu.compute.{major,minor}`.

The kubelet labels every node with `kubernetes.io/os` and `kubernetes.io/arch` (older clusters: the
`beta.kubernetes.io/` spellings); the node's `status.nodeInfo` says the same. Managed clusters label their node
pools (POOL_LABELS); a pool is a machine class. The GPU product label keeps the dashes GFD put in, so a GPU
is named by it and judged by the compute capability GFD read from the driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import shown
from envpin.facts.host import (
    OPERATING_SYSTEMS,
    Driver,
    Gpu,
    HostFacts,
    PythonInfo,
    is_compute_capability,
    normalize_arch,
)
from envpin.fleet.images import ENV_PYTHON, PROBE_PATH
from envpin.fleet.names import checked_node_name, is_label_value
from envpin.fleet.nodes import ClusterNode, MachineClass

# Node-pool labels, each as its platform writes it: GKE, EKS managed node groups, Karpenter, AKS (both
# spellings), vSphere Kubernetes Service, Linode LKE.
POOL_LABELS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool",
               "kubernetes.azure.com/agentpool", "agentpool", "vks.vmware.com/nodepool", "lke.linode.com/pool-id")
OS_LABELS = ("kubernetes.io/os", "beta.kubernetes.io/os")
ARCH_LABELS = ("kubernetes.io/arch", "beta.kubernetes.io/arch")
PRODUCT = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"
DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
DRIVER_PARTS = (("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor",
                 "nvidia.com/cuda.driver-version.revision"),
                ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"))
RUNTIME_PARTS = (("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"),
                 ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"))
# Signs of an NVIDIA GPU that say nothing of its driver: GFD's presence label, GKE's accelerator label, and the
# device plugin's extended resource
GPU_SIGNS = ("nvidia.com/gpu.present", "cloud.google.com/gke-accelerator")
GPU_RESOURCE = "nvidia.com/gpu"
# The most GPUs envpin takes a node's gpu.count label for: servers carry 8 or 16 (NVIDIA DGX/HGX); a count far past it
# is a broken label, and each GPU is a value envpin makes and judges
MAX_GPUS_PER_NODE = 256


def is_node_list(document: Any) -> bool:
    """A `kubectl get nodes -o json` document (a List of Nodes), or one Node (`kubectl get node NAME -o json`)."""
    if not isinstance(document, dict):
        return False
    if document.get("kind") == "Node":
        return True
    items = document.get("items")
    return document.get("kind") in ("List", "NodeList") and isinstance(items, list) and \
        all(isinstance(item, dict) and item.get("kind", "Node") == "Node" for item in items)


def read_nodes(document: Any, origin: str, python: str | None, os_name: str | None = None,
               arch: str | None = None) -> list[ClusterNode]:
    """Every node of the document, its facts from its labels. `python` is the Python of the images (a node does
    not say it); `os_name` and `arch`, when given, stand for the labels (flags override the file)."""
    if python is None:
        raise EnvpinInputError(f"{origin}: a Kubernetes node list does not say the Python; give --python X.Y "
                               "(the Python of the class images)")
    items = [document] if document.get("kind") == "Node" else document["items"]
    if not items:
        raise EnvpinInputError(f"{origin}: the node list has no nodes")
    return [_node(item, f"{origin}: items[{position}]", python, os_name, arch) for position, item in enumerate(items)]


def _node(item: dict, where: str, python: str, os_name: str | None, arch: str | None) -> ClusterNode:
    metadata = item.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        raise EnvpinInputError(f"{where}: metadata.name: expected the node's name")
    name = checked_node_name(metadata["name"], where)
    where = f"{where} (node {name})"
    labels = metadata.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise EnvpinInputError(f"{where}: metadata.labels: expected a mapping of label names to strings")
    info = (item.get("status") or {}).get("nodeInfo") or {}
    os_value = os_name or _first(labels, OS_LABELS) or info.get("operatingSystem")
    arch_value = arch or _first(labels, ARCH_LABELS) or info.get("architecture")
    if os_value not in OPERATING_SYSTEMS:
        raise EnvpinInputError(f"{where}: no kubernetes.io/os label of linux or windows (found {os_value!r}); "
                               "or give --os")
    if not isinstance(arch_value, str):
        raise EnvpinInputError(f"{where}: no kubernetes.io/arch label; or give --arch")
    arch_value = normalize_arch(arch_value)
    if os_value == "linux" and arch_value == "arm64":
        arch_value = "aarch64"  # Kubernetes' GOARCH spelling of a Linux ARM server
    driver = _driver(labels, where)
    if driver is None and _has_gpu_sign(item, labels):
        raise EnvpinInputError(f"{where}: has an NVIDIA GPU but no GPU Feature Discovery driver labels "
                               f"({DRIVER_FULL} or nvidia.com/cuda.driver.major …); deploy GPU Feature Discovery (or "
                               "the GPU Operator) so the driver and GPU are labelled, or solve it with --facts")
    gpus = _gpus(labels, where) if driver is not None else ()
    facts = HostFacts(os=os_value, arch=arch_value, python=PythonInfo(python), driver=driver, gpus=gpus)
    return ClusterNode(name, facts, _first(labels, POOL_LABELS), dict(labels))


def _first(labels: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((labels[name] for name in names if labels.get(name)), None)


def _driver(labels: Mapping[str, str], where: str) -> Driver | None:
    version = labels.get(DRIVER_FULL)
    if not version:
        for major, minor, revision in DRIVER_PARTS:
            if labels.get(major) and labels.get(minor):
                version = ".".join(p for p in (labels[major], labels[minor], labels.get(revision, "")) if p)
                break
    if not version:
        return None
    words = version.split(".")
    if not (2 <= len(words) <= 3 and all(w.isascii() and w.isdigit() for w in words)):
        raise EnvpinInputError(f"{where}: driver label {version!r} is not an NVIDIA driver version such as 535.104.05")
    cuda = labels.get("nvidia.com/cuda.runtime-version.full")
    if not cuda:
        for major, minor in RUNTIME_PARTS:
            if labels.get(major) and labels.get(minor):
                cuda = f"{labels[major]}.{labels[minor]}"
                break
    return Driver(version, cuda or None, "override")


def _gpus(labels: Mapping[str, str], where: str) -> tuple[Gpu, ...]:
    product = labels.get(PRODUCT)
    if not product:
        return ()
    count_text = labels.get(COUNT, "1")
    if not (count_text.isascii() and count_text.isdigit()):
        raise EnvpinInputError(f"{where}: {COUNT} {shown(count_text, 80)!r} is not a number of GPUs")
    if len(count_text.lstrip("0")) > 3 or int(count_text) > MAX_GPUS_PER_NODE:
        raise EnvpinInputError(f"{where}: {COUNT} {shown(count_text, 80)}: more GPUs than envpin takes for one node "
                               f"(at most {MAX_GPUS_PER_NODE})")
    major, minor = labels.get("nvidia.com/gpu.compute.major"), labels.get("nvidia.com/gpu.compute.minor")
    capability = f"{major}.{minor}" if major and minor else None
    if capability is not None and not is_compute_capability(capability):
        raise EnvpinInputError(f"{where}: nvidia.com/gpu.compute.major/minor {capability!r} is not a compute capability")
    memory = labels.get("nvidia.com/gpu.memory", "")
    memory_mib = int(memory) if memory.isascii() and memory.isdigit() and len(memory) <= 12 else None
    return tuple(Gpu(index, product, capability, memory_mib) for index in range(int(count_text)))


def _has_gpu_sign(item: dict, labels: Mapping[str, str]) -> bool:
    if labels.get(PRODUCT) or any(labels.get(name) and labels[name] != "false" for name in GPU_SIGNS):
        return True
    capacity = (item.get("status") or {}).get("capacity") or {}
    return str(capacity.get(GPU_RESOURCE, "0")) not in ("0", "")


# ---------------------------------------------------------------- selecting a class


def class_selector(machine_class: MachineClass, every_node: list[ClusterNode]) -> dict[str, str]:
    """The nodeSelector that picks exactly this class's nodes among every node of the list (with, for a class
    without GPUs, the Jobs' rule that keeps off nodes with a GPU product label): its pool label, or the labels its
    facts came from (os, arch, GPU product and count, driver). Refused when labels cannot tell the class apart
    (two nodes alike in every one of those labels but in different classes)."""
    first = machine_class.nodes[0]
    pool = next((name for name in POOL_LABELS if first.labels.get(name)), None)
    if pool is not None:
        selector = {pool: first.labels[pool]}
    else:
        keys = [name for name in (*OS_LABELS[:1], *ARCH_LABELS[:1], PRODUCT, COUNT) if name in first.labels]
        driver_keys = [DRIVER_FULL] if DRIVER_FULL in first.labels else \
            next(([k for k in parts if k in first.labels] for parts in DRIVER_PARTS if parts[0] in first.labels), [])
        selector = {key: first.labels[key] for key in keys + driver_keys}
    for key, value in selector.items():
        if not is_label_value(value):
            raise EnvpinInputError(f"class {machine_class.name}: label {key}={shown(value, 80)!r} is not a Kubernetes label "
                                   "value (at most 63 letters, digits, '-', '_' and '.'), so no nodeSelector can hold it")
    picked = {node.name for node in every_node if all(node.labels.get(k) == v for k, v in selector.items())
              and (machine_class.facts.gpus or PRODUCT not in node.labels)}  # a CPU class's Jobs keep off GPU nodes
    if picked != set(machine_class.node_names):
        raise EnvpinInputError(f"class {machine_class.name}: its nodes' labels ({', '.join(sorted(selector)) or 'none'}) "
                               "do not select exactly its nodes; label the nodes of each class (a node pool label)")
    return selector


# ---------------------------------------------------------------- the Jobs of a class

# envpin's probe in the image's environment (the image holds no envpin): its log is the node's report, which
# `envpin fleet status --reports` judges against the node's facts
VERIFY = [ENV_PYTHON, PROBE_PATH]
HOSTNAME = "kubernetes.io/hostname"


def class_job(machine_class: MachineClass, selector: Mapping[str, str], image: str, namespace: str | None) -> dict:
    """The class's Job: one pod on a node the selector picks (exactly the class's nodes), in the class's image,
    on a GPU when the class has them. It runs envpin's probe; a workload puts its own command there."""
    return _job(machine_class, f"envpin-{machine_class.name}", dict(selector), image, namespace, {})


def node_verify_jobs(machine_class: MachineClass, selector: Mapping[str, str], image: str,
                     namespace: str | None) -> list[dict]:
    """envpin's probe on every node of the class: one Job per node, its selector the class's plus the node's
    hostname, so each node is checked once and each pod's log is that node's JSON report. (One Job with a pod per
    node cannot promise that: the scheduler stops counting a finished pod for anti-affinity.)"""
    jobs = []
    for position, node in enumerate(machine_class.nodes):
        hostname = node.labels.get(HOSTNAME, node.name)
        if not is_label_value(hostname):
            raise EnvpinInputError(f"node {node.name}: label {HOSTNAME}={shown(hostname, 80)!r} is not a Kubernetes label "
                                   "value (at most 63 letters, digits, '-', '_' and '.'), so no nodeSelector can hold it")
        node_selector = {**selector, HOSTNAME: hostname}
        name = f"envpin-verify-{machine_class.name}"[:58].rstrip("-") + f"-{position}"
        jobs.append(_job(machine_class, name, node_selector, image, namespace, {"envpin.dev/node": _label_value(node.name)}))
    return jobs


def _label_value(text: str) -> str:
    """A label value: at most 63 characters of letters, digits, '-', '_' and '.', alphanumeric at both ends."""
    kept = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_.") else "-" for ch in text)[:63]
    return kept.strip("-_.")


def _job(machine_class: MachineClass, name: str, selector: dict[str, str], image: str, namespace: str | None,
         extra_labels: dict[str, str]) -> dict:
    labels = {"app.kubernetes.io/name": "envpin", "envpin.dev/class": machine_class.name, **extra_labels}
    # each place gets its own copy of the labels, so that YAML writes them out rather than as an alias
    metadata: dict[str, Any] = {"name": name[:63].rstrip("-"), "labels": dict(labels)}
    if namespace:
        metadata["namespace"] = namespace
    container: dict[str, Any] = {"name": "verify", "image": image, "command": list(VERIFY)}
    pod_spec: dict[str, Any] = {"restartPolicy": "Never", "nodeSelector": selector, "containers": [container]}
    if machine_class.facts.gpus:
        container["resources"] = {"limits": {GPU_RESOURCE: "1"}}
        # GPU pools are commonly tainted nvidia.com/gpu (GKE and AKS do it for their GPU pools); the Job tolerates it
        pod_spec["tolerations"] = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]
    else:  # a nodeSelector cannot say "no GPU product label"
        pod_spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": PRODUCT, "operator": "DoesNotExist"}]}]}}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}},
    }
