"""HostFacts and its parts: what envpin believes about a machine.

These frozen values are the contract between the probes (`envpin.host`), the `--facts FILE` option and
everything downstream (resolver, doctor, check). `to_json`/`from_json` implement the JSON shape of
`envpin detect --format json` documented in docs/contracts.md; `from_json` rejects malformed or foreign
documents with an `EnvpinInputError` naming the bad field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, field, record, replace
from envpin.facts.checks import (  # noqa: F401 - importable from here
    amdgpu_module_of,
    gpu_vendor,
    is_amd_release,
    is_compute_capability,
    is_driver_version,
    is_gfx_target,
    is_jetpack_version,
    is_l4t_release,
    is_macos_version,
    is_python_version,
)
from envpin.vocabulary.platforms import ARCHITECTURES, OPERATING_SYSTEMS, normalize_arch  # noqa: F401 - importable from here

SCHEMA_VERSION = 1
DRIVER_SOURCES = ("nvml", "nvidia-smi", "procfs", "sysfs", "override")
ENV_TYPES = ("venv", "conda", "system", "unknown")


@record
class Driver(Record):
    """The NVIDIA driver: its version, the newest CUDA it supports, and which probe found it."""

    version: str
    cuda: str | None  # the newest CUDA the driver supports, e.g. "12.2"
    source: str


GPU_VENDORS = ("nvidia", "amd", "intel", "apple")


@record
class Gpu(Record):
    """One GPU as the probe (or a --gpu flag) names it, of any vendor."""

    index: int
    name: str
    compute_capability: str | None  # NVIDIA: None when neither the probe nor the database knows it
    memory_mib: int | None = None
    vendor: str = "nvidia"  # nvidia | amd | intel | apple
    gfx: str | None = None  # AMD: the LLVM target the probe reported (gfx1100)
    integrated: bool | None = None  # an APU's / iGPU's GPU (True), a discrete card (False), not known (None)


@record
class Toolkit(Record):
    """A CUDA toolkit installed on the machine."""

    version: str
    root: str | None
    nvcc: str | None = None


@record
class PythonInfo(Record):
    """The Python a solve is for."""

    version: str
    executable: str | None = None
    env_type: str = "unknown"


@record
class Libc(Record):
    """The C library: glibc with its version, musl, or unknown."""

    name: str
    version: str | None


# What `driver_trouble.state` can be: how an NVIDIA GPU shows itself while its driver does not answer.
DRIVER_TROUBLE_STATES = (
    "driver-library-mismatch",  # the loaded kernel module and the user-space libraries are different versions
    "no-devices",  # nvidia-smi runs and says "No devices were found"
    "module-not-loaded",  # nvidia-smi "couldn't communicate with the NVIDIA driver" / NVML "Driver Not Loaded"
    "nvml-error",  # NVML failed to initialise for another reason ("Unknown Error", "GPU is lost", ...)
    "tool-failed",  # nvidia-smi failed or hung in a way envpin has no name for
    "no-driver",  # the hardware is there (a PCI display device of vendor 0x10de), no NVIDIA driver is installed
    "container-without-gpu",  # the same inside a container: started without --gpus / the NVIDIA runtime
    "wsl-driver-unreachable",  # WSL2 with the Windows driver's libcuda, but no nvidia-smi answer
)


@record
class DriverTrouble(Record):
    """Evidence that an NVIDIA GPU is here while its driver does not answer: `envpin solve` refuses to give the
    CPU build as this machine's answer, and `envpin doctor` names the state."""

    state: str  # one of DRIVER_TROUBLE_STATES
    message: str  # what failed, in the tool's own words where there is one
    evidence: tuple[str, ...] = ()  # what shows the GPU: /proc/driver/nvidia, a PCI device of vendor 0x10de, ...


