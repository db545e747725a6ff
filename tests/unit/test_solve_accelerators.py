"""Table-driven solve cases for AMD ROCm, Intel XPU and Apple MPS over the real database.

Each case names the fact that decides it. `expect` is the torch pin (full local version, or the plain version when
PyPI's own wheel is that build), `!code` for an unsatisfiable answer, or `!input` for a one-line input error.
`accelerator` is the JSON answer's `accelerator`; `says` are texts that must appear in the reasons, warnings or
fixes (the explanation is part of the answer).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.emit.common import answer_json
from envpin.facts.host import HostFacts, PythonInfo
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import TargetOverrides, apply_overrides, make_target

MI300X, MI250X, MI100, MI50, MI355X = ("AMD Instinct MI300X", "AMD Instinct MI250X", "AMD Instinct MI100",
                                        "AMD Instinct MI50", "AMD Instinct MI355X")
RX7900XTX, RX7800XT, RX9070XT, RX6700XT, RX6600, RX5700XT = (
    "AMD Radeon RX 7900 XTX", "AMD Radeon RX 7800 XT", "AMD Radeon RX 9070 XT", "AMD Radeon RX 6700 XT",
    "AMD Radeon RX 6600", "AMD Radeon RX 5700 XT")
R780M, R890M, STRIX_HALO = "AMD Radeon 780M", "AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "AMD Ryzen AI Max+ 395"
ARC_A770, ARC_IGPU, UHD630, MAX1550 = ("Intel(R) Arc(TM) A770 Graphics", "Intel(R) Arc(TM) Graphics",
                                       "Intel(R) UHD Graphics 630", "Intel(R) Data Center GPU Max 1550")
RTX3090 = "NVIDIA GeForce RTX 3090"
ROCM714, ROCM72, ROCM71, ROCM63 = ("https://download.pytorch.org/whl/rocm7.14", "https://download.pytorch.org/whl/rocm7.2",
                                   "https://download.pytorch.org/whl/rocm7.1", "https://download.pytorch.org/whl/rocm6.3")
XPU = "https://download.pytorch.org/whl/xpu"


@dataclass
class Case:
    id: str
    fact: str
    expect: str
    accelerator: str | None = None
    gpus: tuple[str, ...] = ()
    gfx: tuple[str, ...] = ()
    driver: str = "none"  # NVIDIA's
    amdgpu_driver: str | None = None
    amdgpu_module: str | None = None  # as detection reads /sys/module/amdgpu/version
    rocm: str | None = None
    os: str = "linux"
    arch: str = "x86_64"
    python: str = "3.11"
    macos: str | None = None
    specs: tuple[str, ...] = ()
    says: tuple[str, ...] = ()
    index: str | None = "any"
    framework: str = "torch"
    jetpack: str | None = None  # a Jetson's JetPack or L4T release (--jetpack)


CASES = [
    # ---------------------------------------------------------------- AMD datacenter
    Case("mi300x", "gfx942 is in 2.15.0's rocm7.14 list (a rule, said: release/2.15 not read)", "2.15.0+rocm7.14", "rocm7.14", (MI300X,), index=ROCM714,
         says=("gfx942; rocm7.14 was built for it",)),
    Case("mi300x-driver-6.4", "driver 6.4 supports ROCm 6.1-7.1 (7.1 from the ROCm 7.1.0 matrix): rocm7.2 refused",
         "2.13.0+rocm7.1", "rocm7.1", (MI300X,), amdgpu_driver="6.4", index=ROCM71,
         says=("AMD GPU driver 6.4 does not support",)),
    Case("mi300x-driver-30.10", "driver 30.10 supports ROCm 6.2-7.2 (7.2 from the ROCm 7.2.2 release notes)",
         "2.15.0+rocm7.2", "rocm7.2", (MI300X,), amdgpu_driver="30.10", index=ROCM72,
         says=("AMD GPU driver 30.10 supports ROCm 7.2",)),
    Case("mi300x-driver-30.20", "driver 30.20 supports ROCm 7.1 and 7.2 (the 7.1.0 matrix, the 7.2.2 release notes)",
         "2.15.0+rocm7.2", "rocm7.2", (MI300X,), amdgpu_driver="30.20", says=("AMD's matrix lists 7.1, 7.2",)),
    Case("mi300x-driver-30.30", "driver 30.30 supports ROCm 6.3-7.2 (its own page)", "2.15.0+rocm7.2", "rocm7.2",
         (MI300X,), amdgpu_driver="30.30.3", says=("AMD's matrix lists 6.3, 6.4, 7.0, 7.1, 7.2",)),
    Case("mi300x-driver-30.30-torch-2.6", "driver 30.30 starts at ROCm 6.3: 2.6.0's rocm6.1 build is refused",
         "!driver-too-old", gpus=(MI300X,), amdgpu_driver="30.30", specs=("torch==2.6.0",),
         says=("AMD GPU driver 30.30 does not support",)),
    Case("mi300x-driver-31.40", "driver 31.40's page names ROCm 7.14 only: the 7.2 builds are refused",
         "!driver-too-old", gpus=(MI300X,), amdgpu_driver="31.40", specs=("torch==2.13.0",),
         says=("AMD GPU driver 31.40 does not support",)),
    Case("mi300x-driver-30.20-torch-2.10", "driver 30.20 is not listed for ROCm 7.0: 2.10.0's rocm7.1", "2.10.0+rocm7.1",
         "rocm7.1", (MI300X,), amdgpu_driver="30.20", specs=("torch==2.10.0",)),
    Case("mi300x-driver-6.2-torch-2.7", "an older pin on driver 6.2: 2.7.1's newer ROCm build fits", "2.7.1+rocm6.3",
         "rocm6.3", (MI300X,), amdgpu_driver="6.2", specs=("torch==2.7.1",), index=ROCM63),
    Case("mi300x-driver-5.7", "driver 5.7 supports ROCm 5.5-6.1: 2.6.0's rocm6.1 has gfx942", "2.6.0+rocm6.1",
         "rocm6.1", (MI300X,), amdgpu_driver="5.7", says=("measured on the rocm6.1 index on 2025-06-21",)),
    Case("mi300x-driver-5.7-torch-2.5", "2.5.1's rocm6.1 list is 2.5.1+rocm6.2's, assumed", "2.5.1+rocm6.1", "rocm6.1",
         (MI300X,), amdgpu_driver="5.7", specs=("torch<2.6",), says=("measured only on 2.5.1+rocm6.2",)),
    Case("mi300x-driver-5.3", "driver 5.3 stops at ROCm 5.5, whose builds have no gfx942", "!gpu-unsupported",
         gpus=(MI300X,), amdgpu_driver="5.3", says=("install an AMD GPU driver",)),
    Case("mi300x-rocm-installed", "no driver given: the installed ROCm 6.2's driver is assumed", "2.10.0+rocm7.0",
         "rocm7.0", (MI300X,), rocm="6.2.4", says=("assumed to be the one of the installed ROCm 6.2.4",)),
    Case("mi300x-driver-unknown", "a driver release newer than the matrix is not refused, and it is said",
         "2.15.0+rocm7.14", "rocm7.14", (MI300X,), amdgpu_driver="31.60", says=("is not in AMD's driver",)),
    Case("mi300x-module-6.12.12", "the loaded amdgpu-dkms 6.12.12 is driver 6.4's: rocm7.2 refused as with --amdgpu-driver 6.4",
         "2.13.0+rocm7.1", "rocm7.1", (MI300X,), amdgpu_module="6.12.12", index=ROCM71,
         says=("the loaded amdgpu-dkms module 6.12.12 is the one AMD GPU driver 6.4 ships",
               "AMD Instinct MI300X (gfx942), AMD GPU driver 6.4 (amdgpu module 6.12.12)")),
    Case("mi300x-module-6.8.5-torch-2.7", "amdgpu-dkms 6.8.5 is driver 6.2's (ROCm 6.0-7.0): 2.7.1's rocm6.3 fits",
         "2.7.1+rocm6.3", "rocm6.3", (MI300X,), amdgpu_module="6.8.5", specs=("torch==2.7.1",), index=ROCM63,
         says=("AMD GPU driver 6.2 supports ROCm 6.3",)),
    Case("mi300x-module-6.3.6", "amdgpu-dkms 6.3.6 is driver 6.0's (ROCm 5.6-6.2): 2.7.1's rocm6.2.4, not its rocm6.3",
         "2.7.1+rocm6.2.4", "rocm6.2.4", (MI300X,), amdgpu_module="6.3.6", says=("AMD GPU driver 6.0 supports ROCm 6.2",)),
    Case("mi300x-module-6.14.14", "amdgpu-dkms 6.14.14 is driver 30.10's", "2.15.0+rocm7.2", "rocm7.2", (MI300X,),
         amdgpu_module="6.14.14", says=("AMD GPU driver 30.10 supports ROCm 7.2",)),
    Case("mi300x-module-6.19.14", "amdgpu-dkms 6.19.14 is driver 31.40's, whose page names ROCm 7.14 only",
         "!driver-too-old", gpus=(MI300X,), amdgpu_module="6.19.14", specs=("torch==2.13.0",),
         says=("AMD GPU driver 31.40 does not support",)),
    Case("mi300x-module-unknown", "a module the database does not tie to a release: the driver is not checked, and said",
         "2.15.0+rocm7.14", "rocm7.14", (MI300X,), amdgpu_module="6.16.13",
         says=("which AMD GPU driver release ships it is unknown to the database",)),
    Case("mi300x-module-and-driver-given", "--amdgpu-driver wins over the module", "2.15.0+rocm7.2", "rocm7.2",
         (MI300X,), amdgpu_module="6.12.12", amdgpu_driver="30.30", says=("AMD GPU driver 30.30 supports ROCm 7.2",)),
    Case("mi300x-driver-as-dkms-package", "--amdgpu-driver given as the package version dpkg prints: its release "
         "field 60401 is driver 6.4.1", "2.13.0+rocm7.1", "rocm7.1", (MI300X,),
         amdgpu_driver="1:6.12.12.60401-2164967.24.04",
         says=("amdgpu-dkms 1:6.12.12.60401-2164967.24.04 is of AMD GPU driver 6.4",
               "AMD GPU driver 6.4 does not support")),
    Case("mi300x-driver-as-dkms-package-30.x", "the 8-digit release field of AMD's scheme from 30.10 on: 30300300 is "
         "30.30.3, a module the database does not tie", "2.15.0+rocm7.2", "rocm7.2", (MI300X,),
         amdgpu_driver="1:6.16.13.30300300-2327507.24.04",
         says=("is of AMD GPU driver 30.30", "AMD GPU driver 30.30 supports ROCm 7.2")),
    Case("mi300x-driver-as-module", "--amdgpu-driver given as the module version (6.14.14 is driver 30.10's)",
         "2.15.0+rocm7.2", "rocm7.2", (MI300X,), amdgpu_driver="6.14.14",
         says=("AMD GPU driver 30.10 supports ROCm 7.2",)),
    Case("mi300x-driver-as-unknown-dkms", "`dkms status`'s form has no release field, and the database does not tie "
         "module 6.16.13: not checked, and said", "2.15.0+rocm7.14", "rocm7.14", (MI300X,),
         amdgpu_driver="6.16.13-2327507.24.04",
         says=("module 6.16.13) is of an AMD GPU driver release the database does not know",)),
    Case("mi250x", "gfx90a is in every list", "2.15.0+rocm7.14", "rocm7.14", (MI250X,)),
    Case("mi250x-torch-1.13", "an old pin: 1.13.1's newest ROCm build has gfx90a", "1.13.1+rocm5.2", "rocm5.2",
         (MI250X,), specs=("torch<2.0",)),
    Case("mi100-torch-2.0", "gfx908 in 2.0.1's rocm5.4.2 list", "2.0.1+rocm5.4.2", "rocm5.4.2", (MI100,),
         specs=("torch==2.0.1",)),
    Case("mi355x", "gfx950 first appears in the 14-target list", "2.15.0+rocm7.14", "rocm7.14", (MI355X,)),
    Case("mi355x-torch-2.7", "2.7.1 predates gfx950", "!gpu-unsupported", gpus=(MI355X,), specs=("torch==2.7.1",),
         says=("no kernels for AMD Instinct MI355X (gfx950)", "torch==2.15.0+rocm7.14")),
    Case("mi355x-torch-2.10", "gfx950 is in 2.10.0's rocm7.0/rocm7.1 lists (uv's measured table)", "2.10.0+rocm7.1",
         "rocm7.1", (MI355X,), specs=("torch==2.10.0",)),
    Case("strix-halo-torch-2.10", "2.10.0's rocm7.0/rocm7.1 were measured without gfx1150/gfx1151", "!gpu-unsupported",
         gpus=(STRIX_HALO,), specs=("torch==2.10.0",),
         says=("no kernels for AMD Ryzen AI Max+ 395 (gfx1151)", "--spec 'torch==2.11.0'")),
    Case("mi50", "gfx906 is listed, but rocBLAS from ROCm 6.4 has no gfx906 kernels: 2.9.1's rocm6.3",
         "2.9.1+rocm6.3", "rocm6.3", (MI50,)),
    Case("mi50-torch-2.11", "2.11.0's rocm7.1/7.2 bundle a rocBLAS without gfx906", "!gpu-unsupported", gpus=(MI50,),
         specs=("torch==2.11.0",), says=("rocBLAS it bundles has no gfx906 kernels",)),
    # ---------------------------------------------------------------- the newest releases (rocm.yaml's stated rule)
    Case("mi300x-newest-says-the-rule", "2.15.0's gfx list is 2.14's rocm7.14 list by the previous-release rule",
         "2.15.0+rocm7.14", "rocm7.14", (MI300X,), says=("rule, not read at release/2.15",
                                                          "the 2.15.0 nightlies were built for ROCm 7.2 and 7.14")),
    Case("rx7900xtx-torch-2.14.1", "2.14.x rocm7.14: main's ROCm 7.14 list less gfx1103, said", "2.14.1+rocm7.14",
         "rocm7.14", (RX7900XTX,), specs=("torch==2.14.1",), says=("rule, not read at release/2.14",)),
    Case("rx7900xtx-torch-2.14.1-rocm7.2", "2.14.x rocm7.2: 2.13.0's rocm7.2 list", "2.14.1+rocm7.2", "rocm7.2",
         (RX7900XTX,), specs=("torch==2.14.1+rocm7.2",), says=("the same ROCm version's list in the previous release",)),
    Case("mi50-torch-2.15", "the ROCm 7.14 list has no gfx906 (main's build script)", "!gpu-unsupported", gpus=(MI50,),
         specs=("torch==2.15.0",), says=("no kernels for AMD Instinct MI50 (gfx906)",)),
    Case("b580-newest", "2.15.0's xpu build by the rule (every release since 2.6, and the 2.15 nightlies)", "2.15.0+xpu",
         "xpu", ("Intel(R) Arc(TM) B580 Graphics",), index=XPU, says=("rule, not read: the 2.15 release matrix",)),
    # ---------------------------------------------------------------- AMD consumer cards
    Case("rx7900xtx", "gfx1100", "2.15.0+rocm7.14", "rocm7.14", (RX7900XTX,)),
    Case("rx7900xtx-torch-2.0", "2.0.1 predates gfx1100", "!gpu-unsupported", gpus=(RX7900XTX,),
         specs=("torch==2.0.1",), says=("no kernels for AMD Radeon RX 7900 XTX (gfx1100)",)),
    Case("rx7900xtx-torch-2.1", "gfx1100 arrived in 2.1; rocm5.6 is the newer of its two", "2.1.2+rocm5.6",
         "rocm5.6", (RX7900XTX,), specs=("torch==2.1.2",)),
    Case("rx7800xt", "gfx1101 is compiled natively from 2.7", "2.15.0+rocm7.14", "rocm7.14", (RX7800XT,)),
    Case("rx7800xt-torch-2.5", "2.5.1 has no gfx1101: the gfx1100 stand-in is the risky way", "!gpu-unsupported",
         gpus=(RX7800XT,), specs=("torch==2.5.1",), says=("HSA_OVERRIDE_GFX_VERSION=11.0.0", "RISKY")),
    Case("rx7800xt-torch-2.6", "2.6.0's rocm6.1 list has gfx1101 (uv's measurement); its rocm6.2.4 has no list",
         "2.6.0+rocm6.1", "rocm6.1", (RX7800XT,), specs=("torch==2.6.0",),
         says=("rocm6.2.4 was passed over: the database has no gfx list",)),
    Case("rx9070xt", "gfx1201", "2.15.0+rocm7.14", "rocm7.14", (RX9070XT,)),
    Case("rx9070xt-torch-2.6", "a pin that predates RDNA4", "!gpu-unsupported", gpus=(RX9070XT,),
         specs=("torch<2.7",), says=("torch==2.15.0+rocm7.14",)),
    Case("rx9070xt-torch-2.7", "2.7.1 added gfx1200/gfx1201", "2.7.1+rocm6.3", "rocm6.3", (RX9070XT,),
         specs=("torch==2.7.1",)),
    Case("rx6700xt", "gfx1031 is in no list; gfx1030 stands in (risky)", "!gpu-unsupported", gpus=(RX6700XT,),
         says=("HSA_OVERRIDE_GFX_VERSION=10.3.0", "invalid device function", "repo.radeon.com")),
    Case("rx6600", "gfx1032: the same stand-in", "!gpu-unsupported", gpus=(RX6600,),
         says=("HSA_OVERRIDE_GFX_VERSION=10.3.0",)),
    Case("rx5700xt", "gfx1010 has no kernels and no stand-in in the database", "!gpu-unsupported",
         gpus=(RX5700XT,), says=("--spec 'torch==",)),
    # ---------------------------------------------------------------- AMD APUs
    Case("apu-780m", "gfx1103 is in no wheel; the gfx1100 stand-in page-faults", "!gpu-unsupported", gpus=(R780M,),
         says=("HSA_OVERRIDE_GFX_VERSION=11.0.0", "page faults")),
    Case("apu-890m", "gfx1150 (named by rocminfo beside the marketing name)", "2.15.0+rocm7.14", "rocm7.14", (R890M,)),
    Case("apu-strix-halo", "gfx1151", "2.15.0+rocm7.14", "rocm7.14", (STRIX_HALO,)),
    Case("apu-generic-name-gfx", "'AMD Radeon Graphics' with its gfx from rocminfo", "!gpu-unsupported",
         gpus=("AMD Radeon Graphics",), gfx=("gfx1036",), says=("HSA_OVERRIDE_GFX_VERSION=10.3.0",)),
    Case("gfx-only", "--gfx alone names an AMD GPU (its target said once)", "2.15.0+rocm7.14", "rocm7.14", gfx=("gfx1100",),
         says=("target: linux-x86_64, Python 3.11, no NVIDIA driver, no NVIDIA GPU, AMD GPU 0 (gfx1100),",
               "AMD GPU 0 is gfx1100; rocm7.14 was built for it")),
    Case("unknown-amd-name", "an AMD name the database does not know, without --gfx", "!input",
         gpus=("AMD Radeon RX 9999",)),
    # ---------------------------------------------------------------- mixed-vendor hosts
    Case("nvidia-and-amd-apu", "an NVIDIA GPU with its driver beats an AMD iGPU", "2.14.1+cu126", "cu126",
         (RTX3090, R780M), driver="535.104.05"),
    Case("amd-dgpu-and-apu", "the discrete card decides; the APU is display-only", "2.15.0+rocm7.14", "rocm7.14",
         (RX7900XTX, R780M), says=("integrated GPU beside a discrete one",)),
    Case("amd-dgpu-and-intel-igpu", "an Intel iGPU does not make the machine an XPU target", "2.15.0+rocm7.14",
         "rocm7.14", (UHD630, RX7900XTX)),
    Case("intel-arc-and-igpu", "a discrete Arc beside an iGPU", "2.15.0+xpu", "xpu", (UHD630, ARC_A770)),
    Case("nvidia-and-intel-arc-igpu", "Core Ultra's Arc iGPU beside an NVIDIA GPU", "2.14.1+cu126", "cu126",
         (ARC_IGPU, RTX3090), driver="535.104.05"),
    # ---------------------------------------------------------------- Windows
    Case("windows-amd", "PyTorch's indexes have no ROCm build for Windows", "2.15.0", "cpu", (RX7900XTX,),
         os="windows", index=None, says=("none for Windows", "repo.amd.com")),
    Case("windows-amd-rocm-by-name", "a ROCm build asked for on Windows", "!unsupported-platform", gpus=(RX7900XTX,),
         os="windows", specs=("torch==2.5.1+rocm6.2",)),
    Case("windows-arc", "xpu builds exist for Windows", "2.15.0+xpu", "xpu", (ARC_A770,), os="windows", index=XPU),
    Case("windows-max-1550", "Data Center GPU Max is Linux-only", "!gpu-unsupported", gpus=(MAX1550,),
         os="windows", says=("only on linux-x86_64",)),
    # ---------------------------------------------------------------- Intel
    Case("arc-linux", "Arc", "2.15.0+xpu", "xpu", (ARC_A770,), index=XPU),
    Case("max-1550", "Data Center GPU Max on Linux", "2.15.0+xpu", "xpu", (MAX1550,)),
    Case("arc-igpu-alone", "Core Ultra's Arc iGPU, nothing better", "2.15.0+xpu", "xpu", (ARC_IGPU,)),
    Case("uhd-alone", "UHD is not a family the XPU builds are for", "2.15.0+cpu", "cpu", (UHD630,),
         says=("not a GPU family",)),
    Case("arc-torch-2.4", "no xpu build before 2.5", "!no-gpu-build", gpus=(ARC_A770,), specs=("torch==2.4.1",)),
    Case("arc-torch-2.5", "the first xpu release", "2.5.1+xpu", "xpu", (ARC_A770,), specs=("torch==2.5.1",)),
    Case("xpu-by-name", "+xpu asked for by name", "2.6.0+xpu", "xpu", specs=("torch==2.6.0+xpu",)),
    # ---------------------------------------------------------------- Apple silicon
    Case("mac-15", "macOS 15 runs every arm64 wheel and MPS", "2.15.0", "mps", ("Apple M3 Max",), os="macos",
         arch="arm64", macos="15.1", python="3.12", index=None, says=("MPS backend runs on Apple M3 Max",)),
    Case("mac-14", "macOS 14.0 meets the 14.0 wheel tag and MPS minimum", "2.15.0", "mps", ("Apple M2",),
         os="macos", arch="arm64", macos="14.0"),
    # The one preference rule (docs/gpu-first.md): a build that uses the GPU beats a newer one that would run on the
    # CPU; with none, the solve is refused with the macOS the newest one needs and the CPU build by name
    Case("mac-13", "2.12+ wheels need macOS 14; 2.9-2.11 install but their MPS needs 14: 2.8.0, whose MPS runs",
         "2.8.0", "mps", ("Apple M1",), os="macos", arch="arm64", macos="13.6",
         says=("torch 2.11.0 was passed over: torch 2.11.0+cpu runs on the CPU on macOS 13.6", "uses the GPU comes first")),
    Case("mac-13-torch-2.9", "2.9's MPS needs macOS 14 (the MPS maintainer, PR #162921): refused on 13.6",
         "!no-gpu-build", gpus=("Apple M1",), os="macos", arch="arm64", macos="13.6", specs=("torch==2.9.1",),
         says=("runs on the CPU on macOS 13.6: its MPS backend needs macOS ≥ 14.0",
               "update macOS to 14.0 or newer to use torch 2.9.1 with MPS", "--spec 'torch==2.8.0'",
               "or use the CPU build: --spec 'torch==2.9.1+cpu'")),
    Case("mac-13-torch-2.9-cpu", "the CPU build by name: the same wheel, on the CPU, said", "2.9.1", "cpu",
         ("Apple M1",), os="macos", arch="arm64", macos="13.6", specs=("torch==2.9.1+cpu",), index=None,
         says=("it runs on the CPU", "MPS is unavailable")),
    Case("mac-13-torch-2.8", "2.8 is taken to keep 2.5's macOS 13 minimum (unverified, and said)", "2.8.0", "mps",
         ("Apple M1",), os="macos", arch="arm64", macos="13.6", specs=("torch<2.9",),
         says=("the macOS 13 minimum of 2.5 is assumed to hold until 2.8",)),
    Case("mac-12", "macOS 12.7: MPS up to 2.4 (needs 12.3), so 2.4.1 beats 2.11.0 on the CPU", "2.4.1", "mps",
         ("Apple M1",), os="macos", arch="arm64", macos="12.7", says=("MPS backend runs on Apple M1",)),
    Case("mac-12-torch-2.4", "MPS needs 12.3 in 2.4", "2.4.1", "mps", ("Apple M1",), os="macos", arch="arm64",
         macos="12.7", specs=("torch==2.4.1",)),
    Case("mac-12-torch-2.5", "2.5 needs macOS 13 for MPS: refused on 12.7, with the macOS it needs", "!no-gpu-build",
         gpus=("Apple M1",), os="macos", arch="arm64", macos="12.7", specs=("torch==2.5.1",),
         says=("update macOS to 13.0 or newer to use torch 2.5.1 with MPS", "--spec 'torch==2.4.1'")),
    Case("mac-11", "macOS 11.7 is below every release's MPS minimum (12.3): refused, the newest GPU release's macOS "
         "and the smallest update named", "!no-gpu-build", gpus=("Apple M1",), os="macos", arch="arm64", macos="11.7",
         says=("update macOS to 14.0 or newer to use torch 2.15.0 with MPS",
               "update macOS to 12.3 or newer to use torch 2.4.1 with MPS",
               "or use the CPU build: --spec 'torch==2.11.0+cpu'")),
    Case("mac-12-torch-2.12", "2.12's wheels are macosx_14_0", "!unsupported-platform", gpus=("Apple M1",),
         os="macos", arch="arm64", macos="12.7", specs=("torch==2.12.0",), says=("macosx_14_0",)),
    Case("mac-12.2-torch-2.0", "below MPS's 12.3: refused", "!no-gpu-build", gpus=("Apple M1",), os="macos",
         arch="arm64", macos="12.2", specs=("torch==2.0.1",), says=("update macOS to 12.3 or newer",)),
    Case("mac-13-py314-torch-2.10", "2.10.0's cp314 wheel alone is macosx_14_0", "!unsupported-platform",
         gpus=("Apple M4",), os="macos", arch="arm64", macos="13.5", python="3.14", specs=("torch==2.10.0",)),
    Case("mac-unknown-macos", "macOS not given: MPS is assumed and the minimum is said", "2.15.0", "mps",
         ("Apple M4",), os="macos", arch="arm64", says=("macOS not given",)),
    # ---------------------------------------------------------------- JAX's ROCm plugins (jax.yaml `rocm:`)
    Case("jax-mi300x", "jax[rocm7-local] 0.12.0: jax-rocm7-plugin 0.12.0, ROCm 7.14, gfx942 in its kernels", "0.12.0",
         "rocm7.14", (MI300X,), python="3.12", framework="jax", index=None,
         says=("jax-rocm7-plugin 0.12.0", "uses the ROCm installed on the machine")),
    Case("jax-mi300x-py311", "0.11.x and 0.12.0 plugins start at cp312: 0.10.2, whose ROCm is not stated", "0.10.2", "rocm",
         (MI300X,), python="3.11", framework="jax", says=("not stated in its wheel's metadata",)),
    Case("jax-rx7900xtx-py310", "only jax[rocm] 0.5.0 (jax-rocm60-plugin) has cp310 wheels", "0.5.0", "rocm",
         (RX7900XTX,), python="3.10", framework="jax", says=("jax-rocm60-plugin 0.5.0",)),
    Case("jax-rx6700xt", "gfx1031 is in jax-rocm7-plugin 0.12.0's kernels, though in no torch wheel", "0.12.0", "rocm7.14",
         (RX6700XT,), python="3.12", framework="jax", says=("gfx1031",)),
    Case("jax-gfx1250", "gfx1250 first appears in the 0.12.0 plugin", "0.12.0", "rocm7.14", gfx=("gfx1250",), python="3.12",
         framework="jax"),
    Case("jax-mi250x-0.9.1", "jax-rocm7-plugin 0.9.1 has gfx9-generic code, which does not cover gfx90a", "!gpu-unsupported",
         gpus=(MI250X,), python="3.12", framework="jax", specs=("jax==0.9.1",),
         says=("no kernels for AMD Instinct MI250X (gfx90a)", "--spec 'jax==0.9.2'")),
    Case("jax-mi300x-driver-6.4-0.9.2", "jax 0.9.2's plugin was built for ROCm 7.2, which driver 6.4 does not support",
         "!driver-too-old", gpus=(MI300X,), python="3.12", amdgpu_driver="6.4", framework="jax", specs=("jax==0.9.2",),
         says=("was built for ROCm 7.2, which AMD GPU driver 6.4 does not support",)),
    Case("jax-mi300x-0.12.0.1", "jax[rocm7-local] 0.12.0.1 needs a plugin never published", "!no-gpu-build",
         gpus=(MI300X,), python="3.12", framework="jax", specs=("jax==0.12.0.1",),
         says=("jax-rocm7-plugin==0.12.0.1.*, which was never published", "--spec 'jax==0.12.0'")),
    Case("jax-windows-amd", "the ROCm plugins are Linux x86_64 only", "0.12.0.1", "cpu", (RX7900XTX,), os="windows",
         python="3.12", framework="jax", says=("jax has no ROCm build for windows-x86_64",)),
    # ---------------------------------------------------------------- tensorflow-rocm
    Case("tf-rx7900xtx", "tensorflow-rocm 2.14.0.600 (ROCm 6.0) has gfx1100", "2.14.0.600", "rocm6.0", (RX7900XTX,),
         framework="tensorflow", says=("tensorflow-rocm 2.14.0.600", "numpy<2")),
    Case("tf-mi300x", "tensorflow-rocm 2.14.0.600 has no gfx942 kernels", "!gpu-unsupported", gpus=(MI300X,),
         framework="tensorflow", says=("no kernels for AMD Instinct MI300X (gfx942)",)),
    Case("tf-rx6800-driver-5.5", "driver 5.5 supports ROCm 5.3-5.7: tensorflow-rocm 2.11.1.550, built for ROCm 5.5",
         "2.11.1.550", "rocm5.5", ("AMD Radeon RX 6800",), amdgpu_driver="5.5", python="3.10", framework="tensorflow",
         says=("AMD GPU driver 5.5 supports ROCm 5.5",)),
    Case("tf-rx7900xtx-2.13", "tensorflow-rocm 2.13.1.600 has no gfx1100 kernels (2.14.0.600 is the first)",
         "!gpu-unsupported", gpus=(RX7900XTX,), framework="tensorflow", specs=("tensorflow==2.13.1",),
         says=("no kernels for AMD Radeon RX 7900 XTX (gfx1100)", "--spec 'tensorflow==2.14.0'")),
    Case("tf-py312", "tensorflow-rocm on PyPI stops at cp311", "!python-unsupported", gpus=(RX7900XTX,), python="3.12",
         framework="tensorflow", says=("--python 3.11",)),
    Case("tf-driver-6.4", "driver 6.4 supports ROCm 6.1-7.1, not the 6.0 or 5.5 of the wheels read; the others'"
         " kernels were not read", "!gpu-unsupported", gpus=(RX7900XTX,), amdgpu_driver="6.4", framework="tensorflow",
         says=("no gfx list for tensorflow-rocm 2.13.0.570", "(5.6, 5.7, 6.0, 6.1, 6.2 in AMD's driver/user-space "
               "matrix) to use tensorflow-rocm 2.14.0.600, which was built for ROCm 6.0")),
]


def run_case(database, case: Case) -> Plan | Unsatisfiable:
    facts = HostFacts(os=case.os, arch=case.arch, python=PythonInfo(case.python), amdgpu_module=case.amdgpu_module)
    overrides = TargetOverrides(driver=case.driver, gpus=case.gpus, gfx=case.gfx, amdgpu_driver=case.amdgpu_driver,
                                rocm=case.rocm, macos=case.macos, jetpack=case.jetpack)
    target = make_target(database, apply_overrides(facts, overrides))
    return solve(database, target, parse_request([case.framework], list(case.specs)))


def _texts(answer: Plan | Unsatisfiable) -> str:
    if isinstance(answer, Unsatisfiable):
        return "\n".join((answer.message, *answer.fixes))
    return "\n".join((*answer.reasons, *answer.warnings))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_solve(database, case):
    if case.expect == "!input":
        with pytest.raises(EnvpinInputError, match="--gfx"):
            run_case(database, case)
        return
    answer = run_case(database, case)
    texts = _texts(answer)
    for text in case.says:
        assert text in texts, f"{case.fact}: {text!r} not in\n{texts}"
    if case.expect.startswith("!"):
        assert isinstance(answer, Unsatisfiable), f"{case.fact}: got {answer.packages[0].version}"
        assert answer.code == case.expect[1:], f"{case.fact}: {answer.code}: {answer.message}"
        return
    assert isinstance(answer, Plan), f"{case.fact}: {answer.code}: {answer.message}"
    assert answer.packages[0].version == case.expect, case.fact
    document = answer_json(answer)
    assert document["accelerator"] == case.accelerator, case.fact
    if case.index != "any":
        assert document["index_url"] == case.index, case.fact


def test_at_least_forty_cases_across_the_three_vendors():
    amd = [c for c in CASES if any("AMD" in g for g in c.gpus) or c.gfx]
    intel = [c for c in CASES if any("Intel" in g for g in c.gpus)]
    apple = [c for c in CASES if c.os == "macos"]
    assert len(CASES) >= 40 and len(amd) >= 15 and len(intel) >= 5 and len(apple) >= 5


# The rule's last clause: a CPU answer on a machine with a GPU says so first (Plan.headline, the JSON `headline`),
# and an answer that uses the GPU has no headline.
HEADLINES = [
    (Case("nvidia-no-driver", "NVIDIA GPU, no driver", "2.15.0+cpu", gpus=(RTX3090,)),
     ("runs on the CPU: no NVIDIA driver was found", "torch 2.15.0+cu132 would use the GPU with an NVIDIA driver ≥ 580")),
    (Case("windows-amd", "no ROCm torch for Windows", "2.15.0", gpus=(RX7900XTX,), os="windows"),
     ("runs on the CPU: PyTorch's indexes have ROCm builds of torch only for Linux x86_64",)),
    (Case("mac-cpu-by-name", "the CPU build asked for", "2.9.1", gpus=("Apple M1",), os="macos", arch="arm64",
          macos="13.6", specs=("torch==2.9.1+cpu",)), ("the CPU build of torch, as asked",)),
    (Case("tf-mac", "TensorFlow's macOS wheels", "2.21.0", os="macos", arch="arm64", macos="14.5",
          framework="tensorflow"), ("runs on the CPU: macOS has no CUDA",)),
    (Case("mac-13", "MPS", "2.8.0", gpus=("Apple M1",), os="macos", arch="arm64", macos="13.6"), ()),
    (Case("rx7900xtx", "ROCm", "2.15.0+rocm7.14", gpus=(RX7900XTX,)), ()),
    (Case("arc", "XPU", "2.15.0+xpu", gpus=(ARC_A770,)), ()),
]


@pytest.mark.parametrize(("case", "headline"), HEADLINES, ids=[c.id for c, _ in HEADLINES])
def test_cpu_answer_says_so_first(database, case, headline):
    answer = run_case(database, case)
    assert isinstance(answer, Plan), case.fact
    document = answer_json(answer)
    if not headline:
        assert answer.headline is None and "headline" not in document, case.fact
        return
    assert answer.accelerator == "cpu" and document["headline"] == answer.headline
    for text in headline:
        assert text in (answer.headline or ""), f"{case.fact}: {text!r} not in {answer.headline!r}"
