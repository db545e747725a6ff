"""The refresh's pure parts: wheel tags, METADATA -> pins (on recorded METADATA, checked against the curated
database), which releases are new, the YAML text edits, and the range reader over a real zip."""

from __future__ import annotations

import io
import zipfile
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml
from packaging.version import Version

from envpin.refresh.build_info import MEMBER, BuildInfoError, parse_build_info
from envpin.refresh.client import FetchError, RangeFile, _metadata_member
from envpin.refresh.diff import cuda_of, variant_name
from envpin.refresh.index import index_from_documents, representative_wheels
from envpin.refresh.metadata import (
    base_pins,
    cuda_extras,
    extra_pins,
    extra_requirement,
    parse_metadata,
    rocm_extras,
    rocm_of_summary,
)
from envpin.refresh.plan import new_releases
from envpin.refresh.wheels import wheel_tags
from envpin.refresh.write import insert_changelog, insert_records, insert_sources, render_record
from tests.integration.test_refresh import _BUILD_INFO_2_10_1

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "refresh" / "metadata"


def recorded(filename: str):
    return parse_metadata((RECORDED / f"{filename}.METADATA").read_text())


@pytest.mark.parametrize("filename, pythons, free_threaded, platforms", [
    ("torch-2.15.0-cp314-cp314t-manylinux_2_28_x86_64.whl", (), ("3.14",), ("linux-x86_64",)),
    ("torch-2.15.0-cp312-cp312-win_amd64.whl", ("3.12",), (), ("windows-x86_64",)),
    ("torch-2.10.0-3-cp310-cp310-manylinux_2_28_aarch64.whl", ("3.10",), (), ("linux-aarch64",)),
    ("tensorflow-2.17.0-cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", ("3.9",), (), ("linux-x86_64",)),
    ("torchvision-0.29.2-py3-none-macosx_14_0_arm64.whl", (), (), ("macos-arm64",)),
    ("jax-0.12.0.1-py3-none-any.whl", (), (), ("linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64",
                                               "macos-x86_64")),
    ("numpy-2.0.0-cp312-cp312-musllinux_1_2_x86_64.whl", ("3.12",), (), ()),
])
def test_wheel_tags(filename, pythons, free_threaded, platforms):
    tags = wheel_tags(filename)
    assert tags is not None
    assert (tags.pythons, tags.free_threaded, tags.platforms) == (pythons, free_threaded, platforms)


def test_not_a_wheel():
    assert wheel_tags("torch-2.15.0.tar.gz") is None


def test_torch_pins_from_recorded_metadata_match_the_curated_record(database):
    """The METADATA recorded from PyPI gives exactly the pins a curator wrote for 2.15.0+cu132 (Linux), and
    none on Windows or macOS, where every CUDA requirement is marked `platform_system == "Linux"`."""
    pythons = ("3.11", "3.12", "3.13", "3.14", "3.15")
    linux = base_pins(recorded("torch-2.15.0-cp315-cp315-manylinux_2_28_x86_64.whl"), "linux-x86_64", pythons,
                      lambda name: name.startswith(("nvidia-", "cuda-")))
    assert linux == database.torch_release("2.15.0").variants["cu132"].pins
    assert cuda_of(linux) == "13.2" and variant_name(cuda_of(linux)) == "cu132"
    for platform, filename in [("windows-x86_64", "torch-2.15.0-cp315-cp315-win_amd64.whl"),
                               ("macos-arm64", "torch-2.15.0-cp315-cp315-macosx_14_0_arm64.whl")]:
        assert base_pins(recorded(filename), platform, pythons, lambda name: True).keys() <= {
            "filelock", "typing-extensions", "setuptools", "sympy", "networkx", "jinja2", "fsspec"}


def test_cuda_bindings_counts_when_some_python_needs_it():
    metadata = recorded("torch-2.15.0-cp315-cp315-manylinux_2_28_x86_64.whl")
    only_315 = base_pins(metadata, "linux-x86_64", ("3.15",), lambda name: name.startswith("cuda-"))
    assert "cuda-bindings" not in only_315  # its marker says python_version < "3.15"
    assert "cuda-bindings" in base_pins(metadata, "linux-x86_64", ("3.14", "3.15"), lambda name: name.startswith("cuda-"))


def test_tensorflow_and_cuda_pins_match_the_curated_record(database):
    pins = extra_pins(recorded("tensorflow-2.21.0-cp313-cp313-manylinux_2_27_x86_64.whl"), "and-cuda")
    record = next(r for r in database.tensorflow_releases if str(r.version) == "2.21.0")
    assert pins == record.and_cuda.pins


