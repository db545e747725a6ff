"""Every installable build of every framework, in one shape the fitness checks and the provider share.

A build is one framework release in one flavor: torch `2.5.1` on `cu124`, tensorflow `2.17.0` with
`[and-cuda]`, jax `0.6.2` with `[cuda12]`, or a CPU build. The database keeps each framework in its own
terms; this module is the only place that translates them.

A build comes from a channel: `pip` (PyPI and the PyTorch index), or one of the conda channel strategies of
conda.yaml (`conda-forge`, `pytorch-channel`), whose builds are judged by the same fitness checks. What
conda.yaml does not record is said in the build, not guessed: its Pythons (`pythons` is None) and its GPU
architectures (no `archs`; `toolkit_known` says the CUDA is the toolkit it was compiled with).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import takewhile

from packaging.version import Version

from envpin.base.record import Record, field, record
from envpin.compat.model import (
    ArchList,
    Companion,
    CompanionBuild,
    ComputeCapability,
    CondaRelease,
    Database,
    GfxList,
    JaxlibFindLinksRelease,
    JaxRelease,
    NumpyRequirement,
    Provenance,
    RocmFrameworkBuild,
    TensorflowRelease,
    TorchRelease,
    Variant,
)
from envpin.resolver.request import CONDA_FORGE, PIP, PYTORCH_CHANNEL
from envpin.vocabulary.platforms import PLATFORMS
from envpin.vocabulary.variants import tag_for

_FIRST_TORCH_WITH_PIP_CUDA = Version("1.13")

CHANNEL_NAMES = {PIP: "pip", CONDA_FORGE: "conda-forge", PYTORCH_CHANNEL: "the pytorch channel"}
PYTORCH_CHANNEL_LAST = Version("2.5.1")  # pytorch/pytorch#138506: "2.5 will be the last release … on the pytorch channel"
# The conda package that carries each framework's build (conda-forge feedstock outputs; the pytorch channel's pytorch)
CONDA_PACKAGES = {"torch": "pytorch", "tensorflow": "tensorflow", "jax": "jaxlib"}


@record
class Pairing(Record):
    """A companion (torchvision, torchaudio) paired with a torch build: its version, and the platforms where it
    has a build beside this one (on conda-forge, its own per-CUDA builds; empty: paired, but never built so).

    A pip torch build's pairing also has, per platform, the companion builds that install and import beside it
    (`builds`, preference order): the version can differ between platforms, and a platform without any is not
    among `platforms`."""

    version: str
    platforms: tuple[str, ...]
    builds: Mapping[str, tuple[CompanionBuild, ...]] = field(default_factory=dict)

    def versions_on(self, platform: str, python: str) -> tuple[str, ...]:
        if platform not in self.platforms:
            return ()
        if not self.builds:
            return (self.version,)
        return tuple(dict.fromkeys(b.version for b in self.builds[platform] if not b.python or python in b.python))

    def build_on(self, platform: str, version: str, python: str) -> CompanionBuild | None:
        """The preferred pip build of `version` on `platform` for `python` (None for a conda pairing: no builds)."""
        return next((b for b in self.builds.get(platform, ())
                     if b.version == version and (not b.python or python in b.python)), None)


@record(eq=False)
class Build(Record):
    framework: str
    version: Version
    flavor: str  # torch: cpu / cu124 / rocm6.2 / xpu; tensorflow: and-cuda / cuda / cpu; jax: cuda12 / cpu
    kind: str  # cuda / rocm / xpu / cpu
    platforms: tuple[str, ...]
    pythons: Mapping[str, tuple[str, ...]] | None = field(repr=False)  # platform -> CPython minors; None: not recorded
    provenance: tuple[Provenance, ...] = field(repr=False)
    # The database record, for the emitters' details: a pip torch build's release and variant, a pip TensorFlow or
    # JAX build's release, a conda build's release (the properties below give each one as its type)
    record: tuple[TorchRelease, Variant] | TensorflowRelease | JaxRelease | CondaRelease | JaxlibFindLinksRelease = \
        field(repr=False)
    cuda: str | None = None  # "12.4", or only the major ("12") where that is all the framework states
    min_driver: Mapping[str, str] = field(default_factory=dict)  # os -> the framework's own stated minimum
    archs: Mapping[str, ArchList] = field(default_factory=dict, repr=False)  # platform -> arch list (torch)
    min_cc: ComputeCapability | None = None  # the framework's stated minimum GPU (jax)
    pins: Mapping[str, str] = field(default_factory=dict, repr=False)  # pip CUDA libraries -> specifier
    pins_known: bool = True  # False: the build uses pip CUDA libraries, but which versions was not read
    extras: tuple[str, ...] = ()
    blocked: str | None = None  # why this build cannot install at all, though it is published
    channel: str = PIP  # pip, or the conda channel strategy (conda-forge, pytorch-channel) the build is from
    companions: Mapping[str, Pairing] = field(default_factory=dict, repr=False)  # torch: torchvision/torchaudio
    toolkit_known: bool = False  # `cuda` is the toolkit the build was compiled with (conda: cuda_compiler_version)
    rocm: str | None = None  # a ROCm build's ROCm ("6.2.4")
    numpy_below_2: tuple[str, ...] = ()  # platforms where the wheel needs numpy<2 and does not say so: a plan pins it
    numpy: NumpyRequirement | None = field(default=None, repr=False)  # its own Requires-Dist on numpy; None: not read
    # package -> specifier a plan adds beside the build (nvidia-cudnn-cu12 <9 for a plugin built for cuDNN 8 whose
    # metadata lets pip take 9): the data's `plan_bounds`
    bounds: Mapping[str, str] = field(default_factory=dict, repr=False)
    gfx: GfxList | None = None  # a ROCm build's gfx targets; None: not in the database
    rocm_build: RocmFrameworkBuild | None = field(default=None, repr=False)  # a JAX or TensorFlow ROCm build

    @property
    def torch_record(self) -> tuple[TorchRelease, Variant]:
        """A pip torch build's release and variant."""
        if isinstance(self.record, tuple):
            return self.record
        raise TypeError(f"{self.label} is not a pip torch build")

    @property
    def tensorflow_release(self) -> TensorflowRelease:
        if isinstance(self.record, TensorflowRelease):
            return self.record
        raise TypeError(f"{self.label} is not a pip TensorFlow build")

    @property
    def jax_release(self) -> JaxRelease:
        if isinstance(self.record, JaxRelease):
            return self.record
        raise TypeError(f"{self.label} is not a pip JAX build")

    @property
    def conda_release(self) -> CondaRelease:
        if isinstance(self.record, CondaRelease):
            return self.record
        raise TypeError(f"{self.label} is not a conda build")

    @property
    def gpu_cuda(self) -> str:
        """The CUDA of a CUDA build (`kind` cuda), which always has one."""
        if self.cuda is None:
            raise AssertionError(f"{self.label} has no CUDA")
        return self.cuda

    @property
    def cuda_major(self) -> str | None:
        return self.cuda.split(".")[0] if self.cuda else None

    @property
    def where(self) -> str:
        """Where the build comes from, in words: `pip`, `conda-forge`, `the pytorch channel`."""
        return CHANNEL_NAMES[self.channel]

    @property
    def conda_package(self) -> str:
        return CONDA_PACKAGES[self.framework]

    @property
    def conda_build(self) -> str:
        """The conda build's name in its channel's words: `cuda120` (conda-forge's build string), `cuda12.4`
        (the pytorch channel's), `cpu`."""
        if self.kind != "cuda" or self.cuda is None:  # a CUDA build always has its CUDA
            return "cpu"
        return f"cuda{self.cuda}" if self.channel == PYTORCH_CHANNEL else f"cuda{self.cuda.replace('.', '')}"

    @property
    def label(self) -> str:
        if self.channel != PIP:
            return f"{self.where}'s {self.conda_package} {self.version} {self.conda_build}"
        if self.framework == "torch":
            return f"torch {self.version}+{self.flavor}"
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        if self.rocm_build is not None:
            return f"{self.rocm_build.package}{extras} {self.rocm_build.pin}"
        if isinstance(self.record, JaxlibFindLinksRelease):
            return f"jaxlib {self.version}+{self.flavor}"  # a find-links build is named by its local version
        return f"{self.framework}{extras} {self.version}" + (" (CPU)" if self.kind == "cpu" and not extras else "")


