"""A model of how Windows finds a DLL, on paths: which file a `LoadLibrary` of a name lands on, and why.

Source: learn.microsoft.com/windows/win32/dlls/dynamic-link-library-search-order (catalogue §4.4), and
torch/__init__.py `_load_dll_libraries` for how torch loads its own DLLs.

- The loaded-module list comes first: a DLL whose module name is already loaded is reused, "no matter which
  folder it was loaded from" -- first loaded wins. KnownDLLs come next (kernel32 and friends; the VC++
  runtime is not among them).
- `standard` search (plain LoadLibrary, SafeDllSearchMode on, the default): the application's directory
  (python.exe's: for a venv, the base interpreter's, because a venv's python.exe only launches it), System32,
  the Windows directory, the current directory, then PATH in order. The directory of the DLL that asks is
  NOT searched: "If a DLL has dependencies, the system searches for the dependent DLLs as if they were loaded
  with just their module names".
- `secure` search (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, what Python >= 3.8 uses for extension modules and
  ctypes, python/cpython#80266): with DLL_LOAD_DIR, the loading DLL's own directory; then the application
  directory, the directories added with os.add_dll_directory(), System32. PATH is not searched.
  Dependencies of a DLL loaded this way are searched the same way, from the top-level DLL's directory.

The model sees only what it is told exists (`listing`: directory -> file names, from `envpin detect`, the
verify probe, or a directory tree on disk) and, where known, what each DLL imports and the file versions.
A directory it was not told about is unknown, never assumed empty.
"""

from __future__ import annotations

import ntpath
import os
from collections.abc import Iterable, Mapping

from envpin.base.record import NEW_DICT, Record, field, record, replace
from envpin.host.libraries import is_runtime_library

ERROR_MOD_NOT_FOUND = 126  # "The specified module could not be found."
ERROR_DLL_INIT_FAILED = 1114  # "A dynamic link library (DLL) initialization routine failed."

# Imports that decide the catalogue's Windows rows. A DLL's import table is fixed when it is built; these are
# the entries the catalogue's sources name (the dependency-walker and loader traces they quote).
KNOWN_IMPORTS: dict[str, tuple[str, ...]] = {
    "c10.dll": ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"),  # pytorch/pytorch#39734
    "torch_cpu.dll": ("c10.dll", "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"),
    "torch_python.dll": ("torch_cpu.dll", "c10.dll", "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"),
    "c10_cuda.dll": ("c10.dll", "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"),
    "caffe2_nvrtc.dll": ("nvcuda.dll",),  # pytorch/pytorch#3395: CUDA builds link the driver API (catalogue W10)
    "cublas64_12.dll": ("cublasLt64_12.dll",),
    "cublas64_11.dll": ("cublasLt64_11.dll",),
}

# Versions a DLL needs of what it imports, where the catalogue states one: torch >= 2.9's c10.dll needs the
# VC++ 14.4x runtime's msvcp140.dll (catalogue W8, pytorch/pytorch#166628).
TORCH29_MSVCP_MINIMUM = (14, 40)


@record
class WindowsProcess(Record):
    """The state that decides where a load lands. Names compare case-insensitively, as on NTFS."""

    app_dir: str
    system_dir: str = "C:\\Windows\\System32"
    windows_dir: str = "C:\\Windows"
    cwd: str | None = None
    path: tuple[str, ...] = ()
    dll_directories: tuple[str, ...] = ()  # os.add_dll_directory(), in the order added
    known_dlls: frozenset[str] = frozenset({"kernel32.dll", "user32.dll", "ntdll.dll", "advapi32.dll", "ole32.dll"})
    loaded: tuple[tuple[str, str], ...] = ()  # (module name, path) in load order
    listing: Mapping[str, frozenset[str]] = NEW_DICT  # normalised dir -> lowercase names
    versions: Mapping[str, tuple[int, ...]] = NEW_DICT  # normalised path -> file version
    imports: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(KNOWN_IMPORTS))
    minimums: Mapping[tuple[str, str], tuple[int, ...]] = NEW_DICT  # (module, import) -> version

    complete: frozenset[str] = frozenset()  # normalised dirs listed in full; others list only runtime libraries

    def holds(self, directory: str, name: str) -> bool | None:
        """True / False when the directory's content is known; None when it is not. A directory `envpin
        detect` scanned lists only CUDA / cuDNN / VC++ runtime names, so another name's absence there is unknown."""
        key = normalise(directory)
        names = self.listing.get(key)
        if names is None:
            return None
        if name.lower() in names:
            return True
        if key in self.complete:
            return False
        return False if is_runtime_library(name, "windows") else None

    def loaded_path(self, name: str) -> str | None:
        return next((path for module, path in self.loaded if module == name.lower()), None)

    def version_of(self, path: str) -> tuple[int, ...] | None:
        return self.versions.get(normalise(path))