def test_jax_extras_and_plugin_pins_match_the_curated_record(database):
    jax = recorded("jax-0.12.0.1-py3-none-any.whl")
    assert cuda_extras(jax) == [("cuda12", 12), ("cuda13", 13)]
    requirement = extra_requirement(jax, "cuda13", "jax-cuda13-plugin")
    assert requirement is not None and str(requirement.specifier) == "<=0.12.0.1,>=0.12.0.1"
    record = next(r for r in database.jax_releases if str(r.version) == "0.12.0.1")
    for extra in ("cuda12", "cuda13"):
        plugin = recorded(f"jax_{extra}_plugin-0.12.0.1-cp315-cp315-manylinux_2_27_x86_64.whl")
        assert extra_pins(plugin, "with-cuda") == record.extras[extra].pins


def _index(releases: dict[str, tuple[str, bool]]):
    """A JSON API document: version -> (upload day, yanked), one Linux wheel each."""
    document = {"releases": {
        version: [{"filename": f"tensorflow-{version}-cp312-cp312-manylinux_2_27_x86_64.whl",
                   "url": f"../../packages/tensorflow-{version}.whl", "upload_time_iso_8601": f"{day}T10:00:00Z",
                   "yanked": yanked, "size": 600_000_000}]
        for version, (day, yanked) in releases.items()}}
    return index_from_documents("tensorflow", ("https://pypi.org/pypi/tensorflow/json", document), None)


def _day_after(db_version: str) -> str:
    return (date.fromisoformat(db_version.replace(".", "-")) + timedelta(days=1)).isoformat()


def test_new_releases_rule(database):
    index = _index({
        "2.21.0": ("2026-03-06", False),  # known
        "2.19.0": ("2025-03-12", False),  # older, uploaded before the database: left out on purpose
        "2.20.1": (_day_after(database.version), False),  # a patch of an older series, after the database: new
        "2.22.0rc0": ("2026-09-23", False),  # a pre-release: never
        "2.22.0": ("2026-12-10", True),  # yanked: never
        "2.23.0": ("2026-12-20", False),  # newer: new
    })
    assert [str(r.version) for r in new_releases(database, "tensorflow", index)] == ["2.20.1", "2.23.0"]
    assert index.releases[Version("2.20.1")].wheels[0].url == "https://pypi.org/packages/tensorflow-2.20.1.whl"


def test_representative_wheel_is_the_newest_gil_python_per_platform():
    index = _index({"2.21.0": ("2026-03-06", False)})
    release = index.releases[Version("2.21.0")]
    assert list(representative_wheels(release)) == ["linux-x86_64"]


def test_rendered_record_reads_back_as_the_same_data():
    record = {"version": "2.16.0", "released": "2026-12-22", "python": {"linux-x86_64": ["3.10", "3.11"]},
              "pypi": {"linux-x86_64": "cu132", "windows-x86_64": "cpu"},
              "variants": {"cu132": {"cuda": "13.2", "pins": {"cuda-bindings": "<14,>=13.0.3"},
                                     "archs": {"linux-x86_64": "turing-to-blackwell"}, "sources": ["s-1"],
                                     "unverified": 'a "quoted" text: with colons, #hashes and yes'}},
              "torchaudio": {"version": "2.11.1", "per_variant": False, "sources": ["s-1"]},
              "missing": {"cuda13": "null"}, "added": "2026.12.22"}
    text = render_record(record)
    assert text.startswith('  - version: "2.16.0"\n    released: "2026-12-22"\n    python:\n')
    assert yaml.safe_load(text) == [record]


def test_records_go_into_the_releases_list_in_version_order():
    text = ('# comment\nsources:\n  a: {title: t}\n\nreleases:\n  - version: "2.4.0"\n    x: 1\n'
            '  - version: "2.6.0"\n    x: 3\n')
    out = insert_records(text, [(Version("2.5.0"), '  - version: "2.5.0"\n    x: 2\n'),
                                (Version("2.7.0"), '  - version: "2.7.0"\n    x: 4\n')])
    assert [r["version"] for r in yaml.safe_load(out)["releases"]] == ["2.4.0", "2.5.0", "2.6.0", "2.7.0"]
    out = insert_sources(out, {"refresh-pypi-torch-2026-12-22": {"title": "PyPI torch", "read": "2026-12-22"}})
    assert yaml.safe_load(out)["sources"]["refresh-pypi-torch-2026-12-22"] == {"title": "PyPI torch",
                                                                               "read": "2026-12-22"}
    assert out.startswith("# comment\nsources:\n  a: {title: t}\n  refresh-pypi-torch-2026-12-22:\n")


def test_changelog_section_goes_first():
    class Record:
        file, family, version = "torch.yaml", "torch", "2.16.0"

    class Proposal:
        new_version, read_date, records = "2026.12.22", "2026-12-22", (Record(),)

    # a stand-in with only the fields insert_changelog reads
    out = insert_changelog("# Compatibility database changelog\n\n## 2026.11.29\n\nFirst version.\n", Proposal())  # type: ignore[arg-type]
    assert out.index("## 2026.12.22") < out.index("## 2026.11.29")
    assert '- torch.yaml: torch 2.16.0 (`added: "2026.12.22"`)' in out
    again = insert_changelog(out, Proposal())  # type: ignore[arg-type]
    assert again.count("## 2026.12.22") == 1 and again.count("torch 2.16.0") == 2
    assert again.index("torch 2.16.0") < again.index("## 2026.11.29") and "\n\n## 2026.11.29" in again


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:  # stored: sizes are what they say
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _ranged(data: bytes, asked: list):
    def fetch(url, start, end):
        asked.append((start, end))
        first = len(data) - end if start is None else start
        first = max(first, 0)
        last = len(data) if start is None else end
        return first, len(data), data[first:last]
    return fetch