def torch_build(release: TorchRelease, variant: Variant) -> Build:
    pythons = {p: release.pythons_for(variant, p) for p in PLATFORMS}
    return Build(
        framework="torch",
        version=release.version,
        flavor=variant.name,
        kind=variant.kind,
        platforms=variant.platforms,
        pythons=pythons,
        # the variant's own record: a release-level note (which variants exist, dates) decides no one build
        provenance=(variant.provenance,),
        cuda=variant.cuda,
        archs=variant.archs,
        pins=variant.pins,
        # Before 1.13 the CUDA libraries were inside the torch wheel, as they still are in the PyTorch-index builds
        # up to 2.0.1 (TorchRelease.bundles_its_cuda): such a build pins no library. Since then only the PyPI
        # build's pins could be read from PyPI.
        pins_known=bool(variant.pins) or variant.kind != "cuda" or release.version < _FIRST_TORCH_WITH_PIP_CUDA
        or release.bundles_its_cuda(variant),
        record=(release, variant),
        companions=_Pairings(release, variant),
        rocm=variant.rocm,
        numpy_below_2=release.numpy_below_2,
        gfx=variant.gfx,
    )


class _Pairings(Mapping[str, Pairing]):
    """A pip torch build's companions, each paired when first asked for: a solve judges every build but asks
    for the companions of those that fit only."""

    __slots__ = ("_made", "_release", "_variant")

    def __init__(self, release: TorchRelease, variant: Variant) -> None:
        self._release, self._variant = release, variant
        self._made: dict[str, Pairing] = {}

    def __getitem__(self, name: str) -> Pairing:
        if name not in self._made:
            self._made[name] = _pip_pairing(self._release, self._variant, name, self._release.companions[name])
        return self._made[name]

    def __contains__(self, name: object) -> bool:
        return name in self._release.companions

    def __iter__(self) -> Iterator[str]:
        return iter(self._release.companions)

    def __len__(self) -> int:
        return len(self._release.companions)


