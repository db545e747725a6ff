"""The human-readable text of `envpin detect` (the JSON form is `envpin.facts.host.to_json`)."""

from __future__ import annotations

from envpin.base.escapes import printable
from envpin.facts.host import HostFacts

_SOURCE_NAMES = {
    "nvml": "NVML",
    "nvidia-smi": "nvidia-smi",
    "procfs": "/proc/driver/nvidia/version",
    "sysfs": "/sys/module/nvidia/version",
    "override": "given on the command line",
}


def render_summary(facts: HostFacts) -> str:
    lines = [f"System:   {_system(facts)}", f"Python:   {_python(facts)}", f"Driver:   {_driver(facts)}"]
    if facts.gpus:
        for gpu in facts.gpus:
            lines.append(f"GPU {gpu.index}:    {printable(gpu.name)}{_gpu_details(gpu)}")  # one line, whatever the name
    else:
        lines.append("GPUs:     none seen")
    amd = [part for part in (f"amdgpu module {facts.amdgpu_module}" if facts.amdgpu_module else None,
                             f"amdgpu-dkms {facts.amdgpu_dkms}" if facts.amdgpu_dkms else None,
                             f"ROCm {facts.rocm}" if facts.rocm else None) if part]
    if amd:
        lines.append(f"AMD:      {', '.join(amd)}")
    if facts.macos:
        lines.append(f"macOS:    {facts.macos}")
    if facts.toolkits:
        for toolkit in facts.toolkits:
            where = toolkit.root or toolkit.nvcc or "location unknown"
            lines.append(f"Toolkit:  CUDA {toolkit.version} ({where})")
    else:
        lines.append("Toolkit:  no CUDA toolkit found")
    trouble = facts.driver_trouble
    if trouble is not None:
        lines.append(f"Trouble:  {trouble.state}: {trouble.message} (run `envpin doctor`)")
        for sign in trouble.evidence:
            lines.append(f"          evidence: {sign}")
    for note in facts.notes:
        lines.append(f"Note:     {note}")
    return "\n".join(lines)


def _system(facts: HostFacts) -> str:
    text = f"{facts.os} {facts.arch}"
    if facts.wsl:
        text += " (WSL)"
    if facts.libc and facts.libc.version:
        text += f", {facts.libc.name} {facts.libc.version}"
    return text


def _python(facts: HostFacts) -> str:
    text = f"{facts.python.version} ({facts.python.env_type})"
    return f"{text} {facts.python.executable}" if facts.python.executable else text


def _driver(facts: HostFacts) -> str:
    driver = facts.driver
    if driver is None:
        return "no NVIDIA driver"
    cuda = f", supports CUDA up to {driver.cuda}" if driver.cuda else ""
    return f"NVIDIA {driver.version}{cuda} (from {_SOURCE_NAMES.get(driver.source, driver.source)})"


def _gpu_details(gpu) -> str:
    parts = []
    if gpu.compute_capability:
        parts.append(f"compute capability {gpu.compute_capability}")
    if gpu.gfx:
        parts.append(gpu.gfx)
    if gpu.memory_mib:
        parts.append(f"{gpu.memory_mib / 1024:.0f} GiB" if gpu.memory_mib >= 1024 else f"{gpu.memory_mib} MiB")
    return f" ({', '.join(parts)})" if parts else ""