@record
class Resolution(Record):
    name: str
    path: str | None
    how: str  # where it was found: "already loaded", "PATH entry 3", ... or why not
    candidates: tuple[str, ...] = ()  # every file of this name in the order searched (what `where` would list)

    @property
    def found(self) -> bool:
        return self.path is not None


@record
class LoadResult(Record):
    target: str
    process: WindowsProcess  # after the load: what it brought in is on the loaded-module list
    resolutions: tuple[Resolution, ...]  # the target and each dependency, in the order the loader met them
    error: int | None = None  # ERROR_MOD_NOT_FOUND / ERROR_DLL_INIT_FAILED
    culprit: str | None = None  # the module that was missing or failed to initialise
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def message(self) -> str:
        if self.error is None:
            return f"{self.target} loads"
        text = "The specified module could not be found" if self.error == ERROR_MOD_NOT_FOUND else \
            "A dynamic link library (DLL) initialization routine failed"
        return f"[WinError {self.error}] {text}. Error loading \"{self.target}\" or one of its dependencies."


def normalise(directory: str) -> str:
    return ntpath.normcase(directory.replace("/", "\\").rstrip("\\"))


def join(directory: str, name: str) -> str:
    separator = "/" if "/" in directory and "\\" not in directory else "\\"
    return directory.rstrip("\\/") + separator + name


def search_dirs(process: WindowsProcess, mode: str, load_dir: str | None = None) -> list[tuple[str, str]]:
    """(directory, why) in the order the loader tries them after the loaded list and KnownDLLs."""
    if mode == "standard":
        ordered = [(process.app_dir, "the application directory"), (process.system_dir, "System32"),
                   (process.windows_dir, "the Windows directory")]
        if process.cwd:
            ordered.append((process.cwd, "the current directory"))
        ordered += [(directory, f"PATH entry {i + 1}") for i, directory in enumerate(process.path)]
        return ordered
    if mode == "secure":
        ordered = [(load_dir, "the loading DLL's own directory")] if load_dir else []
        ordered.append((process.app_dir, "the application directory"))
        ordered += [(directory, "a directory added with os.add_dll_directory()") for directory in process.dll_directories]
        ordered.append((process.system_dir, "System32"))
        return ordered
    raise ValueError(f"unknown search mode {mode!r}")


def where(process: WindowsProcess, name: str) -> list[str]:
    """What `where NAME` prints: the current directory, then PATH, every hit in order."""
    dirs = ([process.cwd] if process.cwd else []) + list(process.path)
    return _unique([join(d, name) for d in dirs if process.holds(d, name)])


def resolve(process: WindowsProcess, name: str, mode: str = "standard", load_dir: str | None = None) -> Resolution:
    """Where a bare-name load of `name` lands."""
    lowered = name.lower()
    candidates = _unique(join(d, name) for d, _ in search_dirs(process, mode, load_dir) if process.holds(d, name))
    already = process.loaded_path(lowered)
    if already:
        return Resolution(name, already, "already loaded (first loaded wins)", tuple(candidates))
    if lowered in process.known_dlls:
        return Resolution(name, join(process.system_dir, name), "KnownDLLs", tuple(candidates))
    for directory, why in search_dirs(process, mode, load_dir):
        if process.holds(directory, name):
            return Resolution(name, join(directory, name), why, tuple(candidates))
    searched = "PATH" if mode == "standard" else "the application directory, the added DLL directories and System32 (not PATH)"
    return Resolution(name, None, f"not found in {searched}", tuple(candidates))


