"""The facts a wheel's tags carry: the glibc a manylinux wheel needs, free-threaded CPython, musl.

The facts come from tests/fixtures/pypi-metadata/wheel-tags.json, the tag triples of every wheel file of each
release as PyPI's simple API listed them on the day it was read (scripts/record-wheel-tags), and, for the builds
download.pytorch.org serves, from the file names of tests/fixtures/torch_index/snapshot.json (public copies of that
index's listings, each row naming its source); the database's wheel_tags.yaml is derived from both, and a test holds
them together.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.version import Version

from envpin.facts.host import HostFacts, Libc, PythonInfo
from envpin.refresh.wheel_tags import glibc_floor, index_builds, index_source_id, release_tags, wheel_tags_yaml
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((REPO / "tests" / "fixtures" / "pypi-metadata" / "wheel-tags.json").read_text(encoding="utf-8"))
INDEX = json.loads((REPO / "tests" / "fixtures" / "torch_index" / "snapshot.json").read_text(encoding="utf-8"))
RTX4090 = "NVIDIA GeForce RTX 4090"


@pytest.mark.parametrize(("tag", "glibc"), [
    ("manylinux1_x86_64", "2.5"), ("manylinux2010_x86_64", "2.12"), ("manylinux2014_aarch64", "2.17"),
    ("manylinux_2_17_x86_64", "2.17"), ("manylinux_2_28_aarch64", "2.28"), ("manylinux_2_27_x86_64", "2.27"),
    ("linux_x86_64", None), ("win_amd64", None), ("macosx_11_0_arm64", None), ("musllinux_1_2_x86_64", None),
])
def test_glibc_floor_of_a_platform_tag(tag, glibc):
    assert glibc_floor(tag) == glibc


def test_release_tags_from_the_recorded_files():
    torch_271 = release_tags(SNAPSHOT["projects"]["torch"]["2.7.1"])
    assert torch_271.glibc == {"linux-x86_64": "2.28", "linux-aarch64": "2.28"}
    assert torch_271.free_threaded["linux-x86_64"] == ("3.13",)
    assert torch_271.musllinux == ()
    # 2.6.0: aarch64 moved to manylinux_2_28 a release before x86_64 did
    assert release_tags(SNAPSHOT["projects"]["torch"]["2.6.0"]).glibc == {"linux-x86_64": "2.5", "linux-aarch64": "2.28"}
    # a file with two tags (manylinux2014 = manylinux_2_17) is installable on the lower one
    assert release_tags(SNAPSHOT["projects"]["tensorflow"]["2.20.0"]).glibc["linux-x86_64"] == "2.17"
    assert release_tags(SNAPSHOT["projects"]["tensorflow"]["2.21.0"]).glibc["linux-x86_64"] == "2.27"
    jaxlib = release_tags(SNAPSHOT["projects"]["jax"]["0.7.1"])
    assert jaxlib.glibc == {"linux-x86_64": "2.27", "linux-aarch64": "2.17"}


def test_the_database_file_is_the_recorded_read():
    """wheel_tags.yaml is written from the snapshot, never by hand: the two cannot drift apart."""
    written = (REPO / "data" / "compat_matrix" / "wheel_tags.yaml").read_text(encoding="utf-8")
    assert written == wheel_tags_yaml(SNAPSHOT, INDEX)


def test_index_builds_from_the_recorded_index_files():
    """The PyTorch index's own files carry their own tags: 2.6.0+cu126 (astral-sh/uv#14540's uv.lock) is
    manylinux_2_28 on x86_64 where PyPI's 2.6.0 is manylinux1; +cpu and 2.5.1's builds are linux_x86_64 (no glibc
    named); a page's file without a local version (2.5.1 on whl/cu124 for aarch64) is that page's build."""
    builds = {(b.version, b.variant): b for b in index_builds(INDEX)}
    assert builds[("2.6.0", "cu126")].glibc == {"linux-x86_64": "2.28"}
    assert builds[("2.6.0", "cu126")].pythons["linux-x86_64"] == ("3.12",)
    assert builds[("2.6.0", "cpu")].any_glibc == ("linux-x86_64",)
    assert builds[("2.6.0", "cpu")].glibc == {"linux-aarch64": "2.28"}
    assert builds[("2.5.1", "cu118")].any_glibc == ("linux-x86_64",) and not builds[("2.5.1", "cu118")].glibc
    assert builds[("2.5.1", "cu124")].any_glibc == ("linux-x86_64", "linux-aarch64")
    assert builds[("2.7.1", "cu128")].glibc == {"linux-x86_64": "2.28"}
    assert builds[("2.6.0", "cu126")].sources == ("uv-14540",)
    assert index_source_id("https://download.pytorch.org/whl/cu126/torch/ read 2026-12-02") == (
        "torch-index-download-pytorch-org-whl-cu126-torch-read-2026-12-02")


def test_the_database_holds_the_index_builds(live_database):
    build = live_database.index_build_tags("torch", Version("2.6.0"), "cu126")
    assert build is not None and build.glibc == {"linux-x86_64": "2.28"}
    assert build.provenance.sources == ("torch-index-uv-14540",)
    assert live_database.index_build_tags("torch", Version("2.6.0"), "cu118") is None  # not read


def test_every_release_of_the_database_is_recorded(live_database):
    recorded = {(t.framework, t.version) for t in live_database.wheel_tags}
    held = ({("torch", str(r.version)) for r in live_database.torch_releases}
            | {("tensorflow", str(r.version)) for r in live_database.tensorflow_releases})
    assert held <= recorded, sorted(held - recorded)


@dataclass
class Case:
    id: str
    fact: str
    framework: str
    expect: str  # the framework's pin, or !code
    glibc: str | None = None
    python: str = "3.11"
    arch: str = "x86_64"
    libc: str = "glibc"
    specs: tuple[str, ...] = ()


CASES = [
    Case("centos7-torch", "2.7.0 on are manylinux_2_28, and so are the index's 2.6.0+cu126 files: 2.6.0's cu124 "
         "build (PyPI's, manylinux1) is the newest for glibc 2.17", "torch", "2.6.0", glibc="2.17"),
    Case("centos7-torch-2.6.0+cu126", "asked for the index's 2.6.0+cu126 on glibc 2.17: refused, the tag named",
         "torch", "!unsupported-platform", glibc="2.17", specs=("torch==2.6.0+cu126",)),
    Case("centos7-torch-2.5.1+cu118", "the index's 2.5.1+cu118 files are linux_x86_64: they install on glibc 2.17",
         "torch", "2.5.1+cu118", glibc="2.17", specs=("torch==2.5.1+cu118",)),
    Case("centos7-torch-2.7.1", "asked for 2.7.1 on glibc 2.17: refused, the tag named", "torch",
         "!unsupported-platform", glibc="2.17", specs=("torch==2.7.1",)),
    Case("glibc-2.28-torch", "glibc 2.28 meets manylinux_2_28: the newest release", "torch", "2.14.1+cu126",
         glibc="2.28"),
    Case("centos7-aarch64", "torch's aarch64 wheels moved to manylinux_2_28 in 2.6.0: 2.5.1 on glibc 2.17",
         "torch", "2.5.1", glibc="2.17", arch="aarch64"),
    Case("alpine", "no torch release has a musllinux wheel", "torch", "!unsupported-platform", libc="musl"),
    Case("centos7-tensorflow", "tensorflow 2.21 is manylinux_2_27: 2.20.0 (manylinux2014) on glibc 2.17",
         "tensorflow", "2.20.0", glibc="2.17"),
    Case("centos7-jax", "jaxlib's x86_64 wheels are manylinux_2_27 from 0.7.1: jax 0.7.0 on glibc 2.17",
         "jax", "0.7.0", glibc="2.17"),
    Case("free-threaded-3.13t", "cp313t torch wheels end at 2.12.0 (2.12.1 and later: cp314t only)", "torch",
         "2.12.0+cu126", python="3.13t"),
    Case("free-threaded-3.14t", "2.14.1 has cp314t wheels", "torch", "2.14.1+cu126", python="3.14t"),
    Case("free-threaded-3.12t", "no torch release has a cp312t wheel", "torch", "!python-unsupported",
         python="3.12t"),
]


def run_case(database, case: Case) -> Plan | Unsatisfiable:
    libc = Libc(case.libc, case.glibc if case.libc == "glibc" else None)
    facts = HostFacts(os="linux", arch=case.arch, python=PythonInfo(case.python), libc=libc)
    overrides = TargetOverrides(driver="550.54.14", gpus=(RTX4090,) if case.arch == "x86_64" else ())
    if case.arch != "x86_64":
        overrides = TargetOverrides(driver="none")
    target = make_target(database, apply_overrides(facts, overrides))
    return solve(database, target, parse_request([case.framework], list(case.specs), "minor"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_wheel_tags_decide_the_solve(database, case):
    answer = run_case(database, case)
    if case.expect.startswith("!"):
        assert isinstance(answer, Unsatisfiable), f"{case.fact}: got {answer.packages[0].version}"
        assert answer.code == case.expect[1:], f"{case.fact}: {answer.message}"
        return
    assert isinstance(answer, Plan), f"{case.fact}: {answer.code}: {answer.message}"
    pin = next(p for p in answer.packages if p.name == case.framework)
    assert pin.version == case.expect, case.fact


def test_the_refusal_names_the_tag_and_the_release_that_installs(database):
    answer = run_case(database, next(c for c in CASES if c.id == "centos7-torch-2.7.1"))
    assert isinstance(answer, Unsatisfiable)
    assert "manylinux_2_28" in answer.message and "glibc 2.17" in answer.message
    assert any("2.6.0" in fix for fix in answer.fixes), answer.fixes


def test_the_answer_names_the_index_files_that_decided(database):
    """glibc 2.17, an RTX 4090: 2.6.0's newest CUDA build (+cu126) is passed over for its own files' tag, and the
    answer says so; the build chosen is PyPI's, whose tags were read, so nothing about tags is in doubt."""
    answer = run_case(database, CASES[0])
    assert isinstance(answer, Plan)
    assert any("2.6.0+cu126 was passed over" in r and "manylinux_2_28" in r for r in answer.reasons), answer.reasons
    assert not any("were not read" in w for w in answer.warnings), answer.warnings


