"""The compatibility database as frozen values. Built by `envpin.compat.loader`, queried everywhere else.

The classes are records (`envpin.compat.record`): frozen values like those of a frozen dataclass, cheaper
to define, since every solve defines all of them. The cache of the validated database
(`envpin.compat.cache`) writes and reads them through their annotations: a field's annotation must stay
one of the forms it knows (a model class, `Version`, `str`, `int`, `bool`, `X | None`, `tuple[X, ...]`,
`Mapping[K, V]`). A Mapping field holds a dict (`NEW_DICT`: a fresh empty one) that nothing changes once built.
"""

from __future__ import annotations

from collections.abc import Mapping

from packaging.version import Version

from envpin.compat.record import NEW_DICT, Record, record
from envpin.vocabulary.platforms import PLATFORMS  # noqa: F401 - importable from here


@record
class Source(Record):
    id: str
    title: str
    grade: str
    url: str | None = None
    ref: str | None = None
    read: str | None = None
    quote: str | None = None

    @property
    def where(self) -> str:
        return self.url or self.ref or self.title


@record
class Provenance(Record):
    """Where a record comes from, and what about it nobody has verified yet."""

    sources: tuple[str, ...]
    unverified: str | None = None


@record
class ComputeCapability(Record):
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> ComputeCapability:
        major, _, minor = text.partition(".")
        return cls(int(major), int(minor))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    # Ordered by (major, minor), as dataclass(order=True) orders; hashed and compared by the same pair.
    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) == (other.major, other.minor)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.major, self.minor))

    def __lt__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) < (other.major, other.minor)
        return NotImplemented

    def __le__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) <= (other.major, other.minor)
        return NotImplemented

    def __gt__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) > (other.major, other.minor)
        return NotImplemented

    def __ge__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) >= (other.major, other.minor)
        return NotImplemented

    @property
    def sm(self) -> str:
        return f"sm_{self.major}{self.minor}"


@record
class ArchList(Record):
    """A TORCH_CUDA_ARCH_LIST: cubins (SASS) for some capabilities and PTX for others."""

    name: str
    sass: tuple[ComputeCapability, ...]
    ptx: tuple[ComputeCapability, ...]
    provenance: Provenance

    def describe(self) -> str:
        parts = [c.sm for c in self.sass] + [f"compute_{c.major}{c.minor} (PTX)" for c in self.ptx]
        return ", ".join(parts)


@record
class MinorVersionCompat(Record):
    """NVIDIA Table 2: the driver a whole CUDA major needs under minor-version compatibility."""

    major: int
    linux: str
    windows: str | None
    provenance: Provenance


@record
class CudaToolkit(Record):
    """NVIDIA Table 3 (GA row) plus the compute capabilities the toolkit can compile for."""

    version: str
    driver_linux: str | None
    driver_windows: str | None
    targets: tuple[ComputeCapability, ...]
    provenance: Provenance

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


@record
class GpuModel(Record):
    compute_capability: ComputeCapability
    architecture: str
    names: tuple[str, ...]
    provenance: Provenance


@record
class Variant(Record):
    """One build of a torch release on the PyTorch index: cpu, cuXYZ or rocmX.Y."""

    name: str
    platforms: tuple[str, ...]
    provenance: Provenance
    cuda: str | None = None
    rocm: str | None = None
    cudnn: str | None = None
    archs: Mapping[str, ArchList] = NEW_DICT  # platform -> arch list
    python: Mapping[str, tuple[str, ...]] = NEW_DICT  # platform -> Pythons, when it differs
    pins: Mapping[str, str] = NEW_DICT  # pip CUDA libraries the wheel pins (nvidia-cudnn-cu12: ==9.1.0.70)
    added: str | None = None  # the database version that added this build to an existing release (YYYY.MM.DD)

    @property
    def kind(self) -> str:
        if self.cuda:
            return "cuda"
        if self.rocm:
            return "rocm"
        return "cpu"


@record
class Companion(Record):
    """torchvision / torchaudio release paired with a torch release."""

    name: str
    version: str
    per_variant: bool
    provenance: Provenance


@record
class KnownIssue(Record):
    platforms: tuple[str, ...]
    text: str
    provenance: Provenance
    added: str | None = None  # the database version that recorded it (YYYY.MM.DD); None: from the start


