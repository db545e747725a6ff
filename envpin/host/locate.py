"""Where nvidia-smi is, and whether NVML can answer at all: cheap looks on disk, kept apart from the parsers
and from envpin.host.nvml so a machine without NVIDIA tools never pays for importing them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

# What a Linux machine with a loaded NVIDIA driver has: its device nodes or its /proc entry; WSL2 has the
# paravirtual /dev/dxg and the driver's libraries in /usr/lib/wsl/lib. Without any of them NVML cannot
# answer, and importing pynvml (ctypes, threading) would only cost time.
LINUX_DRIVER_MARKERS = ("dev/nvidiactl", "dev/nvidia0", "proc/driver/nvidia", "dev/dxg", "usr/lib/wsl/lib")


def worth_trying(os_name: str, fs_root: str = "/") -> bool:
    """Whether NVML can possibly answer here: always on Windows, never on macOS, on Linux only with a driver."""
    if os_name == "windows":
        return True
    if os_name != "linux":
        return False
    return any(os.path.exists(os.path.join(fs_root, marker)) for marker in LINUX_DRIVER_MARKERS)


def candidate_paths(os_name: str, environ: Mapping[str, str], *, wsl: bool = False, fs_root: str = "/") -> list[str]:
    """Where nvidia-smi may be, most likely first. PATH is not enough on Windows (unslothai/unsloth#11119)
    nor on WSL, whose driver tools live in /usr/lib/wsl/lib (astral-sh/uv#14647)."""
    exe = "nvidia-smi.exe" if os_name == "windows" else "nvidia-smi"
    candidates = []
    on_path = shutil.which(exe, path=_env(environ, "PATH") or "")
    if on_path:
        candidates.append(on_path)
    if os_name == "windows":
        system_root = _env(environ, "SystemRoot") or _env(environ, "windir") or r"C:\Windows"
        program_files = _env(environ, "ProgramFiles") or r"C:\Program Files"
        candidates.append(str(Path(system_root) / "System32" / exe))
        candidates.append(str(Path(program_files) / "NVIDIA Corporation" / "NVSMI" / exe))
        pattern = str(Path(system_root) / "System32" / "DriverStore" / "FileRepository" / "nv*" / exe)
        import glob  # noqa: PLC0415 - Windows only

        candidates.extend(sorted(glob.glob(pattern)))
    elif wsl:
        candidates.append(os.path.join(fs_root, "usr/lib/wsl/lib", exe))
    unique = []
    for path in candidates:
        if path not in unique and os.path.isfile(path):
            unique.append(path)
    return unique


def _env(environ: Mapping[str, str], key: str) -> str | None:
    if key in environ:
        return environ[key]
    lowered = key.lower()  # Windows environment names are case-insensitive
    return next((value for name, value in environ.items() if name.lower() == lowered), None)
