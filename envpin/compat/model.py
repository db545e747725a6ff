"""The compatibility database as frozen values. Built by `envpin.compat.loader`, queried everywhere else.

The classes are records (`envpin.base.record`): frozen values like those of a frozen dataclass, cheaper
to define, since every solve defines all of them. The cache of the validated database
(`envpin.compat.cache`) writes and reads them through their annotations: a field's annotation must stay
one of the forms it knows (a model class, `Version`, `str`, `int`, `bool`, `X | None`, `tuple[X, ...]`,
`Mapping[K, V]`). A Mapping field holds a dict (`NEW_DICT`: a fresh empty one) that nothing changes once built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from packaging.version import Version

from envpin.base.record import NEW_DICT, Record, record
from envpin.compat.files import BASE, PARTS
from envpin.vocabulary.names import canonical_name
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
    unverified_on: tuple[str, ...] = ()  # the platforms the doubt concerns (empty: every platform)

    def doubt_on(self, platform: str) -> str | None:
        """The unverified text where it concerns `platform` (a plan there rests on it), else None."""
        return self.unverified if self.unverified and (not self.unverified_on or platform in self.unverified_on) else None


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


# How an arch list was established: read in the wheel itself (its fatbins / arch flags), the TORCH_CUDA_ARCH_LIST of
# the build scripts, PyTorch's published support matrix (RELEASE.md), or a user's measurement of the installed wheel.
ARCH_EVIDENCE = ("wheel", "build-script", "release-matrix", "report")


@record
class ArchList(Record):
    """A TORCH_CUDA_ARCH_LIST: cubins (SASS) for some capabilities and PTX for others."""

    name: str
    sass: tuple[ComputeCapability, ...]
    ptx: tuple[ComputeCapability, ...]
    provenance: Provenance
    read_from: tuple[str, ...] = ()  # how the list was established: ARCH_EVIDENCE kinds (empty: measured at run time)

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
    # per OS, the lowest minimum another NVIDIA text gives where NVIDIA's texts disagree (the higher is applied):
    # a driver at or above the applied figure passes under every reading, one below this under none
    disputed: Mapping[str, str] = NEW_DICT


@record
class DriverRelease(Record):
    """A driver release known to run a CUDA x.y (its version need not be the oldest that does)."""

    driver: str
    provenance: Provenance


@record
class CudaToolkit(Record):
    """NVIDIA Table 3 (GA row) plus the compute capabilities the toolkit can compile for."""

    version: str
    driver_linux: str | None
    driver_windows: str | None
    targets: tuple[ComputeCapability, ...]
    provenance: Provenance
    # the OSes ("linux", "windows") whose driver NVIDIA's notes give for this toolkit but the database does not
    # have (they were not found): unknown, unlike a null NVIDIA prints as N/A
    driver_not_read: tuple[str, ...] = ()
    # for an OS of `driver_not_read`: a driver release NVIDIA put out for this CUDA x.y (its forward-compatibility
    # package is built for it), so it and every newer driver run this toolkit's builds; the oldest may be older
    supported_by: Mapping[str, DriverRelease] = NEW_DICT

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
class GfxList(Record):
    """The AMD GPU targets (PYTORCH_ROCM_ARCH, `gfx1100`) compiled into a ROCm build (rocm.yaml)."""

    name: str
    targets: tuple[str, ...]
    provenance: Provenance

    def describe(self) -> str:
        return ", ".join(self.targets)


@record
class JetpackRelease(Record):
    """A Jetson Linux (L4T) release and the JetPack that names it (gpus.yaml `jetpack:`): a Jetson's driver fact."""

    l4t: str  # "36.4.0", as /etc/nv_tegra_release gives it (R36, REVISION 4.0)
    jetpack: str  # "6.1"
    provenance: Provenance
    cuda: str | None = None  # the CUDA the release came with, where the source gives it

    @property
    def folder(self) -> str:
        """The JetPack as NVIDIA's wheel folders spell it: 6.1 -> v61, 5.1.2 -> v512."""
        return "v" + self.jetpack.replace(".", "")


