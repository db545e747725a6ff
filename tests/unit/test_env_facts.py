"""EnvFacts JSON (what `envpin verify --format json` prints and `doctor --facts` reads) and the pure verify report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from envpin.base.errors import EnvpinInputError
from envpin.doctor import catalogue
from envpin.doctor.catalogue import GROUPS, SIGNATURES, compiled
from envpin.facts.host import (
    Driver,
    EnvFacts,
    EnvPython,
    FrameworkFacts,
    Gpu,
    HostFacts,
    Packages,
    PythonInfo,
    decode_cudnn_version,
    decode_driver_cuda,
    env_facts_from_json,
    env_facts_to_json,
    has_env_facts,
    normalize_cuda_version,
)
from envpin.verify.report import verify
from envpin.verify.run import parse_probe_output

PROBE_DOCUMENT = {
    "probe": {"version": 1},
    "python": {"version": "3.11.7", "executable": "/env/bin/python", "prefix": "/env", "base_prefix": "/usr", "env_type": "venv",
               "bits": 64, "implementation": "cpython", "virtual_env": None, "conda_prefix": None, "user_site": None},
    "packages": {"pip": {"Torch": "2.5.1+cu124", "typing_extensions": "4.12.2"}, "conda": {"pytorch-mutex": "1.0 cuda"}},
    "torch": {"import_ok": True, "version": "2.5.1+cu124", "cuda": "12.4", "cudnn": 90100, "arch_list": ["sm_50", "sm_90"],
              "is_available": True, "device_count": 1, "devices": [{"name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}],
              "driver_cuda": 12040, "smoke": {"matmul": "ok"}, "warnings": [], "loaded": ["/env/lib/libcudnn.so.9"], "seconds": 2.1},
    "tensorflow": {"import_ok": True, "version": "2.10.0", "cuda": "64_112", "cudnn": "64_8"},
    "jax": None,
    "library_dirs": {"/env/lib/python3.11/site-packages/torch/lib": ["libc10.so"]},
    "notes": [],
}


def test_probe_document_parses_and_round_trips():
    env = env_facts_from_json(PROBE_DOCUMENT)
    assert env.packages.pip == {"torch": "2.5.1+cu124", "typing-extensions": "4.12.2"}  # PEP 503 names
    assert env.packages.conda["pytorch-mutex"].build == "cuda"
    assert env.torch is not None and env.torch.cudnn == "9.1.0" and env.torch.driver_cuda == "12.4"
    assert env.tensorflow is not None and env.tensorflow.cuda == "11.2"
    assert env.jax is None
    again = env_facts_from_json(json.loads(json.dumps(env_facts_to_json(env))))
    assert again == env
    assert has_env_facts(PROBE_DOCUMENT) and not has_env_facts({"os": "linux"})


@pytest.mark.parametrize("value, expected", [(8902, "8.9.2"), (8700, "8.7.0"), (90100, "9.1.0"), (91002, "9.10.2")])
def test_cudnn_versions_decode_as_cudnn_version_h_defines_them(value, expected):
    assert decode_cudnn_version(value) == expected


def test_found_version_decodes_to_cuda():
    assert decode_driver_cuda(11040) == "11.4" and decode_driver_cuda(12020) == "12.2" and decode_driver_cuda(13000) == "13.0"
    assert normalize_cuda_version("64_112") == "11.2" and normalize_cuda_version("12.3") == "12.3"


def test_every_bad_field_is_reported_at_once():
    bad = {"python": {"version": "two"}, "packages": {"pip": {"torch": 2}}, "torch": {"arch_list": "sm_86", "import_ok": "yes"},
           "tensorflow": [], "library_dirs": {"/x": "libc.so"}}
    with pytest.raises(EnvpinInputError) as error:
        env_facts_from_json(bad, origin="--facts f.json")
    message = str(error.value)
    assert message.startswith("--facts f.json: ") and "\n" not in message
    for field in ("python.version", "packages.pip.torch", "torch.arch_list", "torch.import_ok", "tensorflow"):
        assert field in message


def test_probe_output_after_noise_on_stdout():
    text = "a package printed this\n@@envpin-probe@@{not json\nmore\n@@envpin-probe@@" + json.dumps({"python": {}}) + "\n"
    assert parse_probe_output(text) == {"python": {}}
    assert parse_probe_output("no marker") is None
    assert parse_probe_output("@@envpin-probe@@[1, 2]") is None


# ---------------------------------------------------------------- verify report (pure)

RTX3090 = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7"), driver=Driver("535.104.05", "12.2", "nvml"),
                    gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", "8.6"),))
NO_GPU = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7"))


def env_with(torch: FrameworkFacts | None) -> EnvFacts:
    return EnvFacts(python=EnvPython("3.11.7", executable="/env/bin/python"), packages=Packages(pip={"torch": "x"} if torch else {}),
                    torch=torch)


def statuses(report):
    return [(c.status, c.message) for c in report.checks]


def test_cuda_build_that_fits_is_ok(database):
    torch = FrameworkFacts(version="2.5.1+cu121", cuda="12.1", arch_list=("sm_80", "sm_86", "sm_90"), is_available=True,
                           device_count=1, import_ok=True, smoke={"matmul": "ok"})
    report = verify(env_with(torch), RTX3090, database)
    assert report.ok, statuses(report)
    assert any("runs its sm_86 cubin" in m for _, m in statuses(report))
    assert any("needs ≥ 525.60.13" in m for _, m in statuses(report))


def test_cpu_build_on_a_gpu_machine_is_a_problem(database):
    report = verify(env_with(FrameworkFacts(version="2.5.1+cpu", import_ok=True, is_available=False)), RTX3090, database)
    assert not report.ok and "CPU build" in report.verdict and "RTX 3090" in report.verdict


def test_arch_list_without_the_gpu_is_a_problem(database):
    blackwell = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7"), driver=Driver("570.124.04", "12.8", "nvml"),
                          gpus=(Gpu(0, "NVIDIA GeForce RTX 5090", None),))  # capability from the database: 12.0
    torch = FrameworkFacts(version="2.5.1+cu124", cuda="12.4", arch_list=("sm_50", "sm_80", "sm_86", "sm_90"), import_ok=True,
                           is_available=True)
    report = verify(env_with(torch), blackwell, database)
    assert not report.ok and "no code for NVIDIA GeForce RTX 5090 (sm_120)" in report.verdict


def test_cuda_newer_than_the_driver_is_a_problem(database):
    r470 = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7"), driver=Driver("470.63.01", "11.4", "nvml"),
                     gpus=(Gpu(0, "Tesla T4", "7.5"),))
    torch = FrameworkFacts(version="2.5.1+cu124", cuda="12.4", arch_list=("sm_75",), import_ok=True, is_available=False,
                           warnings=("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).",))
    messages = [m for s, m in statuses(verify(env_with(torch), r470, database)) if s == "problem"]
    assert any("needs driver ≥ 525.60.13" in m and "470.63.01" in m for m in messages)
    assert any("found version 11040" in m for m in messages)


def test_failed_import_and_missing_frameworks_are_problems(database):
    failed = FrameworkFacts(import_ok=False, import_error="Traceback ...\nOSError: libcudnn.so.9: cannot open shared object file")
    report = verify(env_with(failed), NO_GPU, database)
    assert report.verdict.startswith("NOT OK: import torch failed: OSError: libcudnn.so.9")
    nothing = verify(env_with(None), NO_GPU, database)
    assert not nothing.ok and "no torch, tensorflow or jax is installed for /env/bin/python" in nothing.verdict


def test_cpu_build_without_a_driver_is_what_the_machine_can_use(database):
    report = verify(env_with(FrameworkFacts(version="2.13.0+cpu", import_ok=True, is_available=False)), NO_GPU, database)
    assert report.ok and any("no NVIDIA driver" in m for _, m in statuses(report))


def test_failed_gpu_computation_is_a_problem(database):
    torch = FrameworkFacts(version="2.5.1+cu121", cuda="12.1", arch_list=("sm_86",), import_ok=True, is_available=True,
                           smoke={"matmul": "ok", "conv2d": "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"})
    report = verify(env_with(torch), RTX3090, database)
    assert not report.ok and "conv2d on the GPU failed: RuntimeError: cuDNN error" in report.verdict


# ---------------------------------------------------------------- the catalogue


CATALOGUE = Path(catalogue.__file__).with_name("failure_catalogue.yaml")  # the project's catalogue, shipped beside the code


def test_signatures_are_the_catalogue_data_file():
    """The code's ids, rows and patterns are the project's catalogue (envpin/doctor/failure_catalogue.yaml)."""
    document = yaml.safe_load(CATALOGUE.read_text(encoding="utf-8"))
    entries = document["signatures"]
    by_id = {entry["id"]: entry for entry in entries}
    assert len(entries) == len(by_id) == len(SIGNATURES) == 78
    assert [entry["id"] for entry in entries] == [signature.id for signature in SIGNATURES]
    assert document["groups"] == GROUPS
    for signature in SIGNATURES:
        entry = by_id[signature.id]
        assert entry["row"] == signature.row, signature.id
        assert entry["pattern"] == signature.pattern, signature.id
        assert (entry["kind"] == "facts") == (signature.pattern is None and "pattern_of" not in entry), signature.id
        assert tuple(entry.get("outranks", ())) == signature.outranks, signature.id
        assert set(signature.outranks) <= set(by_id) - {signature.id}, signature.id
    shared = {entry["id"]: entry["pattern_of"] for entry in entries if "pattern_of" in entry}
    assert shared == catalogue.PATTERN_OF == {"ARCH-GPU-DROPPED-FROM-WHEEL": "ARCH-GPU-NEWER-THAN-WHEEL",
                                              "TF-CONDA-LIB-NOT-ON-LOADER-PATH": "TF-CUDA-SONAME-MISSING"}
    for signature_id, other in shared.items():
        pattern = compiled(signature_id)
        assert pattern is not None and pattern.pattern == by_id[other]["pattern"]


def test_every_catalogue_entry_names_a_public_source():
    for entry in yaml.safe_load(CATALOGUE.read_text(encoding="utf-8"))["signatures"]:
        assert entry["summary"].strip(), entry["id"]
        assert entry["sources"], entry["id"]
        for source in entry["sources"]:
            assert re.fullmatch(r"https://[\w.-]+\.[a-z]{2,}/\S*", source), (entry["id"], source)
        if entry["pattern"] is not None:
            re.compile(entry["pattern"], re.MULTILINE)