def _pip_pairing(release: TorchRelease, variant: Variant, name: str, companion: Companion) -> Pairing:
    builds = {}
    for platform in variant.companion_platforms.get(name, variant.platforms):
        # PyPI's own torch wheel is this build (always on macOS): then its companions come from PyPI too
        from_pypi = platform.startswith("macos") or release.pypi.get(platform) == variant.name
        beside = companion.pairs_beside(variant, platform, from_pypi)
        if beside:
            builds[platform] = beside
    return Pairing(companion.version, tuple(builds), builds)


def rocm_framework_build(release: TensorflowRelease | JaxRelease, rocm: RocmFrameworkBuild) -> Build:
    """`jax[rocm7-local]` or `tensorflow-rocm`: a PyPI wheel that runs on the ROCm installed on the machine."""
    return Build(
        framework=rocm.framework,
        version=release.version,
        flavor="rocm",
        kind="rocm",
        platforms=rocm.platforms,
        pythons={p: rocm.python for p in rocm.platforms},
        provenance=(release.provenance, rocm.provenance),
        extras=(rocm.extra,) if rocm.extra else (),
        record=release,
        rocm=rocm.rocm,
        numpy_below_2=release.numpy_below_2,
        # jax[rocm7-local] installs jax and jaxlib, whose numpy requirement is the release's; tensorflow-rocm is
        # another package, whose own was not read
        numpy=release.numpy if rocm.framework == "jax" else None,
        gfx=rocm.gfx,
        rocm_build=rocm,
    )