@record
class JetsonSupport(Record):
    """What runs on NVIDIA Jetson (Tegra) GPUs for one framework (gpus.yaml `jetson:`): whether its PyPI CUDA wheels
    do (they are built for x86_64 and server Arm's CUDA, not for JetPack's), and where builds that do are."""

    framework: str
    pypi_cuda: bool
    text: str  # what a person reads: where the Jetson builds are, or that there are none
    provenance: Provenance
    builds: str | None = None  # the public URL of the builds that run there; None: there are none
    per_jetpack: str | None = None  # NVIDIA's wheel folder of one JetPack, `{folder}` its v61 form; None: none known


@record
class Variant(Record):
    """One build of a torch release on the PyTorch index: cpu, cuXYZ, rocmX.Y or xpu."""

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
    gfx: GfxList | None = None  # rocm: the AMD targets compiled in (rocm.yaml); None: not in the database
    companion_platforms: Mapping[str, tuple[str, ...]] = NEW_DICT  # where a companion has this build, when narrower

    @property
    def kind(self) -> str:
        if self.cuda:
            return "cuda"
        if self.rocm:
            return "rocm"
        if self.name == "xpu":
            return "xpu"
        return "cpu"


PYPI_INDEX = "pypi"  # a companion build's `index` when PyPI serves it (otherwise the PyPI-torch variant's name)
CUDA_CHECKS = ("none", "major", "minor")  # what a companion compares with torch.version.cuda at import, as read
SAME_BUILD = "same"  # the shorthand's builds: paired only with torch of the same CUDA; their own check was not read


@record
class CompanionBuild(Record):
    """One build of a companion (a torchvision or torchaudio wheel): where it is served, the CUDA it was compiled
    with, and what it checks at `import`. torchaudio 2.11.0 raises RuntimeError at import unless torch's CUDA
    major.minor equals its own (`minor`); torchvision and torchaudio 2.11.1 compare the major only (`major`)."""

    version: str
    index: str  # PYPI_INDEX, or the PyTorch index that serves it: a variant name (cu126, cpu, rocm6.2)
    platforms: tuple[str, ...]
    cuda: str | None  # the CUDA it was compiled with; None: a CPU build (or a ROCm build on a rocm index)
    cuda_check: str  # one of CUDA_CHECKS, or SAME_BUILD
    torch: str | None  # its Requires-Dist on torch (a PEP 440 specifier); None: it declares none
    provenance: Provenance
    python: tuple[str, ...] = ()  # the CPython minors it has wheels for, where fewer than torch's (empty: torch's)

    def imports_beside(self, variant: Variant) -> bool:
        """Whether `import` of this build succeeds beside a torch build of `variant` (and keeps its GPU code)."""
        if variant.kind == "rocm":
            return self.index == variant.name  # the ROCm index's own build
        if variant.kind == "cpu" or variant.cuda is None:
            return self.cuda is None  # a CUDA torchaudio needs CUDA libraries a CPU torch does not bring
        if self.cuda is None:
            return False  # a CPU build beside CUDA torch imports, but without its GPU code: not a pair
        mine, theirs = self.cuda.split("."), variant.cuda.split(".")
        if self.cuda_check in ("minor", SAME_BUILD):
            return mine[:2] == theirs[:2]
        return mine[0] == theirs[0]  # `major`, and `none`: libcudart's soname is per major


@record
class Companion(Record):
    """torchvision / torchaudio paired with a torch release: its builds, each with where it is served."""

    name: str
    version: str  # the release recorded for this torch release (what conda-forge pairs; the first of `builds`)
    per_variant: bool  # the shorthand form: one +variant build on every index torch is on (False: PyPI's only)
    provenance: Provenance
    builds: tuple[CompanionBuild, ...] = ()  # as read, in preference order; empty: the short form (see pairs_beside)
    # a pure-Python wheel (py2.py3-none-any) whose Requires-Dist names torch without a version (torchvision 0.2.x):
    # no compiled operators, so it imports beside any torch release, not only this one
    any_torch: bool = False

    def pairs_beside(self, variant: Variant, platform: str, from_pypi: bool) -> tuple[CompanionBuild, ...]:
        """The builds that install and import beside torch's `variant` on `platform`: served where the plan's
        torch comes from (PyPI, or its variant's index with PyPI behind it), and passing the import check."""
        if not self.builds:
            # the short form: the same build as torch's (same CUDA), where torch's is; `per_variant: false`, PyPI's
            index = PYPI_INDEX if from_pypi or not self.per_variant else variant.name
            return (CompanionBuild(self.version, index, (platform,), variant.cuda, SAME_BUILD, None, self.provenance),)
        indexes = (PYPI_INDEX,) if from_pypi else (variant.name, PYPI_INDEX)
        return tuple(b for b in self.builds
                     if platform in b.platforms and b.index in indexes and b.imports_beside(variant))


