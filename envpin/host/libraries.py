"""Which CUDA / cuDNN / NVIDIA / VC++ runtime libraries sit in each directory the loader searches.

The doctor needs this to explain "wrong libcudart picked up", "cudnn64_8.dll not found", or
"libnvJitLink shadowed by an older toolkit": the answer is always in the order and content of
these directories.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

# Names are matched, never guessed from versions: the set is open-ended (cudnn_ops_infer64_8.dll,
# libcublasLt.so.12, cupti64_2023.1.0.dll ...), so one pattern per platform covers the families.
_FAMILIES = (
    r"cuda|cudart|cublas|cublasLt|cufft|cufftw|curand|cusolver|cusolverMg|cusparse|cusparseLt|"
    r"cudnn\w*|cupti|cufile\w*|nvrtc|nvrtc-builtins|nvJitLink|nvjpeg|npp\w+|nvToolsExt|nvblas|nccl|nvvm"
)
_LINUX = re.compile(rf"^lib(?:{_FAMILIES}|nvidia-ml|nvidia-ptxjitcompiler)\.so(?:\.\d+)*$")
_WINDOWS = re.compile(
    rf"^(?:(?:{_FAMILIES})(?:64)?_[\d_.]+\.dll|nvcuda\.dll|nvml\.dll|vcruntime140(?:_1)?\.dll|msvcp140(?:_\d+)?\.dll|zlibwapi\.dll)$",
    re.IGNORECASE,
)


def is_runtime_library(name: str, os_name: str) -> bool:
    pattern = _WINDOWS if os_name == "windows" else _LINUX
    return bool(pattern.match(name))


def runtime_libraries(names: Iterable[str], os_name: str) -> list[str]:
    return sorted({name for name in names if is_runtime_library(name, os_name)}, key=str.lower)


def search_dirs(os_name: str, path_dirs: list[str], ld_library_path: list[str], toolkit_lib_dirs: list[str], wsl_lib: str | None) -> list[str]:
    """The library search path in loader order: PATH on Windows; LD_LIBRARY_PATH, then toolkits, then
    the WSL driver directory on Linux."""
    if os_name == "windows":
        ordered = list(path_dirs)
    else:
        ordered = list(ld_library_path) + list(toolkit_lib_dirs) + ([wsl_lib] if wsl_lib else [])
    unique = []
    for directory in ordered:
        if directory and directory not in unique:
            unique.append(directory)
    return unique


def scan(directories: Iterable[str], os_name: str) -> dict[str, list[str]]:
    """{directory: [runtime libraries]} for the directories that hold some."""
    files: dict[str, list[str]] = {}
    for directory in directories:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        found = runtime_libraries(names, os_name)
        if found:
            files[directory] = found
    return files
