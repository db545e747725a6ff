"""`envpin solve --targets FILE`: a fleet inventory in, one answer per distinct result out."""

import json

from tests.integration.test_cli import envpin

FLEET = [
    {"name": "a100-nodes", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "535.104.05"}, "gpus": [{"name": "NVIDIA A100-SXM4-80GB"}]},
    {"name": "3090-workstations", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "550.54.14"}, "gpus": [{"name": "NVIDIA GeForce RTX 3090"}]},
    {"name": "laptops", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"}, "driver": None},
    {"name": "pascal-box", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "580.65.06"}, "gpus": [{"name": "NVIDIA GeForce GTX 1080 Ti"}, {"name": "NVIDIA H200"}]},
    {"name": "h200-nodes", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "580.65.06"}, "gpus": [{"name": "NVIDIA H200"}]},
]


def test_machines_with_the_same_answer_share_one_result(tmp_path):
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(FLEET))
    result = envpin("solve", "--targets", str(inventory), "--format", "json")
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)["results"]
    by_names = {tuple(r["targets"]): r for r in results}
    # The Pascal card keeps the mixed box on a build with sm_60 code, whatever its H200 could use alone.
    assert set(by_names) == {("a100-nodes", "3090-workstations", "pascal-box"), ("laptops",), ("h200-nodes",)}
    assert by_names[("laptops",)]["accelerator"] == "cpu"
    assert by_names[("a100-nodes", "3090-workstations", "pascal-box")]["accelerator"] == "cu126"
    assert by_names[("h200-nodes",)]["packages"][0]["version"].startswith("2.15")


def test_one_file_per_distinct_answer(tmp_path):
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(FLEET))
    result = envpin("solve", "--targets", str(inventory), "-o", str(tmp_path / "environment.yml"))
    assert result.returncode == 0, result.stderr
    written = sorted(p.name for p in tmp_path.glob("environment.*.yml"))
    assert written == ["environment.cpu.yml", "environment.cu126.yml", "environment.cu132.yml"]


def test_unsatisfiable_member_exits_1_and_is_named(tmp_path):
    fleet = FLEET[:1] + [{"name": "old-driver", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
                          "driver": {"version": "418.39"}, "gpus": [{"name": "NVIDIA GeForce RTX 3090"}]}]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(fleet))
    result = envpin("solve", "--targets", str(inventory))
    assert result.returncode == 1
    assert "== old-driver" in result.stdout and "driver-too-old" in result.stdout


def test_malformed_inventory_is_one_line(tmp_path):
    inventory = tmp_path / "fleet.json"
    for content in ("[]", '{"targets": 3}', '[{"name": "x", "os": "linux"}]', "nope"):
        inventory.write_text(content)
        result = envpin("solve", "--targets", str(inventory))
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


MIXED: list[dict] = [
    {"name": "h100-nodes", "os": "linux", "arch": "x86_64", "python": {"version": "3.12"},
     "driver": {"version": "580.65.06"}, "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]},
    {"name": "gh200-nodes", "os": "linux", "arch": "aarch64", "python": {"version": "3.12"},
     "driver": {"version": "580.65.06"}, "gpus": [{"name": "NVIDIA GH200 480GB"}]},
    {"name": "h100-py311", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "580.65.06"}, "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]},
    {"name": "mac-laptop", "os": "macos", "arch": "arm64", "python": {"version": "3.12"}, "driver": None},
    {"name": "linux-laptop", "os": "linux", "arch": "x86_64", "python": {"version": "3.12"}, "driver": None},
    {"name": "h100-spare", "os": "linux", "arch": "x86_64", "python": {"version": "3.12"},
     "driver": {"version": "590.44.01"}, "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]},
]


def _platform(machine: dict) -> tuple[str, str]:
    return f"{machine['os']}-{machine['arch']}", machine["python"]["version"]


def test_machines_that_pin_the_same_packages_on_other_platforms_or_pythons_are_not_grouped(tmp_path):
    # torch 2.15.0 from PyPI is the answer of the H100 and GH200 nodes, and of both Pythons; jax 0.12 from PyPI
    # that of the macOS and the Linux laptops: each group is one platform and one Python, reported as itself.
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(MIXED))
    machines = {m["name"]: _platform(m) for m in MIXED}
    for framework in ("torch", "jax"):
        result = envpin("solve", "--framework", framework, "--targets", str(inventory), "--format", "json")
        assert result.returncode == 0, result.stderr
        for answer in json.loads(result.stdout)["results"]:
            target = answer["target"]
            shown = (f"{target['os']}-{target['arch']}", target["python"])
            assert {machines[name] for name in answer["targets"]} == {shown}, (framework, answer["targets"], shown)
        groups = sorted(tuple(r["targets"]) for r in json.loads(result.stdout)["results"])
        assert ("h100-nodes", "h100-spare") in groups  # what does not change the answer still groups
    text = envpin("solve", "--targets", str(inventory)).stdout
    block = text.split("== gh200-nodes\n", 1)[1].split("\n== ", 1)[0]
    assert "target: linux-aarch64, Python 3.12" in block
    written = envpin("solve", "--targets", str(inventory), "-o", str(tmp_path / "environment.yml"))
    assert written.returncode == 0, written.stderr
    files = sorted(p.name for p in tmp_path.glob("environment.*.yml"))
    assert "environment.cu132.linux-aarch64.yml" in files, files
    header = (tmp_path / "environment.cu132.linux-aarch64.yml").read_text().splitlines()[1]
    assert header.startswith("# Target: linux-aarch64, Python 3.12")


def test_a_machine_on_a_python_the_project_leaves_out_is_refused_as_a_single_solve_refuses_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "1"\nrequires-python = ">=3.11"\n'
                                             'dependencies = ["torch"]\n')
    old_python = json.loads(json.dumps(FLEET[0])) | {"name": "old-python", "python": {"version": "3.10"}}
    fleet = [FLEET[0], old_python]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(fleet))
    result = envpin("solve", "--project", str(tmp_path), "--targets", str(inventory), "--format", "json")
    single = envpin("solve", "--project", str(tmp_path), "--os", "linux", "--arch", "x86_64", "--python", "3.10",
                    "--driver", "535.104.05", "--gpu", "NVIDIA A100-SXM4-80GB", "--format", "json")
    assert result.returncode == 1 and single.returncode == 1, result.stderr
    by_names = {tuple(r["targets"]): r for r in json.loads(result.stdout)["results"]}
    refused = by_names[("old-python",)]
    assert refused["error"] == json.loads(single.stdout)["error"]
    assert refused["error"]["code"] == "python-unsupported" and "requires-python >=3.11" in refused["error"]["message"]
    assert by_names[("a100-nodes",)]["packages"][0]["name"] == "torch"