@record
class KnownIssue(Record):
    platforms: tuple[str, ...]
    text: str
    provenance: Provenance
    added: str | None = None  # the database version that recorded it (YYYY.MM.DD); None: from the start


@record
class MacosSupport(Record):
    """A torch release on Apple silicon (mps.yaml): the macOS its arm64 wheels are tagged for, and the macOS its
    MPS backend needs (older macOS: the wheel installs, and runs on the CPU)."""

    wheel_macos: str  # "11.0": the wheels' macosx_11_0_arm64 tag
    mps_macos: str  # "13.0"
    provenance: Provenance
    wheel_macos_python: Mapping[str, str] = NEW_DICT  # Pythons whose wheel carries a newer tag ("3.14": "14.0")

    def wheel_macos_for(self, python: str) -> str:
        return self.wheel_macos_python.get(python, self.wheel_macos)


LAST_BUNDLING_INDEX_RELEASE = Version("2.0.1")  # TorchRelease.bundles_its_cuda


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
    macos: MacosSupport | None = None  # Apple silicon (mps.yaml); None: not in the database
    numpy_below_2: tuple[str, ...] = ()  # platforms whose wheels need numpy<2 and do not say so (NumPy 1.x ABI)

    def pythons_for(self, variant: Variant, platform: str) -> tuple[str, ...]:
        return variant.python.get(platform, self.python.get(platform, ()))

    def bundles_its_cuda(self, variant: Variant) -> bool:
        """Whether this CUDA build carries its CUDA libraries in torch/lib rather than loading NVIDIA's pip
        packages, so that it pins no library another framework could pin differently.

        pytorch/builder's manywheel/build_cuda.sh (009ed170cd2b5f504c174ee3dda6a3c6a356a6ee, the 1.13/2.0
        builds) copies cuDNN, cuBLAS, cudart and nvrtc into torch/lib ("Bundling with cudnn and cublas") unless
        the build declares PYTORCH_EXTRA_INSTALL_REQUIREMENTS, which become the wheel's Requires-Dist on
        nvidia-*-cuNN ("Using nvidia libs from pypi"). So a variant whose wheel names none (the database's `pins`,
        read from PyPI METADATA) carries its own. That is known for the PyTorch-index builds up to 2.0 (the
        `+cu118` of 2.0.1); for later index builds the METADATA was not read, so they stay unknown."""
        return variant.kind == "cuda" and not variant.pins and self.version <= LAST_BUNDLING_INDEX_RELEASE


@record
class AmdGpuModel(Record):
    """AMD GPU names -> their LLVM target (amd_gpus.yaml)."""

    gfx: str
    architecture: str  # RDNA3, CDNA3 ...
    kind: str  # dGPU | APU (an integrated GPU)
    names: tuple[str, ...]
    provenance: Provenance


@record
class AmdDriverSupport(Record):
    """One row of AMD's driver <-> user-space matrix: the ROCm releases an AMD GPU driver release supports."""

    driver: str  # the driver release as AMD's matrix names it: "6.4" (6.4.x), "30.10"
    rocm: tuple[str, ...]  # ROCm X.Y user spaces it supports
    provenance: Provenance


@record
class AmdgpuModule(Record):
    """The amdgpu-dkms kernel module an AMD GPU driver release ships (rocm.yaml `amdgpu_modules`): what
    /sys/module/amdgpu/version says (6.12.12) tied to the release AMD's matrix is keyed by (6.4)."""

    module: str  # the module's version, as /sys/module/amdgpu/version and `dkms status` print it
    driver: str  # the AMD GPU driver release that ships it, a row of the matrix: "6.4", "30.10"
    provenance: Provenance


