"""What a release's wheel tags decide about where pip can install it (pure): the glibc a Linux wheel needs, the
free-threaded Pythons it has wheels for, and whether any wheel is for a musl Linux.

pip installs a `manylinux_2_28_x86_64` wheel only on a glibc of at least 2.28 (PEP 600); the legacy aliases are
`manylinux1` = 2.5, `manylinux2010` = 2.12 and `manylinux2014` = 2.17 (PEP 513, 571, 599). A file may carry
several platform tags (`manylinux2014_x86_64.manylinux_2_17_x86_64`): the lowest glibc among them is what pip
needs. A `cp313-cp313t` wheel is for the free-threaded build of CPython 3.13 only (PEP 703), which loads no GIL
build's wheel and whose wheels no GIL build loads.

`wheel_tags_yaml` turns what scripts/record-wheel-tags read on PyPI (the tags of each release's wheel files) into
the database's wheel_tags.yaml, so the file is always the recorded read, never an edit.

The builds download.pytorch.org serves (torch 2.6.0+cu126) are other files than PyPI's, with tags of their own
(PyPI's 2.6.0 is `manylinux1_x86_64`, the index's +cu126 build `manylinux_2_28_x86_64`, its +cpu build
`linux_x86_64`). `index_builds` reads them in the recorded file lists of the index
(tests/fixtures/torch_index/snapshot.json) into the file's `index_builds:`. A file tagged `linux_x86_64` makes no
claim about glibc at all: pip installs it on any glibc.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from envpin.base.record import Record, record
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


@record
class ReleaseTags(Record):
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


_WHEEL_NAME = re.compile(r"^torch-([^-+]+)(?:\+[^-]+)?-cp(\d)(\d{1,2})t?-[^-]+-([^-]+)\.whl$", re.ASCII)
_SOURCE_ID = re.compile(r"[^a-z0-9]+", re.ASCII)


@record
class IndexBuild(Record):
    """What the recorded Linux files of one torch build on download.pytorch.org are tagged for."""

    version: str
    variant: str  # the index it is served from: whl/cu126 -> cu126
    glibc: Mapping[str, str]  # Linux platform -> the glibc its manylinux files need (the highest over its files)
    any_glibc: tuple[str, ...]  # Linux platforms whose files are tagged linux_<arch> only: no glibc claimed
    pythons: Mapping[str, tuple[str, ...]]  # Linux platform -> the CPython minors whose file was read
    sources: tuple[str, ...]  # the snapshot's source ids of the files read


def index_builds(snapshot: Mapping[str, object]) -> list[IndexBuild]:
    """The torch builds the recorded index file lists (tests/fixtures/torch_index/snapshot.json) have Linux files
    of, oldest release first. A page's files without a local version (`torch-2.5.1-cp310-cp310-linux_aarch64.whl`
    on whl/cu124) are that page's build."""
    indexes = snapshot["indexes"]
    assert isinstance(indexes, dict)
    floors: dict[tuple[str, str], dict[str, list[str | None]]] = {}
    pythons: dict[tuple[str, str], dict[str, set[str]]] = {}
    sources: dict[tuple[str, str], set[str]] = {}
    for index, projects in indexes.items():
        variant = index.rsplit("/", 1)[-1]
        for row in projects.get("torch", ()):
            match = _WHEEL_NAME.match(row["filename"])
            if not match:
                continue
            version, python = match.group(1), f"{match.group(2)}.{match.group(3)}"
            tags = [t for t in match.group(4).split(".") if _linux_arch(t)]
            if not tags:
                continue
            platform = _linux_arch(tags[0])
            assert platform is not None
            found = [f for f in (glibc_floor(t) for t in tags) if f]
            key = (version, variant)
            # one file: the lowest glibc any of its tags names; a linux_<arch> file alone names none
            floors.setdefault(key, {}).setdefault(platform, []).append(min(found, key=_version_key) if found else None)
            pythons.setdefault(key, {}).setdefault(platform, set()).add(python)
            sources.setdefault(key, set()).add(row["source"])
    builds = []
    for (version, variant), per_platform in sorted(floors.items(), key=lambda kv: (_version_key(kv[0][0]), kv[0][1])):
        glibc = {p: max((f for f in fs if f), key=_version_key) for p, fs in per_platform.items() if any(fs)}
        builds.append(IndexBuild(
            version=version, variant=variant,
            glibc={p: glibc[p] for p in PLATFORMS if p in glibc},
            any_glibc=tuple(p for p in PLATFORMS if p in per_platform and p not in glibc),
            pythons={p: sort_pythons(pythons[(version, variant)][p]) for p in PLATFORMS if p in per_platform},
            sources=tuple(sorted(sources[(version, variant)]))))
    return builds


