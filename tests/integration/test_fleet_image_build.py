"""The images `envpin fleet manifests --format dockerfile` writes, built without docker: the Dockerfile's own COPY and
RUN instructions carried out into a temporary root (every /opt/... path under it), its install commands run as they
are written (real uv against the loopback index, tests/integration/loopback_index.py), then envpin's probe run in the
environment they made, and its log judged by `envpin fleet status --reports`. What stands in for the base image: the
Python running these tests for the slim image's /usr/local/bin/python3, and the uv of this environment for the
`pip install uv==X` of the first RUN, whose version it must be.

The served wheels are tiny ones built here (build_wheel): a `torch` 2.13.0+cpu that is only a module with its
version, and a dependency of it; what is checked is the installing and the probing, not torch."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from uv import find_uv_bin

from envpin.base import _toml
from tests.integration.loopback_index import Index, build_wheel

PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
CPU_NODES = [{"name": f"cpu-{n}", "partition": "cpu", "os": "linux", "arch": "x86_64", "python": {"version": PYTHON}}
             for n in "ab"]


def envpin(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def clean_env(tmp_path: Path) -> dict[str, str]:
    """No pip or uv settings of this machine; uv's cache in the test's folder; uv found first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never", PIP_CONFIG_FILE=os.devnull,
               PATH=f"{Path(find_uv_bin()).parent}{os.pathsep}{env.get('PATH', '')}")
    return env


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the last stage, continuation lines joined, comments dropped."""
    joined: list[str] = []
    pending: list[str] = []
    for line in dockerfile.splitlines():
        if not pending and (not line.strip() or line.startswith("#")):
            continue
        pending.append(line.removesuffix("\\").strip())
        if not line.endswith("\\"):
            joined.append(" ".join(pending))
            pending = []
    stages: list[list[tuple[str, str]]] = []
    for line in joined:
        word, _, rest = line.partition(" ")
        if word == "FROM":
            stages.append([])
        stages[-1].append((word, rest.strip()))
    return stages[-1]


def build_as_dockerfile(folder: Path, root: Path, env: dict[str, str]) -> list[str]:
    """Carry out the Dockerfile in `folder` (the build context) into `root`; the RUN commands it ran."""
    ran = []
    for word, rest in instructions((folder / "Dockerfile").read_text()):
        if word == "COPY":
            source, target = shlex.split(rest)
            assert not source.startswith("--from"), rest  # the wheels image has one stage
            destination = root / target.lstrip("/")
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / source, destination)
        elif word == "RUN":
            if rest.startswith("pip install --no-cache-dir uv=="):  # the uv of this environment stands in for it
                assert rest.split("uv==", 1)[1] == metadata.version("uv")
                continue
            command = rest.replace("/opt/", f"{root}/opt/").replace("/usr/local/bin/python3", sys.executable)
            result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=300)
            assert result.returncode == 0, (command, result.stderr)
            ran.append(rest)
        else:
            assert word in ("FROM", "ENV", "USER"), (word, rest)
    return ran


def probe_in(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The image's verify Job's command (envpin.fleet.kubernetes.VERIFY), in the built root."""
    return subprocess.run([str(root / "opt/env/bin/python"), str(root / "opt/envpin/envpin_probe.py"), "--no-smoke"],
                          capture_output=True, text=True, env=env, timeout=300)


def served_index(tmp_path: Path) -> Index:
    index = Index(tmp_path / "served")
    files = {"torch/__init__.py": "__version__ = '2.13.0+cpu'\n"}
    index.add("whl/cpu", build_wheel(tmp_path / "built", "torch", "2.13.0+cpu", files, requires=("tinydep>=1.0",)))
    index.add("simple", build_wheel(tmp_path / "built", "tinydep", "1.0", {"tinydep/__init__.py": ""}))
    return index


