"""PEP 508 environment markers evaluated for a target machine, as pip evaluates them on it.

`torch==2.1.2+cu121; python_version >= "3.11"` beside `torch==2.0.1+cu118; python_version < "3.10"` is one
line per machine: `check` judges, and `solve --project` solves, only the line whose marker holds on the
target. The values are what CPython reports there (sys.platform, platform.system(), platform.machine():
`AMD64` on 64-bit Windows, `arm64` on Apple silicon).
"""

from __future__ import annotations

_SYS_PLATFORM = {"linux": "linux", "windows": "win32", "macos": "darwin"}
_PLATFORM_SYSTEM = {"linux": "Linux", "windows": "Windows", "macos": "Darwin"}
_PLATFORM_MACHINE = {("windows", "x86_64"): "AMD64", ("windows", "aarch64"): "ARM64", ("macos", "aarch64"): "arm64"}


def marker_holds(marker: str, *, os_name: str, arch: str, python: str | None) -> bool:
    """Whether the marker holds on that machine. A marker on extras (its truth is which extras were asked
    for), one on the Python where the Python is not known (python=None), and one packaging cannot read or
    evaluate are not judged: they hold."""
    if "extra" in marker or (python is None and "python_" in marker.replace("platform_python_implementation", "")):
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName  # noqa: PLC0415 - packaging.markers is heavy: only a marker needs it

    environment = {
        "python_version": python or "", "python_full_version": f"{python}.0" if python else "",
        "sys_platform": _SYS_PLATFORM.get(os_name, os_name), "platform_system": _PLATFORM_SYSTEM.get(os_name, ""),
        "platform_machine": _PLATFORM_MACHINE.get((os_name, arch), arch),
        "os_name": "nt" if os_name == "windows" else "posix", "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }
    try:
        return Marker(marker).evaluate(environment)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True
