"""Kubernetes node lists as they are recorded (GPU Feature Discovery labels), the machine classes they form, and
the verify Jobs per class, validated against the Kubernetes schemas of two versions (kubernetes-validate)."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from envpin.base.errors import EnvpinInputError
from envpin.cli import main
from envpin.fleet.kubernetes import class_job, class_selector, is_node_list, node_verify_jobs, read_nodes
from envpin.fleet.nodes import group_classes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kubernetes"
LKE = FIXTURES / "lke-rtx4000-ada.nodes.json"
VKS = FIXTURES / "vks-a100-vgpu.nodes.json"
GKE_WITHOUT_GFD = FIXTURES / "gke-k80-without-gfd.nodes.json"
# The oldest and the newest Kubernetes the validator's bundled schemas cover that the manifests are held to
KUBERNETES_VERSIONS = ("1.29", "1.37")


def nodes_of(path: Path, **flags):
    return read_nodes(json.loads(path.read_text()), str(path), "3.11", flags.get("os"), flags.get("arch"))


def test_gfd_labels_become_the_facts_of_a_node():
    [node] = nodes_of(LKE)
    facts = node.facts
    assert node.name == "lke529760-766837-0a634ab30000" and node.group == "766837"  # lke.linode.com/pool-id
    assert (facts.os, facts.arch, facts.python.version) == ("linux", "x86_64", "3.11")  # amd64 is x86_64
    assert facts.driver is not None and (facts.driver.version, facts.driver.cuda) == ("580.95.05", "13.0")
    assert [(g.name, g.compute_capability, g.memory_mib) for g in facts.gpus] == \
        [("NVIDIA-RTX-4000-Ada-Generation", "8.9", 20475)]


def test_the_deprecated_driver_labels_are_read_when_the_new_ones_are_absent():
    document = json.loads(LKE.read_text())
    labels = document["items"][0]["metadata"]["labels"]
    for key in [k for k in labels if "driver-version" in k or "runtime-version" in k]:
        del labels[key]
    labels["nvidia.com/cuda.driver.rev"] = ""  # GFD writes an empty revision for a two-part version
    [node] = read_nodes(document, "nodes.json", "3.11")
    driver = node.facts.driver
    assert driver is not None and (driver.version, driver.cuda) == ("580.95", "13.0")


def test_node_pools_are_classes_and_their_selector_picks_exactly_them():
    nodes = nodes_of(VKS, os="linux", arch="x86_64")
    classes = group_classes(nodes)
    assert [(c.name, len(c.nodes)) for c in classes] == [("node-pool-40c", 1), ("node-pool-4c", 3)]
    assert [class_selector(c, nodes) for c in classes] == [{"vks.vmware.com/nodepool": "node-pool-40c"},
                                                          {"vks.vmware.com/nodepool": "node-pool-4c"}]


def test_without_pools_the_selector_is_the_labels_the_facts_came_from():
    document = json.loads(LKE.read_text())
    labels = document["items"][0]["metadata"]["labels"]
    del labels["lke.linode.com/pool-id"]
    older = json.loads(json.dumps(document["items"][0]))
    older["metadata"]["name"] = "older-node"
    older["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "570.86.15"
    document["items"].append(older)
    nodes = read_nodes(document, "nodes.json", "3.11")
    classes = group_classes(nodes)
    assert [c.node_names for c in classes] == [("lke529760-766837-0a634ab30000",), ("older-node",)]
    selector = class_selector(classes[1], nodes)
    assert selector["nvidia.com/cuda.driver-version.full"] == "570.86.15"
    assert selector["nvidia.com/gpu.product"] == "NVIDIA-RTX-4000-Ada-Generation"


def test_a_pool_with_an_older_driver_is_held_to_it_and_names_the_node():
    document = json.loads(VKS.read_text())
    document["items"][3]["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "535.104.05"
    nodes = read_nodes(document, "nodes.json", "3.11", "linux", "x86_64")
    pool = group_classes(nodes)[1]
    assert pool.facts.driver is not None and pool.facts.driver.version == "535.104.05"
    assert pool.differences == ("node test-ai-0-node-pool-4c-zdfrn-rnkzj-w78x4: driver 535.104.05, GRID-A100-4C "
                                "(sm 8.0) (the others: driver 580.126.09, GRID-A100-4C (sm 8.0))",)


def test_a_gpu_node_without_gfd_labels_is_refused_not_taken_for_a_cpu():
    with pytest.raises(EnvpinInputError, match="has an NVIDIA GPU but no GPU Feature Discovery driver labels"):
        nodes_of(GKE_WITHOUT_GFD)


def test_what_a_node_list_does_not_say_is_asked_for():
    document = json.loads(VKS.read_text())
    with pytest.raises(EnvpinInputError, match="does not say the Python"):
        read_nodes(document, "nodes.json", None)
    with pytest.raises(EnvpinInputError, match="no kubernetes.io/os label"):
        read_nodes(document, "nodes.json", "3.11")
    assert is_node_list(document) and not is_node_list([{"os": "linux"}]) and not is_node_list({"items": 3})


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("fixture", [LKE, VKS])
def test_the_jobs_validate_against_the_kubernetes_schemas(fixture, version):
    nodes = nodes_of(fixture, os="linux", arch="x86_64")
    for machine_class in group_classes(nodes):
        selector = class_selector(machine_class, nodes)
        job = class_job(machine_class, selector, "registry.example/dl:x", "ml")
        assert kubernetes_validate.validate(job, version, strict=True) == version
        assert job["spec"]["template"]["spec"]["nodeSelector"] == selector
        assert job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}
        per_node = node_verify_jobs(machine_class, selector, "registry.example/dl:x", "ml")
        assert len(per_node) == len(machine_class.nodes)
        for verify, node in zip(per_node, machine_class.nodes, strict=True):
            assert kubernetes_validate.validate(verify, version, strict=True) == version
            picks = verify["spec"]["template"]["spec"]["nodeSelector"]
            assert picks == {**selector, "kubernetes.io/hostname": node.labels.get("kubernetes.io/hostname", node.name)}
        assert len({j["metadata"]["name"] for j in per_node}) == len(per_node)


def test_the_schema_check_can_fail():
    [node] = nodes_of(LKE)
    [machine_class] = group_classes([node])
    job = class_job(machine_class, class_selector(machine_class, [node]), "registry.example/dl:x", None)
    job["spec"]["template"]["spec"]["nodeSelector"] = ["not", "a", "mapping"]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES_VERSIONS[0], strict=True)
    job = class_job(machine_class, class_selector(machine_class, [node]), "registry.example/dl:x", None)
    job["spec"]["template"]["spec"]["nodeSelecter"] = {}  # a misspelt field: strict schemas refuse it
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES_VERSIONS[1], strict=True)


def test_a_cpu_class_keeps_off_the_gpu_nodes():
    document = json.loads(LKE.read_text())
    cpu = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1", "labels": {
        "kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64", "lke.linode.com/pool-id": "1"}}}
    document["items"].append(cpu)
    nodes = read_nodes(document, "nodes.json", "3.11")
    machine_class = group_classes(nodes)[1]
    assert machine_class.facts.arch == "aarch64" and machine_class.facts.driver is None
    job = class_job(machine_class, class_selector(machine_class, nodes), "registry.example/dl:cpu", None)
    terms = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    assert terms["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"] == \
        [{"key": "nvidia.com/gpu.product", "operator": "DoesNotExist"}]
    for version in KUBERNETES_VERSIONS:
        kubernetes_validate.validate(job, version, strict=True)


def test_the_command_writes_validated_jobs_per_class(tmp_path, capsys):
    code = main(["fleet", "manifests", "--targets", str(VKS), "--python", "3.11", "--os", "linux", "--arch", "x86_64",
                 "--format", "kubernetes", "--image", "registry.example/dl", "-o", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml"))
    assert written == ["node-pool-40c/job.yaml", "node-pool-40c/verify-jobs.yaml",
                       "node-pool-4c/job.yaml", "node-pool-4c/verify-jobs.yaml"]
    documents = {path.relative_to(tmp_path).as_posix(): list(yaml.safe_load_all(path.read_text()))
                 for path in tmp_path.rglob("*.yaml")}
    assert len(documents["node-pool-4c/verify-jobs.yaml"]) == 3 and len(documents["node-pool-4c/job.yaml"]) == 1
    for jobs in documents.values():
        for job in jobs:
            for version in KUBERNETES_VERSIONS:
                kubernetes_validate.validate(job, version, strict=True)
            container = job["spec"]["template"]["spec"]["containers"][0]
            # both pools' A100 vGPUs on one driver: one build, one image for the two classes
            assert container["image"] == "registry.example/dl:node-pool-40c-node-pool-4c"
            assert container["command"] == ["/opt/env/bin/python", "/opt/envpin/envpin_probe.py"]  # no envpin inside
    assert capsys.readouterr().out.startswith("== image node-pool-40c-node-pool-4c: classes node-pool-40c, node-pool-4c;")


def test_solve_targets_reads_a_node_list_as_it_is(capsys):
    assert main(["solve", "--targets", str(VKS), "--python", "3.11", "--os", "linux", "--arch", "x86_64",
                 "--format", "json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["results"]  # four nodes, one answer
    assert len(result["targets"]) == 4 and result["target"]["driver"] == "580.126.09"
    assert main(["solve", "--targets", str(GKE_WITHOUT_GFD), "--python", "3.11"]) == 2
    assert "no GPU Feature Discovery driver labels" in capsys.readouterr().err


def test_status_names_the_node_with_the_older_driver(tmp_path, capsys):
    document = json.loads(VKS.read_text())
    document["items"][3]["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = "418.39"
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps(document))
    code = main(["fleet", "status", "--targets", str(nodes), "--python", "3.11", "--os", "linux", "--arch", "x86_64",
                 "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["ok"] is False  # driver 418 runs no torch build: the pool has no answer
    pool = report["classes"][1]
    assert pool["class"] == "node-pool-4c" and pool["answer"]["code"] == "driver-too-old"
    assert pool["differences"] == ["node test-ai-0-node-pool-4c-zdfrn-rnkzj-w78x4: driver 418.39, GRID-A100-4C "
                                   "(sm 8.0) (the others: driver 580.126.09, GRID-A100-4C (sm 8.0))"]
    assert report["classes"][0]["answer"]["status"] == "ok"


def test_without_pools_a_cpu_class_is_told_apart_from_the_gpu_nodes():
    document = json.loads(LKE.read_text())
    del document["items"][0]["metadata"]["labels"]["lke.linode.com/pool-id"]
    document["items"].append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1", "labels": {
        "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "cpu-1"}}})
    nodes = read_nodes(document, "nodes.json", "3.11")
    gpu, cpu = group_classes(nodes)
    assert cpu.name == "cpu" and class_selector(cpu, nodes) == {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
    assert "nvidia.com/gpu.product" in class_selector(gpu, nodes)
    twin = json.loads(json.dumps(document["items"][0]))  # a node alike in every label, another class: refused
    twin["metadata"]["name"] = "twin"
    twin["metadata"]["labels"]["nvidia.com/cuda.runtime-version.full"] = "12.8"
    document["items"].append(twin)
    nodes = read_nodes(document, "nodes.json", "3.11")
    assert len(group_classes(nodes)) == 2  # the driver's CUDA is no class fact: the twin joins the GPU class
    with pytest.raises(EnvpinInputError, match="do not select exactly its nodes"):
        odd = [n if n.name != "twin" else type(n)(n.name, n.facts, "elsewhere", n.labels) for n in nodes]
        class_selector(group_classes(odd)[0], odd)