def manifests(tmp_path: Path, index_url: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    (tmp_path / "fleet.json").write_text(json.dumps({"targets": CPU_NODES}))
    return envpin("fleet", "manifests", "--targets", "fleet.json", "--format", "dockerfile", "--spec", "torch==2.13.0+cpu",
                  "--torch-index-url", f"{index_url}/whl", "--index-url", f"{index_url}/simple", "-o", "images",
                  cwd=tmp_path, env=env)


def test_the_image_built_as_its_dockerfile_says_holds_the_lock_and_runs_the_probe(tmp_path):
    index = served_index(tmp_path)
    env = clean_env(tmp_path)
    server = index.start()
    try:
        result = manifests(tmp_path, index.url, env)
        assert result.returncode == 0, result.stderr
        folder = tmp_path / "images" / "cpu"
        assert sorted(p.name for p in folder.iterdir()) == ["Dockerfile", "envpin_probe.py", "facts.json", "pylock.toml"]
        assert result.stdout.startswith("== image cpu: class cpu; torch==2.13.0+cpu (cpu)\n"), result.stdout
        lock = _toml.loads((folder / "pylock.toml").read_text())
        torch = next(p for p in lock["packages"] if p["name"] == "torch")
        assert torch["wheels"][0]["hashes"]["sha256"] == index.hashes[index.projects["whl/cpu"]["torch"][0]]
        dockerfile = (folder / "Dockerfile").read_text()
        assert "envpin==" not in dockerfile and "nodes cpu-a, cpu-b" in dockerfile
        root = tmp_path / "root"
        ran = build_as_dockerfile(folder, root, env)
    finally:
        server.shutdown()
    assert ran == ["uv venv --no-config --python /usr/local/bin/python3 /opt/env && uv pip sync --no-config "
                   "--require-hashes --python /opt/env/bin/python /opt/envpin-lock/pylock.toml"]
    # the environment holds the lock, and nothing of envpin: the probe runs on the standard library alone
    probed = probe_in(root, env)
    assert probed.returncode == 0, probed.stderr
    document = json.loads(probed.stdout.split("@@envpin-probe@@", 1)[1])
    assert document["python"]["prefix"] == str(root / "opt" / "env")
    installed = document["packages"]["pip"]
    assert installed == {"torch": "2.13.0+cpu", "tinydep": "1.0"}, installed
    assert document["torch"]["import_ok"] and document["torch"]["version"] == "2.13.0+cpu", document["torch"]
    # each node's log, judged against the node's facts by fleet status
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "cpu-a.json").write_text(probed.stdout)
    (reports / "cpu-b.json").write_text(probed.stdout[:len(probed.stdout) // 2])  # a log cut short
    status = envpin("fleet", "status", "--targets", "fleet.json", "--spec", "torch==2.13.0+cpu", "--reports", "reports",
                    "--format", "json", cwd=tmp_path, env=env)
    [verified] = json.loads(status.stdout)["classes"]
    assert verified["good"] == ["cpu-a"] and verified["not_good"] == ["cpu-b"], verified
    assert verified["verify"]["cpu-b"]["why"] == ["the probe's log ends before its report"]
    assert verified["verify"]["cpu-a"]["why"][0].startswith("OK"), verified
    assert status.returncode == 1
    # the same log from a node with a GPU: judged against that node's facts, the CPU build is the problem
    gpu = {**CPU_NODES[0], "partition": "gpu", "driver": {"version": "550.54.14"},
           "gpus": [{"name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}]}
    (tmp_path / "gpu.json").write_text(json.dumps({"targets": [gpu]}))
    status = envpin("fleet", "status", "--targets", "gpu.json", "--reports", "reports", "--format", "json", cwd=tmp_path,
                    env=env)
    [judged] = json.loads(status.stdout)["classes"]
    assert judged["not_good"] == ["cpu-a"] and status.returncode == 1, judged
    assert "is a CPU build, but this machine has an NVIDIA GPU (NVIDIA GeForce RTX 3090" in \
        judged["verify"]["cpu-a"]["why"][0], judged


def test_a_wheel_that_is_not_the_locked_one_fails_the_build(tmp_path):
    index = served_index(tmp_path)
    env = clean_env(tmp_path)
    server = index.start()
    try:
        assert manifests(tmp_path, index.url, env).returncode == 0
        [wheel] = index.projects["simple"]["tinydep"]
        index.corrupted[wheel.name] = build_wheel(tmp_path / "other", "tinydep", "1.0", {"tinydep/__init__.py": "x = 1\n"})
        folder = tmp_path / "images" / "cpu"
        [(_, command)] = [i for i in instructions((folder / "Dockerfile").read_text()) if i[0] == "RUN"][1:]
        shutil.copytree(folder, tmp_path / "root" / "opt" / "envpin-lock")
        command = command.replace("/opt/", f"{tmp_path / 'root'}/opt/").replace("/usr/local/bin/python3", sys.executable)
        result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=env, timeout=300)
    finally:
        server.shutdown()
    assert result.returncode != 0 and re.search(r"hash", result.stderr, re.I), result.stderr


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_an_index_that_does_not_answer_writes_nothing(tmp_path):
    env = {**clean_env(tmp_path), "UV_HTTP_RETRIES": "0"}  # refused at once, not after uv's three retries
    result = manifests(tmp_path, f"http://127.0.0.1:{closed_port()}", env)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "unreachable" in result.stderr and not (tmp_path / "images").exists()


def gpu_node(name: str, gpu: str, capability: str, driver: str) -> dict:
    return {"name": name, "partition": name.split("-")[0], "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
            "driver": {"version": driver}, "gpus": [{"name": gpu, "compute_capability": capability}]}


V100 = gpu_node("v100-1", "Tesla V100-SXM2-16GB", "7.0", "560.35.03")


def images_of(tmp_path: Path, nodes: list[dict]) -> subprocess.CompletedProcess:
    (tmp_path / "fleet.json").write_text(json.dumps({"targets": nodes}))
    return envpin("fleet", "manifests", "--targets", "fleet.json", "--format", "dockerfile", "--no-lock", "-o", "images",
                  cwd=tmp_path)


def test_a_v100_and_an_a100_class_share_the_one_cu126_image(tmp_path):
    # driver 560 runs CUDA 12.6 builds and no newer: both classes' answer is the same cu126 build
    result = images_of(tmp_path, [V100, gpu_node("a100-1", "NVIDIA A100-SXM4-80GB", "8.0", "560.35.03")])
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.splitlines()
    assert line.startswith("== image v100-a100: classes v100, a100; torch==") and line.endswith("(cu126)"), line
    assert [p.name for p in (tmp_path / "images").iterdir()] == ["v100-a100"]
    dockerfile = (tmp_path / "images" / "v100-a100" / "Dockerfile").read_text()
    assert "machine classes v100 (nodes v100-1); a100 (nodes a100-1)" in dockerfile
    assert "docker build -t IMAGE:v100-a100 ." in dockerfile


def test_a_newer_driver_class_shares_the_build_that_also_runs_on_it(tmp_path):
    # alone, the A100 class on driver 580 gets a newer CUDA's build; the V100 class's cu126 build runs on both
    nodes = [V100, gpu_node("a100-1", "NVIDIA A100-SXM4-80GB", "8.0", "580.65.06")]
    (tmp_path / "fleet.json").write_text(json.dumps({"targets": nodes}))
    alone = json.loads(envpin("fleet", "status", "--targets", "fleet.json", "--format", "json", cwd=tmp_path).stdout)
    accelerators = {c["class"]: c["answer"]["accelerator"] for c in alone["classes"]}
    assert accelerators["v100"] == "cu126" and accelerators["a100"] != "cu126", accelerators
    result = images_of(tmp_path, nodes)
    assert result.returncode == 0, result.stderr
    image, shared = result.stdout.splitlines()
    assert image.startswith("== image v100-a100: classes v100, a100;") and image.endswith("(cu126)"), image
    assert shared.startswith("   class a100: its own answer is torch==") and \
        shared.endswith(f"({accelerators['a100']}); the build of class v100 runs on its nodes too"), shared


def test_classes_no_one_build_serves_get_their_own_images(tmp_path):
    cpu = {"name": "cpu-1", "partition": "cpu", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"}}
    other_python = {**V100, "name": "v100py-1", "partition": "v100py", "python": {"version": "3.12"}}
    result = images_of(tmp_path, [V100, cpu, other_python])
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "images").iterdir()) == ["cpu", "v100", "v100py"], result.stdout