@record
class HostFacts(Record):
    """Everything envpin believes about one machine (DESIGN.md's HostFacts)."""

    os: str
    arch: str
    python: PythonInfo
    driver: Driver | None = None
    gpus: tuple[Gpu, ...] = ()
    wsl: bool = False
    libc: Libc | None = None
    toolkits: tuple[Toolkit, ...] = ()
    env: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, list[str]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    driver_trouble: DriverTrouble | None = None  # an NVIDIA GPU whose driver does not answer (None: no such sign)
    amdgpu_driver: str | None = None  # the AMD GPU driver release (6.4, 30.10), as AMD's support matrix names it
    rocm: str | None = None  # the ROCm user space installed on the machine (/opt/rocm/.info/version), X.Y[.Z]
    amdgpu_module: str | None = None  # the loaded amdgpu kernel module: amdgpu-dkms's version (6.12.12), or "in-tree <kernel>"
    amdgpu_dkms: str | None = None  # the installed amdgpu-dkms package (1:6.12.12.60401-2164967.24.04) of that module
    macos: str | None = None  # the macOS version (sw_vers), X.Y
    l4t: str | None = None  # a Jetson's Jetson Linux release (/etc/nv_tegra_release: R36 REVISION 4.0 -> 36.4.0)
    jetpack: str | None = None  # a Jetson's JetPack, as given (--jetpack 6.1); the database maps it to its L4T

    def with_notes(self, *notes: str) -> HostFacts:
        return replace(self, notes=self.notes + tuple(notes))


# ---------------------------------------------------------------- JSON


def to_json(facts: HostFacts) -> dict[str, Any]:
    return {
        "schema": SCHEMA_VERSION,
        "os": facts.os,
        "arch": facts.arch,
        "wsl": facts.wsl,
        "libc": None if facts.libc is None else {"name": facts.libc.name, "version": facts.libc.version},
        "python": {
            "version": facts.python.version,
            "executable": facts.python.executable,
            "env_type": facts.python.env_type,
        },
        "driver": None
        if facts.driver is None
        else {"version": facts.driver.version, "cuda": facts.driver.cuda, "source": facts.driver.source},
        "gpus": [
            {
                "index": gpu.index,
                "name": gpu.name,
                "vendor": gpu.vendor,
                "compute_capability": gpu.compute_capability,
                "gfx": gpu.gfx,
                "integrated": gpu.integrated,
                "memory_mib": gpu.memory_mib,
            }
            for gpu in facts.gpus
        ],
        "amdgpu_driver": facts.amdgpu_driver,
        "amdgpu_module": facts.amdgpu_module,
        "amdgpu_dkms": facts.amdgpu_dkms,
        "rocm": facts.rocm,
        "macos": facts.macos,
        **{key: value for key, value in (("l4t", facts.l4t), ("jetpack", facts.jetpack)) if value is not None},
        "toolkits": [{"version": t.version, "root": t.root, "nvcc": t.nvcc} for t in facts.toolkits],
        "env": dict(facts.env),
        "files": {directory: list(names) for directory, names in facts.files.items()},
        "notes": list(facts.notes),
        "driver_trouble": None if facts.driver_trouble is None else {
            "state": facts.driver_trouble.state,
            "message": facts.driver_trouble.message,
            "evidence": list(facts.driver_trouble.evidence),
        },
    }


def from_json(document: Any, origin: str = "facts") -> HostFacts:
    """Parse a HostFacts document; every problem is reported as `origin: field: what is wrong`."""
    reader = _Reader(origin)
    if not isinstance(document, dict):
        reader.fail("", "expected a JSON object (the output of `envpin detect --format json`)")
    if "os" not in document and "schema" not in document:
        reader.fail("", "not an envpin facts file: it has neither 'schema' nor 'os'")
    schema = document.get("schema", SCHEMA_VERSION)
    if schema != SCHEMA_VERSION:
        reader.fail("schema", f"unsupported facts schema {schema!r} (this envpin reads {SCHEMA_VERSION})")
    os_name = reader.choice(document, "os", OPERATING_SYSTEMS)
    arch = normalize_arch(reader.string(document, "arch"))
    if arch not in ARCHITECTURES:
        reader.fail("arch", f"unknown architecture {arch!r}; expected one of {', '.join(ARCHITECTURES)}")
    python_doc = reader.mapping(document, "python")
    python_version = reader.string(python_doc, "version", path="python.version")
    if not is_python_version(python_version):
        reader.fail("python.version", f"{python_version!r} is not a Python 3 version")
    python = PythonInfo(
        version=python_version,
        executable=reader.optional_string(python_doc, "executable", path="python.executable"),
        env_type=python_doc.get("env_type") or "unknown",
    )
    return HostFacts(
        os=os_name,
        arch=arch,
        python=python,
        driver=_driver_from_json(reader, document.get("driver")),
        gpus=tuple(_gpus_from_json(reader, document.get("gpus") or [])),
        wsl=bool(document.get("wsl", False)),
        libc=_libc_from_json(reader, document.get("libc")),
        toolkits=tuple(_toolkits_from_json(reader, document.get("toolkits") or [])),
        env=reader.optional_mapping(document, "env"),
        files=_files_from_json(reader, reader.optional_mapping(document, "files")),
        notes=tuple(str(note) for note in reader.optional_list(document, "notes")),
        driver_trouble=_trouble_from_json(reader, document.get("driver_trouble")),
        amdgpu_driver=_version_from_json(reader, document, "amdgpu_driver", is_amd_release, "an AMD GPU driver release such as 6.4"),
        rocm=_version_from_json(reader, document, "rocm", is_amd_release, "a ROCm version such as 6.2.4"),
        amdgpu_module=reader.optional_string(document, "amdgpu_module", path="amdgpu_module"),
        amdgpu_dkms=_version_from_json(reader, document, "amdgpu_dkms", lambda text: amdgpu_module_of(text) is not None,
                                       "an amdgpu-dkms package version such as 1:6.12.12.60401-2164967.24.04"),
        macos=_version_from_json(reader, document, "macos", is_macos_version, "a macOS version such as 14.5"),
        l4t=_version_from_json(reader, document, "l4t", is_l4t_release, "an L4T release such as 36.4.0"),
        jetpack=_version_from_json(reader, document, "jetpack", is_jetpack_version, "a JetPack version such as 6.1"),
    )


