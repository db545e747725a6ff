"""Wheel file names -> the facts the database keeps: CPython minors and envpin platforms (pure).

`torch-2.15.0-cp314-cp314t-manylinux_2_28_x86_64.whl` is CPython 3.14, free-threaded, linux-x86_64. The
database lists GIL builds only (free-threaded wheels are left out of `python:`), glibc Linux only (musllinux
wheels are not an envpin platform), and a pure `py3-none-any` wheel as "every platform".
"""

from __future__ import annotations

import re

from envpin.base.record import Record, record
from envpin.vocabulary.platforms import (
    LINUX_AARCH64,
    LINUX_X86_64,
    MACOS_ARM64,
    MACOS_X86_64,
    PLATFORMS,
    WINDOWS_X86_64,
)

_CPYTHON = re.compile(r"^cp(\d)(\d{1,2})$")


@record
class WheelTags(Record):
    pythons: tuple[str, ...]  # CPython minors ("3.12") of GIL builds; empty for py3 / free-threaded-only
    free_threaded: tuple[str, ...]  # CPython minors of free-threaded builds (cp314t)
    platforms: tuple[str, ...]  # envpin platforms; every one for a pure wheel
    pure: bool  # py3-none-any
    per_platform_pure: bool  # a py3-none-<platform> wheel (no CPython ABI, but one file per platform)


def platform_of(tag: str) -> tuple[str, ...]:
    """envpin platforms of one wheel platform tag (`manylinux_2_28_x86_64` -> linux-x86_64)."""
    if tag == "any":
        return PLATFORMS
    if tag.startswith(("manylinux", "linux_")):
        if tag.endswith("_x86_64"):
            return (LINUX_X86_64,)
        if tag.endswith("_aarch64"):
            return (LINUX_AARCH64,)
        return ()
    if tag == "win_amd64":
        return (WINDOWS_X86_64,)
    if tag.startswith("macosx_"):
        if tag.endswith("_arm64"):
            return (MACOS_ARM64,)
        if tag.endswith("_x86_64") or tag.endswith("_intel"):
            return (MACOS_X86_64,)
        if tag.endswith("_universal2"):
            return (MACOS_ARM64, MACOS_X86_64)
    return ()


def wheel_tags(filename: str) -> WheelTags | None:
    """The tags of a wheel file name; None for an sdist or a name that is not a wheel's."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a wheel's name needs it

    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None
    pythons: set[str] = set()
    free_threaded: set[str] = set()
    platforms: set[str] = set()
    pure = per_platform_pure = False
    for tag in tags:
        platforms.update(platform_of(tag.platform))
        match = _CPYTHON.match(tag.interpreter)
        if tag.abi == "none" and tag.interpreter.startswith("py"):
            pure = tag.platform == "any"
            per_platform_pure = tag.platform != "any"
        elif match and tag.abi.endswith("t") and tag.abi.startswith("cp"):
            free_threaded.add(f"{match.group(1)}.{match.group(2)}")
        elif match:
            pythons.add(f"{match.group(1)}.{match.group(2)}")
    return WheelTags(
        pythons=sort_pythons(pythons),
        free_threaded=sort_pythons(free_threaded),
        platforms=tuple(p for p in PLATFORMS if p in platforms),
        pure=pure,
        per_platform_pure=per_platform_pure,
    )


def sort_pythons(versions) -> tuple[str, ...]:
    return tuple(sorted(set(versions), key=lambda v: tuple(int(part) for part in v.split("."))))
