"""AMD, Intel and Apple GPUs: ordered sources, each a pure parser over what its tool or file prints.

AMD (Linux): `amd-smi static --json` -> `rocminfo` -> `rocm_agent_enumerator` (targets only) -> the KFD topology in
sysfs (`/sys/class/kfd/kfd/topology/nodes/*/properties`, `gfx_target_version`), stopping at the first that names
the GPUs; the installed ROCm from `/opt/rocm*/.info/version`. Intel (Linux): `xpu-smi discovery` ->
`sycl-ls` -> the i915/xe driver of the DRM cards in sysfs (PCI vendor 0x8086). Windows: the display adapters
(`Get-CimInstance Win32_VideoController`: name, vendor, driver version). Apple: `sysctl -n
machdep.cpu.brand_string` and `sw_vers -productVersion`. Every command runs under the Runner's timeout; a source
that fails adds a note and the next one is tried. Loaded only by `envpin detect` and the commands that probe
this machine (`envpin.host.detect_host`), never by a solve for another machine.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envpin.facts import Gpu, is_amd_release, is_gfx_target, is_macos_version
from envpin.host.procfs import read_text
from envpin.host.runner import CommandTimeout, Runner

AMD_PCI_VENDOR, INTEL_PCI_VENDOR = "0x1002", "0x8086"
KFD_NODES = "sys/class/kfd/kfd/topology/nodes"


@dataclass
class GpuReport:
    """What the AMD, Intel and Apple sources found."""

    gpus: list[Gpu] = field(default_factory=list)
    rocm: str | None = None
    macos: str | None = None
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- pure parsers: AMD


@dataclass(frozen=True)
class FoundGpu:
    name: str
    gfx: str | None = None
    integrated: bool | None = None


def gfx_from_target_version(value: int) -> str | None:
    """KFD's `gfx_target_version` (major*10000 + minor*100 + stepping) as a target: 110000 -> gfx1100,
    90402 -> gfx942, 90010 -> gfx90a; 0 (a CPU node) -> None."""
    if value <= 0:
        return None
    major, minor, stepping = value // 10000, (value // 100) % 100, value % 100
    if minor > 9 or stepping > 15:
        return None
    return f"gfx{major}{minor}{stepping:x}"


def parse_kfd_properties(text: str) -> str | None:
    """The gfx target of one KFD topology node's `properties` file (None for a CPU node)."""
    match = re.search(r"^gfx_target_version\s+(\d+)\s*$", text, re.MULTILINE)
    return gfx_from_target_version(int(match.group(1))) if match else None


def parse_rocminfo(text: str) -> list[FoundGpu]:
    """The GPU agents of `rocminfo`: `Name: gfx1100`, `Marketing Name: Radeon RX 7900 XTX`, `Device Type: GPU`;
    an APU's agent says `Memory Properties: APU`."""
    found = []
    for block in re.split(r"^\*+\s*\n\s*Agent \d+\s*\n\*+\s*$", text, flags=re.MULTILINE)[1:]:
        fields = dict(re.findall(r"^  ([A-Za-z][A-Za-z .]*?):\s+(.*?)\s*$", block, re.MULTILINE))
        if fields.get("Device Type") != "GPU":
            continue
        gfx = fields.get("Name", "")
        name = fields.get("Marketing Name") or gfx
        apu = "APU" in fields.get("Memory Properties", "").split()
        found.append(FoundGpu(name, gfx if is_gfx_target(gfx) else None, True if apu else None))
    return found


def parse_rocm_agent_enumerator(text: str) -> list[str]:
    """`rocm_agent_enumerator` prints one target per agent; gfx000 is the CPU."""
    return [line.strip() for line in text.splitlines() if is_gfx_target(line.strip()) and line.strip() != "gfx000"]


