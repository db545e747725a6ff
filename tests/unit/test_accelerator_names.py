"""GPU names as the tools print them -> what the database makes of them: an AMD GPU's gfx target and whether it is an
APU's, an Intel GPU's family and whether it is a card, an Apple chip; and each torch release's macOS facts.

Where each printed form comes from is said beside it: tests/fixtures/host/ (SOURCES.md there), AMD's device table
(GPUOpen-Tools/device_info DeviceInfo.cpp, the names the driver reports), AMD's spec and requirement pages, public
issues. Every name goes through `--gpu` as a user (or the probe) gives it.
"""

from __future__ import annotations

import pytest

from envpin.emit.common import answer_json
from envpin.facts.host import HostFacts, PythonInfo
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

# (printed name, gfx, an APU's GPU)
AMD_NAMES = [
    # Instinct: rocminfo / amd-smi market names, AMD's device table ("AMD Instinct(TM) ..."), amd-smi's bare "MI308X"
    ("AMD Instinct MI300X", "gfx942", False),  # rocminfo_mi300x_agent_rocm_4414_partial.txt
    ("AMD Instinct(TM) MI300X", "gfx942", False),  # device_info
    ("AMD Instinct MI300A", "gfx942", False),  # AMD marks gfx942 dGPU (LLVM, device_info)
    ("MI308X", "gfx942", False),  # amd_smi_static_asic_text_mi308x_amdsmi_changelog_6.3.txt
    ("AMD Instinct MI325X", "gfx942", False),
    ("AMD Instinct MI350X", "gfx950", False),  # amd_smi_static_text_mi350x_rocm_systems_2987_partial.txt
    ("AMD Instinct(TM) MI355X", "gfx950", False),
    ("AMD Instinct MI210", "gfx90a", False),  # amd_smi_static_json_mi210_device_metrics_exporter.json
    ("AMD Instinct MI250X", "gfx90a", False),
    ("AMD Instinct MI250", "gfx90a", False),
    ("AMD Instinct MI100", "gfx908", False),
    ("AMD Instinct MI50", "gfx906", False),
    ("AMD Instinct MI60", "gfx906", False),
    ("AMD Radeon VII", "gfx906", False),
    # Radeon PRO: AMD's system requirements and spec tables, device_info
    ("AMD Radeon PRO W7900", "gfx1100", False),
    ("AMD Radeon PRO W7900 Dual Slot", "gfx1100", False),
    ("AMD Radeon PRO W7800", "gfx1100", False),
    ("AMD Radeon PRO W7800 48GB", "gfx1100", False),
    ("AMD Radeon PRO W7700", "gfx1101", False),
    ("AMD Radeon PRO V710", "gfx1101", False),
    ("AMD Radeon PRO W7600", "gfx1102", False),
    ("AMD Radeon PRO W6800", "gfx1030", False),
    ("AMD Radeon Pro V620", "gfx1030", False),
    ("AMD Radeon PRO W6600", "gfx1032", False),
    ("AMD Radeon Pro VII", "gfx906", False),
    ("AMD Radeon AI PRO R9700", "gfx1201", False),
    ("AMD Radeon AI PRO R9600D", "gfx1201", False),
    # Radeon: amd-smi, rocminfo and rocm-smi forms with and without "AMD"
    ("AMD Radeon RX 7900 XTX", "gfx1100", False),
    ("Radeon RX 7900 XTX", "gfx1100", False),  # rocminfo_rx7900xtx_agent_ollama3158.txt
    ("Radeon RX 7900 XT", "gfx1100", False),  # rocm_smi_productname_csv_rx7900xt_marimo_9237.txt
    ("AMD Radeon RX 7900 GRE", "gfx1100", False),
    ("AMD Radeon RX 7800 XT", "gfx1101", False),  # amd_smi_static_json_rx7800xt_ajean_39_partial.txt
    ("AMD Radeon RX 7700 XT", "gfx1101", False),
    ("AMD Radeon RX 7600", "gfx1102", False),
    ("AMD Radeon RX 7600 XT", "gfx1102", False),
    ("AMD Radeon RX 9070 XT", "gfx1201", False),
    ("AMD Radeon RX 9070", "gfx1201", False),
    ("AMD Radeon RX 9070 GRE", "gfx1201", False),
    ("AMD Radeon RX 9060 XT", "gfx1200", False),
    ("AMD Radeon RX 9060", "gfx1200", False),
    ("AMD Radeon RX 6950 XT", "gfx1030", False),
    ("AMD Radeon RX 6900 XT", "gfx1030", False),
    ("AMD Radeon RX 6800", "gfx1030", False),
    ("AMD Radeon RX 6700 XT", "gfx1031", False),
    ("AMD Radeon RX 6600", "gfx1032", False),
    ("AMD Radeon RX 6500 XT", "gfx1034", False),
    ("AMD Radeon RX 5700 XT", "gfx1010", False),
    ("AMD Radeon Pro 5600M", "gfx1011", False),  # Navi 12 (device_info), not gfx1010 as LLVM's table has it
    # the PCI ID database's form (a die, then its products), as rocm-smi's "Card series" and lspci print it
    ("Arcturus GL-XL [AMD Instinct MI100]", "gfx908", False),  # rocm_smi_productname_csv_2x_mi100_easybuild_3978.txt
    ("Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]", "gfx1100", False),  # 1002:744c in pci.ids
    # APUs: rocminfo marketing names ("... Graphics"), Windows' (TM) forms, CPU names with their GPU part
    ("AMD Radeon 780M Graphics", "gfx1103", True),  # rocminfo_780m_gfx1103_agent_therock_5897_partial.txt
    ("AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", "gfx1103", True),  # lamikr/rocm_sdk_builder#257
    ("AMD Radeon 760M Graphics", "gfx1103", True),
    ("AMD Radeon(TM) 890M Graphics", "gfx1150", True),  # device_info
    ("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "gfx1150", True),  # unslothai/unsloth#7280
    ("AMD Radeon 8060S Graphics", "gfx1151", True),  # rocminfo_8060s_gfx1151_agent_ds4_475_partial.txt
    ("AMD Radeon(TM) 8050S Graphics", "gfx1151", True),
    ("AMD Ryzen AI Max+ 395 w/ Radeon 8060S", "gfx1151", True),
    ("AMD Radeon(TM) 860M Graphics", "gfx1152", True),
    ("AMD Radeon 680M", "gfx1035", True),  # guinmoon/rocm7_builds#1
    ("AMD Radeon(TM) 610M", "gfx1036", True),
    ("AMD Ryzen 5 4600G", "gfx90c", True),  # LLVM; "4600G" is a model number, not a memory size
    ("AMD Ryzen 5 2400G", "gfx902", True),
]

ARC = "Intel Arc (A-Series, Core Ultra with Arc Graphics)"
BMG = "Intel Arc B-Series (Battlemage)"
LNL = "Intel Core Ultra 200V with Arc Graphics (Lunar Lake)"
MAX = "Intel Data Center GPU Max"
# (printed name, family or None, a card)
INTEL_NAMES = [
    ("Intel(R) Arc(TM) A770 Graphics", ARC, True),  # xpu_smi_discovery_arc_a770_llamacpp_28725.txt
    ("Intel(R) Arc(TM) A750 Graphics", ARC, True),  # sycl_ls_arc_a750_llvm_17535.txt
    ("Intel(R) Arc(TM) B580 Graphics", BMG, True),
    ("Intel(R) Arc(TM) B570 Graphics", BMG, True),
    ("Intel(R) Arc(TM) Pro B60 Graphics", BMG, True),  # xpu_smi_discovery_arc_pro_b60_sglang_38873_partial.txt
    ("Intel(R) Arc(TM) Pro B50 Graphics", BMG, True),
    ("Intel(R) Arc(TM) A370M Graphics", ARC, True),
    ("Intel(R) Arc(TM) Graphics", ARC, False),  # Core Ultra (Meteor Lake, Arrow Lake)
    ("Intel(R) Arc(TM) 140V GPU (16GB)", LNL, False),  # Core Ultra 200V (Lunar Lake)
    ("Intel(R) Arc(TM) 130V GPU", LNL, False),
    ("Intel(R) Data Center GPU Max 1550", MAX, True),
    ("Intel(R) Data Center GPU Max 1100", MAX, True),
    ("Intel(R) UHD Graphics 630", None, False),  # video_controller_wmic_name_uhd630_gtx1080ti_presentmon_159.txt
    ("Intel(R) Iris(R) Xe Graphics", None, False),  # sycl_ls_windows_iris_xe_llamacpp_sycl_doc.txt
]

APPLE_NAMES = ["Apple M1", "Apple M1 Pro", "Apple M1 Max", "Apple M1 Ultra", "Apple M2", "Apple M2 Max", "Apple M2 Ultra",
               "Apple M3", "Apple M3 Pro", "Apple M3 Max", "Apple M3 Ultra", "Apple M4", "Apple M4 Pro", "Apple M4 Max",
               "Apple M5"]


def _target(database, name: str, os: str = "linux", arch: str = "x86_64"):
    facts = HostFacts(os=os, arch=arch, python=PythonInfo("3.11"))
    return make_target(database, apply_overrides(facts, TargetOverrides(driver="none", gpus=(name,))))


@pytest.mark.parametrize(("name", "gfx", "integrated"), AMD_NAMES, ids=[n for n, _, _ in AMD_NAMES])
def test_amd_name_gives_its_target(database, name, gfx, integrated):
    (gpu,) = _target(database, name).amd_gpus
    assert (gpu.gfx, gpu.integrated, gpu.gfx_source) == (gfx, integrated, "database")


@pytest.mark.parametrize(("name", "family", "discrete"), INTEL_NAMES, ids=[n for n, _, _ in INTEL_NAMES])
def test_intel_name_gives_its_family(database, name, family, discrete):
    (gpu,) = _target(database, name).intel_gpus
    assert (gpu.family, gpu.discrete) == (family, discrete)


# (Intel GPU, os, torch pin, the accelerator of the answer, or the release the refusal offers instead): PyTorch's docs
# per release (xpu.yaml `since`)
INTEL_RELEASES = [
    ("Intel(R) Arc(TM) B580 Graphics", "windows", "2.6.0", "xpu"),  # 2.6: B-Series experimental on Windows
    ("Intel(R) Arc(TM) B580 Graphics", "linux", "2.6.0", "!2.7.0"),  # 2.6: "Arc B-Series graphics not supported" on Linux
    ("Intel(R) Arc(TM) B580 Graphics", "linux", "2.7.0", "xpu"),
    ("Intel(R) Arc(TM) Pro B60 Graphics", "linux", "2.14.1", "xpu"),
    ("Intel(R) Arc(TM) 140V GPU (16GB)", "windows", "2.5.1", "!2.6.0"),  # Lunar Lake: not in 2.5's list
    ("Intel(R) Arc(TM) 140V GPU (16GB)", "windows", "2.6.0", "xpu"),
    ("Intel(R) Arc(TM) 140V GPU (16GB)", "linux", "2.7.0", "xpu"),
    ("Intel(R) Arc(TM) Graphics", "linux", "2.5.1", "xpu"),  # Meteor Lake-H from 2.5
    ("Intel(R) Arc(TM) A770 Graphics", "windows", "2.5.1", "xpu"),
]


@pytest.mark.parametrize(("name", "os", "version", "accelerator"), INTEL_RELEASES,
                         ids=[f"{n}-{o}-{v}" for n, o, v, _ in INTEL_RELEASES])
def test_intel_family_per_release(database, name, os, version, accelerator):
    answer = solve(database, _target(database, name, os=os), parse_request(["torch"], [f"torch=={version}"]))
    if accelerator.startswith("!"):
        assert isinstance(answer, Unsatisfiable) and answer.code == "gpu-unsupported", answer
        assert f"from torch {accelerator[1:]}" in answer.message
        assert f"torch=={accelerator[1:]}+xpu (xpu) is the release nearest to torch=={version}" in answer.fixes[0]
        return
    assert isinstance(answer, Plan), answer
    assert answer_json(answer)["accelerator"] == accelerator


@pytest.mark.parametrize("name", APPLE_NAMES)
def test_apple_chip_is_apple_silicon(database, name):
    target = _target(database, name, os="macos", arch="arm64")
    assert (target.apple_gpus, target.amd_gpus, target.intel_gpus, target.gpus) == ((name,), (), (), ())


# (torch, Python, the macosx tag of its arm64 wheel on PyPI, the macOS its MPS backend needs)
MACOS = [
    ("1.12.0", "3.10", "11.0", "12.3"),
    ("2.4.1", "3.12", "11.0", "12.3"),
    ("2.5.1", "3.12", "11.0", "13.0"),  # pytorch/pytorch#139425
    ("2.8.0", "3.13", "11.0", "13.0"),  # unverified: 2.5's minimum, kept until 2.9 dropped it
    ("2.9.1", "3.13", "11.0", "14.0"),  # pytorch/pytorch#162921: "in 2.9+ MPS is only supported on MacOS Sonoma+"
    ("2.10.0", "3.13", "11.0", "14.0"),  # pytorch/pytorch#177819
    ("2.10.0", "3.14", "14.0", "14.0"),  # torch-2.10.0-cp314-cp314-macosx_14_0_arm64.whl
    ("2.11.0", "3.14", "11.0", "14.0"),
    ("2.12.0", "3.10", "14.0", "14.0"),  # torch-2.12.0-cp310-cp310-macosx_14_0_arm64.whl
    ("2.14.1", "3.12", "14.0", "14.0"),
]


@pytest.mark.parametrize(("version", "python", "wheel", "mps"), MACOS, ids=[f"{v}-py{p}" for v, p, _, _ in MACOS])
def test_macos_facts_per_release(database, version, python, wheel, mps):
    release = next(r for r in database.torch_releases if str(r.version) == version)
    assert release.macos is not None
    assert (release.macos.wheel_macos_for(python), release.macos.mps_macos) == (wheel, mps)
