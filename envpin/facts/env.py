"""EnvFacts: what the verify probe (envpin/verify/probe.py) reports about one Python environment.

Kept apart from HostFacts (envpin.facts.host, which re-exports these names) so that a solve, which needs only
HostFacts, does not pay for defining them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from envpin.base.errors import EnvpinInputError
from envpin.base.record import NEW_DICT, Record, field, record
from envpin.facts.checks import is_compute_capability, is_python_version
from envpin.vocabulary.frameworks import FRAMEWORKS
from envpin.vocabulary.names import canonical_name as canonical_name  # importable from here, as before

# ================================================================ EnvFacts
#
# What the verify probe (envpin/verify/probe.py) reports about one Python environment, and what
# `doctor --facts` accepts beside the HostFacts keys: `python`, `packages`, `torch`, `tensorflow`, `jax`
# (DESIGN.md), plus `library_dirs` and `probe`. A framework that is not installed is null.

ENV_FACT_KEYS = ("packages", *FRAMEWORKS)
FRAMEWORK_KEYS = FRAMEWORKS


@record
class EnvPython(Record):
    version: str
    executable: str | None = None
    prefix: str | None = None
    base_prefix: str | None = None
    env_type: str = "unknown"
    bits: int | None = None
    implementation: str | None = None
    virtual_env: str | None = None  # VIRTUAL_ENV as the probe saw it: the venv the shell activated
    conda_prefix: str | None = None  # CONDA_PREFIX as the probe saw it: the conda env the shell activated
    user_site: str | None = None


@record
class CondaPackage(Record):
    version: str
    build: str | None = None
    channel: str | None = None


@record
class Packages(Record):
    pip: Mapping[str, str] = NEW_DICT  # canonical name -> version, first on sys.path wins
    conda: Mapping[str, CondaPackage] = NEW_DICT  # from <prefix>/conda-meta/*.json

    def version(self, name: str) -> str | None:
        """The installed version of a distribution, from pip metadata or, failing that, conda's records."""
        key = canonical_name(name)
        if key in self.pip:
            return self.pip[key]
        package = self.conda.get(key)
        return package.version if package else None


@record
class Device(Record):
    name: str
    compute_capability: str | None = None
    gfx: str | None = None  # a ROCm build's device: its gcnArchName target (gfx1100)


@record
class FrameworkFacts(Record):
    """One framework as its own process saw it after `import`. Fields the probe could not learn are None."""

    version: str | None = None
    cuda: str | None = None  # the CUDA the build was made with (torch.version.cuda); None for a CPU build
    cudnn: str | None = None  # "9.1.0"
    arch_list: tuple[str, ...] = ()  # torch.cuda.get_arch_list(): ("sm_50", ..., "compute_90")
    is_available: bool | None = None
    device_count: int | None = None
    import_ok: bool | None = None
    import_error: str | None = None  # the full text of the failed import (the doctor matches it)
    devices: tuple[Device, ...] = ()
    driver_cuda: str | None = None  # the CUDA version the driver reported to the framework ("12.4")
    smoke: Mapping[str, str] = NEW_DICT  # test -> "ok" or the error text
    warnings: tuple[str, ...] = ()  # warnings and log lines printed during import and CUDA init
    file: str | None = None  # the imported package's __init__.py
    loaded: tuple[str, ...] = ()  # CUDA / cuDNN / NVIDIA libraries mapped into the process after import
    hip: str | None = None
    xpu_available: bool | None = None  # torch.xpu.is_available(); None: no torch.xpu
    mps_available: bool | None = None  # torch.backends.mps.is_available(); None: no MPS backend


@record
class EnvFacts(Record):
    python: EnvPython
    packages: Packages = field(default_factory=Packages)
    torch: FrameworkFacts | None = None
    tensorflow: FrameworkFacts | None = None
    jax: FrameworkFacts | None = None
    library_dirs: Mapping[str, list[str]] = NEW_DICT  # env dir -> runtime libraries in it
    notes: tuple[str, ...] = ()

    def framework(self, name: str) -> FrameworkFacts | None:
        return getattr(self, name) if name in FRAMEWORK_KEYS else None