def tensorflow_builds(release: TensorflowRelease) -> list[Build]:
    """`[and-cuda]` (pip CUDA, Linux), the plain GPU build (system or conda CUDA), `tensorflow-rocm`, then CPU."""
    builds = []
    and_cuda = release.and_cuda
    linux = release.gpu.get("linux-x86_64")
    if and_cuda is not None and linux is not None:
        pythons = dict(release.python)
        if and_cuda.pythons is not None:
            pythons["linux-x86_64"] = tuple(p for p in pythons.get("linux-x86_64", ()) if p in and_cuda.pythons)
        builds.append(
            Build(
                framework="tensorflow",
                version=release.version,
                flavor="and-cuda",
                kind="cuda",
                platforms=("linux-x86_64",),
                pythons=pythons,
                provenance=(release.provenance, and_cuda.provenance, linux.provenance),
                cuda=linux.cuda,
                pins=and_cuda.pins,
                archs={"linux-x86_64": linux.archs} if linux.archs else {},
                extras=("and-cuda",),
                blocked=None if and_cuda.installable else (and_cuda.note or "its [and-cuda] pins cannot install"),
                record=release,
                numpy_below_2=release.numpy_below_2,
                numpy=release.numpy,
            )
        )
    for platform, gpu in release.gpu.items():
        if platform == "linux-x86_64" and and_cuda is not None:
            continue  # from 2.14 on Linux, [and-cuda] is TensorFlow's way to CUDA; the system route is not offered
        builds.append(
            Build(
                framework="tensorflow",
                version=release.version,
                flavor="cuda",
                kind="cuda",
                platforms=(platform,),
                pythons=release.python,
                provenance=(release.provenance, gpu.provenance),
                cuda=gpu.cuda,
                archs={platform: gpu.archs} if gpu.archs else {},
                record=release,
                numpy_below_2=release.numpy_below_2,
                numpy=release.numpy,
            )
        )
    builds += [rocm_framework_build(release, r) for r in release.rocm]
    builds.append(
        Build(
            framework="tensorflow",
            version=release.version,
            flavor="cpu",
            kind="cpu",
            platforms=tuple(release.python),
            pythons=release.python,
            provenance=(release.provenance,),
            record=release,
            numpy_below_2=release.numpy_below_2,
            numpy=release.numpy,
        )
    )
    return builds


