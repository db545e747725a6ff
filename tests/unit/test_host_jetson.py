"""A Jetson's driver fact: the L4T release in /etc/nv_tegra_release (recorded lines: tests/fixtures/jetson/SOURCES.md),
through detection, the facts file and --jetpack, to the target's JetPack (gpus.yaml `jetpack:`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.facts.host import HostFacts, PythonInfo, from_json, to_json
from envpin.host import detect_host
from envpin.host.jetson import parse_nv_tegra_release
from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "jetson"


@pytest.mark.parametrize(("text", "l4t"), [
    ((FIXTURES / "nv_tegra_release-r32.7.1").read_text(encoding="utf-8"), "32.7.1"),
    ((FIXTURES / "nv_tegra_release-r35.3.1").read_text(encoding="utf-8"), "35.3.1"),
    ("# R36 (release), REVISION: 4.0, GCID: 1, BOARD: generic, EABI: aarch64, DATE: x\n# KERNEL_VARIANT: oot\n", "36.4.0"),
    ("# R36 (release), REVISION: 4\n", "36.4.0"),
    ("", None),
    ("R36 (release), REVISION: 4.0\n", None),  # not the file's form
    ("# R36 (beta), REVISION: 4.0\n", None),
    ("garbage\n# R36 (release), REVISION: 4.0\n", None),  # only the first line is the release
])
def test_parse_nv_tegra_release(text, l4t):
    assert parse_nv_tegra_release(text) == l4t


def test_detection_reads_the_file(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nv_tegra_release").write_bytes((FIXTURES / "nv_tegra_release-r35.3.1").read_bytes())
    facts = detect_host(environ={"PATH": ""}, fs_root=str(tmp_path), probe_environment=False)
    if facts.os != "linux":
        pytest.skip("the file is read on Linux only")
    assert facts.l4t == "35.3.1"
    assert from_json(json.loads(json.dumps(to_json(facts)))).l4t == "35.3.1"


@pytest.mark.parametrize(("given", "jetpack", "l4t", "says"), [
    ("6.1", "6.1", "36.4.0", "JetPack 6.1 (L4T 36.4.0)"),
    ("r36.4.0", "6.1", "36.4.0", "JetPack 6.1 (L4T 36.4.0)"),
    ("R35.4.1", "5.1.2", "35.4.1", "JetPack 5.1.2 (L4T 35.4.1)"),
    ("r32.7.1", "4.6.1", "32.7.1", "JetPack 4.6.1 (L4T 32.7.1)"),
    ("7.0", None, None, "JetPack 7.0"),  # not in the table: kept as given, and said
])
def test_jetpack_flag_names_the_release(database, given, jetpack, l4t, says):
    facts = HostFacts(os="linux", arch="aarch64", python=PythonInfo("3.10"))
    target = make_target(database, apply_overrides(facts, TargetOverrides(gpus=("Orin (nvgpu)",), jetpack=given)))
    assert (target.jetson.jetpack if target.jetson else None) == jetpack
    assert (target.jetson.l4t if target.jetson else None) == l4t
    assert says in target.describe()


@pytest.mark.parametrize("bad", ["6.x", "r36", "jetpack6", "r36.4.0.1"])
def test_bad_jetpack_is_one_line(bad):
    facts = HostFacts(os="linux", arch="aarch64", python=PythonInfo("3.10"))
    with pytest.raises(EnvpinInputError, match="--jetpack"):
        apply_overrides(facts, TargetOverrides(jetpack=bad))


def test_an_l4t_release_given_as_driver_points_to_jetpack():
    facts = HostFacts(os="linux", arch="aarch64", python=PythonInfo("3.10"))
    with pytest.raises(EnvpinInputError, match="--jetpack r32.7.1"):
        apply_overrides(facts, TargetOverrides(driver="32.7.1"))