def decode_cudnn_version(value: int) -> str:
    """torch.backends.cudnn.version() is CUDNN_VERSION: major*1000+minor*100+patch up to cuDNN 8 (8902 = 8.9.2),
    major*10000+minor*100+patch from cuDNN 9 on (91002 = 9.10.2), as cudnn_version.h defines it."""
    if value >= 90000:
        return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
    return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"


def normalize_cuda_version(text: str) -> str:
    """'12.4' stays; TensorFlow's Windows build info spells CUDA 11.2 as '64_112'."""
    text = text.strip()
    match = re.fullmatch(r"64_(\d+)(\d)", text)
    if match:
        return f"{match.group(1)}.{match.group(2)}"
    return text


def env_facts_to_json(env: EnvFacts) -> dict[str, Any]:
    python = env.python
    return {
        "python": {
            "version": python.version,
            "executable": python.executable,
            "prefix": python.prefix,
            "base_prefix": python.base_prefix,
            "env_type": python.env_type,
            "bits": python.bits,
            "implementation": python.implementation,
            "virtual_env": python.virtual_env,
            "conda_prefix": python.conda_prefix,
            "user_site": python.user_site,
        },
        "packages": {
            "pip": dict(env.packages.pip),
            "conda": {
                name: {"version": package.version, "build": package.build, "channel": package.channel}
                for name, package in env.packages.conda.items()
            },
        },
        **{name: _framework_to_json(env.framework(name)) for name in FRAMEWORK_KEYS},
        "library_dirs": {directory: list(names) for directory, names in env.library_dirs.items()},
        "notes": list(env.notes),
    }


def _framework_to_json(facts: FrameworkFacts | None) -> dict[str, Any] | None:
    if facts is None:
        return None
    return {
        "version": facts.version,
        "cuda": facts.cuda,
        "cudnn": facts.cudnn,
        "arch_list": list(facts.arch_list),
        "is_available": facts.is_available,
        "device_count": facts.device_count,
        "import_ok": facts.import_ok,
        "import_error": facts.import_error,
        "devices": [{"name": d.name, "compute_capability": d.compute_capability, "gfx": d.gfx} for d in facts.devices],
        "driver_cuda": facts.driver_cuda,
        "smoke": dict(facts.smoke),
        "warnings": list(facts.warnings),
        "file": facts.file,
        "loaded": list(facts.loaded),
        "hip": facts.hip,
        "xpu_available": facts.xpu_available,
        "mps_available": facts.mps_available,
    }


def has_env_facts(document: Any) -> bool:
    """Does a facts document carry an environment (verify's keys) besides, or instead of, a host?"""
    return isinstance(document, dict) and any(key in document for key in ENV_FACT_KEYS)


def env_facts_from_json(document: Any, origin: str = "facts") -> EnvFacts:
    """Parse EnvFacts; every problem found is reported at once, each as `field: what is wrong`."""
    reader = _CollectingReader(origin)
    if not isinstance(document, dict):
        reader.fail("", "expected a JSON object (the output of `envpin verify --format json`)")
        reader.raise_if_failed()
    python = _env_python_from_json(reader, document.get("python"))
    packages = _packages_from_json(reader, document.get("packages"))
    frameworks = {name: _framework_from_json(reader, document.get(name), name) for name in FRAMEWORK_KEYS}
    library_dirs = _library_dirs_from_json(reader, document.get("library_dirs"))
    notes = document.get("notes") or []
    if not isinstance(notes, list):
        reader.fail("notes", "expected a list")
        notes = []
    reader.raise_if_failed()
    return EnvFacts(
        python=python,
        packages=packages,
        library_dirs=library_dirs,
        notes=tuple(str(note) for note in notes),
        **frameworks,
    )