@record
class GfxOverride(Record):
    """A GPU without kernels of its own that HSA_OVERRIDE_GFX_VERSION can make use a sibling's (Linux only, risky)."""

    gfx: str  # the GPU's own target, gfx1031
    stand_in: str  # the sibling whose kernels it runs, gfx1030
    value: str  # HSA_OVERRIDE_GFX_VERSION=10.3.0
    provenance: Provenance
    known_failures: str | None = None


@record
class LibraryGap(Record):
    """A target a ROCm build lists whose bundled library (rocBLAS ...) has no kernels for it from some ROCm on."""

    gfx: str
    from_rocm: str  # X.Y: the first ROCm whose library lacks them
    library: str
    provenance: Provenance


@record
class VendorIndex(Record):
    """A vendor's own wheel index, named as an alternative where PyTorch's indexes have nothing (never planned from)."""

    name: str
    url: str
    platforms: tuple[str, ...]
    provenance: Provenance


@record
class IntelGpuFamily(Record):
    """Intel GPUs the xpu builds are validated on (xpu.yaml): a GPU whose name holds a `match` word."""

    family: str
    match: tuple[str, ...]
    platforms: tuple[str, ...]
    provenance: Provenance
    since: Mapping[str, str] = NEW_DICT  # platform -> the first torch release PyTorch validates the family on there


@record
class RocmFrameworkBuild(Record):
    """A JAX or TensorFlow ROCm build on PyPI (a jax.yaml or tensorflow.yaml release's `rocm:`): `jax[rocm7-local]`
    with the jax-rocm7-plugin it resolves to, or `tensorflow-rocm`. Both load the ROCm user space installed on the
    machine (they bundle none)."""

    framework: str  # jax | tensorflow
    version: str  # the framework release (jax.yaml / tensorflow.yaml): 0.12.0, 2.14.0
    package: str  # what pip installs: jax, tensorflow-rocm
    pin: str  # the version pinned: 0.12.0, 2.14.0.600
    extra: str | None  # jax: rocm, rocm7-local
    plugin: str | None  # jax: "jax-rocm7-plugin 0.12.0", the newest the extra resolves to
    rocm: str | None  # X.Y the wheel says it was built for; None: not stated
    python: tuple[str, ...]  # CPython minors where it resolves
    platforms: tuple[str, ...]
    gfx: GfxList | None  # the gfx targets its HIP kernels were compiled for; None: not read
    provenance: Provenance


@record
class AcceleratorTables(Record):
    """What the database knows about AMD, Intel and Apple GPUs besides the torch builds themselves."""

    amd_gpus: tuple[AmdGpuModel, ...] = ()
    amd_drivers: tuple[AmdDriverSupport, ...] = ()  # newest driver first
    amdgpu_modules: Mapping[str, AmdgpuModule] = NEW_DICT  # amdgpu-dkms module version -> the driver release
    gfx_overrides: Mapping[str, GfxOverride] = NEW_DICT  # gfx -> its stand-in
    gfx_sets: Mapping[str, GfxList] = NEW_DICT
    vendor_indexes: tuple[VendorIndex, ...] = ()
    intel_gpus: tuple[IntelGpuFamily, ...] = ()
    library_gaps: tuple[LibraryGap, ...] = ()


