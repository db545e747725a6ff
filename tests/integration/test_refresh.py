"""`envpin db refresh` against a real HTTP server on 127.0.0.1 serving recorded PyPI answers.

The served PyPI (refresh_world.py) is the recorded one plus planted releases: torch 2.16.0 with its
torchvision 0.30.0, and jax 0.12.1 whose cuda13 plugin does not exist. The refresh must propose exactly the
records below, into a copy of the database, and never touch data/compat_matrix.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import subprocess
import sys
import zipfile

import pytest
import yaml

from envpin.cli import main as envpin_main
from envpin.compat.loader import load_database, validate_database
from envpin.refresh.client import ClientSettings, FetchError, PyPIClient
from tests.conftest import DB_DIR, REPO
from tests.integration.loopback_pypi import LoopbackPyPI
from tests.integration.refresh_world import PLANTED_DAY, World

SOURCE = f"refresh-pypi-torch-{PLANTED_DAY}"
EXPECTED_TORCH_2_16_0 = {
    "version": "2.16.0",
    "released": "2026-12-22",
    "python": {p: ["3.11", "3.12", "3.13", "3.14", "3.15"]
               for p in ("linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64")},
    "pypi": {"linux-x86_64": "cu132", "linux-aarch64": "cu132", "windows-x86_64": "cpu", "macos-arm64": "cpu"},
    "variants": {
        "cpu": {
            "platforms": ["windows-x86_64", "macos-arm64"],
            "sources": [SOURCE],
            "unverified": "the PyPI wheels for windows-x86_64, macos-arm64 name no CUDA library in their METADATA "
                          "and are taken as CPU builds; the +cpu builds on download.pytorch.org were not read",
        },
        "cu132": {
            "cuda": "13.2",
            "cudnn": "9.27.0.12",
            "pins": {"cuda-bindings": "<14,>=13.0.3", "cuda-toolkit": "==13.2.2", "nvidia-cudnn-cu13": "==9.27.0.12",
                     "nvidia-cusparselt-cu13": "==0.8.1", "nvidia-nccl-cu13": "==2.30.7",
                     "nvidia-nvshmem-cu13": "==3.7.2"},
            "platforms": ["linux-x86_64", "linux-aarch64"],
            "archs": {"linux-x86_64": "turing-to-blackwell", "linux-aarch64": "aarch64-ampere-to-blackwell"},
            "sources": [SOURCE],
            "unverified": "arch lists carried over from torch 2.15.0+cu132 (linux-x86_64: turing-to-blackwell, "
                          "linux-aarch64: aarch64-ampere-to-blackwell): PyPI metadata does not say which GPUs a "
                          "wheel is built for",
        },
    },
    "torchvision": {
        "version": "0.30.0", "per_variant": False, "sources": [f"refresh-pypi-torchvision-{PLANTED_DAY}"],
        "unverified": "pairing from PyPI: torchvision 0.30.0 requires torch==2.16.0; whether download.pytorch.org "
                      "has +cuXXX builds of it was not read",
    },
    "torchaudio": {
        "version": "2.11.1", "per_variant": False, "sources": [f"refresh-pypi-torchaudio-{PLANTED_DAY}"],
        "unverified": "pairing from PyPI: torchaudio 2.11.1 requires torch>=2.11, which admits 2.16.0, and no newer "
                      "torchaudio pairs with it; carried over from the release before; whether "
                      "download.pytorch.org has +cuXXX builds of it was not read",
    },
    "sources": [SOURCE],
    "unverified": "proposed by envpin refresh from PyPI alone (read 2026-12-22): only the builds PyPI serves are "
                  "listed; the other variants on download.pytorch.org (other CUDA versions, +cpu on Linux, ROCm) "
                  "need a curated update",
    "added": "2026.12.22",
}


def database_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(DB_DIR.iterdir()):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def refresh(server, output, report, *extra: str) -> int:
    return envpin_main([
        "db", "refresh",
        "--output", str(output), "--report", str(report), "--date", PLANTED_DAY,
        "--json-url", f"{server.base}/pypi", "--simple-url", f"{server.base}/simple",
        "--timeout", "0.5", "--attempts", "2", *extra,
    ])


def load_yaml(path):
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def release(directory, file, version) -> dict:
    return next(r for r in load_yaml(directory / file)["releases"] if r["version"] == version)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """One refresh against the planted PyPI, shared by the tests that read its results."""
    before = database_digest()
    work = tmp_path_factory.mktemp("refresh")
    with World().serve() as server:
        code = refresh(server, work / "out", work / "report.md")
        log = list(server.log)
        base = server.base
    assert database_digest() == before, "refresh wrote into the database it read"
    return {"code": code, "out": work / "out", "report": (work / "report.md").read_text(), "log": log, "base": base}


def test_planted_torch_release_is_proposed_exactly(planted):
    assert planted["code"] == 0
    assert release(planted["out"], "torch.yaml", "2.16.0") == EXPECTED_TORCH_2_16_0
    sources = load_yaml(planted["out"] / "torch.yaml")["sources"]
    assert sources[SOURCE] == {
        "title": "PyPI torch: JSON API and PEP 691 simple API (releases, upload dates, wheel tags); wheel METADATA "
                 "read through PEP 658 or HTTP range requests (envpin refresh)",
        "url": f"{planted['base']}/pypi/torch/json", "grade": "pypi", "read": PLANTED_DAY,
    }


def test_planted_jax_release_checks_that_the_plugins_exist(planted):
    record = release(planted["out"], "jax.yaml", "0.12.1")
    shipped = load_database(DB_DIR)
    before = next(r for r in shipped.jax_releases if str(r.version) == "0.12.0.1").extras["cuda12"]
    cuda12 = record["extras"]["cuda12"]
    assert cuda12["plugin"] == "0.12.1"
    assert cuda12["pins"] == before.pins  # read from the plugin's METADATA, which the plant leaves as recorded
    assert (cuda12["min_driver"], cuda12["min_cc"], cuda12["built_with"]) == ({"linux": "525"}, "5.2", "12.9")
    assert "carried over from jax 0.12.0.1[cuda12]" in cuda12["unverified"]
    assert list(record["extras"]) == ["cuda12"]
    assert record["missing_extras"] == {"cuda13": "jax-cuda13-plugin <=0.12.1,>=0.12.1 is not on PyPI (read 2026-12-22)"}
    assert record["python"] == ["3.12", "3.13", "3.14", "3.15"] and record["added"] == "2026.12.22"
    assert cuda12["sources"] == [f"refresh-pypi-jax-{PLANTED_DAY}", f"refresh-pypi-jax-cuda12-plugin-{PLANTED_DAY}",
                                 f"refresh-pypi-jax-cuda12-pjrt-{PLANTED_DAY}"]


def test_a_plugin_whose_pjrt_package_is_missing_makes_a_missing_extra(tmp_path):
    world = World(plant=False)
    world.plant_jax(pjrt=False)
    with world.serve() as server:
        code = refresh(server, tmp_path / "out", tmp_path / "report.md", "--recheck", "0")
    record = release(tmp_path / "out", "jax.yaml", "0.12.1")
    assert code == 0 and "extras" not in record
    assert record["missing_extras"]["cuda12"] == (
        "jax-cuda12-plugin 0.12.1 needs jax-cuda12-pjrt==0.12.1, which is not on PyPI (read 2026-12-22)")


def test_proposal_validates_and_only_adds_lines(planted):
    out = planted["out"]
    assert validate_database(out) == []
    assert (out / "VERSION").read_text() == "2026.12.22\n"
    assert "## 2026.12.22" in (out / "CHANGELOG.md").read_text()
    for name in ("torch.yaml", "jax.yaml", "CHANGELOG.md"):
        old, new = (DB_DIR / name).read_text().splitlines(), (out / name).read_text().splitlines()
        operations = {op for op, *_ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()}
        assert operations <= {"equal", "insert"}, f"{name}: a curated line was changed"
    for name in ("cuda.yaml", "gpus.yaml", "tensorflow.yaml", "sources.yaml"):
        assert (out / name).read_bytes() == (DB_DIR / name).read_bytes()
    database = load_database(out)
    release = database.torch_release("2.16.0")
    assert release is not None and release.added == "2026.12.22"


def test_new_metadata_is_read_with_range_requests_and_old_with_pep_658(planted):
    wheel = "/files/torch-2.16.0-cp315-cp315-manylinux_2_28_x86_64.whl"
    reads = [(rng, sent) for path, rng, sent in planted["log"] if path == wheel]
    assert reads and all(rng and rng.startswith("bytes=") for rng, _ in reads)
    assert not any(path == wheel + ".metadata" for path, _, _ in planted["log"])
    assert ("/files/torch-2.15.0-cp315-cp315-manylinux_2_28_x86_64.whl.metadata", None) in \
        [(path, rng) for path, rng, _ in planted["log"]]


def test_report_says_what_was_read_and_what_needs_curation(planted):
    report = planted["report"]
    assert "### torch 2.16.0 -> torch.yaml" in report and "### jax 0.12.1 -> jax.yaml" in report
    assert "torch-2.16.0-cp315-cp315-manylinux_2_28_x86_64.whl: METADATA (HTTP range requests)" in report
    assert "| torch 2.16.0+cu132 | the arch lists (carried over from the release before) |" in report
    assert "https://download.pytorch.org/whl/torch/" in report and "developer.nvidia.com/cuda-gpus" in report
    assert "torch 2.15.0 re-read from PyPI (4 METADATA file(s)): agrees with the database" in report
    assert "Exit code 0" in report and "## Problems reading PyPI (0)" in report


def test_solve_picks_the_proposed_release(planted, capsys):
    code = envpin_main(["solve", "--db", str(planted["out"]), "--framework", "torch", "--format", "json",
                        "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--driver", "610.43.02",
                        "--gpu", "NVIDIA GeForce RTX 4090"])
    answer = yaml.safe_load(capsys.readouterr().out)
    assert code == 0
    assert [(p["name"], p["version"]) for p in answer["packages"]] == [
        ("torch", "2.16.0"), ("torchvision", "0.30.0"), ("torchaudio", "2.11.1")]
    assert any("carried over from torch 2.15.0+cu132" in w for w in answer["warnings"])


def test_nothing_new_leaves_an_unchanged_copy(tmp_path):
    with World(plant=False).serve() as server:
        code = refresh(server, tmp_path / "out", tmp_path / "report.md")
    assert code == 0
    for path in DB_DIR.iterdir():
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes()
    assert "None: the database already lists every final release" in (tmp_path / "report.md").read_text()


def test_survives_a_hung_server_a_404_and_malformed_json(tmp_path):
    world = World()
    with world.serve() as server:
        server.routes["/pypi/tensorflow-cpu/json"].delay = 2.0  # past the 0.5 s timeout, twice
        server.routes["/simple/jax-cuda13-plugin/"].status = 404
        server.routes["/pypi/torchaudio/json"].body = b"<html>Service Unavailable</html>"
        server.routes["/pypi/torchaudio/json"].content_type = "text/html"
        code = refresh(server, tmp_path / "out", tmp_path / "report.md")
        base = server.base
    report = (tmp_path / "report.md").read_text()
    assert code == 2
    problems = report.split("## Problems reading PyPI (3)")[1].strip().splitlines()
    assert problems == [
        f"- torchaudio: {base}/pypi/torchaudio/json: malformed JSON (the server sent text/html): "
        "Expecting value: line 1 column 1 (char 0)",
        f"- tensorflow-cpu: {base}/pypi/tensorflow-cpu/json: timed out after 0.5 s (2 tries)",
        f"- jax-cuda13-plugin: {base}/simple/jax-cuda13-plugin/: HTTP 404",
    ]
    # Each package still had its other document, so nothing had to be held back.
    assert release(tmp_path / "out", "torch.yaml", "2.16.0") == EXPECTED_TORCH_2_16_0
    assert "cuda13" in release(tmp_path / "out", "jax.yaml", "0.12.1")["missing_extras"]
    assert validate_database(tmp_path / "out") == []


def test_an_unreadable_companion_holds_the_torch_record_back(tmp_path):
    with World().serve() as server:
        server.routes["/pypi/torchvision/json"].status = 404
        server.routes["/simple/torchvision/"].body = b"{truncated"
        code = refresh(server, tmp_path / "out", tmp_path / "report.md")
    report = (tmp_path / "report.md").read_text()
    assert code == 2
    assert "- torch 2.16.0: torchvision could not be read from PyPI" in report
    assert "2.16.0" not in (tmp_path / "out" / "torch.yaml").read_text()
    assert release(tmp_path / "out", "jax.yaml", "0.12.1")["version"] == "0.12.1"
    assert validate_database(tmp_path / "out") == []


def test_a_cuda_version_the_database_does_not_know_is_held_back(tmp_path):
    world = World(plant=False)
    world.plant_torch(toolkit="13.6.0")
    world.plant_torchvision()
    with world.serve() as server:
        code = refresh(server, tmp_path / "out", tmp_path / "report.md", "--packages", "torch,torchvision,torchaudio")
    report = (tmp_path / "report.md").read_text()
    assert code == 0
    assert "- torch 2.16.0: torch 2.16.0+cu136: CUDA 13.6 is not in cuda.yaml, so the record would not validate" in report
    assert "| CUDA 13.6 | a cuda.yaml toolkit record (driver, targets) for torch 2.16.0+cu136 |" in report
    assert (tmp_path / "out" / "VERSION").read_text() == (DB_DIR / "VERSION").read_text()


def test_a_server_that_ignores_range_requests_is_not_downloaded_from(tmp_path):
    world = World()
    wheel = "torch-2.16.0-cp315-cp315-manylinux_2_28_x86_64.whl"
    with world.serve() as server:
        server.routes[f"/files/{wheel}"].ranges = False
        client = PyPIClient(ClientSettings(timeout=2, attempts=1))
        with pytest.raises(FetchError, match=r"ignored the range request \(HTTP 200\)"):
            client.wheel_metadata(f"{server.base}/files/{wheel}")
        text, how = client.wheel_metadata(f"{server.base}/files/torch-2.15.0-cp315-cp315-win_amd64.whl")
    assert how == "range" and "Version: 2.15.0" in text


# The build_info.py of PyPI's tensorflow-2.10.1-cp38-cp38-win_amd64.whl (sha256 5ef5e562e6baa9dc...), as read on
# 2026-12-01 (data/compat_matrix/SOURCES-TF-JAX.md), less its licence header
_BUILD_INFO_2_10_1 = (
    '"""Auto-generated module providing information about the build."""\nimport collections\n\n'
    "build_info = collections.OrderedDict([('cpu_compiler', 'C:/Program Files (x86)/Microsoft Visual Studio/2019/"
    "Community/VC/Tools/MSVC/14.29.30133/bin/HostX64/x64/cl.exe'), ('cuda_compute_capabilities', ['sm_35', 'sm_50', "
    "'sm_60', 'sm_70', 'sm_75', 'compute_80']), ('cuda_version', '64_112'), ('cudart_dll_name', 'cudart64_112.dll'), "
    "('cudnn_dll_name', 'cudnn64_8.dll'), ('cudnn_version', '64_8'), ('is_cuda_build', True), ('is_rocm_build', False), "
    "('is_tensorrt_build', False), ('msvcp_dll_names', 'msvcp140.dll,msvcp140_1.dll'), ('nvcuda_dll_name', 'nvcuda.dll')])"
)


def test_one_member_of_a_big_wheel_is_read_with_a_few_range_requests():
    body = io.BytesIO()
    with zipfile.ZipFile(body, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr("tensorflow/python/_pywrap_tensorflow_internal.pyd", os.urandom(8 << 20))  # stands for the 400 MB
        wheel.writestr("tensorflow/python/platform/build_info.py", _BUILD_INFO_2_10_1)
        wheel.writestr("tensorflow-2.10.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.10.1\n")
    name = "tensorflow-2.10.1-cp38-cp38-win_amd64.whl"
    with LoopbackPyPI() as server:
        server.add(f"/files/{name}", body.getvalue())
        client = PyPIClient(ClientSettings(timeout=5, attempts=1))
        text = client.wheel_member(f"{server.base}/files/{name}", "platform/build_info.py")
        with pytest.raises(FetchError, match="0 members of the wheel match 'build_info.pyc'"):
            client.wheel_member(f"{server.base}/files/{name}", "build_info.pyc")
        sent = server.bytes_sent(f"/files/{name}")
    assert "'cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']" in text
    assert sent < len(body.getvalue()) // 10  # the directory and the member, not the 8 MB beside them


@pytest.mark.parametrize("arguments, message", [
    (["--date", "2026-13-45", "--dry-run"], "--date '2026-13-45': not a calendar date"),
    (["--packages", "torch,numpy", "--dry-run"], "--packages: numpy not among"),
    (["--timeout", "0", "--dry-run"], "argument --timeout: '0' is not a positive number of seconds"),
    (["--attempts", "0", "--dry-run"], "--attempts between 1 and 10"),
    (["--db", "/nonexistent/db", "--dry-run"], "database /nonexistent/db: not a directory"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_request(arguments, message, capsys):
    assert envpin_main(["db", "refresh", "--json-url", "http://127.0.0.1:9/pypi", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_an_occupied_output_is_refused_by_the_real_entry_point(tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    result = subprocess.run([sys.executable, "-m", "envpin", "db", "refresh", "--output", str(occupied),
                             "--json-url", "http://127.0.0.1:9/pypi"], capture_output=True, text=True, cwd=REPO,
                            timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "exists and is not empty" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert (occupied / "keep.txt").read_text() == "mine"


def test_the_default_writes_into_the_database_it_refreshes(db_copy, tmp_path):
    """Without --output the proposal goes into --db itself (here a copy), file by file, leaving nothing else."""
    with World().serve() as server:
        code = envpin_main(["db", "refresh", "--db", str(db_copy), "--date", PLANTED_DAY, "--recheck", "0", "--report",
                             str(tmp_path / "report.md"), "--packages", "torch,torchvision,torchaudio",
                             "--json-url", f"{server.base}/pypi", "--simple-url", f"{server.base}/simple"])
    assert code == 0
    assert release(db_copy, "torch.yaml", "2.16.0") == EXPECTED_TORCH_2_16_0
    assert (db_copy / "VERSION").read_text() == "2026.12.22\n"
    assert sorted(p.name for p in db_copy.parent.iterdir()) == ["db", "report.md"]  # no staging directory left
    assert validate_database(db_copy) == []


TF_SOURCE = f"refresh-pypi-tensorflow-{PLANTED_DAY}"
TF_WHEEL = "tensorflow-2.22.0-cp313-cp313-manylinux_2_27_x86_64.whl"
TESTED = ("the tested build configuration in tensorflow/docs site/en/install/source.md, 'Tested build configurations' "
          "(Linux GPU) was not read")
TENSORFLOW_ROCM_2_22_0 = {
    "pin": "2.22.0.700", "python": ["3.9", "3.10", "3.11"], "platforms": ["linux-x86_64"],
    "sources": [f"refresh-pypi-tensorflow-rocm-{PLANTED_DAY}"],
    "unverified": "from PyPI's tensorflow-rocm 2.22.0.700 files (read 2026-12-22): the ROCm it was built for and the "
                  "gfx targets of its HIP kernels were not read (its METADATA names neither: they are in its shared "
                  "libraries), so a solve does not choose it",
}


def test_a_new_tensorflow_release_gets_the_arch_list_of_its_wheel_and_its_rocm_build(tmp_path):
    """build_info.py is read from the new Linux wheel with range requests (2.21.0's, recorded from PyPI, inside the
    planted 2.22.0 wheel); tensorflow-rocm 2.22.0.700 is its ROCm build."""
    world = World(plant=False)
    world.plant_tensorflow()
    with world.serve() as server:
        code = refresh(server, tmp_path / "out", tmp_path / "report.md")
        log = list(server.log)
        base = server.base
    assert code == 0
    record = release(tmp_path / "out", "tensorflow.yaml", "2.22.0")
    assert record["gpu"] == {"linux-x86_64": {
        "cuda": "12.5", "cudnn": "9.3", "archs": ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"],
        "unverified": f"CUDA 12.5 and the arch list as tensorflow/python/platform/build_info.py of {TF_WHEEL} names "
                      f"them (cuda_version 12.5.1); cuDNN from the lower bound of the [and-cuda] pins (nvidia-cudnn "
                      f"9.3); {TESTED}",
        "sources": [TF_SOURCE]}}
    assert record["rocm"] == TENSORFLOW_ROCM_2_22_0
    # its own Requires-Dist on numpy, from the METADATA of its real wheels (2.21.0's, recorded from PyPI)
    assert record["numpy"] == {"requires": ">=1.26.0", "wheels": [
        TF_WHEEL, "tensorflow-2.22.0-cp313-cp313-manylinux_2_27_aarch64.whl", "tensorflow-2.22.0-cp313-cp313-win_amd64.whl",
        "tensorflow-2.22.0-cp313-cp313-macosx_12_0_arm64.whl"], "sources": [TF_SOURCE]}
    sources = load_yaml(tmp_path / "out" / "tensorflow.yaml")["sources"]
    assert sources[TF_SOURCE] == {
        "title": "PyPI tensorflow: JSON API and PEP 691 simple API (releases, upload dates, wheel tags); wheel METADATA "
                 "read through PEP 658 or HTTP range requests; tensorflow/python/platform/build_info.py of the Linux "
                 "x86_64 wheel read with HTTP range requests (envpin refresh)",
        "url": f"{base}/pypi/tensorflow/json", "grade": "pypi", "read": PLANTED_DAY}
    assert sources[f"refresh-pypi-tensorflow-rocm-{PLANTED_DAY}"]["url"] == f"{base}/pypi/tensorflow-rocm/json"
    assert all(rng for path, rng, _ in log if path == f"/files/{TF_WHEEL}")  # range requests only
    report = (tmp_path / "report.md").read_text()
    assert f"- {TF_WHEEL}: tensorflow/python/platform/build_info.py (HTTP range requests)" in report
    assert "| tensorflow-rocm 2.22.0.700 | the ROCm it was built for and the gfx targets of its HIP kernels |" in report
    # the known 2.21.0 was re-read the same way, and its curated arch list agrees
    assert ("tensorflow 2.21.0 re-read from PyPI (4 METADATA file(s), 1 other wheel file(s)): agrees with the database"
            in report)
    old = (DB_DIR / "tensorflow.yaml").read_text().splitlines()
    new = (tmp_path / "out" / "tensorflow.yaml").read_text().splitlines()
    assert {op for op, *_ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()} <= {"equal", "insert"}
    assert validate_database(tmp_path / "out") == []
    built = next(r for r in load_database(tmp_path / "out").tensorflow_releases if str(r.version) == "2.22.0")
    assert built.gpu["linux-x86_64"].archs is not None and built.rocm[0].gfx is None


def test_a_tensorflow_wheel_without_build_info_gives_no_arch_list_and_says_why(tmp_path):
    world = World(plant=False)
    world.plant_tensorflow(build_info=False)
    with world.serve() as server:
        code = refresh(server, tmp_path / "out", tmp_path / "report.md", "--recheck", "0")
        base = server.base
    gpu = release(tmp_path / "out", "tensorflow.yaml", "2.22.0")["gpu"]["linux-x86_64"]
    assert code == 2 and "archs" not in gpu
    assert gpu["unverified"] == (
        "CUDA/cuDNN taken from the lower bounds of the [and-cuda] pins (nvidia-cuda-runtime 12.5, nvidia-cudnn 9.3); "
        "the arch list was not read (0 members of the wheel match 'tensorflow/python/platform/build_info.py'); "
        f"{TESTED}")
    report = (tmp_path / "report.md").read_text()
    assert (f"- tensorflow: {base}/files/{TF_WHEEL}: 0 members of the wheel match "
            "'tensorflow/python/platform/build_info.py'") in report
    assert "| tensorflow 2.22.0 | the arch list of the GPU build |" in report
    assert validate_database(tmp_path / "out") == []


def test_a_new_jax_release_gets_its_rocm_extra(planted):
    record = release(planted["out"], "jax.yaml", "0.12.1")
    assert record["rocm"] == {"rocm7-local": {
        "plugin": "jax-rocm7-plugin 0.12.1", "rocm": "7.14", "python": ["3.12", "3.13", "3.14", "3.15"],
        "platforms": ["linux-x86_64"],
        "sources": [f"refresh-pypi-jax-{PLANTED_DAY}", f"refresh-pypi-jax-rocm7-plugin-{PLANTED_DAY}",
                    f"refresh-pypi-jax-rocm7-pjrt-{PLANTED_DAY}"],
        "unverified": "from PyPI (read 2026-12-22): the gfx targets of its HIP kernels were not read (they are in the "
                      "offload bundles of its shared libraries, not in METADATA), so a solve does not choose it"}}
    assert "| jax[rocm7-local] 0.12.1 | the gfx targets of its plugin's HIP kernels |" in planted["report"]
    assert "jax_rocm7_plugin-0.12.1-cp315-cp315-manylinux_2_27_x86_64.whl: METADATA (HTTP range requests)" in planted["report"]


def test_a_rocm_plugin_wheel_the_server_lacks_gives_an_unverified_record(tmp_path):
    wheel = "jax_rocm7_plugin-0.12.1-cp315-cp315-manylinux_2_27_x86_64.whl"
    with World().serve() as server:
        server.routes[f"/files/{wheel}"].status = 404
        code = refresh(server, tmp_path / "out", tmp_path / "report.md", "--recheck", "0")
    rocm = release(tmp_path / "out", "jax.yaml", "0.12.1")["rocm"]["rocm7-local"]
    assert code == 2 and "rocm" not in rocm and rocm["plugin"] == "jax-rocm7-plugin 0.12.1"
    assert rocm["unverified"].startswith(f"from PyPI (read 2026-12-22): the METADATA of {wheel} could not be read "
                                         "(HTTP 404): its ROCm and its pjrt requirement are not known; the gfx targets")
    assert validate_database(tmp_path / "out") == []


def test_a_rocm_plugin_whose_pjrt_is_missing_makes_a_missing_extra(tmp_path):
    world = World(plant=False)
    world.plant_jax(pjrt=False)
    with world.serve() as server:
        refresh(server, tmp_path / "out", tmp_path / "report.md", "--recheck", "0")
    record = release(tmp_path / "out", "jax.yaml", "0.12.1")
    assert "rocm" not in record
    assert record["missing_extras"]["rocm7-local"] == (
        "jax-rocm7-plugin 0.12.1 needs jax-rocm7-pjrt==0.12.1, which is not on PyPI (read 2026-12-22)")