def parse_amd_smi_static(text: str) -> list[FoundGpu]:
    """`amd-smi static --asic --json`: a list of GPUs, or `{"gpu_data": [...]}` in newer releases, each GPU's `asic`
    holding `market_name` and `target_graphics_version`; without --json (older amd-smi ignore it for some
    sections) the same fields as `MARKET_NAME:` and `TARGET_GRAPHICS_VERSION:` under each `GPU: N`."""
    if not text.lstrip().startswith(("[", "{")):
        return _amd_smi_static_text(text)
    document: Any = json.loads(text)
    entries = document.get("gpu_data", []) if isinstance(document, dict) else document
    found = []
    for entry in entries if isinstance(entries, list) else []:
        asic = entry.get("asic") if isinstance(entry, dict) else None
        if not isinstance(asic, dict):
            continue
        gfx = asic.get("target_graphics_version")
        name = asic.get("market_name")
        gfx = gfx if isinstance(gfx, str) and is_gfx_target(gfx) else None
        found.append(FoundGpu(name if isinstance(name, str) and name not in ("", "N/A") else (gfx or "AMD GPU"), gfx))
    return found


def _amd_smi_static_text(text: str) -> list[FoundGpu]:
    found = []
    for block in re.split(r"^GPU: \d+\s*$", text, flags=re.MULTILINE)[1:]:
        name = re.search(r"^\s+MARKET_NAME:\s*(.+?)\s*$", block, re.MULTILINE)
        gfx = re.search(r"^\s+TARGET_GRAPHICS_VERSION:\s*(gfx[0-9a-f]+)\s*$", block, re.MULTILINE)
        target = gfx.group(1) if gfx and is_gfx_target(gfx.group(1)) else None
        found.append(FoundGpu(name.group(1) if name else (target or "AMD GPU"), target))
    return found


def parse_rocm_version(text: str) -> str | None:
    """`/opt/rocm/.info/version`: `6.2.4-120` -> `6.2.4`."""
    match = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match and is_amd_release(match.group(1)) else None


# ---------------------------------------------------------------- pure parsers: Intel, Apple


def parse_sycl_ls(text: str) -> list[str]:
    """The Intel GPUs `sycl-ls` lists (`[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770
    Graphics 1.3 [1.3.26241]`), each once although Level Zero and OpenCL both list it."""
    names: list[str] = []
    for line in text.splitlines():
        match = re.match(r"\s*\[(?:level_zero|ext_oneapi_level_zero|opencl):gpu\](?:\[[^\]]*\])?\s+[^,]+,\s+(.+?)\s+"
                         r"(?:OpenCL\s+)?\d+\.\d+(?:\s+NEO)?\s+\[", line)
        if match and "intel" in match.group(1).lower() and match.group(1) not in names:
            names.append(match.group(1))
    return names


def parse_xpu_smi_discovery(text: str) -> list[str]:
    """`xpu-smi discovery`: one `Device Name: Intel(R) Arc(TM) A770 Graphics` per GPU."""
    return re.findall(r"Device Name:\s*(.+?)\s*$", text, re.MULTILINE)


def parse_sw_vers(text: str) -> str | None:
    """`sw_vers -productVersion` (`14.5`) or the whole `sw_vers` (`ProductVersion:\t14.5`)."""
    match = re.search(r"(?:ProductVersion:\s*)?^\s*(\d{2}(?:\.\d+){0,2})\s*$", text, re.MULTILINE) or re.search(
        r"ProductVersion:\s*(\d{2}(?:\.\d+){0,2})", text)
    return match.group(1) if match and is_macos_version(match.group(1)) else None


def parse_cpu_brand(text: str) -> str | None:
    """`sysctl -n machdep.cpu.brand_string` on Apple silicon: `Apple M3 Max`."""
    value = text.strip()
    return value if value.startswith("Apple ") else None


# ---------------------------------------------------------------- pure parsers: Windows

_PCI_VENDORS = {"1002": "amd", "8086": "intel", "10de": "nvidia"}
WINDOWS_ADAPTERS = ["powershell", "-NoProfile", "-NonInteractive", "-Command",
                    "Get-CimInstance Win32_VideoController | Format-List Name,AdapterCompatibility,DriverVersion,PNPDeviceID"]