@record
class JaxlibFindLinksRelease(Record):
    """One jaxlib release of JAX's own find-links page (jax.yaml `find_links:`): its CUDA builds named by a local
    version, which PyPI never had (`jaxlib==0.1.69+cuda111`, `jaxlib==0.3.25+cuda11.cudnn82`)."""

    version: Version
    builds: Mapping[str, str]  # local version -> the CUDA X.Y it needs (cuda111 -> 11.1, cuda11.cudnn82 -> 11.1)
    python: tuple[str, ...]  # CPython minors built
    platforms: tuple[str, ...]
    url: str  # the find-links page
    provenance: Provenance
    jax: tuple[Version, ...] = ()  # the jax releases whose CUDA extras pin this jaxlib
    extras: Mapping[str, str] = NEW_DICT  # those extras -> the local version each pins (cuda11_cudnn82 -> ...)

    @property
    def cuda(self) -> tuple[str, ...]:
        """The CUDA X.Y its builds need, oldest first."""
        return tuple(sorted(set(self.builds.values()), key=lambda t: tuple(map(int, t.split(".")))))


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
    tensorflow_metal: tuple[MetalPlugin, ...] = ()  # tensorflow.yaml `metal:`, newest first
    tensorflow_amd_wheels: tuple[AmdTensorflowWheels, ...] = ()  # tensorflow.yaml `amd_wheels:`, newest ROCm first
    jax_releases: tuple[JaxRelease, ...] = ()  # newest first
    jaxlib_find_links: tuple[JaxlibFindLinksRelease, ...] = ()  # jax.yaml `find_links:`, newest first
    conda_releases: tuple[CondaRelease, ...] = ()  # conda.yaml: builds per channel strategy, newest first
    accelerators: AcceleratorTables = AcceleratorTables()  # rocm.yaml, amd_gpus.yaml, xpu.yaml
    jetson: Mapping[str, JetsonSupport] = NEW_DICT  # framework -> what runs on Jetson (Tegra) GPUs (gpus.yaml)
    jetpack_releases: tuple[JetpackRelease, ...] = ()  # gpus.yaml `jetpack:`: L4T release -> JetPack
    tied_releases: tuple[TiedRelease, ...] = ()  # tied.yaml: releases built for one framework release
    framework_requires: tuple[FrameworkRequires, ...] = ()  # requires.yaml: what each release requires beside it
    built_from_source: Mapping[str, str] = NEW_DICT  # tied.yaml: package PyPI has no wheel of -> its files page there
    release_files: tuple[ReleaseFiles, ...] = ()  # tied.yaml: what each release of triton and torch-xla publishes
    wheel_tags: tuple[WheelTags, ...] = ()  # wheel_tags.yaml: what each framework release's PyPI wheel tags say
    index_builds: tuple[IndexBuildTags, ...] = ()  # wheel_tags.yaml: what download.pytorch.org's own files say

    def wheel_tags_of(self, framework: str, version: Version) -> WheelTags | None:
        """The wheel tags of one release (torch, tensorflow, or jax by its jaxlib), None where not recorded."""
        return next((t for t in self.wheel_tags if t.framework == framework and Version(t.version) == version), None)

    def index_build_tags(self, framework: str, version: Version, variant: str) -> IndexBuildTags | None:
        """The recorded tags of one build's files on download.pytorch.org, None where none were read."""
        return next((b for b in self.index_builds if (b.framework, b.variant) == (framework, variant)
                     and Version(b.version) == version), None)

    def newest_glibc_floor(self, platform: str, framework: str | None = None) -> str | None:
        """The highest glibc any recorded release or index build (of `framework`, or of any framework) needs on
        `platform`: a glibc at or past it is decided by no wheel's tag. Asked for every build a Linux solve judges,
        so it is kept with the database after the first time."""
        memo = self.memo("glibc_floors")
        if (platform, framework) not in memo:
            tagged: list[WheelTags | IndexBuildTags] = [*self.wheel_tags, *self.index_builds]
            floors = [t.glibc[platform] for t in tagged if platform in t.glibc and framework in (None, t.framework)]
            memo[(platform, framework)] = max(floors, key=glibc_key) if floors else None
        return memo[(platform, framework)]

    def memo(self, name: str) -> dict[Any, Any]:
        """A memo of answers about this database (`name` says of what: the builds the resolver makes of it, the
        drivers' minimums), kept with it and dropped with it: never shared with another database loaded in the same
        process, and keyed by values, never by ids."""
        return self.__dict__.setdefault(f"_memo_{name}", {})

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


class _InPart:
    """A field of a Database read in parts (`in_parts`) whose part is read when the field is first asked for.

    A non-data descriptor: a value in the instance's __dict__ (every field of a Database made whole, the fields
    of the parts read so far) is found before it, so it runs once per part, and never for a whole Database."""

    __slots__ = ("field", "part")

    def __init__(self, field: str, part: str):
        self.field, self.part = field, part

    def __get__(self, database: Database | None, owner: type | None = None) -> Any:
        if database is None:
            return self
        state = database.__dict__
        state.update(state["_read_part"](self.part))  # DatabaseError where the part's files have problems
        return state[self.field]