def _env_python_from_json(reader: _CollectingReader, doc: Any) -> EnvPython:
    if doc is None:
        return EnvPython(version="unknown")
    if not isinstance(doc, dict):
        reader.fail("python", "expected an object")
        return EnvPython(version="unknown")
    version = reader.text(doc, "version", "python.version", required=True) or "unknown"
    if version != "unknown" and not is_python_version(version):
        reader.fail("python.version", f"{version!r} is not a Python 3 version")
    bits = doc.get("bits")
    if bits is not None and not isinstance(bits, int):
        reader.fail("python.bits", "expected an integer")
        bits = None
    return EnvPython(
        version=version,
        executable=reader.text(doc, "executable", "python.executable"),
        prefix=reader.text(doc, "prefix", "python.prefix"),
        base_prefix=reader.text(doc, "base_prefix", "python.base_prefix"),
        env_type=reader.text(doc, "env_type", "python.env_type") or "unknown",
        bits=bits,
        implementation=reader.text(doc, "implementation", "python.implementation"),
        virtual_env=reader.text(doc, "virtual_env", "python.virtual_env"),
        conda_prefix=reader.text(doc, "conda_prefix", "python.conda_prefix"),
        user_site=reader.text(doc, "user_site", "python.user_site"),
    )


def _packages_from_json(reader: _CollectingReader, doc: Any) -> Packages:
    if doc is None:
        return Packages()
    if not isinstance(doc, dict):
        reader.fail("packages", "expected an object with 'pip' and 'conda'")
        return Packages()
    pip: dict[str, str] = {}
    pip_doc = doc.get("pip")
    pip_doc = {} if pip_doc is None else pip_doc
    if not isinstance(pip_doc, dict):
        reader.fail("packages.pip", "expected an object of name: version")
        pip_doc = {}
    for name, version in pip_doc.items():
        if not isinstance(version, str) or not version.strip():
            reader.fail(f"packages.pip.{name}", "expected a version string")
            continue
        pip[canonical_name(name)] = version.strip()
    conda: dict[str, CondaPackage] = {}
    conda_doc = doc.get("conda")
    conda_doc = {} if conda_doc is None else conda_doc
    if not isinstance(conda_doc, dict):
        reader.fail("packages.conda", "expected an object of name: {version, build, channel}")
        conda_doc = {}
    for name, entry in conda_doc.items():
        path = f"packages.conda.{name}"
        if isinstance(entry, str):  # "2.5.1" or "2.5.1 cpu_py311h..." as `conda list` prints it
            version, _, build = entry.strip().partition(" ")
            conda[canonical_name(name)] = CondaPackage(version=version, build=build.strip() or None)
        elif isinstance(entry, dict) and isinstance(entry.get("version"), str):
            conda[canonical_name(name)] = CondaPackage(
                version=entry["version"],
                build=reader.text(entry, "build", f"{path}.build"),
                channel=reader.text(entry, "channel", f"{path}.channel"),
            )
        else:
            reader.fail(path, "expected a version string or an object with 'version'")
    return Packages(pip=pip, conda=conda)


