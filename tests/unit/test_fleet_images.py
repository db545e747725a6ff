"""Dockerfiles per machine class: the base from the recorded tag lists, NVIDIA_REQUIRE_CUDA from the database,
and hadolint (the real linter, from the dev extras) clean."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpin.compat.drivers import minimum_driver
from envpin.errors import EnvpinInputError
from envpin.facts import Driver, Gpu, HostFacts, PythonInfo
from envpin.fleet.images import base_image, dockerfile, recorded_tags
from envpin.fleet.nodes import ClusterNode, group_classes
from envpin.resolver.plan import Plan
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target

HADOLINT = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")


def one_class(driver: str | None, gpu: tuple[str, str] | None, python: str = "3.11", arch: str = "x86_64"):
    facts = HostFacts(os="linux", arch=arch, python=PythonInfo(python),
                      driver=Driver(driver, None, "override") if driver else None,
                      gpus=(Gpu(0, gpu[0], gpu[1]),) if gpu else ())
    [machine_class] = group_classes([ClusterNode("node-1", facts, "pool-a")])
    return machine_class


def answer(database, machine_class, frameworks=("torch",), specs=()) -> Plan:
    plan = solve(database, make_target(database, machine_class.facts), parse_request(list(frameworks), list(specs)))
    assert isinstance(plan, Plan), plan
    return plan


def from_images(text: str) -> list[str]:
    return re.findall(r"^FROM (\S+)", text, flags=re.M)


def recorded_images() -> set[str]:
    tags = recorded_tags()
    return {f"python:{t['tag']}" for t in tags["python"]["tags"]} | {f"nvidia/cuda:{t['tag']}" for t in tags["cuda"]["tags"]}


def lint(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    assert HADOLINT, "hadolint is not installed: it comes with the dev extras (pip install -e '.[dev]')"
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    return subprocess.run([HADOLINT, "--no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_wheels_with_their_own_cuda_go_on_the_slim_python_image(database, tmp_path):
    machine_class = one_class("550.54.15", ("NVIDIA A100-SXM4-80GB", "8.0"))
    plan = answer(database, machine_class)
    text = dockerfile(plan, machine_class, database, "minor")
    assert from_images(text) == ["python:3.11.14-slim-bookworm"]
    expected = minimum_driver(database, plan.builds["torch"].gpu_cuda, "linux", "minor")
    assert expected is not None
    assert f'NVIDIA_REQUIRE_CUDA="cuda>=12.0,driver>={expected.minimum}"' in text
    assert "uv pip sync --no-config --require-hashes" in text
    result = lint(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_tensorflow_before_2_14_goes_on_the_cuda_runtime_image_of_its_tested_cuda(database, tmp_path):
    machine_class = one_class("535.104.05", ("NVIDIA GeForce RTX 3090", "8.6"), python="3.10")
    plan = answer(database, machine_class, ("tensorflow",), ("tensorflow==2.13.*",))
    text = dockerfile(plan, machine_class, database, "minor")
    assert from_images(text) == ["python:3.10.19-slim-bookworm", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"]
    assert "uv venv --no-config --python 3.10 /opt/env" in text  # the CUDA image has no Python: uv brings it
    assert 'NVIDIA_REQUIRE_CUDA="cuda>=11.0,driver>=450.80.02"' in text
    result = lint(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_a_cpu_class_asks_nothing_of_the_nvidia_runtime(database, tmp_path):
    machine_class = one_class(None, None, python="3.12", arch="aarch64")
    text = dockerfile(answer(database, machine_class), machine_class, database, "minor")
    assert from_images(text) == ["python:3.12.12-slim-bookworm"] and "NVIDIA_" not in text
    assert lint(tmp_path, text).returncode == 0


def test_every_base_image_comes_from_the_recorded_lists(database):
    images = recorded_images()
    for driver, gpu, python, frameworks, specs in [
        ("550.54.15", ("NVIDIA A100-SXM4-80GB", "8.0"), "3.12", ("torch",), ()),
        ("470.82.01", ("Tesla V100-SXM2-16GB", "7.0"), "3.10", ("torch",), ()),
        ("535.104.05", ("NVIDIA GeForce RTX 3090", "8.6"), "3.10", ("tensorflow",), ("tensorflow==2.11.*",)),
        ("535.104.05", ("NVIDIA GeForce RTX 3090", "8.6"), "3.11", ("jax",), ()),
    ]:
        machine_class = one_class(driver, gpu, python)
        text = dockerfile(answer(database, machine_class, frameworks, specs), machine_class, database, "minor")
        assert set(from_images(text)) <= images, text


def test_no_recorded_base_is_a_refusal_not_a_guess(database):
    machine_class = one_class("535.104.05", ("NVIDIA GeForce RTX 3090", "8.6"), python="3.10")
    plan = answer(database, machine_class, ("tensorflow",), ("tensorflow==2.13.*",))
    tags = recorded_tags()
    with pytest.raises(EnvpinInputError, match="no recorded nvidia/cuda runtime tag"):
        base_image(plan, machine_class, {**tags, "cuda": {"tags": []}})
    with pytest.raises(EnvpinInputError, match="no recorded python slim image for Python 3.11"):
        base_image(answer(database, one_class(None, None)), one_class(None, None), {**tags, "python": {"tags": []}})


def test_the_linter_finds_what_it_should(tmp_path):
    result = lint(tmp_path, "FROM python:3.11.14-slim-bookworm\nRUN pip install uv\n")
    assert result.returncode != 0 and "DL3013" in result.stdout  # an unpinned pip install
