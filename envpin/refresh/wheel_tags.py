"""What a release's wheel tags decide about where pip can install it (pure): the glibc a Linux wheel needs, the
free-threaded Pythons it has wheels for, and whether any wheel is for a musl Linux.

pip installs a `manylinux_2_28_x86_64` wheel only on a glibc of at least 2.28 (PEP 600); the legacy aliases are
`manylinux1` = 2.5, `manylinux2010` = 2.12 and `manylinux2014` = 2.17 (PEP 513, 571, 599). A file may carry
several platform tags (`manylinux2014_x86_64.manylinux_2_17_x86_64`): the lowest glibc among them is what pip
needs. A `cp313-cp313t` wheel is for the free-threaded build of CPython 3.13 only (PEP 703), which loads no GIL
build's wheel and whose wheels no GIL build loads.

`wheel_tags_yaml` turns what scripts/record-wheel-tags read on PyPI (the tags of each release's wheel files) into
the database's wheel_tags.yaml, so the file is always the recorded read, never an edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from envpin.refresh.wheels import platform_of, sort_pythons
from envpin.vocabulary.platforms import LINUX_AARCH64, LINUX_X86_64, PLATFORMS

_LEGACY_MANYLINUX = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
_PERENNIAL = re.compile(r"^manylinux_(\d+)_(\d+)_", re.ASCII)
_CPYTHON_FREE_THREADED = re.compile(r"^cp(\d)(\d{1,2})$", re.ASCII)
# the packages whose wheels are recorded: the wheel that carries each framework's compiled code
PACKAGES = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jaxlib"}


def glibc_floor(platform_tag: str) -> str | None:
    """The glibc a manylinux platform tag needs (`manylinux_2_28_x86_64` -> "2.28"); None for any other tag."""
    match = _PERENNIAL.match(platform_tag)
    if match:
        return f"{match.group(1)}.{match.group(2)}"
    arch = _linux_arch(platform_tag)
    return _LEGACY_MANYLINUX.get(platform_tag[: -len(arch.split("-")[1]) - 1]) if arch else None


def _linux_arch(platform_tag: str) -> str | None:
    if platform_tag.endswith("_x86_64"):
        return LINUX_X86_64
    if platform_tag.endswith("_aarch64"):
        return LINUX_AARCH64
    return None


def _version_key(version: str) -> tuple[int, ...]:
    """A glibc version or a release's ("2.15.0.post1": its digits in order, enough to sort both)."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


@dataclass(frozen=True)
class ReleaseTags:
    """The facts one release's wheel files give (see the module's docstring)."""

    glibc: Mapping[str, str]  # Linux platform -> the glibc its wheels need (the highest over its files)
    free_threaded: Mapping[str, tuple[str, ...]]  # platform -> CPython minors with a free-threaded wheel
    musllinux: tuple[str, ...]  # platforms with a musllinux wheel


def release_tags(wheel_tags: Iterable[str]) -> ReleaseTags:
    """The facts of one release from its wheels' tag triples (`cp313-cp313t-manylinux_2_28_x86_64`, one per file,
    compressed tag sets joined by '.' as in a file name)."""
    glibc: dict[str, str] = {}
    free: dict[str, set[str]] = {}
    musl: set[str] = set()
    for triple in wheel_tags:
        interpreters, abis, platforms = triple.split("-")
        tags = platforms.split(".")
        floors = [f for f in (glibc_floor(t) for t in tags) if f]
        linux = {arch for t in tags if t.startswith("manylinux") and (arch := _linux_arch(t))}
        if floors:
            floor = min(floors, key=_version_key)  # one file: pip takes it on the lowest glibc any of its tags names
            for arch in linux:  # a release: the file of the highest floor is the one some Python needs
                glibc[arch] = max(glibc.get(arch, floor), floor, key=_version_key)
        musl.update(arch for t in tags if t.startswith("musllinux") and (arch := _linux_arch(t)))
        for interpreter in interpreters.split("."):
            match = _CPYTHON_FREE_THREADED.match(interpreter)
            if match and any(abi == f"{interpreter}t" for abi in abis.split(".")):
                for tag in tags:
                    for platform in platform_of(tag):
                        free.setdefault(platform, set()).add(f"{match.group(1)}.{match.group(2)}")
    return ReleaseTags(
        glibc={p: glibc[p] for p in PLATFORMS if p in glibc},
        free_threaded={p: sort_pythons(free[p]) for p in PLATFORMS if p in free},
        musllinux=tuple(p for p in PLATFORMS if p in musl),
    )


def wheel_tags_yaml(snapshot: Mapping[str, object]) -> str:
    """wheel_tags.yaml from the recorded read (tests/fixtures/pypi-metadata/wheel-tags.json)."""
    projects = snapshot["projects"]
    assert isinstance(projects, dict)
    lines = [
        "# The wheel tags of each release, as PyPI's file lists give them (envpin/refresh/wheel_tags.py; SCHEMA.md",
        "# \"wheel_tags.yaml\"). Written by scripts/record-wheel-tags from what it read on PyPI",
        "# (tests/fixtures/pypi-metadata/wheel-tags.json): edit by re-recording, not by hand.",
        "# glibc: the glibc each Linux platform's wheels need (manylinux tag); free_threaded: the CPython minors with a",
        "# free-threaded (cp3XXt) wheel; musllinux: platforms with a musl wheel (absent: none).",
        "sources:",
    ]
    for framework, package in PACKAGES.items():
        if framework not in projects:
            continue
        lines += [f"  pypi-wheel-tags-{package}:",
                  f"    title: \"PyPI {package}: the wheel file names of every release (simple API, PEP 691 JSON): "
                  "their platform tags (manylinux level, macOS, Windows) and Python ABI tags (cp3XXt: free-threaded)\"",
                  f"    url: \"https://pypi.org/project/{package}/#files\"",
                  "    grade: pypi",
                  f"    read: \"{snapshot['read']}\""]
    lines.append("wheels:")
    for framework, package in PACKAGES.items():
        releases = projects.get(framework, {})
        assert isinstance(releases, dict)
        for version in sorted(releases, key=_version_key):
            tags = release_tags(releases[version])
            fields = [f"framework: {framework}", f"version: \"{version}\""]
            if tags.glibc:
                fields.append("glibc: {" + ", ".join(f"{p}: \"{v}\"" for p, v in tags.glibc.items()) + "}")
            if tags.free_threaded:
                fields.append("free_threaded: {" + ", ".join(
                    f"{p}: [{', '.join(f'{chr(34)}{v}{chr(34)}' for v in vs)}]" for p, vs in tags.free_threaded.items())
                    + "}")
            if tags.musllinux:
                fields.append(f"musllinux: [{', '.join(tags.musllinux)}]")
            fields.append(f"sources: [pypi-wheel-tags-{package}]")
            lines.append("  - {" + ", ".join(fields) + "}")
    return "\n".join(lines) + "\n"