def _version_from_json(reader: _Reader, document: dict, key: str, check, what: str) -> str | None:
    value = reader.optional_string(document, key)
    if value is not None and not check(value):
        reader.fail(key, f"{value!r} is not {what}")
    return value


def _trouble_from_json(reader: _Reader, doc: Any) -> DriverTrouble | None:
    if doc is None:
        return None
    if not isinstance(doc, dict):
        reader.fail("driver_trouble", "expected an object or null")
    state = reader.choice(doc, "state", DRIVER_TROUBLE_STATES, path="driver_trouble.state")
    message = reader.string(doc, "message", path="driver_trouble.message")
    evidence = reader.optional_list(doc, "evidence")
    if not all(isinstance(line, str) for line in evidence):
        reader.fail("driver_trouble.evidence", "expected a list of strings")
    return DriverTrouble(state=state, message=message, evidence=tuple(evidence))


def _files_from_json(reader: _Reader, doc: dict) -> dict[str, list[str]]:
    """`{"<dir>": ["libcudart.so.12", ...]}`; the doctor iterates these lists, so their shape is checked here."""
    files = {}
    for directory, names in doc.items():
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            reader.fail(f"files[{directory!r}]", "expected a list of file names")
        files[directory] = list(names)
    return files


def _driver_from_json(reader: _Reader, doc: Any) -> Driver | None:
    if doc is None:
        return None
    if not isinstance(doc, dict):
        reader.fail("driver", "expected an object or null")
    version = reader.string(doc, "version", path="driver.version")
    if not is_driver_version(version):
        reader.fail("driver.version", f"{version!r} is not an NVIDIA driver version such as 535.104.05")
    cuda = reader.optional_string(doc, "cuda", path="driver.cuda")
    return Driver(version=version, cuda=cuda, source=doc.get("source") or "override")


def _gpus_from_json(reader: _Reader, docs: Any) -> list[Gpu]:
    if not isinstance(docs, list):
        reader.fail("gpus", "expected a list")
    gpus = []
    for position, doc in enumerate(docs):
        path = f"gpus[{position}]"
        if not isinstance(doc, dict):
            reader.fail(path, "expected an object")
        name = reader.string(doc, "name", path=f"{path}.name")
        capability = reader.optional_string(doc, "compute_capability", path=f"{path}.compute_capability")
        if capability is not None and not is_compute_capability(capability):
            reader.fail(f"{path}.compute_capability", f"{capability!r} is not a compute capability such as 8.6")
        memory = doc.get("memory_mib")
        if memory is not None and not isinstance(memory, int):
            reader.fail(f"{path}.memory_mib", "expected an integer")
        index = doc.get("index", position)
        if not isinstance(index, int):
            reader.fail(f"{path}.index", "expected an integer")
        vendor = doc.get("vendor") or gpu_vendor(name)
        if vendor not in GPU_VENDORS:
            reader.fail(f"{path}.vendor", f"{vendor!r} is not one of {', '.join(GPU_VENDORS)}")
        gfx = reader.optional_string(doc, "gfx", path=f"{path}.gfx")
        if gfx is not None and not is_gfx_target(gfx):
            reader.fail(f"{path}.gfx", f"{gfx!r} is not an AMD target such as gfx1100")
        integrated = doc.get("integrated")
        if integrated is not None and not isinstance(integrated, bool):
            reader.fail(f"{path}.integrated", "expected true, false or null")
        gpus.append(Gpu(index=index, name=name, compute_capability=capability, memory_mib=memory, vendor=vendor,
                        gfx=gfx, integrated=integrated))
    return gpus