def _framework_from_json(reader: _CollectingReader, doc: Any, name: str) -> FrameworkFacts | None:
    if doc is None:
        return None
    if not isinstance(doc, dict):
        reader.fail(name, "expected an object, or null when it is not installed")
        return None
    cudnn = doc.get("cudnn")
    if isinstance(cudnn, bool) or not isinstance(cudnn, (int, str, type(None))):
        reader.fail(f"{name}.cudnn", "expected a version string, torch's integer form, or null")
        cudnn = None
    elif isinstance(cudnn, int):
        cudnn = decode_cudnn_version(cudnn)
    cuda = reader.text(doc, "cuda", f"{name}.cuda")
    driver_cuda = doc.get("driver_cuda")
    if isinstance(driver_cuda, int) and not isinstance(driver_cuda, bool):
        driver_cuda = decode_driver_cuda(driver_cuda) if driver_cuda else None
    elif driver_cuda is not None and not isinstance(driver_cuda, str):
        reader.fail(f"{name}.driver_cuda", "expected a version string, an integer such as 12040, or null")
        driver_cuda = None
    smoke = doc.get("smoke") or {}
    if not isinstance(smoke, dict):
        reader.fail(f"{name}.smoke", "expected an object of test: result")
        smoke = {}
    return FrameworkFacts(
        version=reader.text(doc, "version", f"{name}.version"),
        cuda=normalize_cuda_version(cuda) if cuda else None,
        cudnn=cudnn,
        arch_list=reader.strings(doc, "arch_list", f"{name}.arch_list"),
        is_available=reader.flag(doc, "is_available", f"{name}.is_available"),
        device_count=reader.integer(doc, "device_count", f"{name}.device_count"),
        import_ok=reader.flag(doc, "import_ok", f"{name}.import_ok"),
        import_error=reader.text(doc, "import_error", f"{name}.import_error"),
        devices=_devices_from_json(reader, doc.get("devices"), f"{name}.devices"),
        driver_cuda=driver_cuda,
        smoke={str(test): str(result) for test, result in smoke.items()},
        warnings=reader.strings(doc, "warnings", f"{name}.warnings"),
        file=reader.text(doc, "file", f"{name}.file"),
        loaded=reader.strings(doc, "loaded", f"{name}.loaded"),
        hip=reader.text(doc, "hip", f"{name}.hip"),
        xpu_available=reader.flag(doc, "xpu_available", f"{name}.xpu_available"),
        mps_available=reader.flag(doc, "mps_available", f"{name}.mps_available"),
    )


def decode_driver_cuda(value: int) -> str:
    """cudaDriverGetVersion's integer, as in "found version 11040": 1000*major + 10*minor -> "11.4"."""
    return f"{value // 1000}.{value % 1000 // 10}"


def _devices_from_json(reader: _CollectingReader, docs: Any, path: str) -> tuple[Device, ...]:
    if docs is None:
        return ()
    if not isinstance(docs, list):
        reader.fail(path, "expected a list")
        return ()
    devices = []
    for position, doc in enumerate(docs):
        where = f"{path}[{position}]"
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            reader.fail(where, "expected an object with a 'name'")
            continue
        capability = reader.text(doc, "compute_capability", f"{where}.compute_capability")
        if capability is not None and not is_compute_capability(capability):
            reader.fail(f"{where}.compute_capability", f"{capability!r} is not a compute capability such as 8.6")
            capability = None
        gfx = reader.text(doc, "gfx", f"{where}.gfx")
        devices.append(Device(name=doc["name"], compute_capability=capability, gfx=gfx))
    return tuple(devices)


def _library_dirs_from_json(reader: _CollectingReader, doc: Any) -> dict[str, list[str]]:
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        reader.fail("library_dirs", "expected an object of directory: [file names]")
        return {}
    dirs = {}
    for directory, names in doc.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            reader.fail(f"library_dirs.{directory}", "expected a list of file names")
            continue
        dirs[directory] = list(names)
    return dirs


class _CollectingReader:
    """Typed accessors that note every wrong field (with its path) and raise once, listing them all."""

    def __init__(self, origin: str):
        self.origin = origin
        self.problems: list[str] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}" if path else message)

    def raise_if_failed(self) -> None:
        if self.problems:
            shown = "; ".join(self.problems[:5])
            more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
            raise EnvpinInputError(f"{self.origin}: {shown}{more}")

    def text(self, doc: dict, key: str, path: str, required: bool = False) -> str | None:
        value = doc.get(key)
        if value is None:
            if required:
                self.fail(path, "expected a non-empty string")
            return None
        if not isinstance(value, str):
            self.fail(path, "expected a string or null")
            return None
        return value

    def flag(self, doc: dict, key: str, path: str) -> bool | None:
        value = doc.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.fail(path, "expected true, false or null")
        return None

    def integer(self, doc: dict, key: str, path: str) -> int | None:
        value = doc.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        self.fail(path, "expected an integer or null")
        return None

    def strings(self, doc: dict, key: str, path: str) -> tuple[str, ...]:
        value = doc.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.fail(path, "expected a list of strings")
            return ()
        return tuple(value)
