"""CUDA toolkits installed on the machine: every one found, not only the one first on PATH.

Two toolkits on PATH is a classic cause of "works in one shell, not in another", so the doctor
needs the full list. Each toolkit is identified by its resolved root, which collapses
/usr/local/cuda -> /usr/local/cuda-12.4 and CUDA_PATH == CUDA_PATH_V12_4 into one entry.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from envpin.facts.host import Toolkit
from envpin.host.runner import CommandTimeout, Runner

_NVCC_RELEASE = re.compile(r"release (\d+)\.(\d+), V(\d+\.\d+\.\d+)")
_VERSION_TXT = re.compile(r"CUDA Version (\d+)\.(\d+)")
_DIRECTORY_VERSION = re.compile(r"(?:cuda-|^v)(\d+)\.(\d+)$", re.IGNORECASE)


def parse_nvcc_version(text: str) -> str | None:
    """'Cuda compilation tools, release 13.0, V13.0.88' -> '13.0'."""
    match = _NVCC_RELEASE.search(text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def parse_nvcc_full_version(text: str) -> str | None:
    """The exact build, 'V13.0.88' -> '13.0.88': tells two installs of the same minor apart."""
    match = _NVCC_RELEASE.search(text)
    return match.group(3) if match else None


def parse_version_json(text: str) -> str | None:
    """version.json (CUDA >= 11.1): {"cuda": {"name": "CUDA SDK", "version": "11.5.2"}} -> '11.5'."""
    try:
        document = json.loads(text)
        version = document["cuda"]["version"]
    except (ValueError, KeyError, TypeError, RecursionError):  # RecursionError: JSON nested too deep
        return None
    match = re.match(r"^(\d+)\.(\d+)", str(version))
    return f"{match.group(1)}.{match.group(2)}" if match else None


def parse_version_txt(text: str) -> str | None:
    """version.txt (CUDA <= 11.0): 'CUDA Version 10.2.89' -> '10.2'."""
    match = _VERSION_TXT.search(text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def version_from_directory_name(path: str) -> str | None:
    """'/usr/local/cuda-12.4' or '...\\CUDA\\v12.4' -> '12.4'; a last resort, the name can lie."""
    match = _DIRECTORY_VERSION.search(Path(path).name)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def nvcc_name(os_name: str) -> str:
    return "nvcc.exe" if os_name == "windows" else "nvcc"


def candidate_roots(os_name: str, environ: Mapping[str, str], fs_root: str = "/") -> list[str]:
    """Toolkit roots named by the environment and the installers' default locations."""
    roots: list[str] = []
    for key, value in environ.items():
        upper = key.upper()
        if value and (upper in ("CUDA_PATH", "CUDA_HOME", "CUDA_ROOT") or re.fullmatch(r"CUDA_PATH_V\d+_\d+", upper)):
            roots.append(value)
    if os_name == "windows":
        program_files = next((v for k, v in environ.items() if k.lower() == "programfiles"), r"C:\Program Files")
        roots.extend(sorted(glob.glob(str(Path(program_files) / "NVIDIA GPU Computing Toolkit" / "CUDA" / "v*"))))
    else:
        roots.extend(sorted(glob.glob(os.path.join(fs_root, "usr/local/cuda*"))))
        roots.extend(sorted(glob.glob(os.path.join(fs_root, "opt/cuda*"))))
    return roots


def root_of_nvcc(nvcc: str) -> str | None:
    """<root>/bin/nvcc -> <root>, when <root> looks like a toolkit (a wrapper script in /usr/local/bin
    does not make /usr/local a toolkit)."""
    real = Path(os.path.realpath(nvcc))
    if real.parent.name.lower() != "bin":
        return None
    root = real.parent.parent
    return str(root) if looks_like_toolkit(str(root)) else None


def looks_like_toolkit(root: str) -> bool:
    path = Path(root)
    return (
        (path / "version.json").is_file()
        or (path / "version.txt").is_file()
        or (path / "include" / "cuda.h").is_file()
        or (path / "include" / "cuda_runtime.h").is_file()
    )


