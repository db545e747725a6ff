"""A real Slurm cluster of two nodes in two partitions on this one host (Debian's slurmctld and munged, and two
slurmd, one per node: `slurmd -N NODE`, each node with its own `Port` in a minimal slurm.conf; all started here
in a temporary folder and stopped after). Each node's GPU is given by a stand-in `nvidia-smi` on PATH that
prints a recorded real output, chosen by the node the task runs on (`SLURMD_NODENAME`, which slurmd sets for
every task): a V100 on one node, an H100 on the other. `envpin fleet detect --slurm` through srun → two
classes → `envpin solve --targets` → `envpin fleet provision --slurm` through sbatch (a CPU torch from the
loopback index), one job per class → `envpin verify` on each node → `envpin fleet status` per class.

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
HOST_FIXTURES = REPO / "tests" / "fixtures" / "host"
NODES = {  # node -> (partition, its recorded nvidia-smi table, the GPU name detection reads from it)
    "v100-node": ("v100", HOST_FIXTURES / "smi_table_525.105.17_linux_v100.txt", "Tesla V100-SXM2..."),
    "h100-node": ("h100", HOST_FIXTURES / "smi_table_590.48.01_linux_h100.txt", "NVIDIA H100 80GB HBM3"),
}
SLURM_TOOLS = ("munged", "slurmctld", "slurmd", "sinfo", "srun", "sbatch", "squeue")
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"

# slow: starts a real single-node Slurm cluster; one xdist worker runs the module, so its shared fixtures are made once
pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="Slurm runs on Linux"), pytest.mark.slow, pytest.mark.xdist_group("slurm")]



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
    """(environment with SLURM_CONF and the stand-in nvidia-smi on PATH, folder): the nodes of NODES, up and idle."""
    missing = [tool for tool in SLURM_TOOLS if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin") is None]
    if missing:
        pytest.fail(f"the Slurm packages are not installed ({', '.join(missing)} missing): "
                    "apt-get install -y slurm-wlm munge (.ci/run does this)")
    if os.geteuid() != 0:
        pytest.fail("the Slurm test starts slurmd, which runs jobs as their user and needs root: run it as root (CI does)")
    root = Path(tmp_path_factory.mktemp("slurm"))
    host = socket.gethostname().split(".")[0]
    munge = root / "munge"
    munge.mkdir(mode=0o711)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = root / "slurm.conf"
    # Several slurmd on one host: each node names this host (NodeHostname) and has a port of its own; the
    # slurmd files name their node (%n), and each slurmd is started as its node (-N).
    nodes = [f"NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 Port={free_port()} CPUs=1 State=UNKNOWN"
             for node in NODES]
    partitions = [f"PartitionName={partition} Nodes={node} MaxTime=INFINITE State=UP"
                  for node, (partition, _, _) in NODES.items()]
    conf.write_text("\n".join([
        "ClusterName=envpintest", f"SlurmctldHost={host}(127.0.0.1)", "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={free_port()}",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={munge}/munge.socket",
        f"StateSaveLocation={root}/state", f"SlurmdSpoolDir={root}/spool/%n",
        f"SlurmctldPidFile={root}/slurmctld.pid", f"SlurmdPidFile={root}/slurmd-%n.pid",
        f"SlurmctldLogFile={root}/slurmctld.log", f"SlurmdLogFile={root}/slurmd-%n.log",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "MpiDefault=none", "ReturnToService=2",
        "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
        *nodes, *partitions, ""]))
    (root / "state").mkdir()
    (root / "spool").mkdir()
    bin_dir = root / "bin"  # each node's GPU: a stand-in nvidia-smi printing that node's recorded table
    bin_dir.mkdir()
    tables = {node: str(table) for node, (_, table, _) in NODES.items()}
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!{sys.executable}\nimport os, sys\ntables = {tables!r}\n"
                   "table = tables.get(os.environ.get('SLURMD_NODENAME', ''))\n"
                   "if sys.argv[1:] or table is None:\n    sys.exit(9)\n"
                   "sys.stdout.write(open(table).read())\n")
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
        *((["slurmd", "-D", "-N", node], root / f"slurmd-{node}.out") for node in NODES),
    ]
    try:
        for argv, log in commands:
            with open(log, "w") as out:
                daemons.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env))
            if argv[0] == "munged":
                wait_for("munged made no socket", (munge / "munge.socket").exists, 10, [log])
        logs = [root / "slurmctld.log", root / "slurmctld.out", *root.glob("slurmd-*")]

        def idle() -> bool:
            state = subprocess.run(["sinfo", "--noheader", "--Node", "--format=%N %t"], env=env, capture_output=True,
                                   text=True, timeout=10)
            return sorted(state.stdout.split()) == sorted([*NODES, *["idle"] * len(NODES)])

        wait_for("the nodes did not come up idle", idle, 30, logs)
        yield env, root
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


def test_two_node_classes_detect_solve_provision_verify_status_on_a_real_slurm_cluster(slurm, cpu_index, tmp_path):
    env, root = slurm
    detected = envpin("fleet", "detect", "--slurm", "-o", "fleet.json", env=env, cwd=tmp_path)
    assert detected.returncode == 0, detected.stderr
    targets = {facts["name"]: facts for facts in json.loads((tmp_path / "fleet.json").read_text())["targets"]}
    assert set(targets) == set(NODES)
    for node, (partition, _, gpu) in NODES.items():  # each node's facts from its own srun task
        assert targets[node]["partition"] == partition
        assert [g["name"] for g in targets[node]["gpus"]] == [gpu], node
        assert targets[node]["driver"]["source"] == "nvidia-smi"
    assert targets["v100-node"]["driver"]["version"] == "525.105.17"
    assert targets["h100-node"]["driver"]["version"] == "590.48.01"

    # Two classes, and each its own answer: the V100's driver 525 stops at CUDA 12, the H100's 590 runs CUDA 13.
    solved = envpin("solve", "--targets", "fleet.json", "--python", PYTHON, "--format", "json", env=env, cwd=tmp_path)
    assert solved.returncode == 0, solved.stderr
    answers = {tuple(r["targets"]): r["accelerator"] for r in json.loads(solved.stdout)["results"]}
    assert set(answers) == {("v100-node",), ("h100-node",)}
    assert answers[("v100-node",)].startswith("cu12") and answers[("h100-node",)].startswith("cu13")

    request = ["--spec", "torch==2.13.0+cpu", "--torch-index-url", f"{cpu_index.url}/whl"]
    provisioned = envpin("fleet", "provision", "--slurm", "--targets", "fleet.json", *request, "--index-url",
                         f"{cpu_index.url}/simple", "-o", "out", "--prefix-root", str(tmp_path / "envs"),
                         env=env, cwd=tmp_path)
    assert provisioned.returncode == 0, provisioned.stderr
    scripts = {}
    for node, (partition, _, _) in NODES.items():  # one plain script per class, each for its own node
        scripts[partition] = tmp_path / "out" / partition / "provision.sbatch"
        text = scripts[partition].read_text()
        assert f"#SBATCH --partition={partition}" in text and f"#SBATCH --nodelist={node}\n" in text
        assert f"Resubmit with: sbatch {scripts[partition]}" in text
    assert provisioned.stderr.count("submitted") == 2
    reports = tmp_path / "out" / "reports"

    def finished() -> bool:
        queue = subprocess.run(["squeue", "--noheader"], env=env, capture_output=True, text=True, timeout=10)
        return all((reports / f"{node}.json").exists() for node in NODES) and queue.stdout.strip() == ""

    wait_for("the provision jobs did not finish", finished, 120,
             [*(tmp_path / "out").glob("*/provision-*.out"), *root.glob("slurmd-*.log")])
    for node, (partition, _, _) in NODES.items():
        verified = json.loads((reports / f"{node}.json").read_text())  # the real `envpin verify --format json`
        assert verified["torch"]["version"] == "2.13.0+cpu"
        assert (tmp_path / "envs" / partition / "bin" / "python").exists()

    def status(*extra):
        return envpin("fleet", "status", "--targets", "fleet.json", *request, "--reports", "out/reports", *extra,
                      env=env, cwd=tmp_path)

    # Each node has a GPU and its class was asked for the CPU build: verify says so on each, and status names
    # each node, in its own class, with its own GPU and driver.
    checked = status("--format", "json")
    assert checked.returncode == 1, checked.stderr
    classes = {entry["class"]: entry for entry in json.loads(checked.stdout)["classes"]}
    assert set(classes) == {"v100", "h100"}
    for node, (partition, _, gpu) in NODES.items():
        entry = classes[partition]
        assert entry["nodes"] == [node] and entry["answer"]["requirements"][0] == "torch==2.13.0+cpu"
        assert entry["good"] == [] and entry["not_good"] == [node]
        driver = targets[node]["driver"]["version"]
        assert entry["verify"][node] == {"status": "not ok", "why": [
            f"torch 2.13.0+cpu is a CPU build, but this machine has an NVIDIA GPU ({gpu}) and driver {driver}: it "
            "cannot use the GPU"]}

    # The V100 class's script resubmitted as written, with its node seen without a GPU (the stand-in nvidia-smi
    # off PATH): the same lock installs again and verifies OK there, and only that class turns good.
    (reports / "v100-node.json").unlink()
    without_gpu = {**env, "PATH": env["PATH"].split(":", 1)[1]}
    resubmitted = subprocess.run(["sbatch", "--parsable", str(scripts["v100"])], env=without_gpu, capture_output=True,
                                 text=True, timeout=30)
    assert resubmitted.returncode == 0, resubmitted.stderr
    wait_for("the resubmitted job did not finish", finished, 120, [*root.glob("slurmd-*.log")])
    mixed = status()
    assert mixed.returncode == 1, mixed.stdout
    v100_block = mixed.stdout.split("class v100 (v100)", 1)[1].split("\nclass ", 1)[0]
    h100_block = mixed.stdout.split("class h100 (h100)", 1)[1].split("\nclass ", 1)[0]
    assert "good: v100-node; not good: none" in v100_block
    assert "good: none; not good: h100-node" in h100_block and "NVIDIA H100 80GB HBM3" in h100_block
    assert mixed.stdout.endswith("fleet: NOT OK\n")

    (reports / "h100-node.json").unlink()  # a node that never reported is not good
    missing = status()
    assert missing.returncode == 1 and "h100-node  no report" in missing.stdout