def jax_builds(release: JaxRelease) -> list[Build]:
    """Newest CUDA extra first, then the ROCm extra, then the CPU jaxlib."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils pulls in packaging.tags: keep it off torch's path

    builds = []
    for extra in sorted(release.extras.values(), key=lambda e: -e.cuda_major):
        builds.append(
            Build(
                framework="jax",
                version=release.version,
                flavor=extra.name,
                kind="cuda",
                platforms=extra.platforms,
                pythons={p: release.python for p in extra.platforms},
                provenance=(release.provenance, extra.provenance),
                cuda=str(extra.cuda_major),
                min_driver=extra.min_driver,
                min_cc=ComputeCapability.parse(extra.min_cc) if extra.min_cc else None,
                pins=extra.pins,
                extras=(canonicalize_name(extra.name),),
                record=release,
                numpy_below_2=release.numpy_below_2,
                numpy=release.numpy,
                bounds=extra.plan_bounds,
            )
        )
    builds += [rocm_framework_build(release, r) for r in release.rocm]
    builds.append(
        Build(
            framework="jax",
            version=release.version,
            flavor="cpu",
            kind="cpu",
            platforms=release.platforms,
            pythons={p: release.python for p in release.platforms},
            provenance=(release.provenance,),
            record=release,
            numpy_below_2=release.numpy_below_2,
            numpy=release.numpy,
        )
    )
    return builds


def jaxlib_find_links_build(release: JaxlibFindLinksRelease, local: str) -> Build:
    """`jaxlib==0.1.69+cuda111` (or `+cuda11.cudnn82`) from JAX's find-links page: a CUDA build that loads CUDA and
    cuDNN from the system, judged against the CUDA X.Y that build needs."""
    cuda = release.builds[local]
    return Build(
        framework="jax",
        version=release.version,
        flavor=local,
        kind="cuda",
        platforms=release.platforms,
        pythons={p: release.python for p in release.platforms},
        provenance=(release.provenance,),
        cuda=cuda,
        record=release,
        toolkit_known=True,  # the local version (and JAX's README for `cuda11`) gives the CUDA X.Y it needs
    )



class Builds(Sequence[Build]):
    """The builds of one framework from one channel, newest release first: made release by release as they are
    asked for, so that a solve that finds its answer among the newest releases never makes (nor reads from the
    database cache) the builds of the older ones. Iterating makes only what it reaches; an index or len() makes
    them all. Immutable once made: every reader of the database shares one."""

    __slots__ = ("_made", "_releases")

    def __init__(self, releases: Iterator[list[Build]]):
        self._made: list[Build] = []
        self._releases: Iterator[list[Build]] | None = releases  # the builds of each release not made yet

    def _more(self) -> bool:
        if self._releases is None:
            return False
        for builds in self._releases:
            if builds:
                self._made += builds
                return True
        self._releases = None
        return False

    def __iter__(self) -> Iterator[Build]:
        position = 0
        while position < len(self._made) or self._more():
            yield self._made[position]
            position += 1

    def _all(self) -> list[Build]:
        while self._more():
            pass
        return self._made

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, index):
        return tuple(self._all())[index] if isinstance(index, slice) else self._all()[index]


def builds_of(database: Database, framework: str, channel: str = PIP) -> Builds:
    """All builds of a framework from a channel, newest release first, each release's builds in preference order.
    A solve asks for them several times (the allowed kinds, the candidates, the explanation) and a fleet once per
    machine class: they are made once per database, and kept with it (`Database.memo`)."""
    made = database.memo("builds")
    key = (framework, channel)
    if key not in made:
        made[key] = Builds(_releases_builds(database, framework, channel))
    return made[key]


def newest_first(builds: Iterable[Build], oldest: Version) -> list[Build]:
    """The builds down to release `oldest` (builds come newest release first): what a plan's reasons compare with
    its chosen release, without making the builds of older releases."""
    return list(takewhile(lambda build: build.version >= oldest, builds))


def _releases_builds(database: Database, framework: str, channel: str) -> Iterator[list[Build]]:
    """The builds of each release in turn (a KeyError now, not when first iterated, for an unknown framework)."""
    if channel != PIP:
        return iter([conda_builds(database, framework, channel)])
    if framework == "torch":
        return ([torch_build(release, variant) for variant in ordered_variants(release)]
                for release in database.torch_releases)
    if framework == "tensorflow":
        return (tensorflow_builds(release) for release in database.tensorflow_releases)
    if framework == "jax":
        return (jax_builds(release) for release in database.jax_releases)
    raise KeyError(framework)


def ordered_variants(release: TorchRelease) -> list[Variant]:
    """Newest CUDA first, then the newest ROCm, then XPU, then CPU: the preference among a torch release's builds."""

    def rank(variant: Variant) -> tuple[int, tuple[int, ...]]:
        if variant.cuda:
            return (0, tuple(-int(p) for p in variant.cuda.split(".")))
        if variant.rocm:
            return (1, tuple(-int(p) for p in variant.rocm.split(".")))
        if variant.kind == "xpu":
            return (2, ())
        return (3, ())

    return sorted(release.variants.values(), key=rank)


# ---------------------------------------------------------------- conda channels


def conda_builds(database: Database, framework: str, channel: str) -> list[Build]:
    """The builds of conda.yaml's releases of a framework on one channel strategy: per release, one build per CUDA
    it was compiled with (newest first, spanning the platforms that have it), then the CPU build."""
    if framework not in CONDA_PACKAGES:
        raise KeyError(framework)
    builds = []
    for release in database.conda_releases:
        if (release.strategy, release.framework) != (channel, framework):
            continue
        builds += conda_release_builds(database, release)
    return builds


def conda_release_builds(database: Database, release: CondaRelease) -> list[Build]:
    cudas = sorted({c for built in release.cuda.values() for c in built}, key=_cuda_key, reverse=True)
    builds = [_conda_build(database, release, cuda, tuple(p for p, built in release.cuda.items() if cuda in built))
              for cuda in cudas]
    builds.append(_conda_build(database, release, None, release.cpu))
    return builds


