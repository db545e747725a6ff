"""Linux kernel-module files: /proc/driver/nvidia/version and /sys/module/nvidia/version.

They need no executable, so they still answer when nvidia-smi is missing or hangs; they say nothing
about GPUs or the CUDA version. WSL2 has neither file (astral-sh/uv#14647).
"""

from __future__ import annotations

import os
import re

from envpin.facts.host import is_driver_version

PROC_DRIVER_VERSION = "proc/driver/nvidia/version"
SYS_MODULE_VERSION = "sys/module/nvidia/version"

# Proprietary: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..."
# Open:        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build ..."
# The version is the first dotted number after "Kernel Module", wherever the arch words fall.
_NVRM = re.compile(r"^NVRM version:.*?Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+){1,2})\b", re.MULTILINE)


def parse_proc_driver_version(text: str) -> str | None:
    match = _NVRM.search(text)
    if match and is_driver_version(match.group(1)):
        return match.group(1)
    return None


def parse_sys_module_version(text: str) -> str | None:
    """/sys/module/nvidia/version holds the bare version, e.g. '535.104.05\\n'."""
    value = text.strip()
    return value if is_driver_version(value) else None


def read_text(fs_root: str, relative: str) -> str | None:
    """A small file under fs_root, or None if absent or unreadable (procfs may deny access)."""
    path = os.path.join(fs_root, relative)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(65536)
    except OSError:
        return None
