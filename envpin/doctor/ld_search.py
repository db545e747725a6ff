"""A model of how the Linux dynamic loader finds a shared library by soname, on paths.

Source: ld.so(8), as the catalogue's §4.5 sums it up: DT_RPATH (only when the object has no DT_RUNPATH)
-> LD_LIBRARY_PATH -> DT_RUNPATH -> /etc/ld.so.cache -> the default directories. The pip CUDA wheels
(`nvidia-*-cu12`) and torch find each other through DT_RUNPATH entries such as
`$ORIGIN/../../nvidia/nvjitlink/lib`, so any LD_LIBRARY_PATH directory that holds the same soname wins
(pytorch/pytorch#80637 explains the RPATH -> RUNPATH change that made this bite).

Like the Windows model, it sees only what it is told: `listing` maps directories to the file names in them
(`envpin detect` lists the libraries on LD_LIBRARY_PATH; the probe lists the environment's wheels).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from envpin.base.record import NEW_DICT, Record, record


@record
class SharedObject(Record):
    soname: str
    directory: str | None
    file: str | None  # the most specific file name seen: libnvJitLink.so.12.1.105
    how: str  # "LD_LIBRARY_PATH entry 1", "DT_RUNPATH", ... or why not found
    candidates: tuple[str, ...] = ()  # every directory holding it, in search order

    @property
    def found(self) -> bool:
        return self.directory is not None

    @property
    def version(self) -> tuple[int, ...]:
        """The version in the file name (libnvJitLink.so.12.1.105 -> (12, 1, 105)); () when only the soname is seen."""
        if not self.file:
            return ()
        tail = self.file.split(".so.", 1)[1] if ".so." in self.file else ""
        return tuple(int(part) for part in tail.split(".") if part.isdigit())


@record
class LinuxLoader(Record):
    ld_library_path: tuple[str, ...] = ()
    listing: Mapping[str, frozenset[str]] = NEW_DICT
    ld_cache: tuple[str, ...] = ()  # directories /etc/ld.so.cache points into, when known
    default_dirs: tuple[str, ...] = ("/lib", "/usr/lib")

    def files_for(self, directory: str, soname: str) -> list[str] | None:
        names = self.listing.get(directory.rstrip("/"))
        if names is None:
            return None
        return sorted((n for n in names if n == soname or n.startswith(soname + ".")), key=len)


def resolve(loader: LinuxLoader, soname: str, runpath: Iterable[str] = (), rpath: Iterable[str] = ()) -> SharedObject:
    """Where `dlopen(soname)` from an object with these DT_RUNPATH / DT_RPATH entries lands."""
    runpath = tuple(runpath)
    order: list[tuple[str, str]] = []
    if not runpath:
        order += [(d, "DT_RPATH") for d in rpath]
    order += [(d, f"LD_LIBRARY_PATH entry {i + 1}") for i, d in enumerate(loader.ld_library_path)]
    order += [(d, "DT_RUNPATH") for d in runpath]
    order += [(d, "ld.so.cache") for d in loader.ld_cache]
    order += [(d, "a default directory") for d in loader.default_dirs]
    hits = []
    for directory, why in order:
        files = loader.files_for(directory, soname)
        if files:
            hits.append((directory, why, files[-1]))
    if not hits:
        return SharedObject(soname, None, None, "not found on LD_LIBRARY_PATH, the RUNPATH or the known directories")
    directory, why, file = hits[0]
    return SharedObject(soname, directory, file, why, tuple(_unique(d for d, _, _ in hits)))


def shadowing(loader: LinuxLoader, soname: str, wheel_dir: str) -> SharedObject | None:
    """The copy that wins over the wheel's own (reached through DT_RUNPATH), or None when the wheel's copy wins."""
    winner = resolve(loader, soname, runpath=(wheel_dir,))
    if winner.directory is not None and winner.how.startswith("LD_LIBRARY_PATH") and winner.directory.rstrip("/") != wheel_dir.rstrip("/"):
        return winner
    return None


def listing_from_facts(*sources: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    listing: dict[str, frozenset[str]] = {}
    for files in sources:
        for directory, names in files.items():
            key = directory.rstrip("/")
            listing[key] = listing.get(key, frozenset()) | frozenset(names)
    return listing


def soname_version(file: str) -> tuple[int, ...]:
    match = re.search(r"\.so\.([\d.]+)$", file)
    return tuple(int(p) for p in match.group(1).split(".") if p) if match else ()


def _unique(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
