"""Fuzz what users type or hand over: the facts file (`--facts`, HostFacts and EnvFacts), requests (`--framework`, `--spec`,
`--driver-policy`, `--torch-index-url`) and the target flags (`--os`, `--arch`, `--driver`, `--gpu`,
`--compute-capability`, `--python`), each all the way to where envpin uses it.

Property: a value, or `EnvpinInputError` (exit 2 with one line) — never another exception, never a hang.
"""

from __future__ import annotations

import json
import os
import tempfile

from hypothesis import example, given, settings
from hypothesis import strategies as st

from envpin.base.errors import EnvpinError, EnvpinInputError
from envpin.compat.loader import load_database
from envpin.facts.host import (
    CondaPackage,
    Device,
    Driver,
    EnvFacts,
    EnvPython,
    FrameworkFacts,
    Gpu,
    HostFacts,
    Libc,
    Packages,
    PythonInfo,
    Toolkit,
    env_facts_from_json,
    env_facts_to_json,
    from_json,
    to_json,
)
from envpin.machine.spec import TargetSpec
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request, parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import Target, TargetOverrides, apply_overrides, make_target
from tests.fuzz.support import (
    json_values,
    mutated_document,
    outcome,
    paths_of,
    python_recursion_limit_input,
    slow_examples,
)

# ---------------------------------------------------------------- --facts FILE

SEED_FACTS = [
    HostFacts(
        os="linux", arch="x86_64", python=PythonInfo("3.11.7", "/usr/bin/python3", "venv"),
        driver=Driver("535.104.05", "12.2", "nvml"),
        gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", "8.6", 24576), Gpu(1, "NVIDIA GeForce GTX 1080 Ti", "6.1", 11264)),
        libc=Libc("glibc", "2.36"), toolkits=(Toolkit("12.1", "/usr/local/cuda-12.1", "/usr/local/cuda-12.1/bin/nvcc"),),
        env={"PATH": ["/usr/bin"], "LD_LIBRARY_PATH": [], "CUDA_PATH": None, "CUDA_HOME": None, "CONDA_PREFIX": None},
        files={"/usr/local/cuda-12.1/lib64": ["libcudart.so.12"]},
        notes=("nvidia-smi timed out after 10 s; used /proc/driver/nvidia/version",),
    ),
    HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.12.1"), driver=Driver("560.94", None, "nvidia-smi"),
              gpus=(Gpu(0, "NVIDIA GeForce RTX 4090", None),)),
    HostFacts(os="macos", arch="arm64", python=PythonInfo("3.10.4", None, "conda")),
]
SEED_DOCUMENTS = [to_json(facts) for facts in SEED_FACTS]
SEED_PATHS = [paths_of(document) for document in SEED_DOCUMENTS]

facts_documents = st.one_of(
    st.integers(0, len(SEED_DOCUMENTS) - 1).flatmap(lambda i: mutated_document(SEED_DOCUMENTS[i], SEED_PATHS[i])),
    json_values,
)


def round_trips(facts: HostFacts) -> None:
    """An accepted facts file can be written back (`to_json`) and reads back to the same JSON."""
    text = json.dumps(to_json(facts), sort_keys=True)
    again = from_json(json.loads(text))
    assert json.dumps(to_json(again), sort_keys=True) == text


@given(document=facts_documents)
@example(document={**SEED_DOCUMENTS[0], "notes": 5})
@example(document={**SEED_DOCUMENTS[0], "files": {"/usr/lib": 7}})
def test_facts_from_json(document):
    facts, _ = outcome("facts.from_json", from_json, document, allowed=(EnvpinInputError,))
    if facts is not None:
        assert isinstance(facts, HostFacts)
        round_trips(facts)


