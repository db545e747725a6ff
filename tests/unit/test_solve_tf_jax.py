"""Table-driven solve cases for TensorFlow, JAX and environments with several frameworks.

Each case names the fact that decides it and where that fact comes from. `expect` lists the framework pins
(`tensorflow[and-cuda]==2.21.0`), or is `!code` for an unsatisfiable answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from envpin.facts.host import HostFacts, PythonInfo
from envpin.resolver.builds import builds_of
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

RTX3090, GTX1080TI, V100 = "NVIDIA GeForce RTX 3090", "NVIDIA GeForce GTX 1080 Ti", "Tesla V100-SXM2-32GB"
TF_SOURCE_MD = "tensorflow/docs source.md tested build configurations"
JAX_INSTALL = "jax-ml/jax docs/installation.md"


@dataclass
class Case:
    id: str
    fact: str
    expect: tuple[str, ...] | str
    frameworks: tuple[str, ...] = ()
    specs: tuple[str, ...] = ()
    driver: str | None = "560.35.03"
    gpus: tuple[str, ...] = (RTX3090,)
    python: str = "3.11"
    os: str = "linux"
    arch: str = "x86_64"
    says: str = ""  # a phrase the message, a fix, a reason or a step must hold
    cpu_only: tuple[str, ...] = ()  # frameworks asked for as CPU builds by name (`tensorflow-cpu` in a project)


TF = ("tensorflow",)
JAX = ("jax",)
CASES = [
    # ---- TensorFlow
    Case("tf-py311", f"2.21.0 is CUDA 12.5 on Linux with [and-cuda] ({TF_SOURCE_MD}; PyPI)", ("tensorflow[and-cuda]==2.21.0",), TF),
    Case("tf-py39", "2.21.0 needs Python ≥ 3.10 (PyPI tags); 2.20.0 is the last for 3.9", ("tensorflow[and-cuda]==2.20.0",), TF,
         python="3.9"),
    # torch <= 2.2 and TensorFlow 2.7-2.11 were compiled against NumPy 1.x without capping numpy: their plans pin numpy<2
    Case("tf-py38", "2.13 is the last for 3.8 and has no [and-cuda]: system CUDA 11.8 / cuDNN 8.6", ("tensorflow==2.13.1",), TF,
         python="3.8", says="install CUDA 11.8 and cuDNN 8.6"),
    Case("tf-470-py310", "R470 is CUDA 11.4: 2.12-2.14 are CUDA 11.8 builds with no sm_86 cubin (sm_35-sm_75 and "
         "compute_80 PTX, the wheels' build_info.py), whose PTX an 11.4 driver cannot JIT; 2.11.1 is CUDA 11.2",
         ("tensorflow==2.11.1", "numpy<2"), TF, driver="470.82.01", python="3.10", says="through JIT from its compute_80 PTX"),
    Case("tf-470-py311", "2.11 is the last CUDA 11.2 TF and has no cp311 wheel; 2.12 on reaches sm_86 only by CUDA 11.8 PTX",
         "!gpu-unsupported", TF, driver="470.82.01", says="JIT needs a driver for CUDA 11.8 (this one supports 11.4)"),
    Case("tf-1080ti-580", "Pascal (sm_61) has no code in 2.17+ beyond sm_60, which it runs: 2.21.0's list starts at sm_60",
         ("tensorflow[and-cuda]==2.21.0",), TF, driver="580.65.06", gpus=(GTX1080TI,), says="through its sm_60 cubin"),
    Case("tf-maxwell-580", "2.17+ compile no Maxwell code (build_info.py: sm_60 first); 2.16.2 has sm_50",
         ("tensorflow[and-cuda]==2.16.2",), TF, driver="580.65.06", gpus=("NVIDIA GeForce GTX 970",),
         says="has no code for NVIDIA GeForce GTX 970 (sm_52)"),
    Case("tf-2.14-py311", "tensorrt==8.5.3.1 has no cp311 wheel", "!python-unsupported", specs=("tensorflow==2.14.*",),
         says="use Python 3.10"),
    Case("tf-2.15.0-and-cuda", "2.15.0 pins tensorrt-libs==8.6.1, which is not on PyPI", "!not-installable",
         specs=("tensorflow[and-cuda]==2.15.0",), says="tensorrt-libs"),
    Case("tf-2.15-py311", "2.15.1 dropped the tensorrt pins (PR #62520)", ("tensorflow[and-cuda]==2.15.1",),
         specs=("tensorflow==2.15.*",)),
    Case("tf-and-cuda-2.13", "[and-cuda] first appears in 2.14.0 (PyPI metadata)", "!no-matching-release",
         specs=("tensorflow[and-cuda]==2.13.*",), says="first release with it is 2.14.0"),
    Case("tf-windows-py310", "native Windows GPU ends at 2.10 (source_windows.md), CUDA 11.2 / cuDNN 8.1 from conda",
         ("tensorflow==2.10.1", "numpy<2"), TF, os="windows", driver="560.94", python="3.10",
         says="conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0"),
    Case("tf-windows-py311", "2.10 has no Python 3.11 wheels; WSL2 is the route", "!python-unsupported", TF, os="windows",
         driver="560.94", says="WSL2"),
    Case("tf-windows-cpu", "no NVIDIA driver: the CPU package", ("tensorflow-cpu==2.21.0",), TF, os="windows", driver=None,
         gpus=(), python="3.12"),
    Case("tf-linux-cpu", "no NVIDIA driver: tensorflow-cpu", ("tensorflow-cpu==2.21.0",), TF, driver=None, gpus=()),
    Case("tf-macos", "no GPU support on macOS (pip.md)", ("tensorflow==2.21.0",), TF, os="macos", arch="arm64", driver=None,
         gpus=()),
    Case("tf-aarch64-gpu", "Linux aarch64 TensorFlow wheels are CPU builds", ("tensorflow==2.21.0",), TF, arch="aarch64",
         driver="580.65.06", gpus=("NVIDIA GH200 480GB",), says="no NVIDIA GPU build for linux-aarch64"),
    Case("tf-py314", "no TensorFlow wheel for 3.14", "!python-unsupported", TF, python="3.14", says="use Python 3.13"),
    Case("tf-driver-450", "CUDA 12 TF needs ≥ 525.60.13, and R450 (CUDA 11.0) cannot JIT the CUDA 11.2+ PTX that is "
         "all 2.5+ has for sm_86: only 2.4 (CUDA 11.0, Python ≤ 3.8) runs", "!gpu-unsupported", TF, driver="450.80.02",
         python="3.10", says="tensorflow 2.4.4"),
    # ---- JAX
    Case("jax-535-py311", f"jax[cuda12] needs driver ≥ 525 ({JAX_INSTALL}); 0.10.2 is the last for 3.11",
         ("jax[cuda12]==0.10.2",), JAX, driver="535.104.05"),
    Case("jax-580-py312", "R580 runs jax[cuda13]", ("jax[cuda13]==0.12.0.1",), JAX, driver="580.65.06", python="3.12"),
    Case("jax-535-py312", "jax[cuda13] needs ≥ 580", ("jax[cuda12]==0.12.0.1",), JAX, driver="535.104.05", python="3.12"),
    Case("jax-py310", "0.6.2 is the last jax for Python 3.10", ("jax[cuda12]==0.6.2",), JAX, driver="535.104.05",
         python="3.10"),
    Case("jax-470", "CUDA 12 jax needs ≥ 525", "!driver-too-old", JAX, driver="470.82.01", says="install NVIDIA driver 525"),
    Case("jax-cuda13-535", "jax[cuda13] needs ≥ 580 on Linux", "!driver-too-old", specs=("jax[cuda13]",),
         driver="535.104.05", says="jax[cuda12]"),
    Case("jax-cuda13-0.7.0", "jax-cuda13-plugin 0.7.0 was never published; 0.7.2 is the first", "!no-matching-release",
         specs=("jax[cuda13]==0.7.0",), driver="580.65.06", says="0.7.2"),
    Case("jax-windows", "no NVIDIA GPU support on native Windows: the CPU jaxlib", ("jax==0.10.2",), JAX, os="windows",
         driver="560.94", says="WSL2"),
    Case("jax-macos", "Apple silicon: CPU jaxlib", ("jax==0.12.0.1",), JAX, os="macos", arch="arm64", driver=None, gpus=(),
         python="3.12"),
    Case("jax-no-driver", "no driver: CPU jaxlib", ("jax==0.10.2",), JAX, driver=None, gpus=()),
    Case("jax-1080ti-580", "jax[cuda13] needs SM ≥ 7.5; CUDA 12 supports ≥ 5.2", ("jax[cuda12]==0.12.0.1",), JAX,
         driver="580.65.06", gpus=(GTX1080TI,), python="3.12"),
    Case("jax-cuda13-1080ti", "jax[cuda13] needs SM ≥ 7.5", "!gpu-unsupported", specs=("jax[cuda13]",),
         driver="580.65.06", gpus=(GTX1080TI,), python="3.12", says="7.5"),
    Case("jax-v100-580", "Volta (7.0) is below CUDA 13's 7.5", ("jax[cuda12]==0.12.0.1",), JAX, driver="580.65.06",
         gpus=(V100,), python="3.12"),
    Case("jax-gtx780", "Kepler is below SM 5.2", "!gpu-unsupported", JAX, driver="470.82.01",
         gpus=("NVIDIA GeForce GTX 780",)),
    Case("jax-aarch64", "the CUDA plugins have Linux aarch64 wheels", ("jax[cuda13]==0.12.0.1",), JAX, arch="aarch64",
         driver="580.65.06", gpus=("NVIDIA GH200 480GB",), python="3.12"),
    Case("jax-py38", "no jax in the database for Python 3.8", "!python-unsupported", JAX, python="3.8"),
    # ---- several frameworks: CUDA majors and nvidia-* pins must meet
    Case("torch2.5.1+jax", "torch 2.5.1 pins nvidia-cudnn-cu12==9.1.0.70; jax ≥ 0.6 needs ≥ 9.8: jax 0.5.3",
         ("torch==2.5.1", "jax[cuda12]==0.5.3"), JAX, specs=("torch==2.5.1",), says="needs nvidia-cudnn-cu12"),
    Case("torch2.1.2+jax", "torch 2.1.2 pins cuDNN 8.9.2.26; jax 0.4.28 is the newest whose plugin wants cuDNN < 9",
         ("torch==2.1.2", "jax[cuda12]==0.4.28", "numpy<2"), JAX, specs=("torch==2.1.2",)),
    Case("torch2.8+tf", "TF 2.21 needs nvidia-nccl-cu12 ≥ 2.27.7; torch 2.8.0 pins 2.27.3: TF 2.20.0",
         ("torch==2.8.0", "tensorflow[and-cuda]==2.20.0"), TF, specs=("torch==2.8.0",), says="nvidia-nccl-cu12"),
    Case("torch2.8+tf2.19", "TF 2.19 pins nvidia-cublas-cu12==12.5.3.2, torch 2.8.0 pins 12.8.4.1", "!pins-clash",
         specs=("torch==2.8.0", "tensorflow==2.19.*"), says="nvidia-cublas-cu12"),
    Case("torch2.8+jax0.4.27", "jax 0.4.27 wants cuDNN < 9, torch 2.8.0 pins 9.10.2.21", "!pins-clash",
         specs=("torch==2.8.0", "jax==0.4.27"), says="keeping torch==2.8.0"),
    Case("torch+jax-580", "both on CUDA 13: torch 2.15.0 (cu132) and jax[cuda13]", ("torch==2.15.0", "jax[cuda13]==0.12.0.1"),
         ("torch", "jax"), driver="580.65.06", python="3.12"),
    # ---- several frameworks, only one of them a CUDA build: no pins to agree, so torch is solved as it is alone
    Case("torch+tensorflow-cpu-5090", "tensorflow-cpu pins no CUDA library: torch takes its newest build for driver 570 "
         "(cu129) as alone, not the newest whose PyPI pins were read", ("torch==2.13.0+cu129", "tensorflow-cpu==2.21.0"),
         specs=("torch", "tensorflow"), cpu_only=("tensorflow",), driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",), python="3.12"),
    Case("torch+jax-windows-1080ti", "jax has no Windows GPU build: beside its CPU jaxlib torch is 2.7.1+cu118, the "
         "newest for Python 3.9 and driver 472, as alone", ("torch==2.7.1+cu118", "jax==0.4.30"), specs=("torch", "jax"),
         os="windows", driver="472.12", gpus=(GTX1080TI,), python="3.9"),
    Case("torch-cu118+jax-cuda12", "torch's cu118 builds carry no pins the database read (only PyPI's build's are): "
         "beside jax[cuda12] none can be judged, which is said (not a crash)", "!pins-clash",
         specs=("torch==2.7.1+cu118", "jax[cuda12]"), driver="535.104.05", says="keeping jax[cuda12]"),
    # ---- a numpy bound against the releases' own Requires-Dist on numpy (jax.yaml / tensorflow.yaml `numpy`)
    Case("tf-numpy-below-1.24-py311", "numpy<1.24 (multinerf's bound): tensorflow 2.18+ require numpy>=1.26.0 "
         "(METADATA), 2.17.1 requires <2.0.0,>=1.23.5 on Python 3.11", ("tensorflow[and-cuda]==2.17.1", "numpy<1.24"),
         specs=("tensorflow", "numpy<1.24"), driver="570.86.10",
         says="tensorflow 2.21.0 was passed over: tensorflow[and-cuda] 2.21.0 requires numpy>=1.26.0"),
    Case("tf-numpy-below-1.24-py312", "on Python 3.12 2.16-2.17 require numpy>=1.26.0 too (a python_version marker) "
         "and 2.12-2.15 have no cp312 wheel: refused, naming the bound and the release that fits without it",
         "!numpy-conflict", specs=("tensorflow", "numpy<1.24"), driver="570.86.10", python="3.12",
         says="without it, tensorflow[and-cuda] 2.21.0 would fit (it requires numpy>=1.26.0)"),
    Case("jax-numpy-below-2", "jax 0.7.2+ require numpy>=2.0 (jax's and jaxlib's METADATA); 0.7.1 numpy>=1.26",
         ("jax[cuda12]==0.7.1", "numpy<2"), specs=("jax", "numpy<2"), driver="570.86.10",
         says="which --spec numpy<2 allows"),
    Case("tf+jax-numpy-below-1.24-py311", "both weighed: TF 2.17.1 (CUDA 12.3, cuDNN 8.9) and the newest jax whose "
         "numpy and cuDNN pins agree with it", ("tensorflow[and-cuda]==2.17.1", "jax[cuda12]==0.4.28", "numpy<1.24"),
         specs=("tensorflow", "jax", "numpy<1.24"), driver="570.86.10"),
    Case("tf-numpy-1.21-pinned", "numpy==1.21.6: 2.12+ require numpy>=1.22, 2.8-2.11 >=1.20; 2.11.1 also needs numpy<2 "
         "(NumPy 1.x ABI), pinned together", ("tensorflow==2.11.1", "numpy<2,==1.21.6"),
         specs=("tensorflow", "numpy==1.21.6"), driver="570.86.10", python="3.10",
         says="tensorflow 2.21.0 was passed over: tensorflow[and-cuda] 2.21.0 requires numpy>=1.26.0"),
    Case("torch2.2+jax-numpy", "torch 2.2.2 was compiled against NumPy 1.x (numpy<2) and jax 0.7.2+ require numpy>=2.0 "
         "(jax's and jaxlib's METADATA): beside it jax is 0.7.1 (numpy>=1.26)", ("torch==2.2.2+cpu", "jax==0.7.1", "numpy<2"),
         specs=("torch==2.2.2", "jax"), driver=None, gpus=(),
         says="jax 0.10.2 was passed over: jax 0.10.2 (CPU) needs numpy>=2.0 and torch 2.2.2+cpu numpy<2"),
    Case("torch2.0.1-cu118+tf2.13", "torch 2.0.1+cu118 carries its CUDA in torch/lib (pytorch/builder build_cuda.sh; its "
         "wheel names no nvidia-*) and TF 2.13 loads the system CUDA 11.8: no library pinned twice, one CUDA major",
         ("torch==2.0.1+cu118", "tensorflow==2.13.0", "numpy<2"), specs=("torch==2.0.1+cu118", "tensorflow==2.13.0"),
         driver="535.104.05", python="3.10", says="carries its CUDA libraries in torch/lib"),
    Case("torch2.2+jax0.10-numpy", "the same two pinned: no numpy serves both", "!pins-clash",
         specs=("torch==2.2.2", "jax==0.10.2"), driver=None, gpus=(), says="no numpy serves both"),
    Case("torch2.5.1+jax-cuda13", "torch 2.5.1 is CUDA 12, jax[cuda13] CUDA 13: one major per environment", "!pins-clash",
         specs=("torch==2.5.1", "jax[cuda13]"), driver="580.65.06", says="CUDA 13"),
]


def run(database, case: Case) -> Plan | Unsatisfiable:
    facts = HostFacts(os=case.os, arch=case.arch, python=PythonInfo(case.python))
    overrides = TargetOverrides(driver=case.driver or "none", gpus=case.gpus)
    target = make_target(database, apply_overrides(facts, overrides))
    return solve(database, target, parse_request(list(case.frameworks), list(case.specs),
                                                 cpu_only=frozenset(case.cpu_only)))


def _texts(answer: Plan | Unsatisfiable) -> str:
    if isinstance(answer, Unsatisfiable):
        return "\n".join([answer.message, *answer.fixes])
    return "\n".join([*answer.reasons, *answer.notes, *answer.warnings])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_solve(database, case):
    answer = run(database, case)
    if isinstance(case.expect, str):
        assert isinstance(answer, Unsatisfiable), f"{case.fact}: got {[p.requirement for p in answer.packages]}"
        assert answer.code == case.expect[1:], f"{case.fact}: {answer.message}"
    else:
        assert isinstance(answer, Plan), f"{case.fact}: {answer.code}: {answer.message}"
        pins = tuple(p.requirement for p in answer.packages if p.name not in ("torchvision", "torchaudio"))
        assert pins == case.expect, case.fact
    assert case.says in _texts(answer)


def test_enough_cases():
    single = [c for c in CASES if len(set(c.frameworks) | {s.split("[")[0].split("=")[0] for s in c.specs}) == 1]
    several = [c for c in CASES if c not in single]
    assert len(single) >= 30 and len(several) >= 5


# The pins that decide the two-framework cases, as read from the wheels' METADATA on PyPI (Requires-Dist).
PYPI_PINS = [
    ("torch", "2.5.1", "nvidia-cudnn-cu12", "==9.1.0.70"),
    ("torch", "2.1.2", "nvidia-cudnn-cu12", "==8.9.2.26"),
    ("torch", "2.8.0", "nvidia-nccl-cu12", "==2.27.3"),
    ("torch", "2.8.0", "nvidia-cublas-cu12", "==12.8.4.1"),
    ("torch", "2.8.0", "nvidia-cudnn-cu12", "==9.10.2.21"),
    ("tensorflow", "2.21.0", "nvidia-nccl-cu12", ">=2.27.7"),
    ("tensorflow", "2.19.1", "nvidia-cublas-cu12", "==12.5.3.2"),
    ("jax", "0.6.0", "nvidia-cudnn-cu12", ">=9.8"),
    ("jax", "0.4.28", "nvidia-cudnn-cu12", "<9.0"),
]


@pytest.mark.parametrize("framework, version, library, clause", PYPI_PINS)
def test_database_holds_the_pypi_pins(database, framework, version, library, clause):
    builds = [b for b in builds_of(database, framework) if str(b.version) == version and b.pins]
    assert builds, f"no pinned build of {framework} {version}"
    specifier = builds[0].pins[library]
    assert clause in specifier.split(","), f"{framework} {version} {library}{specifier}"


def test_tensorflow_on_native_windows_with_a_gpu_and_python_3_11_is_offered_its_cpu_build(database):
    # TensorFlow's last native-Windows GPU build is 2.10 (Python ≤ 3.10); later releases are CPU builds there
    facts = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.11"))
    target = make_target(database, apply_overrides(facts, TargetOverrides(driver="560.94", gpus=("NVIDIA GeForce RTX 3090",))))
    answer = solve(database, target, parse_request(["tensorflow"], []))
    assert isinstance(answer, Unsatisfiable)
    assert answer.fixes[0].startswith("use Python 3.10")
    assert "or use the CPU build: tensorflow-cpu==2.21.0 (cpu), which leaves the GPU unused (--driver none)" in answer.fixes
    assert answer.fixes.index(next(f for f in answer.fixes if "CPU build" in f)) < answer.fixes.index(
        next(f for f in answer.fixes if "WSL2" in f))


def _windows_1080ti(database):
    facts = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.9"))
    return make_target(database, apply_overrides(facts, TargetOverrides(driver="472.12", gpus=(GTX1080TI,))))


def test_a_framework_beside_the_one_asked_for_as_a_gpu_build_takes_its_cpu_build_where_it_has_no_gpu_build(database):
    """torch asked for as a CUDA build beside tensorflow>=2.13 on native Windows, where TensorFlow has no GPU build
    after 2.10: torch gets the GPU, TensorFlow its CPU build (what pip installs), said; alone, TensorFlow asks the GPU."""
    asked = {"torch": "--extra-index-url https://download.pytorch.org/whl/cu121"}
    answer = solve(database, _windows_1080ti(database), parse_request([], ["torch==2.1.2", "tensorflow>=2.13"], gpu_asked=asked))
    assert isinstance(answer, Plan) and answer.accelerators == {"torch": "cu118", "tensorflow": "cpu"}
    assert any("the GPU is for what the project asks for as a GPU build (torch: --extra-index-url" in r for r in answer.reasons)
    alone = solve(database, _windows_1080ti(database), parse_request([], ["torch==2.1.2", "tensorflow>=2.13"]))
    assert isinstance(alone, Unsatisfiable) and alone.code == "no-gpu-build" and "tensorflow>=2.13" in alone.message


def test_a_framework_asked_for_as_a_gpu_build_where_it_has_none_is_refused_by_that_line(database):
    """`jaxlib=0.3.15=*cuda*` on native Windows: JAX has no GPU build there in any release, which the refusal says
    with the line (not that 0.3.15 predates the database, nor anything about the CPU TensorFlow beside it)."""
    asked = {"jax": "jaxlib=0.3.15=*cuda* (environment.yml: dependencies[12])"}
    answer = solve(database, _windows_1080ti(database),
                   parse_request([], ["jax==0.3.16.*", "tensorflow==2.11.0"], gpu_asked=asked))
    assert isinstance(answer, Unsatisfiable) and answer.code == "no-gpu-build"
    assert answer.message.startswith("jaxlib=0.3.15=*cuda* (environment.yml: dependencies[12]) asks for jax's NVIDIA GPU")