def test_a_refused_index_build_moves_to_the_build_that_installs(database):
    answer = run_case(database, CASES[1])
    assert isinstance(answer, Unsatisfiable)
    assert "on the PyTorch index" in answer.message and "manylinux_2_28" in answer.message
    assert "as read for Python 3.12" in answer.message  # the target's 3.11 file was not among those read
    assert any("torch==2.6.0 (cu124)" in fix for fix in answer.fixes), answer.fixes


def test_an_index_build_whose_files_were_not_read_says_so(database):
    """2.6.0+cu118's files on the index were not read: judged by PyPI's 2.6.0 tags, and the plan says so."""
    answer = run_case(database, Case("cu118", "", "torch", "", glibc="2.17", specs=("torch==2.6.0+cu118",)))
    assert isinstance(answer, Plan)
    assert any("the PyTorch index's cu118 files of torch 2.6.0 were not read" in w for w in answer.warnings), (
        answer.warnings)
    read = run_case(database, CASES[2])
    assert isinstance(read, Plan)
    assert any("linux_x86_64, which names no glibc" in r for r in read.reasons), read.reasons


def test_a_glibc_past_every_floor_says_nothing_of_tags(database):
    """glibc 2.39 meets every recorded floor: no reason or doubt about tags, as before the tags were recorded."""
    answer = run_case(database, Case("new", "", "torch", "", glibc="2.39"))
    assert isinstance(answer, Plan)
    assert not any("glibc" in text for text in (*answer.reasons, *answer.warnings))