def _conda_build(database: Database, release: CondaRelease, cuda: str | None, platforms: tuple[str, ...]) -> Build:
    framework = release.framework
    provenance = [release.provenance]
    archs: dict[str, ArchList] = {}
    pins: dict[str, str] = {}
    extras: tuple[str, ...] = ()
    if cuda is not None:
        major = int(cuda.split(".")[0])
        if release.strategy == CONDA_FORGE:
            # conda-forge's CUDA builds run on the `cuda-version` of their major from the CUDA they were built with:
            # the builds of one environment share it, as pip builds share their CUDA library pins.
            pins = {"cuda-version": f">={cuda},<{major + 1}"}
        if framework == "torch" and release.strategy == PYTORCH_CHANNEL:
            archs, note = _pip_arch_lists(database, release, cuda)
            if note:
                provenance.append(Provenance((), note))
        # `jax[cuda12]`, `tensorflow[and-cuda]` ask for a CUDA build (of that major): the conda build is one
        extras = (f"cuda{major}",) if framework == "jax" else ("and-cuda",) if framework == "tensorflow" else ()
    companions = _conda_companions(database, release, cuda, platforms) if framework == "torch" else {}
    return Build(
        framework=framework,
        version=release.version,
        flavor=tag_for(cuda),
        kind="cuda" if cuda is not None else "cpu",
        platforms=platforms,
        pythons=None,  # conda.yaml does not record the Pythons of conda builds
        provenance=tuple(provenance),
        cuda=cuda,
        archs=archs,
        pins=pins,
        extras=extras,
        record=release,
        channel=release.strategy,
        companions=companions,
        toolkit_known=cuda is not None,
    )


def _conda_companions(
    database: Database, release: CondaRelease, cuda: str | None, platforms: tuple[str, ...]
) -> dict[str, Pairing]:
    """The pytorch channel pairs its own companions with each release. conda-forge's are feedstocks of their own,
    paired as pip pairs them (torch.yaml), each with its own CUDA builds: a companion sits beside this build on
    the platforms where it was built for the same CUDA (or has a CPU build)."""
    if release.strategy == PYTORCH_CHANNEL:
        return {name: Pairing(version, platforms) for name, version in release.companions.items()}
    pip_release = database.torch_release(str(release.version))
    if pip_release is None:
        return {}
    pairings = {}
    for name, companion in pip_release.companions.items():
        own = database.conda_release(release.strategy, name, companion.version)
        if own is None:
            beside: tuple[str, ...] = ()
        elif cuda is None:
            beside = tuple(p for p in platforms if p in own.cpu)
        else:
            beside = tuple(p for p in platforms if cuda in own.cuda.get(p, ()))
        pairings[name] = Pairing(companion.version, beside)
    return pairings


def _pip_arch_lists(database: Database, release: CondaRelease, cuda: str) -> tuple[dict[str, ArchList], str | None]:
    """The pytorch channel's builds come from the same release process as the PyTorch index's wheels, and the
    database has only the wheels' arch lists: those of the wheel with the same CUDA are checked, and said so."""
    pip_release = database.torch_release(str(release.version))
    if pip_release is None:
        return {}, None
    variant = pip_release.variants.get(tag_for(cuda))
    if variant is not None and variant.archs:
        return dict(variant.archs), (f"the GPU architectures of the pytorch channel's pytorch {release.version} "
                                     f"builds are not in the database; those of the pip {variant.name} wheel were checked")
    # A channel build whose CUDA no wheel of the release has (1.11.0's cudatoolkit 11.1 build: the wheels are cu102,
    # cu113, cu115): the wheel of the same release and CUDA major nearest to it stands in, and the plan says which.
    major = cuda.split(".")[0]
    same_major = [v for v in pip_release.variants.values()
                  if v.cuda and v.archs and v.cuda.split(".")[0] == major]
    if not same_major:
        return {}, None
    nearest = min(same_major, key=lambda v: (abs(_cuda_key(v.cuda or "0")[1] - _cuda_key(cuda)[1]), v.name))
    return dict(nearest.archs), (f"the GPU architectures of the pytorch channel's pytorch {release.version} CUDA "
                                 f"{cuda} build are not in the database, and no pip wheel of {release.version} has "
                                 f"CUDA {cuda}: those of the pip {nearest.name} wheel, the nearest CUDA of that "
                                 "release, were checked")


def _cuda_key(cuda: str) -> tuple[int, int]:
    major, _, minor = cuda.partition(".")
    return int(major), int(minor or 0)