for _part, (_, _names) in PARTS.items():
    for _name in _names if _part != BASE else ():
        setattr(Database, _name, _InPart(_name, _part))
del _part, _names, _name


def in_parts(base: Mapping[str, Any], read_part: Callable[[str], Mapping[str, Any]]) -> Database:
    """A Database holding the fields of its base part (envpin.compat.files.PARTS) that reads each other part,
    `read_part(part)` -> its fields, when a command first asks for one of that part's fields: a torch solve never
    reads tensorflow.yaml. Equal to the Database made whole from the same files (== reads every part)."""
    if set(base) != set(PARTS[BASE][1]):
        raise ValueError("not the fields of the base part")
    database = object.__new__(Database)
    database.__dict__.update(base, _read_part=read_part)
    return database


@record
class TensorflowGpuBuild(Record):
    """The tested CUDA/cuDNN of a TensorFlow release's GPU build on one platform."""

    platform: str
    cuda: str
    cudnn: str | None
    conda: str | None  # the conda packages that supply CUDA (native Windows ≤ 2.10)
    provenance: Provenance
    archs: ArchList | None = None  # the wheel's build_info cuda_compute_capabilities (sm_XY cubins, compute_XY PTX)


@record
class AndCudaExtra(Record):
    """`tensorflow[and-cuda]`: the pip-installed CUDA libraries, exactly as the wheel pins them."""

    pins: Mapping[str, str]
    pythons: tuple[str, ...] | None  # where the extra can install at all, when narrower than the release
    installable: bool
    note: str | None
    provenance: Provenance


@record
class NumpyRequirement(Record):
    """A release's own Requires-Dist on numpy, read in its wheels' METADATA: pip installs no numpy outside it, so a
    project's numpy bound that it excludes makes the release uninstallable there."""

    requires: str  # the specifier its wheels give ("<2.0.0,>=1.23.5"; JAX: jax's and jaxlib's together)
    by_python: Mapping[str, str]  # CPython minor -> the specifier there, where a python_version marker gives another
    wheels: tuple[str, ...]  # the wheel files whose METADATA says so
    provenance: Provenance

    def on(self, python: str) -> str:
        return self.by_python.get(python, self.requires)


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
    numpy_below_2: tuple[str, ...] = ()  # platforms whose wheels need numpy<2 and do not say so (NumPy 1.x ABI)
    rocm: tuple[RocmFrameworkBuild, ...] = ()  # tensorflow-rocm on PyPI for this release
    numpy: NumpyRequirement | None = None  # its wheels' own Requires-Dist on numpy (tensorflow, tensorflow-cpu alike)
    # platform -> the PyPI project whose wheels are the GPU build, where `tensorflow`'s are CPU-only (tensorflow-gpu,
    # 1.15.2-2.0.4); absent: `tensorflow` is the GPU build there
    gpu_package: Mapping[str, str] = NEW_DICT


@record
class MetalPlugin(Record):
    """Apple's tensorflow-metal PluggableDevice (tensorflow.yaml `metal:`): one release, the TensorFlow releases its
    table on PyPI pairs it with, the macOS it needs, and the Pythons and macOS tag of its arm64 wheels. A route
    envpin names on Apple silicon; it is not planned from (docs/gpu-first.md)."""

    version: Version
    tensorflow: str  # the TensorFlow releases it pairs with, as a specifier: ">=2.14,<2.19"
    macos: str  # the macOS its table asks for: "12.1"
    wheel_macos: str  # its arm64 wheels' tag: macosx_12_0_arm64 -> "12.0"
    python: tuple[str, ...]  # CPython minors with macOS arm64 wheels
    provenance: Provenance


