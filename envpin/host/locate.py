"""Where nvidia-smi is: a cheap look on disk, kept apart from the parsers so a machine without NVIDIA
tools never pays for importing them."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path
from typing import Mapping


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
