"""Table-driven solve cases for PyTorch over the real database.

Each case names the fact that decides it. `expect` is the torch pin (full local version, or the plain
version when PyPI's own wheel is that build) or `!code` for an unsatisfiable answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from envpin.facts.host import Driver, Gpu, HostFacts, Libc, PythonInfo
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

RTX3090, RTX4090, RTX5090 = "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 5090"
GTX1080TI, V100, K80, T4 = "NVIDIA GeForce GTX 1080 Ti", "Tesla V100-SXM2-32GB", "Tesla K80", "Tesla T4"


@dataclass
class Case:
    id: str
    fact: str  # the fact that decides the answer
    expect: str
    driver: str | None = "535.104.05"
    gpus: tuple[str, ...] = (RTX3090,)
    python: str = "3.11"
    os: str = "linux"
    arch: str = "x86_64"
    specs: tuple[str, ...] = ()
    policy: str = "minor"
    capabilities: tuple[str, ...] = ()
    index: str | None = field(default="any")  # expected index_url, when the case is about it


CASES = [
    # ---- drivers across generations, RTX 3090 (sm_86)
    Case("535-3090-py311", "cu132/cu130 need R580; 2.14.1 still ships cu126 with sm_86", "2.14.1+cu126"),
    Case("580-3090", "R580 runs CUDA 13; PyPI's 2.15.0 is the cu132 build", "2.15.0", driver="580.65.06", index=None),
    Case("525.60.13-3090", "exactly the CUDA 12 minor-compat minimum", "2.14.1+cu126", driver="525.60.13"),
    Case("525.60.12-3090", "one below the CUDA 12 minimum: CUDA 11 only, cu118 ends at 2.7", "2.7.1+cu118", driver="525.60.12"),
    Case("470-3090", "R470 is CUDA 11.4: minor-compat 11.x, newest cu118 is torch 2.7.1", "2.7.1+cu118", driver="470.82.01"),
    Case("450.80.02-3090", "the CUDA 11 minor-compat baseline", "2.7.1+cu118", driver="450.80.02"),
    Case("450.51-3090-py310", "below 450.80.02 only CUDA 10.2 builds remain, none has sm_86", "!gpu-unsupported",
         driver="450.51.06", python="3.10"),
    Case("450.51-3090-py311", "no cu102 build for Python 3.11: the driver is what stops it", "!driver-too-old",
         driver="450.51.06"),
    Case("418-3090", "R418 is CUDA 10.1: no torch build runs", "!driver-too-old", driver="418.39"),
    Case("560-3090", "560 still CUDA 12: cu126", "2.14.1+cu126", driver="560.35.03"),
    Case("575-3090", "575 is CUDA 12.9; 2.14.1's newest 12.x build is cu126", "2.14.1+cu126", driver="575.57.08"),
    Case("610-3090", "R610 runs CUDA 13.2", "2.15.0", driver="610.43.02"),
    # ---- strict driver policy (Table 3 per toolkit)
    Case("strict-535", "strict: cu12x of 2.8+ need ≥ 560.28.03; 2.7.1's cu118 needs 520.61.05", "2.7.1+cu118",
         policy="strict"),
    Case("strict-535-2.5", "strict: cu124 needs 550.54.14, cu121 needs 530.30.02", "2.5.1+cu121", policy="strict",
         specs=("torch==2.5.1",)),
    Case("strict-551.61-win", "strict on Windows: cu124 needs 551.61 exactly; cu126 needs 560.76",
         "2.6.0+cu124", os="windows", driver="551.61", python="3.11", policy="strict", specs=("torch==2.6.0",)),
    Case("strict-570.26-5090", "strict: cu128 needs 570.26; the last cu128 is 2.11.0", "2.11.0+cu128",
         driver="570.26", gpus=(RTX5090,), policy="strict"),
    Case("strict-560.28-3090", "strict: cu126 needs 560.28.03", "2.14.1+cu126", driver="560.28.03", policy="strict"),
    # ---- compute capability: Kepler … Blackwell
    Case("5090-570", "sm_120 needs a 12.8+ build: cu126 lacks it, 2.13.0's cu129 has it", "2.13.0+cu129",
         driver="570.124.06", gpus=(RTX5090,)),
    Case("5090-580", "2.15.0 cu132 has sm_120", "2.15.0", driver="580.65.06", gpus=(RTX5090,)),
    Case("5090-torch2.6", "torch 2.6 has no sm_120 in any build", "!gpu-unsupported", driver="570.124.06",
         gpus=(RTX5090,), specs=("torch==2.6.*",)),
    Case("5090-torch2.7", "2.7's cu128 is the first build with sm_120", "2.7.1+cu128", driver="570.124.06",
         gpus=(RTX5090,), specs=("torch>=2.7,<2.8",)),
    Case("v100-2.11", "Volta left cu128/cu129 in 2.11; cu126 keeps sm_70", "2.11.0+cu126", driver="575.57.08",
         gpus=(V100,), specs=("torch==2.11.*",)),
    Case("v100-580", "cu130/cu132 start at sm_75; cu126 of 2.14.1 has sm_70", "2.14.1+cu126", driver="580.65.06",
         gpus=(V100,)),
    Case("v100-2.10", "2.10's cu129 still has sm_70", "2.10.0+cu129", driver="575.57.08", gpus=(V100,),
         specs=("torch==2.10.*",)),
    Case("1080ti-580", "sm_61 runs the sm_60 cubin of cu126; cu13x have no Pascal", "2.14.1+cu126",
         driver="580.65.06", gpus=(GTX1080TI,)),
    Case("1080ti-2.8-cu128", "2.8's cu128/cu129 start at sm_70: a GTX 1080 Ti gets cu126", "2.8.0+cu126",
         driver="575.57.08", gpus=(GTX1080TI,), specs=("torch==2.8.0",)),
    Case("1080ti-2.15", "2.15 has no build with Pascal code", "!gpu-unsupported", driver="580.65.06",
         gpus=(GTX1080TI,), specs=("torch==2.15.*",)),
    Case("k80-470", "sm_37 is in the cu118 builds up to 2.7 (2.6/2.7 unverified); R470 is CUDA 11.4",
         "2.7.1+cu118", driver="470.82.01", gpus=(K80,), python="3.10"),
    Case("k80-2.5", "2.5's cu118 has sm_37 (builder release/2.5)", "2.5.1+cu118", driver="470.82.01",
         gpus=(K80,), python="3.10", specs=("torch<2.6",)),
    Case("gtx780-sm35", "no torch build has sm_35 code, and no cubin runs on an older minor", "!gpu-unsupported",
         driver="470.82.01", gpus=("NVIDIA GeForce GTX 780",), python="3.10"),
    Case("gtx980-sm52", "sm_52 runs the sm_50 cubin", "2.14.1+cu126", gpus=("NVIDIA GeForce GTX 980",)),
    Case("t4-535", "T4 is sm_75", "2.14.1+cu126", gpus=(T4,)),
    Case("t4-580", "cu132 has sm_75", "2.15.0", driver="580.65.06", gpus=(T4,)),
    Case("a100-535", "A100 sm_80", "2.14.1+cu126", gpus=("NVIDIA A100-SXM4-80GB",)),
    Case("h100-535", "H100 sm_90 is in cu126", "2.14.1+cu126", gpus=("NVIDIA H100 80GB HBM3",)),
    Case("h200-580", "H200 sm_90 in cu132", "2.15.0", driver="580.95.05", gpus=("NVIDIA H200",)),
    Case("l4-535", "Ada sm_89 runs the sm_86 cubin", "2.14.1+cu126", gpus=("NVIDIA L4",)),
    Case("4090-535", "sm_89 through the sm_86 cubin", "2.14.1+cu126", gpus=(RTX4090,)),
    Case("b200-570", "sm_100 needs a 12.8+ build", "2.13.0+cu129", driver="570.124.06", gpus=("NVIDIA B200",)),
    Case("quadro-rtx6000", "Turing sm_75", "2.14.1+cu126", gpus=("Quadro RTX 6000",)),
    Case("rtx-a6000", "sm_86", "2.14.1+cu126", gpus=("NVIDIA RTX A6000",)),
    Case("p100-580", "sm_60", "2.14.1+cu126", driver="580.65.06", gpus=("Tesla P100-PCIE-16GB",)),
    Case("cc-override-12.0", "an unnamed sm_120 GPU", "2.13.0+cu129", driver="575.57.08", gpus=(),
         capabilities=("12.0",)),
    Case("unknown-name-with-cc", "an unknown name with --compute-capability", "2.14.1+cu126",
         gpus=("Acme Prototype GPU",), capabilities=("8.6",)),
    # ---- several GPUs: every one must be covered
    Case("3090+1080ti-580", "cu13x lacks sm_61: cu126 serves both", "2.14.1+cu126", driver="580.65.06",
         gpus=(RTX3090, GTX1080TI)),
    Case("5090+1080ti", "no build has both Pascal and sm_120 code", "!gpu-unsupported", driver="575.57.08",
         gpus=(RTX5090, GTX1080TI)),
    Case("5090+v100-2.10", "2.10 cu128 has sm_70 and sm_120", "2.10.0+cu129", driver="575.57.08",
         gpus=(RTX5090, V100), specs=("torch<2.11",)),
    # ---- Python versions 3.8 … 3.15
    Case("py38", "2.4.1 is the last torch for Python 3.8", "2.4.1+cu124", python="3.8"),
    Case("py39", "2.8.0 is the last torch for Python 3.9", "2.8.0+cu129", python="3.9"),
    Case("py310", "Python 3.10 still has 2.14.1", "2.14.1+cu126", python="3.10"),
    Case("py312", "", "2.14.1+cu126", python="3.12"),
    Case("py313", "", "2.14.1+cu126", python="3.13"),
    Case("py314", "3.14 wheels exist from 2.9", "2.14.1+cu126", python="3.14"),
    Case("py314-2.8", "2.8 has no 3.14 wheels", "!python-unsupported", python="3.14", specs=("torch==2.8.0",)),
    Case("py315-535", "only 2.15.0 has 3.15 wheels, and only a CUDA 13 build", "!driver-too-old", python="3.15"),
    Case("py37", "1.13.1 is the last torch for Python 3.7; PyPI's Linux wheel is its cu117 build", "1.13.1",
         python="3.7", driver="525.60.13", index=None),
    Case("py38-torch2.5", "2.5 starts at Python 3.9", "!python-unsupported", python="3.8", specs=("torch==2.5.1",)),
    # ---- no GPU / no driver / other platforms
    Case("no-driver-linux", "no NVIDIA driver: CPU build from the cpu index", "2.15.0+cpu", driver=None, gpus=(),
         index="https://download.pytorch.org/whl/cpu"),
    Case("gpu-but-no-driver", "a GPU without a driver cannot run CUDA", "2.15.0+cpu", driver=None),
    Case("windows-cpu", "PyPI's Windows wheel is the CPU build", "2.15.0", os="windows", driver=None, gpus=(),
         index=None),
    Case("windows-4090", "Windows needs the PyTorch index for CUDA; 560.94 ≥ 528.33", "2.14.1+cu126",
         os="windows", driver="560.94", gpus=(RTX4090,), python="3.12",
         index="https://download.pytorch.org/whl/cu126"),
    Case("windows-527", "Windows 12.x minimum is 528.33", "2.7.1+cu118", os="windows", driver="527.41"),
    Case("windows-py38-1080", "Windows 2.4.1 cu124 on Python 3.8", "2.4.1+cu124", os="windows", driver="560.94",
         gpus=(GTX1080TI,), python="3.8"),
    Case("macos-arm64", "macOS arm64: PyPI wheel, MPS", "2.15.0", os="macos", arch="arm64", driver=None, gpus=(),
         index=None),
    Case("macos-x86_64", "macOS x86_64 wheels end at 2.2.2", "2.2.2", os="macos", driver=None, gpus=(),
         python="3.11"),
    # ---- specs
    Case("spec-2.5.1", "PyPI's 2.5.1 Linux wheel is the cu124 build", "2.5.1", specs=("torch==2.5.1",), index=None),
    Case("spec-2.5.1+cu121", "a variant named in the spec", "2.5.1+cu121", specs=("torch==2.5.1+cu121",)),
    Case("spec-range-470", "newest in range with a CUDA 11 build", "2.5.1+cu118", driver="470.82.01",
         specs=("torch>=2.4,<2.6",)),
    Case("spec-tv-0.20", "torchvision 0.20.x pairs with torch 2.5.x", "2.5.1", specs=("torchvision==0.20.*",)),
    Case("spec-conflict", "torchvision 0.20.1 pairs with torch 2.5.1 only", "!conflicting-specs",
         specs=("torch==2.6.0", "torchvision==0.20.1")),
    Case("spec-none", "no such release", "!no-matching-release", specs=("torch==9.9",)),
    Case("spec-cpu", "a CPU build asked for by name on a GPU machine", "2.5.1+cpu", specs=("torch==2.5.1+cpu",)),
    Case("spec-rocm", "ROCm asked for by name", "2.5.1+rocm6.2", specs=("torch==2.5.1+rocm6.2",), driver=None,
         gpus=()),
]


def run_case(database, case: Case) -> Plan | Unsatisfiable:
    facts = HostFacts(os=case.os, arch=case.arch, python=PythonInfo(case.python))
    overrides = TargetOverrides(
        driver=case.driver or "none", gpus=case.gpus, compute_capabilities=case.capabilities
    )
    target = make_target(database, apply_overrides(facts, overrides))
    request = parse_request(["torch"], list(case.specs), case.policy)
    return solve(database, target, request)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_solve(database, case):
    answer = run_case(database, case)
    if case.expect.startswith("!"):
        assert isinstance(answer, Unsatisfiable), f"{case.fact}: got {answer.packages[0].version}"
        assert answer.code == case.expect[1:], f"{case.fact}: {answer.message}"
        assert answer.message
        return
    assert isinstance(answer, Plan), f"{case.fact}: {answer.code}: {answer.message}"
    torch = answer.packages[0]
    assert torch.name == "torch"
    assert torch.version == case.expect, case.fact
    if case.index != "any":
        assert answer.index_url == case.index


def test_at_least_sixty_cases():
    assert len(CASES) >= 60


def test_another_os_keeps_the_gpus_but_not_what_the_other_os_installed(database):
    """`--os windows` over a Linux machine's facts (a dual-boot box, or a facts file of another machine): its cards
    are still there, but the Linux driver, C library and detection notes say nothing about Windows."""
    linux = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"),
                      driver=Driver("570.124.06", "12.8", "smi"), gpus=(Gpu(0, RTX4090, "8.9"),),
                      libc=Libc("glibc", "2.39"), notes=("detection: a container without the GPU",))
    windows = apply_overrides(linux, TargetOverrides(os="windows"))
    assert windows.os == "windows" and windows.gpus == linux.gpus
    assert windows.driver is None and windows.libc is None and windows.notes == ()
    answer = solve(database, make_target(database, windows), parse_request(["torch"], [], "minor"))
    assert isinstance(answer, Plan) and answer.accelerator == "cpu"  # a CUDA build needs the Windows driver named
    same = apply_overrides(linux, TargetOverrides(os="linux", python="3.11"))
    assert same.driver == linux.driver and same.libc == linux.libc  # the same OS named again changes nothing
    given = apply_overrides(linux, TargetOverrides(os="windows", driver="572.16"))
    answer = solve(database, make_target(database, given), parse_request(["torch"], [], "minor"))
    assert isinstance(answer, Plan) and answer.accelerator.startswith("cu12")


def _gtx1080ti_windows(database, python="3.9"):
    facts = HostFacts(os="windows", arch="x86_64", python=PythonInfo(python), driver=Driver("472.12", "11.4", "smi"),
                      gpus=(Gpu(0, GTX1080TI, "6.1"),))
    return make_target(database, facts)


def test_a_pinned_cuda_is_kept_where_it_runs_and_left_where_it_does_not(database):
    """conda's `cudatoolkit=11.3` beside `pytorch=1.11.0` (CompVis/stable-diffusion's environment.yaml) is the
    pytorch channel's CUDA 11.3 build: on a 1080 Ti with driver 472 (CUDA 11.4) that build runs, so the solve keeps
    it rather than 1.11.0's newest, cu115. A CUDA the release has no build of that runs here is no reason to refuse:
    the release's preferred build is taken."""
    target = _gtx1080ti_windows(database)
    unpinned = solve(database, target, parse_request(["torch"], ["torch==1.11.0"], "minor"))
    assert isinstance(unpinned, Plan) and unpinned.packages[0].version == "1.11.0+cu115"
    kept = solve(database, target, parse_request(["torch"], ["torch==1.11.0"], "minor", torch_cuda="11.3"))
    assert isinstance(kept, Plan) and kept.packages[0].version == "1.11.0+cu113"
    none_such = solve(database, target, parse_request(["torch"], ["torch==1.11.0"], "minor", torch_cuda="10.1"))
    assert isinstance(none_such, Plan) and none_such.packages[0].version == "1.11.0+cu115"


