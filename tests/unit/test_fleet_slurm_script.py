"""The sbatch script of a machine class, as written (the real cluster runs it in
tests/integration/test_fleet_slurm.py), and Slurm's tools missing as one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from envpin.cli import main
from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo
from envpin.fleet.nodes import ClusterNode, group_classes
from envpin.fleet.slurm import ClassFiles, provision_script
from envpin.resolver.plan import Plan
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target


def a100_class():
    def node(name, driver):
        return ClusterNode(name, HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"),
                                           driver=Driver(driver, None, "nvidia-smi"),
                                           gpus=(Gpu(0, "NVIDIA A100-SXM4-80GB", "8.0"),)), "a100")
    [machine_class] = group_classes([node("gpu-01", "550.54.15"), node("gpu-02", "550.54.15"), node("gpu-03", "535.104.05")])
    return machine_class


def test_the_script_installs_once_on_shared_storage_or_on_every_node(database, tmp_path):
    machine_class = a100_class()
    plan = solve(database, make_target(database, machine_class.facts), parse_request(["torch"], []))
    assert isinstance(plan, Plan)
    files = ClassFiles(tmp_path / "a100", tmp_path / "reports")
    shared = provision_script(machine_class, plan, files, "/shared/envs/a100", ["/opt/py/bin/python", "-m", "envpin"], False)
    assert "#SBATCH --partition=a100\n#SBATCH --nodes=3\n#SBATCH --nodelist=gpu-01,gpu-02,gpu-03\n" in shared
    assert "# Differs: node gpu-03: driver 535.104.05" in shared  # the class is held to its oldest driver
    assert plan.target.driver == "535.104.05"
    assert f'\n"${{envpin[@]}}" install --quiet --prefix "$prefix" --lock {files.lock} || exit $?\n' in shared
    # each node's verify names its own report after its Slurm node, not after srun's %N (its host name)
    assert (f'srun --nodes=3 --ntasks-per-node=1 "${{envpin[@]}}" verify --prefix "$prefix" --node-report-dir '
            f"{files.reports}\n") in shared
    local = provision_script(machine_class, plan, files, "/tmp/envs/a100", ["envpin"], True)
    assert '\nsrun --nodes=3 --ntasks-per-node=1 "${envpin[@]}" install' in local
    for text in (shared, local):  # bash reads it
        script = tmp_path / "check.sbatch"
        script.write_text(text)
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_without_slurm_tools_detect_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["fleet", "detect", "--slurm", "-o", str(tmp_path / "fleet.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sinfo not found on PATH" in err
    assert not Path(tmp_path / "fleet.json").exists()
