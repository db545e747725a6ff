"""AMD, Intel and Apple GPUs: ordered sources, each a pure parser over what its tool or file prints.

AMD (Linux): `amd-smi static --json` -> `rocm-smi --showproductname --json` -> `rocminfo` -> `rocm_agent_enumerator`
(targets only) -> the KFD topology in sysfs (`/sys/class/kfd/kfd/topology/nodes/*/properties`, `gfx_target_version`),
stopping at the first that names the GPUs; the installed ROCm from `/opt/rocm*/.info/version`; the loaded amdgpu
kernel module from `/sys/module/amdgpu/version`. Intel (Linux): `xpu-smi discovery` ->
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

from envpin.base.record import Record, record, replace
from envpin.facts.checks import amdgpu_module_of, is_generic_amd_gpu_name
from envpin.facts.host import Gpu, is_amd_release, is_gfx_target, is_macos_version
from envpin.host.procfs import read_text
from envpin.host.runner import CommandTimeout, Runner

AMD_PCI_VENDOR, INTEL_PCI_VENDOR = "0x1002", "0x8086"
KFD_NODES = "sys/class/kfd/kfd/topology/nodes"


@dataclass
class GpuReport:
    """What the AMD, Intel and Apple sources found."""

    gpus: list[Gpu] = field(default_factory=list)
    rocm: str | None = None
    amdgpu_module: str | None = None
    amdgpu_dkms: str | None = None
    macos: str | None = None
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- pure parsers: AMD


@record
class FoundGpu(Record):
    name: str
    gfx: str | None = None
    integrated: bool | None = None
    memory_mib: int | None = None
    device_id: str | None = None  # the PCI device id as the tool prints it (0x744c)
    driver: str | None = None  # the amdgpu kernel module version the tool reports (6.16.6), when it does


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
    """The GPU agents of `rocminfo`: `Name: gfx1100`, `Marketing Name: Radeon RX 7900 XTX`, `Device Type: GPU`; an
    agent whose Device Type line is missing (a pasted excerpt) is a GPU when its Name is a target: only GPU agents
    are named by one. An APU's agent says `Memory Properties: APU` (rocminfo.cc prints the word for HSA's AGENT_IS_APU flag, in
    ROCm/rocm-systems projects/rocminfo), and its generic name says so too."""
    found = []
    for block in re.split(r"^\*+\s*\n\s*Agent \d+\s*\n\*+\s*$", text, flags=re.MULTILINE)[1:]:
        fields = dict(re.findall(r"^  ([A-Za-z][A-Za-z .]*?):\s+(.*?)\s*$", block, re.MULTILINE))
        gfx = fields.get("Name", "")
        if fields.get("Device Type", "GPU" if is_gfx_target(gfx) else None) != "GPU":
            continue
        name = fields.get("Marketing Name") or gfx
        # only rocminfo's own word decides here; a generic name is weighed by the target, with the gfx (below)
        apu = "APU" in fields.get("Memory Properties", "").split()
        found.append(FoundGpu(name, gfx if is_gfx_target(gfx) else None, True if apu else None))
    return found


def parse_rocm_agent_enumerator(text: str) -> list[str]:
    """`rocm_agent_enumerator` prints one target per agent; gfx000 is the CPU."""
    return [line.strip() for line in text.splitlines() if is_gfx_target(line.strip()) and line.strip() != "gfx000"]


def parse_amd_smi_static(text: str) -> list[FoundGpu]:
    """`amd-smi static --asic --vram --driver --json`. Its shape moved between releases (read from ROCm/amdsmi's
    amdsmi_commands.py at rocm-6.0.0, rocm-6.1.0, rocm-6.2.0 and ROCm/rocm-systems' subcommands/static.py):
    a list of GPUs before amd-smi 26 (ROCm 7), `{"gpu_data": [...]}` from it; `asic.target_graphics_version` only
    from ROCm 6.3 (older releases name the GPU but not its target); `vram.vram_size_mb` in 6.0, then `vram.size`
    as `{"value": N, "unit": "MB"}`; `driver.driver_version` in 6.0, then `driver.version`. Lines before the
    document (Python warnings, a permission message) are skipped. Without --json (older amd-smi ignore it for some
    sections) the same fields come as `MARKET_NAME:` ... under each `GPU: N`."""
    start = next((m.start() for m in re.finditer(r"^[\[{]", text, re.MULTILINE)), None)
    if start is None:
        return _amd_smi_static_text(text)
    document: Any = json.loads(text[start:])
    entries = document.get("gpu_data", []) if isinstance(document, dict) else document
    found = []
    for entry in entries if isinstance(entries, list) else []:
        asic = entry.get("asic") if isinstance(entry, dict) else None
        if not isinstance(asic, dict):
            continue
        gfx = _printed_gfx(_known(asic.get("target_graphics_version")))
        vram, driver = entry.get("vram"), entry.get("driver")
        size = vram.get("size", vram.get("vram_size_mb")) if isinstance(vram, dict) else None
        version = driver.get("version", driver.get("driver_version")) if isinstance(driver, dict) else None
        name = _gpu_name(_known(asic.get("market_name")), gfx, _known(asic.get("device_id")))
        found.append(FoundGpu(name, gfx, None,  # a generic name is weighed by the target, with the gfx
                              memory_mib=_mib(size), device_id=_known(asic.get("device_id")),
                              driver=_module_version(version)))
    return found


def _amd_smi_static_text(text: str) -> list[FoundGpu]:
    found = []
    for block in re.split(r"^GPU: \d+\s*$", text, flags=re.MULTILINE)[1:]:
        sections: dict[str, dict[str, str]] = {}
        section = ""
        for line in block.splitlines():
            match = re.match(r"^( +)([A-Z_]+):\s*(.*?)\s*$", line)
            if not match:
                continue
            if len(match.group(1)) <= 4:
                section = match.group(2)
            sections.setdefault(section, {})[match.group(2)] = match.group(3)
        asic = sections.get("ASIC", {})
        gfx = _printed_gfx(asic.get("TARGET_GRAPHICS_VERSION"))
        device = _known(asic.get("DEVICE_ID"))
        found.append(FoundGpu(_gpu_name(_known(asic.get("MARKET_NAME")), gfx, device), gfx,
                              memory_mib=_mib(sections.get("VRAM", {}).get("SIZE")), device_id=device,
                              driver=_module_version(sections.get("DRIVER", {}).get("VERSION"))))
    return found


def parse_rocm_smi_product(text: str) -> list[FoundGpu]:
    """`rocm-smi --showproductname --showmeminfo vram --json` (or `--csv`): per card its `Card Series` (a name, a
    family with the name in brackets as `Arcturus GL-XL [AMD Instinct MI100]`, or on old releases a hex id),
    `Card Model` (the PCI device id), `GFX Version` (newer releases) and `VRAM Total Memory (B)`."""
    if text.lstrip().startswith("{"):
        document = json.loads(text)
        cards = [fields for key, fields in document.items() if key.startswith("card") and isinstance(fields, dict)]
    else:
        rows = [line.split(",") for line in text.strip().splitlines()]
        cards = [dict(zip(rows[0], row, strict=False)) for row in rows[1:] if row and row[0].startswith("card")]
    found = []
    for card in cards:
        fields = {key.lower(): str(value) for key, value in card.items()}
        series = _known(fields.get("card series"))
        bracket = re.search(r"\[([^\]/]+)\]$", series or "")
        name = bracket.group(1) if bracket else series
        if name and re.fullmatch(r"0x[0-9a-f]+", name, re.IGNORECASE):
            name = None
        gfx = _printed_gfx(fields.get("gfx version"))
        device = _known(fields.get("card model"))
        memory = fields.get("vram total memory (b)", "")
        found.append(FoundGpu(_gpu_name(name, gfx, device), gfx, device_id=device,
                              memory_mib=int(memory) // 2**20 if memory.isdigit() else None))
    return found


def _printed_gfx(value: str | None) -> str | None:
    """A target as rocm-smi and amd-smi print it. Until ROCm/rocm_smi_lib 94dca70 (January 2025) the library wrote
    KFD's gfx_target_version as the decimal number major*100 + minor*10 + stepping, or major*1000 + stepping for a
    one-digit major with minor 0, so gfx90a (stepping 10) came out as `gfx9010` and gfx908 as `gfx9008` (an MI250X's `gfx9010`,
    ROCm/rocm_smi_lib#159), and amd-smi printed the library's number too: a major of 10-12 when the digits start
    so, else one digit; one digit of minor; the rest is the stepping, which a target writes in hex."""
    text = (value or "").strip()
    match = re.fullmatch(r"gfx(1[0-2]|[89])(\d)(\d{1,2})", text)
    if not match or int(match.group(3)) > 15:
        return text if is_gfx_target(text) else None
    return f"gfx{match.group(1)}{match.group(2)}{int(match.group(3)):x}"


def _known(value: object) -> str | None:
    """A field's value as a string, or None for amd-smi's and rocm-smi's "N/A" and empty values."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return None if text in ("", "N/A", "n/a") else text


def _gpu_name(name: str | None, gfx: str | None, device: str | None) -> str:
    if name:
        return name
    return f"AMD GPU ({', '.join(part for part in (gfx, f'PCI {device}' if device else None) if part) or 'unnamed'})"


def _mib(size: object) -> int | None:
    """A VRAM size as amd-smi prints it: an int of MB (6.0), `{"value": 65520, "unit": "MB"}`, or `65520 MB`."""
    if isinstance(size, dict):
        size = f"{size.get('value')} {size.get('unit', 'MB')}"
    match = re.fullmatch(r"\s*(\d+)\s*(MB|MiB|GB|GiB)?\s*", str(size)) if size is not None else None
    if not match:
        return None
    return int(match.group(1)) * (1024 if (match.group(2) or "MB").startswith("G") else 1)


def _module_version(value: object) -> str | None:
    """The amdgpu-dkms module version the tool reports (6.18.3); the in-tree driver has none, and amd-smi then
    prints a kernel banner squeezed of its spaces (`Linuxversion6.14.0-24-generic(...)`), which is not one."""
    text = _known(value)
    return text if text and re.fullmatch(r"\d+\.\d+(\.\d+)*", text) else None


def parse_amdgpu_module_version(text: str) -> str | None:
    """`/sys/module/amdgpu/version`, which the amdgpu-dkms module has (`6.12.12`) and the in-tree one lacks."""
    value = text.strip()
    return value if re.fullmatch(r"\d+\.\d+(\.\d+)*", value) else None


def parse_amdgpu_dkms_package(text: str) -> str | None:
    """The amdgpu-dkms version the package manager prints (`dpkg-query -W -f='${Version}'`: 1:6.12.12.60401-2164967.24.04;
    rpm's `%{EPOCH}:%{VERSION}-%{RELEASE}`, `(none):` without an epoch)."""
    value = text.strip().removeprefix("(none):")
    return value if value and amdgpu_module_of(value) else None


def parse_rocm_version(text: str) -> str | None:
    """`/opt/rocm/.info/version`: `6.2.4-120` -> `6.2.4`."""
    match = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match and is_amd_release(match.group(1)) else None


# ---------------------------------------------------------------- pure parsers: Intel, Apple


def parse_sycl_ls(text: str) -> list[str]:
    """The Intel GPUs `sycl-ls` lists (`[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770
    Graphics 1.3 [1.3.26241]`; older releases `[ext_oneapi_level_zero:gpu:0] ...`, newer ones a device version such
    as `12.55.8`), each once although Level Zero and OpenCL both list it."""
    names: list[str] = []
    for line in text.splitlines():
        match = re.match(r"\s*\[(?:level_zero|ext_oneapi_level_zero|opencl):gpu(?::\d+)?\](?:\[[^\]]*\])?\s+[^,]+,\s+"
                         r"(.+?)\s+(?:OpenCL\s+)?\d+(?:\.\d+)+(?:\s+NEO)?\s+\[", line)
        if match and "intel" in match.group(1).lower() and match.group(1) not in names:
            names.append(match.group(1))
    return names


def parse_xpu_smi_discovery(text: str) -> list[str]:
    """`xpu-smi discovery`: one `Device Name: Intel(R) Arc(TM) A770 Graphics` per GPU, inside its table's `|` borders;
    `xpu-smi discovery -j`: the `device_name` of each entry of its `device_list`."""
    if text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            return []
        devices = document.get("device_list") if isinstance(document, dict) else None
        return [d["device_name"].strip() for d in devices or [] if isinstance(d, dict)
                and isinstance(d.get("device_name"), str) and d["device_name"].strip()]
    return re.findall(r"Device Name:\s*(.+?)\s*\|?\s*$", text, re.MULTILINE)


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


@record
class Adapter(Record):
    name: str
    vendor: str  # amd | intel | nvidia | other
    driver_version: str | None = None


def parse_video_controllers(text: str) -> list[Adapter]:
    """Windows' display adapters (Win32_VideoController) as PowerShell prints them: `Format-List` (`Name : ...`),
    wmic's `/value` form (`Caption=...`), a `Format-Table` (a header, a line of dashes, the rows), or wmic's own
    table (`wmic path win32_VideoController get Name,...`: a header of property names, the rows aligned under it)."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and set(lines[1].strip()) <= {"-", " "}:
        return _video_table(lines[0], [m.start() for m in re.finditer(r"-+", lines[1])], lines[2:])
    if lines and re.fullmatch(r"[A-Za-z]+( +[A-Za-z]+)*", lines[0]) and {"Name", "Caption"} & set(lines[0].split()):
        return _video_table(lines[0], [m.start() for m in re.finditer(r"\S+", lines[0])], lines[1:])
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


def _video_table(header: str, starts: list[int], rows: list[str]) -> list[Adapter]:
    headers = [header[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)]
    adapters = []
    for line in rows:
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
        from envpin.facts.host import gpu_vendor  # noqa: PLC0415 - the name's own vendor words, when nothing else says

        vendor = gpu_vendor(name) if re.search(r"amd|radeon|intel|arc|nvidia|geforce|quadro|tesla", name, re.IGNORECASE) else "other"
    return Adapter(name, vendor, record.get("DriverVersion") or None)


# ---------------------------------------------------------------- the probes


def detect_other_gpus(runner: Runner, os_label: str, fs_root: str, timeout: float) -> GpuReport:
    report = GpuReport()
    if os_label == "linux":
        amd = _amd(runner, fs_root, timeout, report.notes)
        report.gpus += [Gpu(0, g.name, None, g.memory_mib, vendor="amd", gfx=g.gfx, integrated=g.integrated)
                        for g in amd]
        report.rocm = _installed_rocm(fs_root)
        if amd:
            report.amdgpu_module = amdgpu_module(fs_root) or next((g.driver for g in amd if g.driver), None)
            if report.amdgpu_module and not report.amdgpu_module.startswith("in-tree"):
                report.amdgpu_dkms = _installed_amdgpu_dkms(runner, report.amdgpu_module, timeout, report.notes)
        report.gpus += [Gpu(0, name, None, vendor="intel") for name in _intel(runner, fs_root, timeout, report.notes)]
    elif os_label == "windows":
        adapters = _run(runner, WINDOWS_ADAPTERS, timeout, parse_video_controllers, report.notes)
        for adapter in adapters:
            if adapter.vendor in ("amd", "intel"):
                generic = adapter.vendor == "amd" and is_generic_amd_gpu_name(adapter.name)
                report.gpus.append(Gpu(0, adapter.name, None, vendor=adapter.vendor, integrated=True if generic else None))
    elif os_label == "macos":
        chip = _first_line_of(runner, ["sysctl", "-n", "machdep.cpu.brand_string"], timeout, parse_cpu_brand, report.notes)
        if chip:
            report.gpus.append(Gpu(0, chip, None, vendor="apple", integrated=True))
        report.macos = _first_line_of(runner, ["sw_vers", "-productVersion"], timeout, parse_sw_vers, report.notes)
    return report


def _amd(runner: Runner, fs_root: str, timeout: float, notes: list[str]) -> list[FoundGpu]:
    sources: list[tuple[list[str], Callable[[str], list[FoundGpu]]]] = [
        # amd-smi of ROCm 5.7 has no --vram (ROCm/amdsmi amdsmi_parser.py at rocm-5.7.0): it fails, rocm-smi answers
        (["amd-smi", "static", "--asic", "--vram", "--driver", "--json"], parse_amd_smi_static),
        (["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"], parse_rocm_smi_product),
        (["rocminfo"], parse_rocminfo),
        (["rocm_agent_enumerator"], lambda text: [FoundGpu(g, g) for g in parse_rocm_agent_enumerator(text)]),
    ]
    kfd = _kfd_targets(fs_root)
    if not kfd and not os.path.exists(os.path.join(fs_root, "dev", "kfd")):
        return []  # no AMD compute device: do not run the ROCm tools at all
    for argv, parser in sources:
        found = _run(runner, argv, timeout, parser, notes)
        if found:
            # amd-smi before ROCm 6.3 and older rocm-smi name the GPUs but not their targets: KFD's topology says
            # them, matched only when every GPU there has the same one (its node order need not be the tool's)
            if len(set(kfd)) == 1 and len(kfd) == len(found):
                found = [g if g.gfx else replace(g, gfx=kfd[0]) for g in found]
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


def amdgpu_module(fs_root: str) -> str | None:
    """The loaded amdgpu kernel module, read as AMD's rocm_smi library reads the driver version (rsmi_version_str_get
    in ROCm/rocm-systems projects/rocm-smi-lib/src/rocm_smi.cc): /sys/module/amdgpu/version, which amdgpu-dkms has,
    else the kernel release (the kernel's own driver has no version file), written `in-tree 6.8.0-45-generic`;
    None when amdgpu is not loaded."""
    module = os.path.join(fs_root, "sys", "module", "amdgpu")
    version = read_text(module, "version")
    if version is not None and parse_amdgpu_module_version(version):
        return parse_amdgpu_module_version(version)
    if not os.path.isdir(module):
        return None
    release = (read_text(fs_root, "proc/sys/kernel/osrelease") or "").strip()
    return f"in-tree {release}" if release else "in-tree"


# Debian/Ubuntu, then RHEL/SLES: the package version names the driver release, the module version alone does not
AMDGPU_DKMS_QUERIES = (["dpkg-query", "-W", "-f=${Version}", "amdgpu-dkms"],
                       ["rpm", "-q", "--qf", "%{EPOCH}:%{VERSION}-%{RELEASE}", "amdgpu-dkms"])


def _installed_amdgpu_dkms(runner: Runner, module: str, timeout: float, notes: list[str]) -> str | None:
    """The installed amdgpu-dkms package whose module is the loaded one (a newer package not yet booted into is not
    the driver that runs)."""
    for argv in AMDGPU_DKMS_QUERIES:
        try:
            result = runner.run(argv, timeout)
        except CommandTimeout:
            notes.append(f"{argv[0]} timed out after {timeout:g} s")
            continue
        except OSError:
            continue  # not this package manager
        if result.returncode != 0:
            continue  # not installed as a package of this manager
        version = parse_amdgpu_dkms_package(result.stdout)
        if version is None:
            notes.append(f"{argv[0]} printed an amdgpu-dkms version envpin cannot read")
        elif amdgpu_module_of(version) != module:
            notes.append(f"the installed amdgpu-dkms {version} is not the loaded amdgpu module {module} "
                         "(not rebooted since?): its driver release is not used")
        else:
            return version
        return None
    return None


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