@record
class AmdTensorflowWheels(Record):
    """AMD's own tensorflow-rocm wheels for one ROCm release (tensorflow.yaml `amd_wheels:`), off PyPI from ROCm 6.1:
    the TensorFlow releases AMD's docs list for it and where they are. Named as a route, never planned from: their
    files and gfx lists are not recorded."""

    rocm: str  # "6.2"
    tensorflow: tuple[str, ...]  # ("2.14.1", "2.15.1", "2.16.1")
    url: str  # the find-links location AMD's docs give
    provenance: Provenance


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
    # package -> specifier a plan adds beside this extra: its metadata lets pip take a version the plugin cannot load
    plan_bounds: Mapping[str, str] = NEW_DICT


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
    numpy_below_2: tuple[str, ...] = ()  # platforms whose jaxlib wheels need numpy<2 and do not say so
    rocm: tuple[RocmFrameworkBuild, ...] = ()  # the jax ROCm extras that resolve from PyPI (jax[rocm7-local])
    numpy: NumpyRequirement | None = None  # jax's and its jaxlib's own Requires-Dist on numpy


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


# Packages built for one framework release (tied.yaml `tied:`), each with that framework: xformers, torchdata and
# torchtext name the torch they need in their wheels' METADATA, torch names the triton it needs; tensorflow-text, tf-keras
# and tensorflow-decision-forests name one TensorFlow minor (`tensorflow<2.21,>=2.20.0`). And packages PyPI has no
# wheel of, which pip compiles against the torch installed beside them (tied.yaml `built_from_source:`: flash-attn,
# torch-scatter). A project solve reads tied.yaml only when it names one of these, so the file may hold no other.
TIED = {"xformers": "torch", "torchdata": "torch", "torchtext": "torch", "triton": "torch",
        "tensorflow-text": "tensorflow", "tf-keras": "tensorflow", "tensorflow-decision-forests": "tensorflow"}
TIED_TO_TORCH = tuple(name for name, framework in TIED.items() if framework == "torch")
BUILT_AGAINST_TORCH = ("causal-conv1d", "flash-attn", "mamba-ssm", "torch-scatter")
# Projects whose wheels are for some platforms only, recorded with their sdists (tied.yaml `release_files:`): with
# none, pip has nothing to install elsewhere (triton and torch-xla publish Linux wheels only, tensorflow-text and
# tensorflow-decision-forests no Windows wheel), nor for another Python (tensorflow-addons 0.23.0: CPython 3.9-3.11).
PLATFORM_LIMITED = ("triton", "torch-xla", "tensorflow-text", "tensorflow-decision-forests", "tensorflow-addons")


@record
class TiedRelease(Record):
    """A release of a package built for one framework release (tied.yaml `tied:`): xformers, torchdata and torchtext
    name the torch they need in their wheels' Requires-Dist, tensorflow-text and tf-keras the TensorFlow; triton is
    named by torch (torch 2.0.0 and 2.0.1 require `triton==2.0.0` on Linux), so a triton release allows the torch
    releases that require it."""

    package: str
    version: str
    requires: str | None  # its Requires-Dist on its framework ("==2.0.1", ">=2", "<2.21,>=2.20.0"); triton: the torch
    #                       releases that require it ("==2.0.0||==2.0.1"); None: it names no release
    platforms: tuple[str, ...]  # where it has wheels on PyPI
    read_in: tuple[str, ...]  # the wheels whose METADATA says so (their URLs)
    provenance: Provenance

    @property
    def framework(self) -> str:
        """The framework whose release it is built for (`torch`, `tensorflow`)."""
        return TIED[self.package]

    def allows(self, framework_version: str) -> bool:
        from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - heavy; only a project with such a package

        if self.requires is None:
            return True
        public = Version(framework_version).public
        return any(SpecifierSet(option).contains(public, prereleases=True) for option in self.requires.split("||"))

    @property
    def exact(self) -> bool:
        return self.requires is not None and all(o.startswith("==") for o in self.requires.split("||"))

    @property
    def source(self) -> str:
        return " and ".join(self.read_in)