facts_texts = st.one_of(
    facts_documents.map(json.dumps),
    st.text(),
    st.sampled_from(SEED_DOCUMENTS).map(lambda d: json.dumps(d)[: len(json.dumps(d)) // 2]),  # truncated
)


@given(text=facts_texts)
@example(text=python_recursion_limit_input())
@example(text="\ufeff" + json.dumps(SEED_DOCUMENTS[0]))
def test_read_facts_file(text):
    # The user-facing path: `--facts FILE` is read from disk, decoded, parsed as JSON, then as facts.
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "facts.json")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
        facts, error = outcome("TargetSpec.facts", TargetSpec(facts_file=path).facts, allowed=(EnvpinInputError,))
    if error is not None:
        assert "\n" not in str(error), "a one-line message"
    else:
        round_trips(facts)


# ---------------------------------------------------------------- EnvFacts (`envpin verify --format json`, doctor --facts)

SEED_ENV = [
    EnvFacts(
        python=EnvPython("3.11.7", "/opt/env/bin/python", "/opt/env", "/usr", "venv", 64, "CPython", "/opt/env"),
        packages=Packages(pip={"torch": "2.5.1+cu124", "nvidia-cudnn-cu12": "9.1.0.70"},
                          conda={"python": CondaPackage("3.11.7", "h955ad1f_0", "conda-forge")}),
        torch=FrameworkFacts(version="2.5.1+cu124", cuda="12.4", cudnn="9.1.0", arch_list=("sm_50", "sm_90"),
                             is_available=True, device_count=1, import_ok=True,
                             devices=(Device("NVIDIA GeForce RTX 3090", "8.6"),), smoke={"matmul": "ok"},
                             loaded=("libcudart.so.12",)),
        library_dirs={"/opt/env/lib": ["libcudart.so.12"]},
        notes=("probe ran in 1.2 s",),
    ),
    EnvFacts(python=EnvPython("3.10.4"), torch=FrameworkFacts(import_ok=False, import_error="OSError: libcudnn.so.9")),
]
SEED_ENV_DOCUMENTS = [env_facts_to_json(env) for env in SEED_ENV]
SEED_ENV_PATHS = [paths_of(document) for document in SEED_ENV_DOCUMENTS]


@given(document=st.one_of(
    st.integers(0, len(SEED_ENV_DOCUMENTS) - 1).flatmap(lambda i: mutated_document(SEED_ENV_DOCUMENTS[i], SEED_ENV_PATHS[i])),
    json_values,
))
def test_env_facts_from_json(document):
    env, _ = outcome("facts.env_facts_from_json", env_facts_from_json, document, allowed=(EnvpinInputError,))
    if env is not None:
        assert isinstance(env, EnvFacts)
        text = json.dumps(env_facts_to_json(env), sort_keys=True)  # an accepted document writes back
        assert json.dumps(env_facts_to_json(env_facts_from_json(json.loads(text))), sort_keys=True) == text


# ---------------------------------------------------------------- --framework / --spec / policy / index

NAMES = ("torch", "torchvision", "torchaudio", "tensorflow", "jax", "Torch", "PyTorch", "tf", "TORCH_VISION", "numpy", "")
OPERATORS = ("==", ">=", "<=", "~=", "!=", "===", "<", ">", "", " == ", "=")
VERSIONS = ("2.5.1", "2.5.*", "2.5.1+cu124", "2.5.1+cpu", "1!2.0", "2.5.1.post1", "0.6", "99", "2.5.1+rocm6.2",
            "2..5", "*", "٣.٣", "latest", "")


@st.composite
def spec_texts(draw) -> str:
    """PEP 508-shaped requirements, valid or nearly so: a name, extras, specifiers, a marker or a URL."""
    text = draw(st.sampled_from(NAMES))
    if draw(st.booleans()):
        text += "[" + ",".join(draw(st.lists(st.sampled_from(("cuda12", "cuda13", "and-cuda", "", "x y")), max_size=2))) + "]"
    clauses = [draw(st.sampled_from(OPERATORS)) + draw(st.sampled_from(VERSIONS)) for _ in range(draw(st.integers(0, 3)))]
    text += ",".join(clauses)
    tail = draw(st.sampled_from(("", "", " ; python_version >= '3.9'", " @ https://example.org/torch.whl", ";", " #")))
    return text + tail


frameworks = st.lists(st.one_of(st.sampled_from(NAMES), st.text(max_size=8)), max_size=3)
specs = st.lists(st.one_of(spec_texts(), st.text(max_size=20)), max_size=3)
policies = st.one_of(st.sampled_from(("minor", "strict", "MINOR", "")), st.text(max_size=6))
indexes = st.one_of(st.none(), st.sampled_from(("https://download.pytorch.org/whl", "http://127.0.0.1:8080/whl/",
                                                "file:///srv/whl", "ftp://x", "download.pytorch.org/whl", "")),
                    st.text(max_size=20))


@given(frameworks=frameworks, specs=specs, policy=policies, index=indexes)
@example(frameworks=["torch"], specs=["torch==2.5.1+cu124", "torch>=2.4"], policy="minor", index=None)
def test_parse_request(frameworks, specs, policy, index):
    request, _ = outcome("resolver.request.parse_request", parse_request, frameworks, specs, policy, index,
                         allowed=(EnvpinInputError,))
    if request is not None:
        assert isinstance(request, Request) and request.required


# ---------------------------------------------------------------- target flags


KNOWN_GPUS = sorted({name for model in load_database().gpus for name in model.names})[::7] + [
    "NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-32GB", "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 5090"]
BASE = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7"), driver=Driver("535.104.05", "12.2", "nvml"),
                 gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", "8.6"),))
GPU_NAMES = ("NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-32GB", "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 5090",
             "NVIDIA Jetson AGX Thor", "GeForce GTX 1080 Ti", "Radeon RX 7900", "nvidia", "", " ")
DRIVERS = ("535.104.05", "570.124.06", "470.82.01", "560.94", "none", "None", "", "525.60.13", "99.1", "10000.1",
           "535.104.05.1", "535..1", "٥٣٥.١٠٤", "５３５", "1e3", "-535", "9" * 5000, " 535.104.05 ")
CAPABILITIES = ("8.6", "12.0", "11.0", "3.5", "0.0", "99.9", "8.6\n", "8", "8.66", "٨.٦", "sm_86", "")
PYTHONS = ("3.11", "3.8", "3.14", "3.11.7", "3.13t", "2.7", "3", "3.", "3.1\n", "3.١١", "")


def maybe(values, text_size=8):
    return st.one_of(st.none(), st.sampled_from(values), st.text(max_size=text_size))


# Flags that mostly pass, so that inputs reach make_target and the solve, not only the first check.
plausible_overrides = st.builds(
    TargetOverrides,
    os=st.sampled_from((None, "linux", "windows", "macos")),
    arch=st.sampled_from((None, "x86_64", "aarch64", "arm64", "AMD64")),
    driver=st.sampled_from((None, "none", "384.98", "418.67", "470.82.01", "525.60.13", "528.33", "535.104.05",
                            "560.94", "570.124.06", "580.65.06", "610.43.02", "٥٣٥.١٠٤", "５３５")),
    gpus=st.lists(st.sampled_from(KNOWN_GPUS), max_size=3).map(tuple),
    compute_capabilities=st.lists(st.sampled_from(("3.5", "5.0", "6.1", "7.0", "8.6", "8.9", "9.0", "10.0", "11.0",
                                                   "12.0", "12.1", "8.6\n", "٨.٦")), max_size=1).map(tuple),
    python=st.sampled_from((None, "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.13t", "3.7")),
)


hostile_overrides = st.builds(
    TargetOverrides,
    os=maybe(("linux", "windows", "macos", "Linux", "darwin")),
    arch=maybe(("x86_64", "aarch64", "arm64", "AMD64", "x64", "i686")),
    driver=maybe(DRIVERS),
    gpus=st.lists(st.one_of(st.sampled_from(GPU_NAMES), st.text(max_size=12)), max_size=3).map(tuple),
    compute_capabilities=st.lists(st.one_of(st.sampled_from(CAPABILITIES), st.text(max_size=5)), max_size=3).map(tuple),
    python=maybe(PYTHONS),
)


overrides = st.one_of(plausible_overrides, hostile_overrides)


def check_target(database, chosen: TargetOverrides) -> Target | None:
    facts, _ = outcome("resolver.target.apply_overrides", apply_overrides, BASE, chosen, allowed=(EnvpinInputError,))
    if facts is None:
        return None
    target, _ = outcome("resolver.target.make_target", make_target, database, facts, allowed=(EnvpinInputError,))
    return target


@given(chosen=overrides)
@example(chosen=TargetOverrides(driver="٥٣٥.١٠٤"))
@example(chosen=TargetOverrides(python="3.1\n"))
def test_apply_overrides_then_make_target(database, chosen):
    target = check_target(database, chosen)
    assert target is None or isinstance(target, Target)


TORCH = parse_request(["torch"], [])


@settings(max_examples=slow_examples(2))
@given(chosen=plausible_overrides)
def test_overrides_all_the_way_to_a_solve(database, chosen):
    # Whatever the flags pass, the resolver must answer (a plan or "unsatisfiable"), not crash on them.
    target = check_target(database, chosen)
    if target is not None:
        answer, _ = outcome("resolver.solve.solve", solve, database, target, TORCH, allowed=(EnvpinError,))
        assert answer is None or isinstance(answer, (Plan, Unsatisfiable))