@dataclass(frozen=True)
class Adapter:
    name: str
    vendor: str  # amd | intel | nvidia | other
    driver_version: str | None = None


def parse_video_controllers(text: str) -> list[Adapter]:
    """Windows' display adapters (Win32_VideoController) as PowerShell prints them: `Format-List` (`Name : ...`),
    wmic's `/value` form (`Caption=...`), or a `Format-Table` with Name first and DriverVersion last."""
    lines = text.splitlines()
    if len(lines) > 1 and lines[0].startswith("Name") and set(lines[1].strip()) <= {"-", " "} and lines[1].strip():
        return _video_table(lines)
    records: list[dict[str, str]] = [{}]
    for line in lines:
        match = re.match(r"^\s*(\w+)\s*(?::|=)\s?(.*?)\s*$", line)
        if not line.strip():
            if records[-1]:
                records.append({})
        elif match:
            if match.group(1) in records[-1]:
                records.append({})
            records[-1][match.group(1)] = match.group(2)
    return [a for a in (_adapter(r) for r in records if r) if a is not None]


def _video_table(lines: list[str]) -> list[Adapter]:
    starts = [m.start() for m in re.finditer(r"-+", lines[1])]
    headers = [lines[0][start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
    adapters = []
    for line in lines[2:]:
        cells = [line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
        adapter = _adapter(dict(zip(headers, cells, strict=True))) if line.strip() else None
        if adapter is not None:
            adapters.append(adapter)
    return adapters


def _adapter(record: dict[str, str]) -> Adapter | None:
    name = record.get("Name") or record.get("Caption") or ""
    if not name:
        return None
    vendor_text = record.get("AdapterCompatibility", "").lower()
    pci = re.search(r"VEN_([0-9A-Fa-f]{4})", record.get("PNPDeviceID", ""))
    if "advanced micro devices" in vendor_text or "amd" in vendor_text.split():
        vendor = "amd"
    elif "intel" in vendor_text:
        vendor = "intel"
    elif "nvidia" in vendor_text:
        vendor = "nvidia"
    elif pci:
        vendor = _PCI_VENDORS.get(pci.group(1).lower(), "other")
    else:
        from envpin.facts import gpu_vendor  # noqa: PLC0415 - the name's own vendor words, when nothing else says

        vendor = gpu_vendor(name) if re.search(r"amd|radeon|intel|arc", name, re.IGNORECASE) else "other"
    return Adapter(name, vendor, record.get("DriverVersion") or None)


# ---------------------------------------------------------------- the probes


def detect_other_gpus(runner: Runner, os_label: str, fs_root: str, timeout: float) -> GpuReport:
    report = GpuReport()
    if os_label == "linux":
        amd = _amd(runner, fs_root, timeout, report.notes)
        report.gpus += [Gpu(0, g.name, None, vendor="amd", gfx=g.gfx, integrated=g.integrated) for g in amd]
        report.rocm = _installed_rocm(fs_root)
        report.gpus += [Gpu(0, name, None, vendor="intel") for name in _intel(runner, fs_root, timeout, report.notes)]
    elif os_label == "windows":
        adapters = _run(runner, WINDOWS_ADAPTERS, timeout, parse_video_controllers, report.notes)
        for adapter in adapters:
            if adapter.vendor in ("amd", "intel"):
                generic = re.fullmatch(r"AMD Radeon(\(TM\))? Graphics", adapter.name) is not None
                report.gpus.append(Gpu(0, adapter.name, None, vendor=adapter.vendor, integrated=True if generic else None))
    elif os_label == "macos":
        chip = _first_line_of(runner, ["sysctl", "-n", "machdep.cpu.brand_string"], timeout, parse_cpu_brand, report.notes)
        if chip:
            report.gpus.append(Gpu(0, chip, None, vendor="apple", integrated=True))
        report.macos = _first_line_of(runner, ["sw_vers", "-productVersion"], timeout, parse_sw_vers, report.notes)
    return report


def _amd(runner: Runner, fs_root: str, timeout: float, notes: list[str]) -> list[FoundGpu]:
    sources: list[tuple[list[str], Callable[[str], list[FoundGpu]]]] = [
        (["amd-smi", "static", "--asic", "--json"], parse_amd_smi_static),
        (["rocminfo"], parse_rocminfo),
        (["rocm_agent_enumerator"], lambda text: [FoundGpu(g, g) for g in parse_rocm_agent_enumerator(text)]),
    ]
    kfd = _kfd_targets(fs_root)
    if not kfd and not os.path.exists(os.path.join(fs_root, "dev", "kfd")):
        return []  # no AMD compute device: do not run the ROCm tools at all
    for argv, parser in sources:
        found = _run(runner, argv, timeout, parser, notes)
        if found:
            return found
    return [FoundGpu(f"AMD GPU ({gfx})", gfx) for gfx in kfd]


def _kfd_targets(fs_root: str) -> list[str]:
    targets = []
    for path in sorted(glob.glob(os.path.join(fs_root, KFD_NODES, "*", "properties"))):
        text = read_text(os.path.dirname(path), "properties")
        gfx = parse_kfd_properties(text) if text else None
        if gfx:
            targets.append(gfx)
    return targets


def _installed_rocm(fs_root: str) -> str | None:
    candidates = [os.path.join(fs_root, "opt", "rocm", ".info", "version")]
    candidates += sorted(glob.glob(os.path.join(fs_root, "opt", "rocm-*", ".info", "version")), reverse=True)
    for path in candidates:
        text = read_text(os.path.dirname(path), "version")
        version = parse_rocm_version(text) if text else None
        if version:
            return version
    return None


def _intel(runner: Runner, fs_root: str, timeout: float, notes: list[str]) -> list[str]:
    cards = _intel_drm_cards(fs_root)
    if not cards:
        return []
    for argv, parser in ((["xpu-smi", "discovery"], parse_xpu_smi_discovery), (["sycl-ls"], parse_sycl_ls)):
        names = _run(runner, argv, timeout, parser, notes)
        if names:
            return names
    # Only the kernel driver is known: the name stays generic, so the GPU is not taken for an XPU target.
    return [f"Intel GPU ({driver} driver, PCI {device})" for driver, device in cards]


def _intel_drm_cards(fs_root: str) -> list[tuple[str, str]]:
    """(kernel driver, PCI device id) of each Intel DRM card: i915 or xe."""
    cards = []
    for device in sorted(glob.glob(os.path.join(fs_root, "sys", "class", "drm", "card[0-9]*", "device"))):
        vendor = (read_text(device, "vendor") or "").strip()
        if vendor != INTEL_PCI_VENDOR:
            continue
        driver = os.path.basename(os.path.realpath(os.path.join(device, "driver")))
        if driver in ("i915", "xe"):
            cards.append((driver, (read_text(device, "device") or "?").strip()))
    return cards


def _run(runner: Runner, argv: list[str], timeout: float, parser: Callable[[str], list[Any]], notes: list[str]) -> list[Any]:
    try:
        result = runner.run(argv, timeout)
    except CommandTimeout:
        notes.append(f"{argv[0]} timed out after {timeout:g} s")
        return []
    except OSError:
        return []  # not installed: the next source answers
    if result.returncode != 0:
        notes.append(f"{argv[0]} failed (exit status {result.returncode})")
        return []
    try:
        return parser(result.stdout)
    except (ValueError, AttributeError, KeyError, TypeError):
        notes.append(f"{argv[0]} printed something envpin cannot read")
        return []


def _first_line_of(runner: Runner, argv: list[str], timeout: float, parser: Callable[[str], str | None],
                   notes: list[str]) -> str | None:
    try:
        result = runner.run(argv, timeout)
    except CommandTimeout:
        notes.append(f"{argv[0]} timed out after {timeout:g} s")
        return None
    except OSError:
        return None
    return parser(result.stdout) if result.returncode == 0 else None
