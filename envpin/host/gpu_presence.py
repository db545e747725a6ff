"""Signs of an NVIDIA GPU that need no answer from its driver, and the state a failing driver is in.

A solve that takes "no driver answered" for "no NVIDIA GPU" hands a GPU machine the CPU build, the trap envpin
exists to prevent. So when NVML and nvidia-smi fail, or say nothing, detection also looks for what shows the
hardware or the driver without asking either: the kernel module's /proc and /sys entries, a PCI display
device of NVIDIA's vendor id in sysfs, on WSL2 the Windows driver's libcuda in /usr/lib/wsl/lib, on Windows
the driver's nvcuda.dll in System32. Every look is a stat or a small read under `fs_root`; the PCI walk is
bounded. The failing tool's words name the state (`DriverTrouble.state`), matched on the messages NVIDIA's
tools print, as users quote them (envpin/doctor/failure_catalogue.yaml, rows D4, D5, D8, D9).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from envpin.facts.host import DriverTrouble
from envpin.host.procfs import read_text

NVIDIA_PCI_VENDOR = "0x10de"  # the PCI-SIG vendor id of NVIDIA Corporation
# PCI class 0x03 is "display controller": 0x0300 VGA-compatible (desktop cards), 0x0302 3D controller (data-centre
# and laptop GPUs without a display output). An NVIDIA card's HDMI audio (0x0403) and USB-C (0x0c03) functions
# carry the same vendor id and are not GPUs.
DISPLAY_CLASS = re.compile(r"^0x030[02]")
PCI_DEVICES = "sys/bus/pci/devices"
MAX_PCI_DEVICES = 1024  # a large server has a few hundred functions; never walk an unbounded directory
WSL_LIBCUDA = ("usr/lib/wsl/lib/libcuda.so.1", "usr/lib/wsl/lib/libcuda.so")

# The failing tool's words -> the state; the most specific first. Texts as nvidia-smi and NVML print them.
_STATES = (
    ("driver-library-mismatch", re.compile(r"Driver/library version mismatch|NVML/RM version mismatch", re.I)),
    ("no-devices", re.compile(r"No devices were found", re.I)),
    ("module-not-loaded", re.compile(r"couldn[’‘']t communicate with the NVIDIA driver|Driver Not Loaded", re.I)),
    ("nvml-error", re.compile(r"Failed to initialize NVML|NVML (query failed|unavailable \((Unknown Error|GPU is lost))|"
                              r"Unable to determine the device handle|GPU is lost", re.I)),
)


def classify(failure: str) -> str | None:
    """The state a failure message names, or None for a failure envpin has no name for."""
    return next((state for state, pattern in _STATES if pattern.search(failure)), None)


def nvidia_pci_gpus(fs_root: str) -> list[str]:
    """PCI addresses of NVIDIA display devices (sysfs), whatever driver holds them or none; [] off Linux."""
    directory = os.path.join(fs_root, PCI_DEVICES)
    try:
        with os.scandir(directory) as entries:
            names = []
            for entry in entries:
                names.append(entry.name)
                if len(names) >= MAX_PCI_DEVICES:
                    break
    except OSError:
        return []
    found = []
    for name in sorted(names):
        vendor = (read_text(fs_root, f"{PCI_DEVICES}/{name}/vendor") or "").strip().lower()
        if vendor != NVIDIA_PCI_VENDOR:
            continue
        if DISPLAY_CLASS.match((read_text(fs_root, f"{PCI_DEVICES}/{name}/class") or "").strip().lower()):
            found.append(name)
    return found


def signs(fs_root: str, os_label: str, wsl: bool, environ: Mapping[str, str]) -> list[str]:
    """What shows an NVIDIA GPU or its driver here without the driver answering, one sentence each."""
    found: list[str] = []
    if os_label == "linux":
        for relative, words in (("proc/driver/nvidia", "the NVIDIA kernel module is loaded (/proc/driver/nvidia)"),
                                ("sys/module/nvidia", "the NVIDIA kernel module is loaded (/sys/module/nvidia)")):
            if os.path.exists(os.path.join(fs_root, relative)):
                found.append(words)
        gpus = nvidia_pci_gpus(fs_root)
        if gpus:
            found.append(f"PCI display device{'s' if len(gpus) > 1 else ''} of vendor {NVIDIA_PCI_VENDOR} (NVIDIA): "
                         + ", ".join(gpus[:8]))
        if wsl:
            libcuda = next((path for path in WSL_LIBCUDA if os.path.exists(os.path.join(fs_root, path))), None)
            if libcuda:
                found.append(f"/{libcuda}: the Windows NVIDIA driver's CUDA library, mapped into WSL2")
            if os.path.exists(os.path.join(fs_root, "dev/dxg")):
                found.append("/dev/dxg: a WDDM GPU adapter is passed into WSL2")
    elif os_label == "windows":
        system_root = next((v for k, v in environ.items() if k.lower() in ("systemroot", "windir")), r"C:\Windows")
        nvcuda = os.path.join(system_root, "System32", "nvcuda.dll")
        if os.path.isfile(nvcuda):
            found.append(f"{nvcuda}: the NVIDIA display driver (WDDM) is installed")
    return found


def driver_trouble(failures: Sequence[str], evidence: Sequence[str], *, driver_found: bool, container: str | None,
                   wsl: bool) -> DriverTrouble | None:
    """The state of an NVIDIA GPU whose driver does not answer, or None (a working driver, or no sign of NVIDIA).

    `failures` are the probes' failure notes (NVML, each nvidia-smi), `evidence` what `signs` found. A driver
    found from /proc or /sys while the tools fail is still trouble when the tools name it (a version mismatch
    leaves /proc readable); a failure nobody can name is only trouble without a driver."""
    named = next(((state, failure) for failure in failures if (state := classify(failure))), None)
    if named:
        return DriverTrouble(state=named[0], message=named[1], evidence=tuple(evidence))
    if driver_found:
        return None
    if failures:
        return DriverTrouble(state="tool-failed", message=failures[-1], evidence=tuple(evidence))
    hardware = [line for line in evidence if line.startswith("PCI display device")]
    if hardware and container:
        return DriverTrouble(state="container-without-gpu", evidence=tuple(evidence),
                             message=f"running in a container ({container}) that does not have the host's NVIDIA driver")
    if hardware:
        return DriverTrouble(state="no-driver", evidence=tuple(evidence),
                             message="an NVIDIA GPU is on the PCI bus, but no NVIDIA driver is installed or loaded")
    if wsl and any("libcuda" in line for line in evidence):
        return DriverTrouble(state="wsl-driver-unreachable", evidence=tuple(evidence),
                             message="the Windows NVIDIA driver's libcuda is in /usr/lib/wsl/lib, but no nvidia-smi answered")
    if any("nvcuda.dll" in line for line in evidence) or any("kernel module is loaded" in line for line in evidence):
        return DriverTrouble(state="tool-failed", evidence=tuple(evidence),
                             message="the NVIDIA driver is installed, but neither NVML nor nvidia-smi answered")
    return None