def load(process: WindowsProcess, target: str, mode: str = "standard") -> LoadResult:
    """Load `target` (a bare name or a full path) and, recursively, what it imports.

    On success the returned process has every module on its loaded list. A missing import is error 126 for
    the top-level DLL; an import that resolves to an already-loaded copy older than the importer needs makes
    the importer's initialisation fail: error 1114.
    """
    is_path = "\\" in target or "/" in target
    name = ntpath.basename(target.replace("/", "\\")) if is_path else target
    load_dir = ntpath.dirname(target.replace("/", "\\")) if is_path and mode == "secure" else None
    if is_path:
        directory = target[: len(target) - len(name)].rstrip("\\/")
        exists = process.holds(directory, name)
        first = Resolution(name, target if exists is not False else None, "full path" if exists is not False else "no such file")
    else:
        first = resolve(process, name, mode)
    if first.path is None:  # not first.found
        return LoadResult(target, process, (first,), ERROR_MOD_NOT_FOUND, name, first.how)
    state = _LoadState(process, mode, load_dir or (ntpath.dirname(first.path.replace("/", "\\")) if mode == "secure" else None))
    failure = state.bring_in(first)
    return LoadResult(target, state.process, tuple(state.resolutions), *(failure or (None, None, None)))


class _LoadState:
    def __init__(self, process: WindowsProcess, mode: str, load_dir: str | None):
        self.process = process
        self.mode = mode
        self.load_dir = load_dir
        self.resolutions: list[Resolution] = []

    def bring_in(self, module: Resolution) -> tuple[int, str, str] | None:
        self.resolutions.append(module)
        if module.how.startswith("already loaded") or module.how == "KnownDLLs":
            return None
        assert module.path is not None  # only a found module is brought in
        self.process = replace(self.process, loaded=self.process.loaded + ((module.name.lower(), module.path),))
        for dependency in self.process.imports.get(module.name.lower(), ()):
            resolution = resolve(self.process, dependency, self.mode, self.load_dir)
            if resolution.path is None:  # not resolution.found
                self.resolutions.append(resolution)
                return ERROR_MOD_NOT_FOUND, dependency, f"{module.name} imports {dependency}: {resolution.how}"
            needed = self.process.minimums.get((module.name.lower(), dependency.lower()))
            have = self.process.version_of(resolution.path)
            if needed and have is not None and have < needed:
                self.resolutions.append(resolution)
                return (ERROR_DLL_INIT_FAILED, module.name,
                        f"{module.name} needs {dependency} ≥ {_dotted(needed)}; the copy it got is {_dotted(have)} "
                        f"at {resolution.path} ({resolution.how})")
            failure = self.bring_in(resolution)
            if failure:
                return failure
        return None


def torch_preload(process: WindowsProcess, torch_lib: str, dll_names: Iterable[str]) -> LoadResult | None:
    """torch/__init__.py `_load_dll_libraries`: add torch\\lib with os.add_dll_directory, then load every DLL in
    it with LoadLibraryExW(dll, None, 0x1100) (the secure search from the DLL's own directory); on error 126 it
    retries with plain LoadLibraryW after putting torch\\lib first on PATH. The first failure is what
    `import torch` raises; None when every DLL loads."""
    process = replace(process, dll_directories=process.dll_directories + (torch_lib,))
    for name in sorted(dll_names, key=str.lower):  # glob order: NTFS lists a directory alphabetically
        path = join(torch_lib, name)
        result = load(process, path, "secure")
        if result.error == ERROR_MOD_NOT_FOUND:
            retry = replace(process, path=(torch_lib,) + tuple(p for p in process.path if normalise(p) != normalise(torch_lib)))
            result = load(retry, path, "standard")
        if not result.ok:
            return result
        process = result.process
    return None


def listing_from_disk(directories: Iterable[str]) -> dict[str, frozenset[str]]:
    """Directory -> lowercase file names, for the directories that exist (a real tree, e.g. in tests)."""
    listing = {}
    for directory in directories:
        try:
            listing[normalise(directory)] = frozenset(name.lower() for name in os.listdir(directory))
        except OSError:
            continue
    return listing


def process_from_disk(app_dir: str, directories: Iterable[str], **settings) -> WindowsProcess:
    """A process whose view of the file system is the real content of `directories` (every one complete)."""
    listing = listing_from_disk(directories)
    return WindowsProcess(app_dir=app_dir, listing=listing, complete=frozenset(listing), **settings)


def listing_from_facts(files: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    listing: dict[str, frozenset[str]] = {}
    for directory, names in files.items():
        key = normalise(directory)
        listing[key] = listing.get(key, frozenset()) | frozenset(n.lower() for n in names)
    return listing


def _unique(items: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item.lower() not in (s.lower() for s in seen):
            seen.append(item)
    return seen


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
