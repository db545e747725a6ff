"""envpin.vocabulary: one spelling of each platform key, PyTorch variant tag and framework name, and the code that
reads them through it (the doctor, the schema, check, the resolver, the lock, conda and the verify probe)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.markers import Marker

from envpin.base.errors import EnvpinInputError
from envpin.compat.loader import validate_database
from envpin.conda import backends
from envpin.conda.virtual import CONDA_SUBDIRS, conda_subdir
from envpin.doctor.engine import diagnose
from envpin.doctor.model import Case
from envpin.facts.host import env_facts_from_json, from_json
from envpin.lock.engines import UV_PLATFORMS
from envpin.lock.pylock import PLATFORM_MARKERS
from envpin.provision.check import frameworks_in
from envpin.readers.variants import CONDA_SUBDIRS as PLATFORM_OF_SUBDIR
from envpin.readers.variants import cuda_major_of_variant, index_variant, local_variant, wheel_platform
from envpin.refresh.metadata import environment
from envpin.refresh.wheels import platform_of
from envpin.resolver.queries import allowed_kinds
from envpin.resolver.request import parse_request
from envpin.resolver.target import Target, make_target
from envpin.verify.run import parse_probe_output
from envpin.vocabulary import frameworks, platforms, variants
from envpin.vocabulary.platforms import PLATFORMS, platform_key
from envpin.vocabulary.variants import is_database_tag, is_tag, parse_tag

REPO = Path(__file__).resolve().parents[2]
MACHINES = REPO / "tests" / "fixtures" / "doctor" / "machines"
PROBE = REPO / "envpin" / "verify" / "probe.py"

# ---------------------------------------------------------------- platforms


@pytest.mark.parametrize("os_name, arch, key", [
    ("linux", "x86_64", "linux-x86_64"),
    ("linux", "aarch64", "linux-aarch64"),
    ("linux", "arm64", "linux-aarch64"),  # a valid facts file may say arm64 on Linux
    ("linux", "ARM64", "linux-aarch64"),
    ("linux", "amd64", "linux-x86_64"),
    ("macos", "arm64", "macos-arm64"),
    ("macos", "aarch64", "macos-arm64"),
    ("macos", "x86_64", "macos-x86_64"),
    ("windows", "x86_64", "windows-x86_64"),
    ("windows", "AMD64", "windows-x86_64"),
    ("windows", "arm64", "windows-arm64"),
    ("windows", "aarch64", "windows-arm64"),
])
def test_platform_key_has_one_spelling_per_platform(os_name, arch, key):
    assert platform_key(os_name, arch) == key


@pytest.mark.parametrize("os_name, arch, key", [
    ("linux", "arm64", "linux-aarch64"), ("linux", "aarch64", "linux-aarch64"), ("macos", "aarch64", "macos-arm64"),
    ("windows", "aarch64", "windows-arm64"), ("linux", "x86_64", "linux-x86_64"),
])
def test_the_target_of_a_facts_file_has_the_platform_key(os_name, arch, key, database):
    document = json.loads((MACHINES / "linux-no-nvidia.json").read_text(encoding="utf-8"))
    document.update(os=os_name, arch=arch)
    if os_name != "linux":
        document["libc"] = None
    target = make_target(database, from_json(document, origin="test"))
    assert target.platform == key


def test_every_database_platform_is_a_key_of_its_own_facts(database):
    os_arch = [platforms.split_key(p) for p in PLATFORMS]
    assert [platform_key(os_name, arch) for os_name, arch in os_arch] == list(PLATFORMS)
    assert all(os_name in platforms.OPERATING_SYSTEMS and arch in platforms.ARCHITECTURES for os_name, arch in os_arch)
    recorded = {p for r in database.torch_releases for p in r.python} | {p for r in database.torch_releases for p in r.pypi}
    assert recorded <= set(PLATFORMS)


def test_each_platform_marker_holds_on_its_platform_only():
    assert set(PLATFORMS) <= set(PLATFORM_MARKERS)
    for platform, text in PLATFORM_MARKERS.items():
        marker = Marker(text)
        assert [p for p in PLATFORM_MARKERS if marker.evaluate(platforms.MARKER_ENVIRONMENTS[p])] == [platform]
    for platform in PLATFORMS:  # refresh evaluates wheel METADATA markers in the same environments
        assert Marker(PLATFORM_MARKERS[platform]).evaluate(environment(platform, "3.12"))


def test_uv_locks_for_every_platform_key_a_target_can_have():
    assert set(PLATFORMS) | {platforms.WINDOWS_ARM64} <= set(UV_PLATFORMS)
    assert UV_PLATFORMS[platform_key("linux", "arm64")] == "aarch64-unknown-linux-gnu"
    assert UV_PLATFORMS[platform_key("windows", "aarch64")] == "aarch64-pc-windows-msvc"


def test_conda_subdirs_both_ways():
    assert CONDA_SUBDIRS == {"linux-x86_64": "linux-64", "linux-aarch64": "linux-aarch64", "windows-x86_64": "win-64",
                             "macos-arm64": "osx-arm64", "macos-x86_64": "osx-64"}
    assert {subdir: platform for platform, subdir in CONDA_SUBDIRS.items()} == PLATFORM_OF_SUBDIR
    target = Target(os="linux", arch="arm64", python="3.11", driver=None, driver_cuda=None, gpus=())
    assert conda_subdir(target) == "linux-aarch64"


@pytest.mark.parametrize("system, machine, subdir", [
    ("Linux", "x86_64", "linux-64"), ("Linux", "aarch64", "linux-aarch64"), ("Linux", "arm64", "linux-aarch64"),
    ("Darwin", "arm64", "osx-arm64"), ("Darwin", "x86_64", "osx-64"), ("Windows", "AMD64", "win-64"),
    ("Windows", "ARM64", "win-arm64"), ("Linux", "ppc64le", "linux-ppc64le"),
])
def test_the_native_conda_subdir(monkeypatch, system, machine, subdir):
    monkeypatch.setattr(backends.host_platform, "system", lambda: system)
    monkeypatch.setattr(backends.host_platform, "machine", lambda: machine)
    assert backends.native_subdir() == subdir


@pytest.mark.parametrize("tag, platform", [
    ("manylinux_2_28_x86_64", "linux-x86_64"), ("manylinux2014_aarch64", "linux-aarch64"), ("win_amd64", "windows-x86_64"),
    ("macosx_11_0_arm64", "macos-arm64"), ("macosx_10_15_x86_64", "macos-x86_64"),
])
def test_wheel_platform_tags_read_as_platform_keys(tag, platform):
    assert wheel_platform(tag) == platform
    assert platform_of(tag) == (platform,)


# ---------------------------------------------------------------- the doctor on a facts file that says arm64


def _case(database, os_name: str, arch: str, pip: dict, python: dict | None = None, error_text: str = ""):
    machine = "linux-h100-590.48.01" if os_name == "linux" else "linux-no-nvidia"
    document = json.loads((MACHINES / f"{machine}.json").read_text(encoding="utf-8"))
    document.update(os=os_name, arch=arch)
    if os_name != "linux":
        document["libc"] = None
    document["python"] = {**document["python"], **(python or {})}
    document["packages"] = {"pip": pip, "conda": {}}
    document = json.loads(json.dumps(document))  # what a facts file holds
    return Case(host=from_json(document, origin="test"), env=env_facts_from_json(document, origin="test"),
                database=database, error_text=error_text)


@pytest.mark.parametrize("arch", ["arm64", "aarch64"])
def test_the_doctor_finds_pypis_aarch64_torch_for_a_linux_arm64_facts_file(database, arch):
    assert database.torch_release("2.5.1").pypi["linux-aarch64"] == "cpu"
    diagnosis = diagnose(_case(database, "linux", arch, {"torch": "2.5.1"}))
    first = diagnosis.findings[0]
    assert first.id == "TORCH-CPU-WHEEL", [f.to_json() for f in diagnosis.findings]
    assert any("PyPI's torch 2.5.1 for linux-aarch64 is the CPU build" in line for line in first.evidence)


NO_TORCH = ("ERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)\n"
            "ERROR: No matching distribution found for torch==2.1.0\n")
PYTHON_313 = {"version": "3.13.1", "executable": "/home/me/.venv/bin/python", "prefix": "/home/me/.venv",
              "base_prefix": "/usr", "env_type": "venv", "bits": 64}


@pytest.mark.parametrize("os_name, arch, platform", [
    ("linux", "arm64", "linux-aarch64"), ("linux", "aarch64", "linux-aarch64"),
    ("macos", "aarch64", "macos-arm64"), ("macos", "arm64", "macos-arm64"),
])
def test_the_doctor_reads_the_database_records_of_the_platform_key(database, os_name, arch, platform):
    pythons = database.torch_release("2.1.0").python[platform]
    diagnosis = diagnose(_case(database, os_name, arch, {"pip": "24.3.1"}, PYTHON_313, NO_TORCH))
    first = diagnosis.findings[0]
    assert first.id == "PIP-NO-TORCH-FOR-PLATFORM"
    assert f"torch 2.1.0 has {platform} wheels for Python {', '.join(pythons)}; this is Python 3.13" in first.evidence
    assert any(f"use Python {pythons[-1]}" in line for line in first.fix)


# ---------------------------------------------------------------- variant tags


@pytest.mark.parametrize("text, kind, version, cuda_major", [
    ("cpu", "cpu", None, None),
    ("cu124", "cuda", "12.4", "12"),
    ("cu118", "cuda", "11.8", "11"),
    ("cu102", "cuda", "10.2", "10"),
    ("cu130", "cuda", "13.0", "13"),
    ("cu92", "cuda", "9.2", "9"),  # torch 1.x: PyTorch's index served cu80 … cu92 (two digits)
    ("cu80", "cuda", "8.0", "8"),
    ("rocm6.2", "rocm", "6.2", None),
    ("rocm6.2.4", "rocm", "6.2.4", None),
    ("rocm5.1.1", "rocm", "5.1.1", None),
    ("rocm6", "rocm", "6", None),
    ("xpu", "xpu", None, None),
])
def test_a_variant_tag_parses(text, kind, version, cuda_major):
    tag = parse_tag(text)
    assert tag is not None
    assert (tag.name, tag.kind, tag.version, tag.cuda_major) == (text, kind, version, cuda_major)
    assert variants.kind_of(text) == kind
    assert variants.cuda_of(text) == (version if kind == "cuda" else None)
    assert tag.rocm == (version if kind == "rocm" else None)
    if kind == "cuda":
        assert variants.cuda_tag(version) == text  # the tag and its CUDA version are one fact


@pytest.mark.parametrize("text", [None, "", "cu", "cu1", "cu1234", "cuda12", "cu12a", "CU124", "rocm", "rocm6.",
                                  "rocm6..2", "cpu ", "cpu\n", "mps", "cu124.post1", "rocm6.2-1", "xpu1", "cpux"])
def test_what_is_no_variant_tag(text):
    assert parse_tag(text) is None and not is_tag(text) and variants.kind_of(text) is None
    assert variants.cuda_of(text) is None and not is_database_tag(text)


@pytest.mark.parametrize("cuda, tag", [("12.4", "cu124"), ("13.0", "cu130"), ("11.8", "cu118"), ("9.2", "cu92"), (None, "cpu")])
def test_the_tag_of_a_cuda_version(cuda, tag):
    assert variants.tag_for(cuda) == tag


@pytest.mark.parametrize("text, recorded", [
    ("cpu", True), ("cu124", True), ("cu102", True), ("cu92", True), ("rocm6.2", True), ("rocm6.2.4", True),
    ("xpu", True), ("rocm6", False), ("rocm6.2.4.1", False),
])
def test_the_databases_stricter_rule(text, recorded):
    assert is_tag(text)
    assert is_database_tag(text) is recorded


def _candidates():
    digits = ["", "1", "12", "124", "1240"]
    words = [f"cu{d}" for d in digits] + ["cpu", "xpu", "CPU", "cuda12", "mps"]
    words += [f"rocm{v}" for v in ["", "6", "6.", "6.2", "6.2.4", "6.2.4.1", "10.0", ".2"]]
    return words + [w + suffix for w in words for suffix in ("\n", " ", "x")]


def test_the_tags_the_old_patterns_accepted_are_the_tags_now():
    # The two patterns this module replaced: check's (any tag PyTorch served) and the schema's (what the database
    # records). Anchored with `$`, both also took a trailing newline; a tag now is the whole string.
    check = re.compile(r"^(cpu|cu\d{2,3}|rocm\d+(?:\.\d+)*|xpu)$")
    schema = re.compile(r"^(cpu|cu\d{2,3}|rocm\d+(\.\d+){1,2}|xpu)$")  # xpu: the xpu.yaml builds; cu90/cu92: torch 1.x
    for text in _candidates():
        assert is_tag(text) == bool(check.match(text) and not text.endswith("\n")), text
        assert is_database_tag(text) == bool(schema.match(text) and not text.endswith("\n")), text


def test_every_variant_in_the_database_is_one_its_name_says(database):
    for release in database.torch_releases:
        for name, variant in release.variants.items():
            tag = parse_tag(name)
            assert tag is not None and is_database_tag(name), f"torch {release.version} {name}"
            assert tag.kind == variant.kind and tag.cuda == variant.cuda, f"torch {release.version} {name}"


def test_the_schema_refuses_a_tag_the_database_does_not_record(db_copy):
    path = db_copy / "torch.yaml"
    text = path.read_text(encoding="utf-8")
    assert "      cu102:\n" in text
    path.write_text(text.replace("      cu102:\n", "      rocm6:\n", 1), encoding="utf-8")
    problems = validate_database(db_copy)
    assert any("'rocm6' is not a variant name" in p for p in problems), problems


def test_check_reads_the_older_tags_the_database_does_not_record():
    assert local_variant("1.0.0+cu92") == "cu92" and cuda_major_of_variant("cu92") == "9"
    assert local_variant("2.5.1+xpu") == "xpu" and cuda_major_of_variant("xpu") is None
    assert local_variant("2.5.1+cu124.post1") is None and local_variant("2.5.1") is None
    assert index_variant("https://download.pytorch.org/whl/rocm6.2.4") == "rocm6.2.4"
    assert index_variant("https://download.pytorch.org/whl/cu118/torch_stable.html") == "cu118"


@pytest.mark.parametrize("spec, kinds", [
    ("torch==2.5.1+cu121", {"cuda"}), ("torch==2.5.1+rocm6.2", {"rocm"}), ("torch==2.5.1+cpu", {"cpu"}),
    ("torchvision==0.20.1+cu124", {"cuda"}), ("torch==2.5.1+xpu", {"xpu"}),
])
def test_a_variant_named_in_a_spec_decides_the_kind_of_build(database, spec, kinds):
    target = Target(os="linux", arch="x86_64", python="3.11", driver=None, driver_cuda=None, gpus=())
    assert allowed_kinds(database, target, parse_request(["torch"], [spec]), "torch") == frozenset(kinds)


# ---------------------------------------------------------------- frameworks


def test_the_frameworks_and_their_packages():
    assert frameworks.FRAMEWORKS == tuple(frameworks.PACKAGES)
    assert all(frameworks.PACKAGES[f][0] == f for f in frameworks.FRAMEWORKS)  # the framework's own package first
    assert frameworks.COMPANIONS == ("torchvision", "torchaudio") and frameworks.TORCH_FAMILY == ("torch", *frameworks.COMPANIONS)
    assert frameworks.PACKAGE_ORDER == ("torch", "torchvision", "torchaudio", "tensorflow", "jax")
    assert {p: frameworks.FRAMEWORK_OF[p] for p in frameworks.PACKAGE_ORDER} == frameworks.FRAMEWORK_OF
    assert frameworks.PINNED_FRAMEWORK_OF == {**frameworks.FRAMEWORK_OF, "tensorflow-cpu": "tensorflow",
                                             "tensorflow-rocm": "tensorflow"}


@pytest.mark.parametrize("given, framework", [("torch", "torch"), ("PyTorch", "torch"), ("tf", "tensorflow"),
                                              ("TensorFlow", "tensorflow"), ("jax", "jax"), ("keras", None), ("torchvision", None)])
def test_framework_names_and_aliases(given, framework):
    assert frameworks.framework_named(given) == framework


def test_a_request_pins_the_frameworks_packages_in_order():
    request = parse_request(["jax", "pytorch"], ["tensorflow>=2.16"])
    assert request.packages == ("torch", "torchvision", "torchaudio", "tensorflow", "jax")
    assert request.solved_frameworks == ("torch", "tensorflow", "jax")
    with pytest.raises(EnvpinInputError, match="envpin solves: torch, tensorflow, jax"):
        parse_request(["keras"], [])
    with pytest.raises(EnvpinInputError, match=r"envpin pins torch, torchvision, torchaudio, tensorflow, jax \(and bounds numpy\); not keras"):
        parse_request([], ["keras"])


def test_an_environment_check_imports_the_pinned_frameworks():
    document = {"packages": [{"name": "tensorflow-cpu"}, {"name": "torchvision"}, {"name": "Torch"}]}
    assert frameworks_in(document) == ["tensorflow", "torch"]


def _probe_module():
    spec = importlib.util.spec_from_file_location("envpin_probe_under_test", PROBE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_probes_own_table_agrees_with_the_vocabulary():
    # probe.py runs in the user's interpreter with the standard library only, so it keeps its own copy.
    probe = _probe_module()
    assert tuple(probe.FRAMEWORKS) == frameworks.FRAMEWORKS
    assert probe.FRAMEWORKS == frameworks.DISTRIBUTIONS
    assert all(frameworks.DISTRIBUTIONS[f][0] == f for f in frameworks.FRAMEWORKS)


def test_the_probe_sees_a_framework_through_any_of_its_distributions(monkeypatch):
    probe = _probe_module()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # nothing importable but what is listed
    for framework in frameworks.FRAMEWORKS:
        for distribution in frameworks.DISTRIBUTIONS[framework]:
            assert probe.installed(framework, {probe.canonical(distribution): "1.0"}), distribution
        others = {probe.canonical(d): "1.0" for f in frameworks.FRAMEWORKS if f != framework
                  for d in frameworks.DISTRIBUTIONS[f]}
        assert not probe.installed(framework, others)
    assert not probe.installed("torch", {name: "1.0" for name in frameworks.COMPANIONS})


def test_the_probes_document_has_one_entry_per_framework_and_envpin_reads_it():
    result = subprocess.run([sys.executable, str(PROBE), "--no-smoke", "--timeout", "60"], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    document = parse_probe_output(result.stdout)
    assert document is not None
    assert [key for key in document if key in frameworks.FRAMEWORKS] == list(frameworks.FRAMEWORKS)
    env = env_facts_from_json(document, origin="probe")
    for framework in frameworks.FRAMEWORKS:
        assert (env.framework(framework) is None) == (document[framework] is None)
