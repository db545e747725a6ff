"""pixi.lock: real locks of every version pixi writes (tests/fixtures/locks/SOURCES.md), judged per environment
on the platform pixi chooses for the target."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from envpin.check import check_text
from envpin.check.formats import kind_of
from envpin.check.pixi_lock import chosen_platforms, for_target, parse
from envpin.check.targets import configured_target
from envpin.machine.spec import NamedTarget, TargetSpec

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "tests" / "fixtures" / "conda" / "pixi-pytorch-example" / "pixi.lock"  # version 5
LOCKS = REPO / "tests" / "fixtures" / "locks" / "pixi"
DB = REPO / "tests" / "fixtures" / "compat_db" / "2026.12.01"


def machine(database, **fields):
    return configured_target(NamedTarget("target", TargetSpec(detect=False, **fields)), database)


RTX_4090 = {"os": "linux", "arch": "x86_64", "driver": "550.54.14", "gpus": ("NVIDIA GeForce RTX 4090",),
            "python": "3.12"}
GTX_1080_TI = {"os": "linux", "arch": "x86_64", "driver": "470.82.01", "gpus": ("NVIDIA GeForce GTX 1080 Ti",),
               "python": "3.12"}


def check(database, path: Path, **target):
    targets = [machine(database, **target)] if target else []
    return check_text(str(path), path.read_text(encoding="utf-8"), load_database=lambda: database, targets=targets)


def test_the_name_pixi_lock_is_its_own_kind():
    assert kind_of("sub/pixi.lock", "version: 6\n") == "pixi.lock"


def test_every_lock_version_is_read_into_the_packages_of_each_environment_and_platform():
    example = parse(EXAMPLE.read_text(encoding="utf-8"))
    assert not example.problems
    assert {(p.environment, p.name) for p in example.environments} == {
        ("cf-channel", "linux-64"), ("cf-channel", "linux-aarch64"), ("cf-channel", "osx-64"),
        ("cf-channel", "osx-arm64"), ("nvidia-channel", "linux-64"), ("pytorch-channel", "linux-64")}
    torches = {(p.where, p.build, p.index) for p in example.pins if p.name == "torch" and "linux-64" in p.where}
    assert ("environments.cf-channel.packages.linux-64[63]", "cuda120_py312h26b3cf7_301", "conda-forge") in torches
    assert ("environments.pytorch-channel.packages.linux-64[63]", "py3.12_cuda12.4_cudnn9.1.0_0", "pytorch") in torches
    # version 4 (kind: pypi records), 6 (name, version and build derived from the URL), 7 (named platforms)
    v4 = parse((LOCKS / "v4-pypi-matplotlib" / "pixi.lock").read_text(encoding="utf-8"))
    assert not v4.problems and any(p.name == "matplotlib" and p.manager == "pip" and p.version for p in v4.pins)
    v6 = parse((LOCKS / "v6-detectron2" / "pixi.lock").read_text(encoding="utf-8"))
    assert not v6.problems
    assert ("torch", "2.8.0", "cpu_mkl_py313_h19d87ba_102") in {(p.name, p.version, p.build) for p in v6.pins}
    v7 = parse((LOCKS / "v7-multi-machine" / "pixi.lock").read_text(encoding="utf-8"))
    assert not v7.problems
    assert {(p.name, p.subdir, p.cuda) for p in v7.environments} == {
        ("linux-64", "linux-64", None), ("p1", "win-64", "12"), ("p2", "linux-64", "12"), ("p3", "osx-arm64", None),
        ("win-64", "win-64", None)}


def test_the_pytorch_example_is_clean_on_a_driver_550_rtx_4090(database):
    assert check(database, EXAMPLE, **RTX_4090).problems == ()


def test_the_pytorch_example_needs_a_newer_driver_on_a_driver_470_gtx_1080_ti(database):
    report = check(database, EXAMPLE, **GTX_1080_TI)
    drivers = [p for p in report.problems if p.id == "CHK-TARGET-DRIVER"]
    assert report.errors and {p.id for p in report.problems} == {"CHK-TARGET-DRIVER"}
    # each CUDA environment, named with the platform pixi installs there, and the driver it needs
    assert {p.where.split(".")[1] for p in drivers} == {"cf-channel", "pytorch-channel", "nvidia-channel"}
    assert all(".packages.linux-64[" in p.where and "525.60.13" in p.message + p.fix for p in drivers)
    cf_torch = next(p for p in drivers if p.where == "environments.cf-channel.packages.linux-64[63]")
    assert "environment cf-channel, linux-64" in cf_torch.message and "470.82.01" in cf_torch.message


def test_an_environment_not_locked_for_the_targets_subdir_is_said(database):
    aarch64 = check(database, EXAMPLE, os="linux", arch="aarch64", driver="550.54.14", gpus=("NVIDIA GH200 480GB",),
                    python="3.12")
    refused = sorted((p.where, p.severity) for p in aarch64.problems if p.id == "CHK-TARGET-PLATFORM")
    assert refused == [("environments.nvidia-channel", "warning"), ("environments.pytorch-channel", "warning")]
    windows = check(database, EXAMPLE, os="windows", arch="x86_64", driver="552.44", gpus=("NVIDIA GeForce RTX 4090",),
                    python="3.12")
    assert {(p.id, p.severity) for p in windows.problems} == {("CHK-TARGET-PLATFORM", "error")}


def test_a_version_7_lock_is_judged_on_the_platform_pixi_selects_by_its_virtual_packages():
    lock = parse((LOCKS / "v7-multi-machine" / "pixi.lock").read_text(encoding="utf-8"))

    def chosen(subdir: str, driver_cuda: int | None) -> str:
        picked, refused = chosen_platforms(lock, subdir, lambda cuda: driver_cuda is not None
                                           and driver_cuda >= int(cuda.split(".")[0]))
        assert not refused
        return picked["default"].name

    assert chosen("win-64", 12) == "p1"  # `__cuda=12` holds: the CUDA platform
    assert chosen("win-64", None) == "win-64"  # no driver: pixi drops p1 and takes the plain win-64
    assert chosen("linux-64", 12) == "p2" and chosen("linux-64", 11) == "linux-64"
    assert chosen("osx-arm64", None) == "p3"
    # the judged lock keeps only the chosen platform's pins of each environment
    kept, _ = for_target(lock, "on x", "win-64", lambda cuda: True, lambda cuda: "")
    assert {p.where.split(".")[3].split("[")[0] for p in kept.pins} == {"p1"}


def test_an_environment_locked_only_for_a_cuda_platform_needs_that_driver(database):
    # constructed: a version 7 lock whose only linux-64 platform declares __cuda=12 (as pixi writes a
    # `{ name = "cuda", platform = "linux-64", cuda = "12" }` workspace platform)
    text = (LOCKS / "v7-multi-machine" / "pixi.lock").read_text(encoding="utf-8")
    only_cuda = text.replace("- name: linux-64\n  virtual-packages:", "- name: unused\n  subdir: linux-32\n  virtual-packages:")
    only_cuda = only_cuda.replace("      linux-64:\n", "      unused:\n")
    report = check_text("pixi.lock", only_cuda, load_database=lambda: database,
                        targets=[machine(database, **GTX_1080_TI)])
    refused = [p for p in report.problems if p.where == "environments.default"]
    assert [(p.id, p.severity) for p in refused] == [("CHK-TARGET-DRIVER", "error")]
    assert "__cuda=12" in refused[0].message and "525.60.13" in refused[0].fix


def test_lock_shapes_pixi_refuses_are_reported_not_raised():
    old = parse("version: 3\nmetadata: {}\npackage: []\n")
    assert [(p.id, p.severity) for p in old.problems] == [("CHK-STRUCTURE", "warning")]
    dangling = parse("version: 6\nenvironments:\n  default:\n    channels: []\n    packages:\n      linux-64:\n"
                     "      - conda: https://conda.anaconda.org/conda-forge/linux-64/x-1-h_0.conda\npackages: []\n")
    assert [p.where for p in dangling.problems] == ["environments.default.packages.linux-64[0]"]
    bad_hash = parse("version: 6\nenvironments: {}\npackages:\n"
                     "- conda: https://conda.anaconda.org/conda-forge/linux-64/x-1-h_0.conda\n  sha256: abc\n")
    assert [p.id for p in bad_hash.problems] == ["CHK-HASH-MALFORMED"]


def test_check_takes_the_targets_of_tool_envpin_for_a_pixi_lock(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[[tool.envpin.targets]]\nname = "old workstation"\nos = "linux"\narch = "x86_64"\n'
                      'driver = "470.82.01"\ngpu = "NVIDIA GeForce GTX 1080 Ti"\n\n'
                      '[[tool.envpin.targets]]\nname = "new workstation"\nos = "linux"\narch = "x86_64"\n'
                      'driver = "550.54.14"\ngpu = "NVIDIA GeForce RTX 4090"\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envpin", "check", "--db", str(DB), "--config", str(config),
                           str(EXAMPLE)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert "on old workstation" in done.stdout and "on new workstation" not in done.stdout
    assert "environments.cf-channel.packages.linux-64[63]: error CHK-TARGET-DRIVER" in done.stdout


def test_an_environment_whose_packages_need_cuda_is_refused_on_a_machine_without_a_driver(database):
    report = check(database, EXAMPLE, os="linux", arch="x86_64", driver="none", python="3.12")
    refused = [p for p in report.problems if p.severity == "error"]
    # conda-forge's CUDA pytorch depends on `__cuda`: pixi will not install cf-channel there; the pytorch
    # channel's builds do not, so those environments install (and run on the CPU: a warning)
    assert [(p.id, p.where) for p in refused] == [("CHK-TARGET-DRIVER", "environments.cf-channel.packages.linux-64[63]")]
    assert "pixi refuses to install it" in refused[0].message and "__cuda" in refused[0].message
