"""Operating system, CPU architecture, WSL, libc, Python and container facts.

`platform` (3 ms to import) is loaded only for libc and on Windows: on POSIX, platform.system() and
platform.machine() are os.uname()'s fields, and platform.python_version() is the first word of sys.version.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

from envpin.facts.host import Libc, PythonInfo, normalize_arch
from envpin.host.procfs import read_text


def os_name(system: str | None = None) -> str:
    """platform.system() -> envpin's names ('Linux' -> 'linux', 'Windows' -> 'windows', 'Darwin' -> 'macos')."""
    system = (system or _uname("system")).lower()
    return {"darwin": "macos", "win32": "windows", "cygwin": "windows"}.get(system, system)


def arch_name(machine: str | None = None) -> str:
    """platform.machine(): 'AMD64' (Windows) and 'x86_64' are one thing; Linux says 'aarch64', macOS 'arm64'."""
    return normalize_arch(machine or _uname("machine"))


def _uname(field: str) -> str:
    """platform.system() or platform.machine(), without importing platform where os.uname() answers."""
    if hasattr(os, "uname"):
        names = os.uname()
        return names.sysname if field == "system" else names.machine
    import platform  # noqa: PLC0415 - 3 ms, only where os.uname() is missing (Windows)

    return platform.system() if field == "system" else platform.machine()


def is_wsl(proc_version: str | None) -> bool:
    """/proc/version names Microsoft on WSL1 ('4.4.0-18985-Microsoft') and WSL2
    ('5.4.72-microsoft-standard-WSL2'); case differs between them, so compare case-insensitively."""
    if not proc_version:
        return False
    return bool(re.search(r"microsoft|wsl", proc_version, re.IGNORECASE))


def libc(os_label: str) -> Libc | None:
    if os_label != "linux":
        return None
    import platform  # noqa: PLC0415 - 3 ms, only for libc (detect, not solve)

    name, version = platform.libc_ver()
    if name == "glibc" and version:
        return Libc(name="glibc", version=version)
    try:
        confstr = os.confstr("CS_GNU_LIBC_VERSION") or ""  # e.g. "glibc 2.36"
    except (AttributeError, ValueError, OSError):
        confstr = ""
    match = re.match(r"glibc (\S+)", confstr)
    if match:
        return Libc(name="glibc", version=match.group(1))
    return Libc(name="musl", version=None) if _looks_like_musl() else Libc(name="unknown", version=None)


def _looks_like_musl() -> bool:
    return any(name.startswith("ld-musl") for name in _safe_listdir("/lib"))


def _safe_listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def python_info(environ: Mapping[str, str]) -> PythonInfo:
    version = _python_version() + ("t" if _free_threaded_build() else "")
    return PythonInfo(version=version, executable=sys.executable or None, env_type=env_type(environ))


def _free_threaded_build() -> bool:
    """A free-threaded CPython (PEP 703: `3.13t`), which loads only cp3XXt wheels: `t` in its ABI flags (POSIX),
    Py_GIL_DISABLED in its build configuration (Windows, which has no abiflags)."""
    if "t" in getattr(sys, "abiflags", ""):
        return True
    if os.name == "nt" and sys.version_info >= (3, 13):
        import sysconfig  # noqa: PLC0415 - only a Windows CPython 3.13+ asks its build configuration

        return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    return False


def _python_version() -> str:
    """platform.python_version(): '3.11.7', '3.13.0rc1' (the version word that sys.version starts with)."""
    word = sys.version.split(maxsplit=1)[0] if sys.version else ""
    if re.fullmatch(r"\d+\.\d+(\.\d+)?[\w.+]*", word):
        return word
    import platform  # noqa: PLC0415 - 3 ms, only for an unusual sys.version

    return platform.python_version()


def env_type(environ: Mapping[str, str], prefix: str | None = None, base_prefix: str | None = None) -> str:
    """venv when the interpreter runs from a virtual environment; conda when it is a conda env's own
    Python (CONDA_PREFIX matches, or the prefix has conda-meta); otherwise the system Python."""
    prefix = prefix if prefix is not None else sys.prefix
    base_prefix = base_prefix if base_prefix is not None else getattr(sys, "base_prefix", sys.prefix)
    if os.path.realpath(prefix) != os.path.realpath(base_prefix):
        return "venv"
    conda_prefix = environ.get("CONDA_PREFIX")
    if conda_prefix and os.path.realpath(conda_prefix) == os.path.realpath(prefix):
        return "conda"
    if os.path.isdir(os.path.join(prefix, "conda-meta")):
        return "conda"
    return "system"


def container_marker(fs_root: str) -> str | None:
    """The file that says we run inside a container, if any (Docker, Podman)."""
    for marker in (".dockerenv", "run/.containerenv"):
        if os.path.exists(os.path.join(fs_root, marker)):
            return "/" + marker
    cgroup = read_text(fs_root, "proc/1/cgroup") or ""
    if re.search(r"docker|kubepods|containerd", cgroup):
        return "/proc/1/cgroup"
    return None