@record
class TorchRelease(Record):
    version: Version
    released: str | None
    python: Mapping[str, tuple[str, ...]]  # platform -> CPython minors with wheels
    pypi: Mapping[str, str]  # platform -> variant name of the plain PyPI wheel
    variants: Mapping[str, Variant]
    companions: Mapping[str, Companion]
    known_issues: tuple[KnownIssue, ...]
    provenance: Provenance
    added: str | None = None  # the database version that added the release (YYYY.MM.DD); None: from the start

    def pythons_for(self, variant: Variant, platform: str) -> tuple[str, ...]:
        return variant.python.get(platform, self.python.get(platform, ()))


@record
class Database(Record):
    version: str
    sources: Mapping[str, Source]
    minor_version_compat: Mapping[int, MinorVersionCompat]
    toolkits: Mapping[str, CudaToolkit]
    gpus: tuple[GpuModel, ...]
    torch_releases: tuple[TorchRelease, ...]  # newest first
    arch_sets: Mapping[str, ArchList]
    tensorflow_releases: tuple[TensorflowRelease, ...] = ()  # newest first
    jax_releases: tuple[JaxRelease, ...] = ()  # newest first
    conda_releases: tuple[CondaRelease, ...] = ()  # conda.yaml: builds per channel strategy, newest first

    def torch_release(self, version: str) -> TorchRelease | None:
        wanted = Version(version)
        return next((r for r in self.torch_releases if r.version == wanted), None)

    def conda_release(self, strategy: str, framework: str, version: str) -> CondaRelease | None:
        """The conda builds a channel strategy (`conda-forge`, `pytorch-channel`) has for one release."""
        wanted = Version(version)
        return next(
            (r for r in self.conda_releases if (r.strategy, r.framework, r.version) == (strategy, framework, wanted)),
            None,
        )


@record
class TensorflowGpuBuild(Record):
    """The tested CUDA/cuDNN of a TensorFlow release's GPU build on one platform."""

    platform: str
    cuda: str
    cudnn: str | None
    conda: str | None  # the conda packages that supply CUDA (native Windows ≤ 2.10)
    provenance: Provenance


@record
class AndCudaExtra(Record):
    """`tensorflow[and-cuda]`: the pip-installed CUDA libraries, exactly as the wheel pins them."""

    pins: Mapping[str, str]
    pythons: tuple[str, ...] | None  # where the extra can install at all, when narrower than the release
    installable: bool
    note: str | None
    provenance: Provenance


@record
class TensorflowRelease(Record):
    version: Version
    released: str | None
    python: Mapping[str, tuple[str, ...]]
    gpu: Mapping[str, TensorflowGpuBuild]
    and_cuda: AndCudaExtra | None
    cpu_package: Mapping[str, str]
    provenance: Provenance
    known_issues: tuple[KnownIssue, ...] = ()
    added: str | None = None  # the database version that added the release (YYYY.MM.DD)


@record
class JaxExtra(Record):
    """`jax[cuda12]` and friends: the CUDA plugin an extra installs and what it needs."""

    name: str
    cuda_major: int
    plugin: str | None
    min_driver: Mapping[str, str]  # os -> JAX's stated minimum driver
    min_cc: str | None
    min_cudnn: str | None
    built_with: str | None
    pins: Mapping[str, str]
    platforms: tuple[str, ...]
    provenance: Provenance


@record
class JaxRelease(Record):
    version: Version
    released: str | None
    python: tuple[str, ...]
    platforms: tuple[str, ...]
    extras: Mapping[str, JaxExtra]
    missing_extras: Mapping[str, str]
    provenance: Provenance
    note: str | None = None
    added: str | None = None  # the database version that added the release (YYYY.MM.DD)


CONDA_FRAMEWORKS = {  # conda.yaml: channel strategy -> the frameworks it records
    "conda-forge": ("torch", "torchvision", "torchaudio", "tensorflow", "jax"),
    "pytorch-channel": ("torch",),
}


@record
class CondaRelease(Record):
    """The conda builds one channel strategy has for one release (conda.yaml)."""

    strategy: str  # conda-forge | pytorch-channel
    framework: str  # torch, torchvision, torchaudio, tensorflow, jax (jaxlib on conda-forge)
    version: Version  # the conda version: no local `+cu124` part
    cuda: Mapping[str, tuple[str, ...]]  # platform -> CUDA X.Y of its GPU builds, oldest first
    cpu: tuple[str, ...]  # platforms with a CPU build
    provenance: Provenance
    cuda_package: str | None = None  # pytorch-channel: pytorch-cuda or the legacy cudatoolkit
    companions: Mapping[str, str] = NEW_DICT  # pytorch-channel: torchvision / torchaudio it pairs with
