"""`envpin fleet manifests --format dockerfile --lock`: each class locked now (real uv against the loopback index; a
conda class by rattler against the offline channels of the conda tests), the lock beside the Dockerfile that
installs it with hashes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envpin.base import _toml
from tests.integration.loopback_index import Index, build_wheel


def test_each_class_is_locked_beside_its_dockerfile(tmp_path):
    index = Index(tmp_path / "served")
    files = {"torch/__init__.py": "__version__ = '2.13.0+cpu'\n"}
    index.add("whl/cpu", build_wheel(tmp_path / "built", "torch", "2.13.0+cpu", files, requires=("tinydep>=1.0",)))
    index.add("simple", build_wheel(tmp_path / "built", "tinydep", "1.0", {"tinydep/__init__.py": ""}))
    server = index.start()
    try:
        python = f"{sys.version_info[0]}.{sys.version_info[1]}"
        fleet = [{"name": "cpu-a", "partition": "cpu", "os": "linux", "arch": "x86_64", "python": {"version": python}},
                 {"name": "cpu-b", "partition": "cpu", "os": "linux", "arch": "x86_64", "python": {"version": python}}]
        (tmp_path / "fleet.json").write_text(json.dumps({"targets": fleet}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
        env.update(UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never", PIP_CONFIG_FILE=os.devnull)
        result = subprocess.run([sys.executable, "-m", "envpin", "fleet", "manifests", "--targets", "fleet.json",
                                 "--format", "dockerfile", "--lock", "--spec", "torch==2.13.0+cpu", "--torch-index-url",
                                 f"{index.url}/whl", "--index-url", f"{index.url}/simple", "-o", "images"],
                                capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "images" / "cpu"
    lock = _toml.loads((folder / "pylock.toml").read_text())
    torch = next(p for p in lock["packages"] if p["name"] == "torch")
    wheel = index.projects["whl/cpu"]["torch"][0]
    assert torch["version"] == "2.13.0+cpu" and torch["wheels"][0]["hashes"]["sha256"] == index.hashes[wheel]
    dockerfile = (folder / "Dockerfile").read_text()
    assert "COPY pylock.toml /opt/envpin-lock/pylock.toml" in dockerfile and "NVIDIA_" not in dockerfile
    assert "nodes cpu-a, cpu-b." in dockerfile


REPO = Path(__file__).resolve().parents[2]
CONDA_FIXTURES = REPO / "tests" / "fixtures" / "conda"  # where each file comes from: SOURCES.md there
A100_NODE = {"name": "gpu-1", "partition": "a100", "os": "linux", "arch": "x86_64", "python": {"version": "3.12"},
             "driver": {"version": "530.30.02"}, "gpus": [{"name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]}
# (no libc, as a Kubernetes node list: the image's packages are solved for glibc 2.28, pixi's and conda-lock's default)


def manifests(tmp_path, *extra):
    (tmp_path / "fleet.json").write_text(json.dumps({"targets": [A100_NODE]}))
    return subprocess.run([sys.executable, "-m", "envpin", "fleet", "manifests", "--targets", "fleet.json", "--format",
                           "dockerfile", "--conda-source", "conda-forge", "--spec", "torch==2.4.0", "-o", "images",
                           "--channels", str(CONDA_FIXTURES / "lock-derived"), *extra],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_a_conda_class_is_locked_with_its_checksums_beside_its_dockerfile(tmp_path):
    rattler = pytest.importorskip("rattler", reason="py-rattler (envpin[conda]) is not installed")
    result = manifests(tmp_path, "--lock")
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "images" / "a100"
    assert sorted(p.name for p in folder.iterdir()) == ["Dockerfile", "conda-lock.yml", "environment.yml", "facts.json"]
    assert "  - pytorch=2.4.0=cuda120*\n" in (folder / "environment.yml").read_text()
    text = (folder / "conda-lock.yml").read_text()
    assert "__glibc=2.28=0" in text.splitlines()[1] and "__cuda=12.1=0" in text.splitlines()[1]  # the driver's CUDA
    document = yaml.safe_load(text)
    assert document["version"] == 1 and document["metadata"]["platforms"] == ["linux-64"]
    for package in document["package"]:  # what micromamba checks each download against
        assert set(package["hash"]) == {"md5", "sha256"}, package["name"]
        assert package["url"].startswith("https://conda.anaconda.org/conda-forge/"), package["url"]  # not the local folder
    # The same packages as the real pixi.lock's conda-forge CUDA 12.1 environment the channels were derived from,
    # read back by rattler.
    def files(path, name):
        environment = rattler.LockFile.from_path(path).environment(name)
        platform = next(p for p in environment.platforms() if p.name == "linux-64")
        return {Path(str(r.url)).name for r in environment.conda_repodata_records_for_platform(platform)}

    assert files(folder / "conda-lock.yml", "default") == files(CONDA_FIXTURES / "pixi-pytorch-example" / "pixi.lock",
                                                                "cf-channel")
    dockerfile = (folder / "Dockerfile").read_text()
    assert "COPY conda-lock.yml /opt/envpin-lock/conda-lock.yml" in dockerfile
    assert "--file /opt/envpin-lock/conda-lock.yml" in dockerfile and 'NVIDIA_REQUIRE_CUDA="cuda>=12.0,' in dockerfile


def test_without_lock_the_note_is_the_command_that_locks_it(tmp_path):
    pytest.importorskip("rattler", reason="py-rattler (envpin[conda]) is not installed")
    result = manifests(tmp_path)
    assert result.returncode == 0, result.stderr
    [note] = [line for line in result.stderr.splitlines() if line.startswith("envpin: note: lock class a100")]
    words = shlex.split(note.split("before building: ", 1)[1])
    assert words[:3] == ["envpin", "conda", "lock"] and words[-2:] == ["--channels", str(CONDA_FIXTURES / "lock-derived")]
    locked = subprocess.run([sys.executable, "-m", *words], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert locked.returncode == 0, locked.stderr
    assert (tmp_path / "images" / "a100" / "conda-lock.yml").is_file()


def test_a_conda_class_with_pip_requirements_is_refused_in_one_line(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("torch==2.4.0\nrequests==2.32.3\n")
    result = manifests(tmp_path, "--project", str(project))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "its conda environment has a pip: section" in result.stderr and "requests==2.32.3" in result.stderr
    assert not (tmp_path / "images").exists()