@record
class FrameworkRequires(Record):
    """What one torch or TensorFlow release requires of the packages installed beside it: the Requires-Dist lines of
    its Linux x86_64 wheel on PyPI (requires.yaml), markers and all. pip installs one version of each package, so a
    project line that leaves none of the versions a line allows makes the release uninstallable beside it."""

    framework: str
    version: str
    requires: tuple[str, ...]  # "protobuf>=5.28.0", "sympy==1.13.1; python_version >= \"3.9\""
    wheel: str  # the wheel whose METADATA was read (its URL)
    provenance: Provenance

    @property
    def names(self) -> frozenset[str]:
        """The packages it requires, canonical names (`typing-extensions`)."""
        return frozenset(split_requirement(line)[0] for line in self.requires)

    def on(self, name: str, python: str, platform: str) -> str | None:
        """The specifier of its lines on `name` (canonical) whose marker holds on that Python and platform, joined;
        None where no line names it there. A line without a version bound says "" (any version)."""
        from envpin.vocabulary.markers import marker_holds  # noqa: PLC0415 - a project solve with such a line only
        from envpin.vocabulary.platforms import split_key  # noqa: PLC0415 - as above

        os_name, arch = split_key(platform)
        found = None
        for line in self.requires:
            named, specifier, marker = split_requirement(line)
            if named != name or (marker and not marker_holds(marker, os_name=os_name, arch=arch, python=python)):
                continue
            if found is None:
                found = specifier
            elif specifier:
                found = f"{found},{specifier}" if found else specifier
        return found


_REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?([^;]*)(?:;(.*))?")


def split_requirement(line: str) -> tuple[str, str, str]:
    """(canonical name, specifier, marker) of a Requires-Dist line as a wheel writes it: `sympy (==1.13.1) ;
    python_version >= "3.9"` -> (`sympy`, `==1.13.1`, `python_version >= "3.9"`); ("", "", "") for one that is not a
    requirement. Here, not packaging.requirements, which a solve never needs otherwise."""
    match = _REQUIREMENT.fullmatch(line.strip())
    if match is None:
        return "", "", ""
    return (canonical_name(match.group(1)), match.group(3).strip().strip("()").strip(),
            (match.group(4) or "").strip())


@record
class ReleaseFiles(Record):
    """What one release of a platform-limited project publishes on PyPI, as its file list says (tied.yaml
    `release_files:`)."""

    package: str
    version: str
    platforms: tuple[str, ...]  # where it has wheels
    sdist: bool  # whether it has an sdist pip could build from
    source: str  # the release's file list on PyPI
    provenance: Provenance
    pythons: tuple[str, ...] = ()  # the CPython minors its wheels are for; empty: a pure wheel, or not read


@record
class WheelTags(Record):
    """What one framework release's wheels on PyPI are tagged for (wheel_tags.yaml; envpin.refresh.wheel_tags): the
    glibc each Linux platform's wheels need, the CPython minors with a free-threaded wheel, musllinux platforms."""

    framework: str  # torch, tensorflow, or jax (its jaxlib's wheels)
    version: str
    provenance: Provenance
    glibc: Mapping[str, str] = NEW_DICT  # Linux platform -> the glibc its manylinux wheels need ("2.28")
    free_threaded: Mapping[str, tuple[str, ...]] = NEW_DICT  # platform -> CPython minors with a cp3XXt wheel
    musllinux: tuple[str, ...] = ()  # platforms with a musllinux wheel


@record
class IndexBuildTags(Record):
    """What the files of one torch build served by download.pytorch.org are tagged for (wheel_tags.yaml
    `index_builds`; envpin.refresh.wheel_tags.index_builds): other files than PyPI's, with tags of their own."""

    framework: str  # torch
    version: str
    variant: str  # cu126: the files of whl/cu126
    provenance: Provenance
    glibc: Mapping[str, str] = NEW_DICT  # Linux platform -> the glibc its manylinux files need ("2.28")
    any_glibc: tuple[str, ...] = ()  # Linux platforms whose files are tagged linux_<arch>: pip takes them on any glibc
    pythons: Mapping[str, tuple[str, ...]] = NEW_DICT  # Linux platform -> the CPython minors whose file was read

    def read_on(self, platform: str) -> bool:
        return platform in self.glibc or platform in self.any_glibc


def glibc_key(version: str) -> tuple[int, ...]:
    """A glibc version ("2.28") as numbers to compare."""
    return tuple(int(part) for part in re.findall(r"\d+", version))