def index_source_id(snapshot_id: str) -> str:
    """The database id of a snapshot source (`uv-14540` -> `torch-index-uv-14540`; a `--record` read's
    `https://download.pytorch.org/whl/cu126/torch/ read 2026-12-02` -> `torch-index-download-pytorch-org-...`)."""
    slug = _SOURCE_ID.sub("-", snapshot_id.lower().removeprefix("https://")).strip("-")
    return f"torch-index-{slug}"


def _index_lines(index_snapshot: Mapping[str, object] | None) -> tuple[list[str], list[str]]:
    """(the `sources:` entries, the `index_builds:` section) from the recorded index file lists."""
    if index_snapshot is None:
        return [], []
    builds = index_builds(index_snapshot)
    known = index_snapshot["sources"]
    assert isinstance(known, dict)
    cited = sorted({s for b in builds for s in b.sources})
    source_lines = []
    for snapshot_id in cited:
        source = known[snapshot_id]
        where = f"    url: \"{source['url']}\"" if "url" in source else f"    ref: \"{source['ref']}\""
        title = str(source["title"]).replace("\\", "\\\\").replace('"', '\\"')
        source_lines += [f"  {index_source_id(snapshot_id)}:", f"    title: \"{title}\"", where,
                         f"    grade: {source['grade']}", f"    read: \"{source['read']}\""]
    section = ["# The builds download.pytorch.org serves, as the recorded file lists of the index give them",
               "# (tests/fixtures/torch_index/snapshot.json): glibc as above; any_glibc: platforms whose files are tagged",
               "# linux_<arch> (no glibc claimed: pip installs them on any); pythons: the CPython minors whose file was read.",
               "index_builds:"]
    for build in builds:
        fields = ["framework: torch", f"version: \"{build.version}\"", f"variant: {build.variant}"]
        if build.glibc:
            fields.append("glibc: {" + ", ".join(f"{p}: \"{v}\"" for p, v in build.glibc.items()) + "}")
        if build.any_glibc:
            fields.append(f"any_glibc: [{', '.join(build.any_glibc)}]")
        fields.append("pythons: {" + ", ".join(
            f"{p}: [{', '.join(f'{chr(34)}{v}{chr(34)}' for v in vs)}]" for p, vs in build.pythons.items()) + "}")
        fields.append(f"sources: [{', '.join(index_source_id(s) for s in build.sources)}]")
        section.append("  - {" + ", ".join(fields) + "}")
    return source_lines, section


def wheel_tags_yaml(snapshot: Mapping[str, object], index_snapshot: Mapping[str, object] | None = None) -> str:
    """wheel_tags.yaml from the recorded read (tests/fixtures/pypi-metadata/wheel-tags.json) and, where given, the
    recorded file lists of download.pytorch.org (tests/fixtures/torch_index/snapshot.json)."""
    index_sources, index_section = _index_lines(index_snapshot)
    projects = snapshot["projects"]
    assert isinstance(projects, dict)
    lines = [
        "# The wheel tags of each release, as PyPI's file lists give them (envpin/refresh/wheel_tags.py; SCHEMA.md",
        "# \"wheel_tags.yaml\"). Written by scripts/record-wheel-tags from what it read on PyPI",
        "# (tests/fixtures/pypi-metadata/wheel-tags.json): edit by re-recording, not by hand.",
        "# glibc: the glibc each Linux platform's wheels need (manylinux tag); free_threaded: the CPython minors with a",
        "# free-threaded (cp3XXt) wheel; musllinux: platforms with a musl wheel (absent: none).",
        "sources:",
        *index_sources,
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
    lines += index_section
    return "\n".join(lines) + "\n"
