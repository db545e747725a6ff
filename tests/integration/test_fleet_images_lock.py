"""`envpin fleet manifests --format dockerfile` for a conda class: its conda lock solved in the same run (rattler
against the offline channels of the conda tests), beside the Dockerfile that installs it with checksums. A pip
class's lock, and its image built as the Dockerfile says: test_fleet_image_build.py."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

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
    result = manifests(tmp_path)
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "images" / "a100"
    assert sorted(p.name for p in folder.iterdir()) == ["Dockerfile", "conda-lock.yml", "environment.yml", "envpin_probe.py",
                                                        "facts.json"]
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


def test_with_no_lock_the_note_is_the_command_that_locks_it(tmp_path):
    pytest.importorskip("rattler", reason="py-rattler (envpin[conda]) is not installed")
    result = manifests(tmp_path, "--no-lock")
    assert result.returncode == 0, result.stderr
    [note] = [line for line in result.stderr.splitlines() if line.startswith("envpin: note: lock image a100")]
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
