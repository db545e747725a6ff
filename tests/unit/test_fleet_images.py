"""Dockerfiles per machine class: the base from the recorded tag lists, NVIDIA_REQUIRE_CUDA from the database,
and hadolint (the real linter, from the dev extras) clean."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.compat.drivers import minimum_driver
from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo
from envpin.fleet.images import Image, base_image, dockerfile, recorded_tags
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


def answer(database, machine_class, frameworks=("torch",), specs=(), conda_source="pip") -> Plan:
    request = parse_request(list(frameworks), list(specs), "minor", None, False, conda_source)
    plan = solve(database, make_target(database, machine_class.facts), request)
    assert isinstance(plan, Plan), plan
    return plan


def from_images(text: str) -> list[str]:
    return re.findall(r"^FROM (\S+)", text, flags=re.M)


def recorded_images() -> set[str]:
    tags = recorded_tags()
    return ({f"python:{t['tag']}" for t in tags["python"]["tags"]} | {f"nvidia/cuda:{t['tag']}" for t in tags["cuda"]["tags"]}
            | {f"mambaorg/micromamba:{t['tag']}" for t in tags["micromamba"]["tags"]})


def lint(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    assert HADOLINT, "hadolint is not installed: it comes with the dev dependency group (scripts/test, or pip install -e . --group dev)"
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    return subprocess.run([HADOLINT, "--no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_wheels_with_their_own_cuda_go_on_the_slim_python_image(database, tmp_path):
    machine_class = one_class("550.54.15", ("NVIDIA A100-SXM4-80GB", "8.0"))
    plan = answer(database, machine_class)
    text = dockerfile(Image(machine_class.name, plan, (machine_class,)), database, "minor")
    assert from_images(text) == ["python:3.11.14-slim-bookworm"]
    expected = minimum_driver(database, plan.builds["torch"].gpu_cuda, "linux", "minor")
    assert expected is not None
    assert f'NVIDIA_REQUIRE_CUDA="cuda>=12.0,driver>={expected.minimum}"' in text
    assert "uv pip sync --no-config --require-hashes" in text
    assert "envpin==" not in text and "COPY envpin_probe.py /opt/envpin/envpin_probe.py" in text  # no envpin from PyPI
    result = lint(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_tensorflow_before_2_14_goes_on_the_cuda_runtime_image_of_its_tested_cuda(database, tmp_path):
    machine_class = one_class("535.104.05", ("NVIDIA GeForce RTX 3090", "8.6"), python="3.10")
    plan = answer(database, machine_class, ("tensorflow",), ("tensorflow==2.13.*",))
    text = dockerfile(Image(machine_class.name, plan, (machine_class,)), database, "minor")
    assert from_images(text) == ["python:3.10.19-slim-bookworm", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"]
    assert "uv venv --no-config --python 3.10 /opt/env" in text  # the CUDA image has no Python: uv brings it
    assert 'NVIDIA_REQUIRE_CUDA="cuda>=11.0,driver>=450.80.02"' in text
    result = lint(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_a_cpu_class_asks_nothing_of_the_nvidia_runtime(database, tmp_path):
    machine_class = one_class(None, None, python="3.12", arch="aarch64")
    text = dockerfile(Image(machine_class.name, answer(database, machine_class), (machine_class,)), database, "minor")
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
        text = dockerfile(Image(machine_class.name, answer(database, machine_class, frameworks, specs), (machine_class,)), database, "minor")
        assert set(from_images(text)) <= images, text
    for source, frameworks, specs in [("conda-forge", ("torch",), ()), ("conda-forge", ("tensorflow",), ("tensorflow==2.13.*",)),
                                      ("pytorch-channel", ("torch",), ("torch==2.5.1",))]:
        machine_class = one_class("550.54.15", ("NVIDIA A100-SXM4-80GB", "8.0"), "3.11")
        text = dockerfile(Image(machine_class.name, answer(database, machine_class, frameworks, specs, source), (machine_class,)), database, "minor")
        assert set(from_images(text)) <= images, text


def test_no_recorded_base_is_a_refusal_not_a_guess(database):
    machine_class = one_class("535.104.05", ("NVIDIA GeForce RTX 3090", "8.6"), python="3.10")
    plan = answer(database, machine_class, ("tensorflow",), ("tensorflow==2.13.*",))
    tags = recorded_tags()
    with pytest.raises(EnvpinInputError, match="no recorded nvidia/cuda runtime tag"):
        base_image(plan, machine_class, {**tags, "cuda": {"tags": []}})
    with pytest.raises(EnvpinInputError, match="no recorded python slim image for Python 3.11"):
        base_image(answer(database, one_class(None, None)), one_class(None, None), {**tags, "python": {"tags": []}})
    conda_class = one_class(None, None, arch="aarch64")
    with pytest.raises(EnvpinInputError, match="no recorded mambaorg/micromamba image for aarch64"):
        only_amd64 = [{**t, "platforms": ["linux/amd64"]} for t in tags["micromamba"]["tags"]]
        base_image(answer(database, conda_class, conda_source="conda-forge"), conda_class,
                   {**tags, "micromamba": {"tags": only_amd64}})


def test_the_linter_finds_what_it_should(tmp_path):
    result = lint(tmp_path, "FROM python:3.11.14-slim-bookworm\nRUN pip install uv\n")
    assert result.returncode != 0 and "DL3013" in result.stdout  # an unpinned pip install


# ---------------------------------------------------------------- conda classes: micromamba installs the conda lock


def conda_stanza(text: str) -> list[str]:
    """The lines from the conda lock's COPY to the end."""
    lines = text.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("COPY conda-lock.yml")):]