def test_a_project_reads_its_cudatoolkit_pin_as_the_cuda_of_torch(tmp_path, capsys):
    from envpin.cli import main  # noqa: PLC0415 - the CLI only for this end-to-end case

    (tmp_path / "environment.yml").write_text("channels: [pytorch, defaults]\ndependencies:\n  - python=3.9\n"
                                              "  - cudatoolkit=11.3\n  - pytorch=1.11.0\n  - torchvision=0.12.0\n",
                                              encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), "--os", "windows", "--arch", "x86_64", "--driver", "472.12",
                 "--gpu", GTX1080TI, "--python", "3.9", "--format", "requirements.txt"])
    out = capsys.readouterr().out
    assert code == 0 and "torch==1.11.0+cu113" in out.splitlines() and "torchvision==0.12.0+cu113" in out.splitlines()


def test_only_one_cuda_version_is_a_pin():
    from envpin.readers.project_files import _pinned_cuda  # noqa: PLC0415 - the reader's own parsing

    assert [_pinned_cuda("cudatoolkit", v) for v in ("=11.3", "11.3", "==11.3.1", "11.3.*", "=11.3=h2bc3f7f_2")] == [
        "11.3"] * 5
    assert _pinned_cuda("pytorch-cuda", "=11.8") == "11.8"
    assert [_pinned_cuda("cudatoolkit", v) for v in (">=11", "", "11")] == [None] * 3
    assert _pinned_cuda("cudnn", "=8.2") is None  # cuDNN's version names no CUDA
