"""A real single-node Slurm cluster (Debian's slurmctld, slurmd and munged, started here with a minimal
slurm.conf in a temporary folder and stopped after), the node's GPU given by a stand-in `nvidia-smi` on PATH
that prints a recorded real output: `envpin fleet detect --slurm` through srun → `envpin solve --targets` →
`envpin fleet provision --slurm` through sbatch (a CPU torch from the loopback index) → `envpin verify` on the
node → `envpin fleet status`.

The daemons run in the foreground (-D / -F) as children of the test, each with its own state folder, socket
and ports, so nothing outlives the test. Without the Slurm packages the test fails and says how to install
them (`.ci/run` installs them); it never passes silently.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.loopback_index import Index, build_wheel

REPO = Path(__file__).resolve().parents[2]
RTX4090 = REPO / "tests" / "fixtures" / "host" / "smi_table_580.65.06_linux_rtx4090.txt"
SLURM_TOOLS = ("munged", "slurmctld", "slurmd", "sinfo", "srun", "sbatch", "squeue")
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Slurm runs on Linux")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what: str, check, timeout: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    tails = "\n".join(f"--- {log}:\n{log.read_text(errors='replace')[-2000:]}" for log in logs if log.exists())
    pytest.fail(f"{what} within {timeout:g} s\n{tails}")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """(environment with SLURM_CONF and the stand-in nvidia-smi on PATH, node name, partition, folder)."""
    missing = [tool for tool in SLURM_TOOLS if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin") is None]
    if missing:
        pytest.fail(f"the Slurm packages are not installed ({', '.join(missing)} missing): "
                    "apt-get install -y slurm-wlm munge (.ci/run does this)")
    if os.geteuid() != 0:
        pytest.fail("the Slurm test starts slurmd, which runs jobs as their user and needs root: run it as root (CI does)")
    root = Path(tmp_path_factory.mktemp("slurm"))
    node = socket.gethostname().split(".")[0]
    munge = root / "munge"
    munge.mkdir(mode=0o711)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = root / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=envpintest", f"SlurmctldHost={node}(127.0.0.1)", "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={munge}/munge.socket",
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd.pid",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd.log",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "MpiDefault=none", "ReturnToService=2",
        "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN",
        f"PartitionName=gpu Nodes={node} Default=YES MaxTime=INFINITE State=UP", ""]))
    (root / "state").mkdir()
    (root / "spool").mkdir()
    bin_dir = root / "bin"  # the node's GPU: a stand-in nvidia-smi printing a recorded RTX 4090 table
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!{sys.executable}\nimport sys\nif sys.argv[1:]:\n    sys.exit(9)\n"
                   f"sys.stdout.write(open({str(RTX4090)!r}).read())\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "SLURM_"))}
    env.update(SLURM_CONF=str(conf), PATH=f"{bin_dir}:{env.get('PATH', '')}:/usr/sbin", PIP_CONFIG_FILE=os.devnull,
               PIP_NO_CACHE_DIR="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(root / "uv-cache"), CI="true")
    daemons: list[subprocess.Popen] = []
    commands: list[tuple[list[str], Path]] = [
        (["munged", "-F", "--force", f"--socket={munge}/munge.socket", f"--key-file={key}",
          f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log", f"--seed-file={munge}/seed"],
         munge / "out"),
        (["slurmctld", "-D", "-i"], root / "slurmctld.out"),
        (["slurmd", "-D", "-N", node], root / "slurmd.out"),
    ]
    try:
        for argv, log in commands:
            with open(log, "w") as out:
                daemons.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env))
            if argv[0] == "munged":
                wait_for("munged made no socket", (munge / "munge.socket").exists, 10, [log])
        logs = [root / "slurmctld.log", root / "slurmd.log", root / "slurmctld.out", root / "slurmd.out"]

        def idle() -> bool:
            state = subprocess.run(["sinfo", "--noheader", "--Node", "--format=%t"], env=env, capture_output=True,
                                   text=True, timeout=10)
            return state.stdout.strip() == "idle"

        wait_for("the node did not come up idle", idle, 30, logs)
        yield env, node, "gpu", root
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
        for daemon in reversed(daemons):
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(timeout=5)


@pytest.fixture(scope="module")
def cpu_index(tmp_path_factory):
    """The loopback index of the install tests: torch 2.13.0+cpu (a small built wheel) and its dependency."""
    root = tmp_path_factory.mktemp("slurm-index")
    wheels = root / "built"
    index = Index(root / "served")
    files = {"torch/__init__.py": "from . import version\n__version__ = '2.13.0+cpu'\n", "torch/version.py": "cuda = None\n"}
    index.add("whl/cpu", build_wheel(wheels / "cpu", "torch", "2.13.0+cpu", files, requires=("tinydep>=1.0",)))
    index.add("simple", build_wheel(wheels, "tinydep", "1.0", {"tinydep/__init__.py": ""}))
    server = index.start()
    yield index
    server.shutdown()


def envpin(*args, env, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def test_detect_solve_provision_verify_status_on_a_real_slurm_cluster(slurm, cpu_index, tmp_path):
    env, node, partition, root = slurm
    detected = envpin("fleet", "detect", "--slurm", "-o", "fleet.json", env=env, cwd=tmp_path)
    assert detected.returncode == 0, detected.stderr
    [facts] = json.loads((tmp_path / "fleet.json").read_text())["targets"]
    assert (facts["name"], facts["partition"]) == (node, partition)
    assert facts["driver"] == {"version": "580.65.06", "cuda": "13.0", "source": "nvidia-smi"}  # from srun's task
    assert [g["name"] for g in facts["gpus"]] == ["NVIDIA GeForce RTX 4090"]

    request = ["--spec", "torch==2.13.0+cpu", "--torch-index-url", f"{cpu_index.url}/whl"]
    solved = envpin("solve", "--targets", "fleet.json", *request, "--format", "json", env=env, cwd=tmp_path)
    assert solved.returncode == 0, solved.stderr
    [result] = json.loads(solved.stdout)["results"]
    assert result["targets"] == [node] and result["accelerator"] == "cpu"

    provisioned = envpin("fleet", "provision", "--slurm", "--targets", "fleet.json", *request, "--index-url",
                         f"{cpu_index.url}/simple", "-o", "out", "--prefix-root", str(tmp_path / "envs"),
                         env=env, cwd=tmp_path)
    assert provisioned.returncode == 0, provisioned.stderr
    script = tmp_path / "out" / partition / "provision.sbatch"
    text = script.read_text()  # a plain script a user can read and resubmit
    assert f"#SBATCH --partition={partition}" in text and f"#SBATCH --nodelist={node}" in text
    assert f"Resubmit with: sbatch {script}" in text
    assert "submitted" in provisioned.stderr
    report = tmp_path / "out" / "reports" / f"{node}.json"

    def finished() -> bool:
        queue = subprocess.run(["squeue", "--noheader"], env=env, capture_output=True, text=True, timeout=10)
        return report.exists() and queue.stdout.strip() == ""

    wait_for("the provision job did not finish", finished, 120,
             [*(tmp_path / "out" / partition).glob("provision-*.out"), root / "slurmd.log"])
    verified = json.loads(report.read_text())  # the real `envpin verify --format json` of the node
    assert verified["torch"]["version"] == "2.13.0+cpu"
    assert (tmp_path / "envs" / partition / "bin" / "python").exists()

    def status(*extra):
        return envpin("fleet", "status", "--targets", "fleet.json", *request, "--reports", "out/reports", *extra,
                      env=env, cwd=tmp_path)

    # The node has a GPU and the class was asked for the CPU build: verify says so, and status names the node.
    checked = status("--format", "json")
    assert checked.returncode == 1, checked.stderr
    [entry] = json.loads(checked.stdout)["classes"]
    assert entry["class"] == partition and entry["nodes"] == [node]
    assert entry["answer"]["requirements"][0] == "torch==2.13.0+cpu"
    assert entry["good"] == [] and entry["not_good"] == [node]
    assert entry["verify"][node] == {"status": "not ok", "why": [
        "torch 2.13.0+cpu is a CPU build, but this machine has an NVIDIA GPU (NVIDIA GeForce RTX 4090) and driver "
        "580.65.06: it cannot use the GPU"]}

    # The script resubmitted as written, with the node seen without a GPU (the stand-in nvidia-smi off PATH):
    # the same lock installs again and verifies OK.
    report.unlink()
    without_gpu = {**env, "PATH": env["PATH"].split(":", 1)[1]}
    resubmitted = subprocess.run(["sbatch", "--parsable", str(script)], env=without_gpu, capture_output=True,
                                 text=True, timeout=30)
    assert resubmitted.returncode == 0, resubmitted.stderr
    wait_for("the resubmitted job did not finish", finished, 120, [root / "slurmd.log"])
    good = status()
    assert good.returncode == 0, good.stdout
    assert f"good: {node}; not good: none" in good.stdout and good.stdout.endswith("fleet: OK\n")

    report.unlink()  # a node that never reported is not good
    missing = status()
    assert missing.returncode == 1 and f"{node}  no report" in missing.stdout