MICROMAMBA = f"mambaorg/micromamba:{recorded_tags()['micromamba']['tags'][0]['tag']}"
MAMBA_USER = recorded_tags()["micromamba"]["tags"][0]["user"]


@pytest.mark.parametrize(("source", "frameworks", "specs", "cuda"), [
    ("conda-forge", ("torch",), (), "12"),  # pytorch cuda129: cuda-version 12.x from conda-forge
    ("conda-forge", ("tensorflow",), ("tensorflow==2.13.*",), "11"),  # before 2.14: cuda-version 11.x, conda packages
    ("pytorch-channel", ("torch",), ("torch==2.5.1",), "12"),  # pytorch-cuda 12.4 from the nvidia channel
])
def test_a_conda_class_goes_on_micromamba_and_installs_its_conda_lock(database, tmp_path, source, frameworks, specs,
                                                                     cuda):
    machine_class = one_class("550.54.15", ("NVIDIA A100-SXM4-80GB", "8.0"), python="3.11")
    plan = answer(database, machine_class, frameworks, specs, source)
    text = dockerfile(Image(machine_class.name, plan, (machine_class,)), database, "minor")
    assert from_images(text) == ["python:3.11.14-slim-bookworm", MICROMAMBA]  # uv from the first stage
    build = next(iter(plan.builds.values()))
    assert build.cuda is not None and build.cuda.startswith(cuda)
    expected = minimum_driver(database, build.cuda, "linux", "minor")
    assert expected is not None
    assert f'NVIDIA_REQUIRE_CUDA="cuda>={cuda}.0,driver>={expected.minimum}"' in text
    assert conda_stanza(text)[:5] == [
        "COPY conda-lock.yml /opt/envpin-lock/conda-lock.yml",
        "# The environment, exactly the lock (no solve), every package checked against its sha256; /opt is root's",
        "USER 0:0",
        "RUN micromamba create --yes --prefix /opt/env --file /opt/envpin-lock/conda-lock.yml \\",
        "    && micromamba clean --all --yes"]
    assert conda_stanza(text)[6] == "COPY envpin_probe.py /opt/envpin/envpin_probe.py"  # no envpin: its probe
    assert [line for line in text.splitlines() if line.startswith("USER ")][-1] == f"USER {MAMBA_USER}"
    assert "pip sync" not in text and "pylock" not in text
    result = lint(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_a_conda_cpu_class_asks_nothing_of_the_nvidia_runtime(database, tmp_path):
    machine_class = one_class(None, None, python="3.12")
    plan = answer(database, machine_class, conda_source="conda-forge")
    assert plan.accelerator == "cpu"
    text = dockerfile(Image(machine_class.name, plan, (machine_class,)), database, "minor")
    assert from_images(text)[-1] == MICROMAMBA and "NVIDIA_" not in text
    assert lint(tmp_path, text).returncode == 0
