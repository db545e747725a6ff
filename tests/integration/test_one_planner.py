"""Every command that answers for machines answers each one with the same function (`planning.plan_machines`, over
`planning.answer_for`, which `envpin solve` answers one machine with), so none of them can hand a machine a file
that `envpin solve` refuses it (issue 28). The project asks for Python >=3.12; one node runs Python 3.11."""

from __future__ import annotations

import json

from tests.integration.test_cli import envpin

NODE = {"os": "linux", "arch": "x86_64", "driver": {"version": "570.124.06"},
        "gpus": [{"name": "NVIDIA GeForce RTX 4090"}]}
NEW_PYTHON = {"name": "gpu-312", "python": {"version": "3.12"}, **NODE}
OLD_PYTHON = {"name": "gpu-311", "python": {"version": "3.11"}, **NODE}


def _project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "1"\nrequires-python = ">=3.12"\n'
                                             'dependencies = ["torch"]\n')
    return str(tmp_path)


def _inventory(tmp_path, *nodes) -> str:
    path = tmp_path / f"fleet-{len(nodes)}.json"
    path.write_text(json.dumps(list(nodes)))
    return str(path)


def _solve_refusal(project: str, inventory: str) -> dict:
    result = envpin("solve", "--project", project, "--targets", inventory, "--format", "json")
    assert result.returncode == 1, result.stderr
    by_names = {tuple(r["targets"]): r for r in json.loads(result.stdout)["results"]}
    assert by_names[("gpu-312",)]["status"] == "ok"
    error = by_names[("gpu-311",)]["error"]
    assert error["code"] == "python-unsupported" and "requires-python >=3.12" in error["message"], error
    return error


def test_fleet_manifests_refuse_the_machine_solve_refuses(tmp_path):
    project, inventory = _project(tmp_path), _inventory(tmp_path, NEW_PYTHON, OLD_PYTHON)
    error = _solve_refusal(project, inventory)
    output = tmp_path / "images"
    result = envpin("fleet", "manifests", "--project", project, "--targets", inventory, "--format", "dockerfile",
                    "--no-lock", "-o", str(output))
    assert result.returncode == 1, (result.stdout, result.stderr)
    written = sorted(p.parent.name for p in output.glob("*/Dockerfile"))
    assert len(written) == 1 and "python:3.11" not in (output / written[0] / "Dockerfile").read_text(), written
    refused = [line for line in result.stdout.splitlines() if line.startswith("== class ")]
    assert len(refused) == 1 and refused[0].endswith("nothing written"), result.stdout
    assert error["code"] in result.stdout and "requires-python >=3.12" in result.stdout, result.stdout


def test_fleet_status_refuses_the_machine_solve_refuses(tmp_path):
    project, inventory = _project(tmp_path), _inventory(tmp_path, NEW_PYTHON, OLD_PYTHON)
    error = _solve_refusal(project, inventory)
    result = envpin("fleet", "status", "--project", project, "--targets", inventory, "--format", "json")
    assert result.returncode == 1, (result.stdout, result.stderr)
    document = json.loads(result.stdout)
    assert document["ok"] is False
    answers = {tuple(c["nodes"]): c["answer"] for c in document["classes"]}
    assert answers[("gpu-312",)]["status"] == "ok"
    assert answers[("gpu-311",)] == {"status": "unsatisfiable", "code": error["code"], "message": error["message"]}
    text = envpin("fleet", "status", "--project", project, "--targets", inventory)
    assert text.returncode == 1 and "fleet: OK" not in text.stdout and error["code"] in text.stdout, text.stdout


def test_fleet_provision_refuses_the_machine_solve_refuses(tmp_path):
    project = _project(tmp_path)
    error = _solve_refusal(project, _inventory(tmp_path, NEW_PYTHON, OLD_PYTHON))
    output = tmp_path / "out"
    result = envpin("fleet", "provision", "--slurm", "--project", project, "--targets",
                    _inventory(tmp_path, OLD_PYTHON), "-o", str(output), "--prefix-root", str(tmp_path / "envs"),
                    "--no-submit")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert not list(output.glob("*/provision.sbatch")) and not list(output.glob("*/pylock.toml"))
    assert "nothing written" in result.stdout and error["code"] in result.stdout, result.stdout


def test_matrix_shows_the_grid_of_the_build_solve_picks_on_a_fleet(tmp_path):
    """matrix has no project; its machines are the inventory's, read by the same function as the fleet's."""
    inventory = _inventory(tmp_path, NEW_PYTHON, OLD_PYTHON)
    grid = envpin("matrix", "--targets", inventory, "--format", "json")
    solved = envpin("solve", "--targets", inventory, "--format", "json")
    assert grid.returncode == 0 and solved.returncode == 0, (grid.stderr, solved.stderr)
    picks: dict[tuple, str] = {}
    for result in json.loads(grid.stdout)["results"]:
        for row in result["rows"]:
            for cell in row["cells"]:
                if cell["verdict"] != "no":
                    picks.setdefault(tuple(result["targets"]), f"{row['release']}+{cell['build']}")
                    break
            if tuple(result["targets"]) in picks:
                break
    for result in json.loads(solved.stdout)["results"]:
        torch = next(p for p in result["packages"] if p["name"] == "torch")
        assert picks[tuple(result["targets"])] == torch["version"], (picks, torch)