def test_range_file_reads_metadata_with_a_few_small_reads():
    wheel = _zip({"pkg-1.0.dist-info/METADATA": b"Name: pkg\nVersion: 1.0\n",
                  "pkg/big.bin": bytes(range(256)) * 4000,
                  "pkg/vendored/x-1.dist-info/METADATA": b"Name: x\n",
                  "pkg-1.0.dist-info/RECORD": b""})
    asked: list = []
    remote = RangeFile("https://x/pkg.whl", _ranged(wheel, asked), chunk=4096, budget=1 << 20)
    remote.open()
    with zipfile.ZipFile(remote) as archive:
        name = _metadata_member(archive.namelist(), "https://x/pkg.whl")
        assert archive.read(name) == b"Name: pkg\nVersion: 1.0\n"
    assert len(asked) <= 3 and remote.fetched_bytes < len(wheel) // 10


def test_range_file_budget_stops_a_runaway_read():
    wheel = _zip({"pkg-1.0.dist-info/METADATA": bytes(300_000)})
    remote = RangeFile("https://x/pkg.whl", _ranged(wheel, []), chunk=4096, budget=50_000)
    remote.open()
    with pytest.raises(FetchError, match="more than 50000 bytes"):
        with zipfile.ZipFile(remote) as archive:
            archive.read("pkg-1.0.dist-info/METADATA")


def test_a_wheel_without_metadata_is_a_clear_error():
    with pytest.raises(FetchError, match="expected one \\*.dist-info/METADATA in the wheel, found 0"):
        _metadata_member(["pkg/__init__.py"], "https://x/pkg.whl")


# ---------------------------------------------------------------- build_info.py and the ROCm plugins' Summary

MEMBERS = RECORDED.parent / "members"


def test_build_info_of_the_recorded_linux_wheel_is_its_database_record(database):
    text = (MEMBERS / "tensorflow-2.21.0-cp313-cp313-manylinux_2_27_x86_64.whl" / MEMBER).read_text()
    info = parse_build_info(text)
    assert (info.is_cuda_build, info.cuda, info.cuda_version) == (True, "12.5", "12.5.1")
    assert info.archs == ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")
    curated = next(r for r in database.tensorflow_releases if str(r.version) == "2.21.0").gpu["linux-x86_64"]
    assert curated.cuda == info.cuda
    assert curated.archs is not None and curated.archs.describe() == "sm_60, sm_70, sm_80, sm_89, compute_90 (PTX)"


def test_build_info_of_a_windows_wheel_and_what_is_refused():
    info = parse_build_info(_BUILD_INFO_2_10_1)
    assert (info.cuda, info.cuda_version) == ("11.2", "64_112")  # the DLL suffix cudart64_112.dll
    cpu = parse_build_info("import collections\nbuild_info = collections.OrderedDict([('is_cuda_build', False)])\n")
    assert (cpu.is_cuda_build, cpu.cuda, cpu.archs) == (False, None, ())
    for text, message in [("build_info = {'cuda_compute_capabilities': ['sm_8x']}", "not a list of sm_XY"),
                          ("x = 1", "no `build_info = ...`"),
                          ("build_info = {'is_cuda_build': True}", "without a cuda_version"),
                          ("build_info = dict(os.environ)", "not a mapping of literals"),
                          ("build_info = {", "not Python")]:
        with pytest.raises(BuildInfoError, match=message):
            parse_build_info(text)


def test_rocm_extras_and_the_rocm_a_plugin_names():
    jax = recorded("jax-0.12.0.1-py3-none-any.whl")
    assert rocm_extras(jax) == [("rocm7-local", "jax-rocm7-plugin")]
    plugin = recorded("jax_rocm7_plugin-0.12.0-cp315-cp315-manylinux_2_27_x86_64.whl")
    assert plugin.summary == "JAX Plugin for AMD GPUs (ROCm:7.14.0)" and rocm_of_summary(plugin.summary) == "7.14"
    # jax-rocm7-pjrt's Summary on pypi.org (2026-12-01), and the form of the plugins that state none (SOURCES-ROCM.md)
    assert rocm_of_summary("JAX XLA PJRT Plugin for AMD GPUs (ROCm:7.14.0)") == "7.14"
    assert rocm_of_summary("JAX Plugin for AMD GPUs (ROCm:unknown)") is None
    assert extra_requirement(jax, "rocm7-local", "jax-rocm7-plugin") is not None