def _libc_from_json(reader: _Reader, doc: Any) -> Libc | None:
    if doc is None:
        return None
    if not isinstance(doc, dict):
        reader.fail("libc", "expected an object or null")
    return Libc(name=reader.string(doc, "name", path="libc.name"), version=doc.get("version"))


def _toolkits_from_json(reader: _Reader, docs: Any) -> list[Toolkit]:
    if not isinstance(docs, list):
        reader.fail("toolkits", "expected a list")
    toolkits = []
    for position, doc in enumerate(docs):
        path = f"toolkits[{position}]"
        if not isinstance(doc, dict):
            reader.fail(path, "expected an object")
        toolkits.append(
            Toolkit(
                version=reader.string(doc, "version", path=f"{path}.version"),
                root=reader.optional_string(doc, "root", path=f"{path}.root"),
                nvcc=reader.optional_string(doc, "nvcc", path=f"{path}.nvcc"),
            )
        )
    return toolkits


class _Reader:
    """Small typed accessors that turn a wrong type into an EnvpinInputError with the field's path."""

    def __init__(self, origin: str):
        self.origin = origin

    def fail(self, path: str, message: str) -> NoReturn:
        where = f"{self.origin}: {path}: " if path else f"{self.origin}: "
        raise EnvpinInputError(where + message)

    def string(self, doc: dict, key: str, path: str | None = None) -> str:
        value = doc.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(path or key, "expected a non-empty string")
        return value.strip()

    def optional_string(self, doc: dict, key: str, path: str | None = None) -> str | None:
        value = doc.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(path or key, "expected a string or null")
        return value

    def choice(self, doc: dict, key: str, choices: tuple[str, ...], path: str | None = None) -> str:
        value = self.string(doc, key, path=path)
        if value not in choices:
            self.fail(path or key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def mapping(self, doc: dict, key: str) -> dict:
        value = doc.get(key)
        if not isinstance(value, dict):
            self.fail(key, "expected an object")
        return value

    def optional_list(self, doc: dict, key: str) -> list:
        value = doc.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(key, "expected a list")
        return value

    def optional_mapping(self, doc: dict, key: str) -> dict:
        value = doc.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(key, "expected an object")
        return value


# EnvFacts live in envpin.facts.env; these names stay importable from here (DESIGN.md's facts module) without
# loading them on a solve's path: type checkers read them from there, a run gets them from __getattr__ below.
if TYPE_CHECKING:
    from envpin.facts.env import (  # noqa: F401 - importable from here
        ENV_FACT_KEYS,
        FRAMEWORK_KEYS,
        CondaPackage,
        Device,
        EnvFacts,
        EnvPython,
        FrameworkFacts,
        Packages,
        canonical_name,
        decode_cudnn_version,
        decode_driver_cuda,
        env_facts_from_json,
        env_facts_to_json,
        has_env_facts,
        normalize_cuda_version,
    )

_ENV_FACT_NAMES = frozenset({
    "ENV_FACT_KEYS",
    "FRAMEWORK_KEYS",
    "EnvPython",
    "CondaPackage",
    "Packages",
    "Device",
    "FrameworkFacts",
    "EnvFacts",
    "canonical_name",
    "decode_cudnn_version",
    "normalize_cuda_version",
    "env_facts_to_json",
    "has_env_facts",
    "env_facts_from_json",
    "decode_driver_cuda",
})


def __getattr__(name: str):
    if name in _ENV_FACT_NAMES:
        from envpin.facts import env as env_facts  # noqa: PLC0415 - ~6 ms of imports (python -X importtime) a solve never needs

        return getattr(env_facts, name)
    raise AttributeError(f"module 'envpin.facts.host' has no attribute {name!r}")