def test_cli_glibc_flag_and_free_threaded_python():
    base = ["solve", "--framework", "torch", "--os", "linux", "--arch", "x86_64", "--driver", "550.54.14",
            "--gpu", RTX4090, "--format", "json"]
    old = subprocess.run([sys.executable, "-m", "envpin", *base, "--python", "3.11", "--glibc", "2.17"],
                         capture_output=True, text=True, timeout=60)
    assert old.returncode == 0, old.stderr
    assert json.loads(old.stdout)["packages"][0]["version"] == "2.6.0"
    free = subprocess.run([sys.executable, "-m", "envpin", *base, "--python", "3.12t"],
                          capture_output=True, text=True, timeout=60)
    assert free.returncode == 1
    assert json.loads(free.stdout)["error"]["code"] == "python-unsupported"
    bad = subprocess.run([sys.executable, "-m", "envpin", *base, "--python", "3.11", "--glibc", "two"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--glibc" in bad.stdout + bad.stderr


def test_a_configured_target_and_a_facts_file_carry_the_c_library_and_the_abi(tmp_path, database):
    from envpin.base.errors import EnvpinInputError  # noqa: PLC0415
    from envpin.check.config import read_config  # noqa: PLC0415 - the test of one reader

    (tmp_path / "pyproject.toml").write_text(
        '[[tool.envpin.targets]]\nname = "centos7"\nos = "linux"\narch = "x86_64"\ndriver = "550.54.14"\n'
        'gpu = "NVIDIA GeForce RTX 4090"\npython = "3.11"\nglibc = "2.17"\n', encoding="utf-8")
    config = read_config(tmp_path / "pyproject.toml")
    target = config.targets[0].spec.resolve(database)
    assert target.glibc == "2.17" and not target.free_threaded
    (tmp_path / "bad.toml").write_text('[[tool.envpin.targets]]\nos = "linux"\narch = "x86_64"\ndriver = "none"\n'
                                       'glibc = "two"\n', encoding="utf-8")
    with pytest.raises(EnvpinInputError, match="glibc"):
        read_config(tmp_path / "bad.toml")
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.13.1t"), libc=Libc("musl", None))
    target = make_target(database, facts)
    assert target.python == "3.13" and target.free_threaded and target.musl and target.glibc is None


def test_detection_reads_the_free_threaded_abi_flag(monkeypatch):
    from envpin.host import platform_info  # noqa: PLC0415 - the probe under test

    monkeypatch.setattr(platform_info.sys, "abiflags", "t", raising=False)
    assert platform_info.python_info({}).version.endswith("t")
    monkeypatch.setattr(platform_info.sys, "abiflags", "", raising=False)
    monkeypatch.setattr(platform_info.os, "name", "posix")
    assert not platform_info.python_info({}).version.endswith("t")


def test_a_glibc_that_decides_is_spelled_out_in_the_regenerate_line(tmp_path):
    """A file made for glibc 2.17 says --glibc 2.17 in its regenerate line, which makes the same file again; a
    glibc past every floor is left out, as it decides nothing."""
    base = ["solve", "--framework", "torch", "--os", "linux", "--arch", "x86_64", "--driver", "550.54.14",
            "--gpu", RTX4090, "--python", "3.11"]
    first = tmp_path / "requirements-gpu.txt"
    made = subprocess.run([sys.executable, "-m", "envpin", *base, "--glibc", "2.17", "-o", str(first)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    text = first.read_text(encoding="utf-8")
    regenerate = next(line for line in text.splitlines() if line.startswith("# Regenerate: envpin "))
    assert "--glibc 2.17" in regenerate and "torch==2.6.0\n" in text
    again = tmp_path / "again.txt"
    argv = shlex.split(regenerate[len("# Regenerate: envpin "):])
    redone = subprocess.run([sys.executable, "-m", "envpin", *argv, "-o", str(again)], capture_output=True, text=True,
                            timeout=60)
    assert redone.returncode == 0, redone.stderr
    assert again.read_text(encoding="utf-8") == text.replace(str(first), str(again))
    new = subprocess.run([sys.executable, "-m", "envpin", *base, "--glibc", "2.39", "--format", "requirements.txt"],
                         capture_output=True, text=True, timeout=60)
    assert new.returncode == 0 and "--glibc" not in new.stdout
