"""The platform keys: `os-arch`, spelled as the database spells them (data/compat_matrix/*.yaml).

A machine's facts name 64-bit ARM `aarch64` or `arm64` (both are valid in a facts file, and Linux, macOS and
Windows report different ones); a platform key has one spelling per OS: `linux-aarch64`, `macos-arm64`,
`windows-arm64`. `platform_key` is the only place that turns an OS and an architecture into a key, so a
facts file that says `linux` / `arm64` finds the database's `linux-aarch64` records.

The tables of facts about each platform (uv's target triples, PEP 508 marker values, conda subdirs, wheel
platform tags) stay with the code that uses them, keyed by these constants.
"""

from __future__ import annotations

OPERATING_SYSTEMS = ("linux", "windows", "macos")
ARCHITECTURES = ("x86_64", "aarch64", "arm64")  # what a facts file may say; `platform_key` spells the key

LINUX_X86_64 = "linux-x86_64"
LINUX_AARCH64 = "linux-aarch64"
WINDOWS_X86_64 = "windows-x86_64"
WINDOWS_ARM64 = "windows-arm64"  # lockable (uv, PEP 751 markers); the database has no builds for it
MACOS_ARM64 = "macos-arm64"
MACOS_X86_64 = "macos-x86_64"

# The platforms the database records builds for, in the order its tables list them.
PLATFORMS = (LINUX_X86_64, LINUX_AARCH64, WINDOWS_X86_64, MACOS_ARM64, MACOS_X86_64)

_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "x86-64": "x86_64", "arm64": "arm64", "aarch64": "aarch64"}
_ARM64 = ("aarch64", "arm64")

# PEP 508 marker values of each platform, as CPython reports them there (platform.system(), sys.platform,
# platform.machine(), os.name).
MARKER_ENVIRONMENTS = {
    LINUX_X86_64: {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64", "os_name": "posix"},
    LINUX_AARCH64: {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "aarch64", "os_name": "posix"},
    WINDOWS_X86_64: {"platform_system": "Windows", "sys_platform": "win32", "platform_machine": "AMD64", "os_name": "nt"},
    WINDOWS_ARM64: {"platform_system": "Windows", "sys_platform": "win32", "platform_machine": "ARM64", "os_name": "nt"},
    MACOS_ARM64: {"platform_system": "Darwin", "sys_platform": "darwin", "platform_machine": "arm64", "os_name": "posix"},
    MACOS_X86_64: {"platform_system": "Darwin", "sys_platform": "darwin", "platform_machine": "x86_64", "os_name": "posix"},
}

_CONDA_OS = {"linux": "linux", "macos": "osx", "windows": "win"}


def normalize_arch(arch: str) -> str:
    """Map the many spellings of a CPU architecture onto envpin's three."""
    lowered = arch.strip().lower()
    return _ARCH_ALIASES.get(lowered, lowered)


def platform_key(os: str, arch: str) -> str:
    """The platform key of an OS and a CPU architecture: 64-bit ARM is `aarch64` on Linux and `arm64` on macOS
    and Windows, whichever of the two the facts say (`linux`, `arm64` -> `linux-aarch64`)."""
    arch = normalize_arch(arch)
    if arch in _ARM64:
        arch = "aarch64" if os == "linux" else "arm64"
    return f"{os}-{arch}"


def split_key(platform: str) -> tuple[str, str]:
    """`linux-aarch64` -> (`linux`, `aarch64`)."""
    os, _, arch = platform.partition("-")
    return os, arch


def conda_subdir(platform: str) -> str:
    """conda's name for a platform (its subdir): `linux-x86_64` -> `linux-64`, `macos-arm64` -> `osx-arm64`."""
    os, arch = split_key(platform)
    return f"{_CONDA_OS.get(os, os)}-{'64' if arch == 'x86_64' else arch}"


def marker(platform: str) -> str:
    """The PEP 508 marker that holds on the platform and nowhere else envpin knows."""
    environment = MARKER_ENVIRONMENTS[platform]
    return f"sys_platform == '{environment['sys_platform']}' and platform_machine == '{environment['platform_machine']}'"