@dataclass
class ToolkitReport:
    toolkits: list[Toolkit]
    notes: list[str]


def detect(runner: Runner, os_name: str, environ: Mapping[str, str], fs_root: str = "/", timeout: float = 10.0) -> ToolkitReport:
    """All toolkits, deduplicated by resolved root, in discovery order (PATH's nvcc first)."""
    notes: list[str] = []
    exe = nvcc_name(os_name)
    path_value = next((v for k, v in environ.items() if k.upper() == "PATH"), "")
    nvcc_on_path = shutil.which(exe, path=path_value)

    roots: list[str] = []
    if nvcc_on_path:
        root = root_of_nvcc(nvcc_on_path)
        if root:
            roots.append(root)
    roots.extend(candidate_roots(os_name, environ, fs_root))

    found: dict[str, Toolkit] = {}
    full_versions: dict[str, str | None] = {}
    for root in roots:
        resolved = os.path.realpath(root)
        if resolved in found or not os.path.isdir(resolved):
            continue
        candidate = os.path.join(resolved, "bin", exe)
        nvcc = candidate if os.path.isfile(candidate) else None
        if not looks_like_toolkit(resolved) and nvcc is None:
            continue
        version, full = _toolkit_version(runner, resolved, nvcc, timeout, notes)
        if version is None:
            notes.append(f"CUDA toolkit at {resolved}: version unknown")
            continue
        found[resolved] = Toolkit(version=version, root=resolved, nvcc=nvcc)
        full_versions[resolved] = full

    if nvcc_on_path and root_of_nvcc(nvcc_on_path) is None:
        # A wrapper or a distribution package (/usr/bin/nvcc): report it unless it is one of the above.
        text = _run_nvcc(runner, nvcc_on_path, timeout, notes)
        version, full = (parse_nvcc_version(text), parse_nvcc_full_version(text)) if text else (None, None)
        if version and not any(full and full == other for other in full_versions.values()):
            found[nvcc_on_path] = Toolkit(version=version, root=None, nvcc=nvcc_on_path)
    return ToolkitReport(toolkits=list(found.values()), notes=notes)


def _toolkit_version(runner: Runner, root: str, nvcc: str | None, timeout: float, notes: list[str]) -> tuple[str | None, str | None]:
    full = None
    version = _read_version_file(root)
    if nvcc:
        text = _run_nvcc(runner, nvcc, timeout, notes)
        if text:
            full = parse_nvcc_full_version(text)
            version = version or parse_nvcc_version(text)
    return version or version_from_directory_name(root), full


def _read_version_file(root: str) -> str | None:
    for name, parser in (("version.json", parse_version_json), ("version.txt", parse_version_txt)):
        try:
            text = Path(root, name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        version = parser(text)
        if version:
            return version
    return None


def _run_nvcc(runner: Runner, nvcc: str, timeout: float, notes: list[str]) -> str | None:
    try:
        result = runner.run([nvcc, "--version"], timeout)
    except CommandTimeout:
        notes.append(f"{nvcc} --version timed out after {timeout:g} s")
        return None
    except OSError as error:
        notes.append(f"{nvcc} could not be run ({error.strerror or error})")
        return None
    return result.stdout if result.returncode == 0 else None


def library_dirs(toolkits: Iterable[Toolkit], os_name: str) -> list[str]:
    """Where each toolkit keeps its runtime libraries."""
    dirs: list[str] = []
    for toolkit in toolkits:
        if not toolkit.root:
            continue
        root = Path(toolkit.root)
        if os_name == "windows":
            candidates = [root / "bin", root / "bin" / "x64"]  # CUDA 13 moved DLLs to bin\x64
        else:
            candidates = [root / "lib64", root / "lib", *sorted(root.glob("targets/*/lib"))]
        dirs.extend(str(path) for path in candidates if path.is_dir())
    return dirs
