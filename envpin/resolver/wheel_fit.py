"""Does a pip build have a wheel for the target's C library and Python ABI? (pure; the facts are wheel_tags.yaml)

pip installs a Linux wheel only where its manylinux tag's glibc is at most the machine's (a CentOS 7 machine has
glibc 2.17; torch's wheels are `manylinux_2_28` from 2.6 on aarch64 and 2.7 on x86_64), no manylinux wheel on a
musl Linux, and on a free-threaded CPython (3.13t) only a `cp313t` wheel. A build served from the PyTorch index is
judged by its own files' tags where they were read (wheel_tags.yaml `index_builds`: torch 2.6.0+cu126 is
`manylinux_2_28_x86_64` though PyPI's 2.6.0 is `manylinux1`, and a `linux_x86_64` file claims no glibc at all); where
they were not, it is taken to carry the same release's PyPI tag, and says so where that decides the answer (the
target's glibc is older than a floor some build needs).
"""

from __future__ import annotations

from envpin.compat.model import Database, IndexBuildTags, glibc_key
from envpin.resolver.builds import Build
from envpin.resolver.request import PIP
from envpin.resolver.target import Target

FRAMEWORK_WHEEL = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jaxlib"}


def wheel_tags_matter(target: Target) -> bool:
    """Whether a wheel's tags can decide anything here: a Linux target with a known C library, or a free-threaded
    Python. Any other solve never reads wheel_tags.yaml."""
    return target.free_threaded or (target.os == "linux" and (target.musl or target.glibc is not None))


def check_wheel_tags(database: Database, target: Target, build: Build, reasons: list[str],
                     unverified: list[str], unchecked: list[str]) -> tuple[str, str, str] | None:
    """(check, message, brief) of a build with no wheel for the target's C library or free-threaded Python;
    None when it has one or the database does not say (then `unchecked` names it)."""
    if build.channel != PIP or build.framework not in FRAMEWORK_WHEEL or not wheel_tags_matter(target):
        return None
    platform = target.platform
    newest_floor = database.newest_glibc_floor(platform, build.framework)
    if not (target.free_threaded or target.musl or (target.glibc is not None and newest_floor is not None
                                                   and glibc_key(target.glibc) < glibc_key(newest_floor))):
        return None  # a glibc at or past every floor recorded: no tag can decide
    wheel = FRAMEWORK_WHEEL[build.framework]
    tags = database.wheel_tags_of(build.framework, build.version)
    if tags is None:
        unchecked.append("wheel tags")
        unverified.append(f"the wheel tags of {wheel} {build.version} are not in the database: "
                          f"{_target_facts(target)} not checked")
        return None
    from_index = build.framework == "torch" and build.torch_record[0].pypi.get(platform) != build.flavor
    if target.os == "linux" and target.musl and platform not in tags.musllinux:
        return ("platform", f"{build.label}: {wheel} {build.version} has no musllinux wheel for {platform}, and its "
                            "manylinux wheels need glibc; this machine's C library is musl",
                "no musllinux wheel")
    index = database.index_build_tags("torch", build.version, build.flavor) if from_index else None
    if target.os == "linux" and target.glibc is not None and index is not None and index.read_on(platform):
        if refused := _index_files_fit(target, build, index, reasons, unverified):
            return refused
    elif target.os == "linux" and target.glibc is not None and platform in tags.glibc:
        needed = tags.glibc[platform]
        doubt = (f"the PyTorch index's {build.flavor} files of torch {build.version} were not read: their glibc is "
                 f"taken from PyPI's torch {build.version} wheels ({_manylinux(needed)})") if from_index else None
        if glibc_key(target.glibc) < glibc_key(needed):
            if doubt:
                unverified.append(doubt)
            return ("platform", f"{build.label}: {wheel} {build.version}'s {platform} wheels are tagged "
                                f"{_manylinux(needed)}, which needs glibc ≥ {needed}; this machine has glibc "
                                f"{target.glibc}", f"needs glibc ≥ {needed}")
        if doubt:
            unverified.append(doubt)
        reasons.append(f"{wheel} {build.version}'s {platform} wheels are tagged {_manylinux(needed)} (glibc ≥ "
                       f"{needed}): they install on this machine's glibc {target.glibc}")
    if target.free_threaded:
        minors = tags.free_threaded.get(platform, ())
        if target.python not in minors:
            have = f"free-threaded wheels there: Python {', '.join(m + 't' for m in minors)}" if minors else (
                "no free-threaded wheel there")
            return ("python", f"{build.label} has no wheel for the free-threaded Python {target.python}t on "
                              f"{platform} ({have})", f"no wheel for Python {target.python}t")
        if from_index:
            unverified.append(f"the PyTorch index's {build.flavor} files of torch {build.version} were not read: "
                              f"its free-threaded wheel for Python {target.python}t is taken from PyPI's")
    return None


def _index_files_fit(target: Target, build: Build, index: IndexBuildTags, reasons: list[str],
                     unverified: list[str]) -> tuple[str, str, str] | None:
    """The glibc check of a build by the recorded tags of its own files on the PyTorch index."""
    platform, glibc = target.platform, target.glibc
    assert glibc is not None
    files = f"its {platform} files on the PyTorch index"
    read = index.pythons.get(platform, ())
    if target.python not in read:
        files += f" (as read for Python {', '.join(read)})"
        unverified.append(f"the PyTorch index's {platform} file of torch {build.version}+{build.flavor} for Python "
                          f"{target.python} was not read: it is taken to carry the tag of its Python "
                          f"{', '.join(read)} files")
    needed = index.glibc.get(platform)
    if needed is None:  # linux_x86_64: a tag that names no glibc, which pip installs on any
        reasons.append(f"torch {build.version}+{build.flavor}: {files} are tagged linux_{platform.split('-', 1)[1]}, "
                       f"which names no glibc: pip installs them on this machine's glibc {glibc}")
        return None
    if glibc_key(glibc) < glibc_key(needed):
        return ("platform", f"{build.label}: {files} are tagged {_manylinux(needed)}, which needs glibc ≥ {needed}; "
                            f"this machine has glibc {glibc}", f"needs glibc ≥ {needed}")
    reasons.append(f"torch {build.version}+{build.flavor}: {files} are tagged {_manylinux(needed)} (glibc ≥ "
                   f"{needed}): they install on this machine's glibc {glibc}")
    return None


def _manylinux(glibc: str) -> str:
    legacy = {"2.5": "manylinux1", "2.12": "manylinux2010", "2.17": "manylinux2014"}
    return legacy.get(glibc, f"manylinux_{glibc.replace('.', '_')}")


def _target_facts(target: Target) -> str:
    facts = []
    if target.os == "linux" and target.musl:
        facts.append("musl libc")
    elif target.os == "linux" and target.glibc:
        facts.append(f"glibc {target.glibc}")
    if target.free_threaded:
        facts.append(f"free-threaded Python {target.python}t")
    return " and ".join(facts)
