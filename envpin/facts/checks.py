"""The spellings of versions that HostFacts (envpin.facts.host) and EnvFacts (envpin.facts.env) both check.

Kept in a module of their own so that env_facts needs nothing from facts: facts re-exports env_facts'
names lazily, and the import graph between the two stays one-directional.
"""

from __future__ import annotations

import re

# Each pattern is compiled when first used (by re, which keeps it): a solve checks a few of these spellings, and
# compiling every one of them cost it more than all its checks. ASCII digits only (re.ASCII): `\d` alone also takes
# full-width and other scripts' digits, which int() accepts.


def is_driver_version(text: str) -> bool:
    return bool(re.fullmatch(r"\d{2,4}(\.\d{1,3}){0,2}", text, re.ASCII))


def is_compute_capability(text: str) -> bool:
    return bool(re.fullmatch(r"\d{1,2}\.\d", text, re.ASCII))


def is_python_version(text: str) -> bool:
    # a suffix (3.13t, 3.14.0rc1) starts with a letter: a run of digits after the minor is not a Python (3.<5000 digits>)
    return bool(re.fullmatch(r"3\.\d{1,2}(\.\d{1,3})?([a-z][a-z0-9]{0,15})?", text, re.ASCII))


def is_gfx_target(text: str) -> bool:
    return bool(re.fullmatch(r"gfx[0-9]{2,4}[0-9a-f]", text, re.ASCII))


def is_amd_release(text: str) -> bool:
    """ROCm 6.2.4, AMD GPU driver 6.4 / 30.10."""
    return bool(re.fullmatch(r"\d{1,2}\.\d{1,2}(\.\d{1,3})?", text, re.ASCII))


# amdgpu-dkms as the package manager prints it (1:6.12.12.60401-2164967.24.04: the module 6.12.12 of driver 6.4.1),
# as `dkms status` prints it (6.12.12-2164967.24.04), or the module version alone (/sys/module/amdgpu/version)
_AMDGPU_DKMS = re.compile(r"(?:\d+:)?(\d{1,2}\.\d{1,2}\.\d{1,3})(?:\.(\d+))?(?:-[0-9A-Za-z.~+_]+)?", re.ASCII)


def amdgpu_module_of(text: str) -> str | None:
    """The amdgpu module version an amdgpu-dkms version names, or None when `text` is not one."""
    match = _AMDGPU_DKMS.fullmatch(text)
    return match.group(1) if match else None


def amdgpu_dkms_release(text: str) -> str | None:
    """The AMD GPU driver release (X.Y) an amdgpu-dkms package version carries after its module version: the ROCm
    version field up to driver 6.4 (60401: 6.4.1), and from 30.10 on the 8-digit field AMD's blog "ROCm Gets
    Modular: Meet the Instinct Datacenter GPU Driver" describes (30100200: 30.10.2); None without such a field."""
    match = _AMDGPU_DKMS.fullmatch(text)
    field = match.group(2) if match else None
    if field is None or len(field) not in (5, 8):
        return None
    major, minor = (field[0], field[1:3]) if len(field) == 5 else (field[:2], field[2:4])
    return f"{int(major)}.{int(minor)}"


def is_amd_driver(text: str) -> bool:
    """What --amdgpu-driver takes: a driver release (6.4, 30.10) or an amdgpu-dkms version (1:6.12.12.60401-...)."""
    return is_amd_release(text) or amdgpu_module_of(text) is not None


def is_glibc_version(text: str) -> bool:
    return bool(re.fullmatch(r"2\.\d{1,2}", text, re.ASCII))


def is_macos_version(text: str) -> bool:
    return bool(re.fullmatch(r"\d{2}(\.\d{1,2}){0,2}", text, re.ASCII))


def is_l4t_release(text: str) -> bool:
    """A Jetson Linux release as /etc/nv_tegra_release gives it: 36.4.0 (R36, REVISION 4.0)."""
    return bool(re.fullmatch(r"\d{2}\.\d{1,2}\.\d{1,2}", text, re.ASCII))


def is_jetpack_version(text: str) -> bool:
    """A JetPack version: 6.1, 5.1.2."""
    return bool(re.fullmatch(r"\d\.\d{1,2}(\.\d{1,2})?", text, re.ASCII))


def gpu_vendor(name: str) -> str:
    """The vendor a GPU's name says (`AMD Radeon RX 7900 XTX` -> amd, `Intel(R) Arc(TM) A770 Graphics` -> intel,
    `Apple M3 Max` -> apple); any other name is NVIDIA's, as nvidia-smi and NVML print names without a vendor word
    (`Tesla V100-SXM2-32GB`, `A100`)."""
    cleaned = name.replace("(R)", " ").replace("(TM)", " ").replace("(tm)", " ").replace("®", " ").replace("™", " ")
    if re.search(r"\bapple\b", cleaned, re.IGNORECASE | re.ASCII):
        return "apple"
    if re.search(r"\b(amd|radeon|instinct|ati)\b|\bgfx[0-9]", cleaned, re.IGNORECASE | re.ASCII):
        return "amd"
    if re.search(r"\b(intel|arc)\b", cleaned, re.IGNORECASE | re.ASCII):
        return "intel"
    return "nvidia"


def is_generic_amd_gpu_name(name: str) -> bool:
    """`AMD Radeon Graphics` / `AMD Radeon(TM) Graphics`: the name most APUs' GPUs go by (rocminfo's gfx1036 of a
    Ryzen 7 7700, ROCm/rocBLAS#1415; Windows' first adapter beside an RX 7900 XTX, ollama/ollama#5124), though not
    only theirs: an MI50 (gfx906) prints it under ROCm 7.2 (AlphaMine-Tech/alpha-miner#5). Where the target is
    known, the target says whether the GPU is integrated; the name says so only where nothing else does."""
    return re.fullmatch(r"AMD Radeon(\(TM\))? Graphics", name.strip()) is not None
