"""Every installable build of every framework, in one shape the fitness checks and the provider share.

A build is one framework release in one flavour: torch `2.5.1` on `cu124`, tensorflow `2.17.0` with
`[and-cuda]`, jax `0.6.2` with `[cuda12]`, or a CPU build. The database keeps each framework in its own
terms; this module is the only place that translates them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from envpin.compat.model import (
    PLATFORMS,
    ArchList,
    ComputeCapability,
    Database,
    JaxRelease,
    Provenance,
    TensorflowRelease,
    TorchRelease,
    Variant,
)

FRAMEWORKS = ("torch", "tensorflow", "jax")
_FIRST_TORCH_WITH_PIP_CUDA = Version("1.13")


@dataclass(frozen=True, eq=False)
class Build:
    framework: str
    version: Version
    flavor: str  # torch: cpu / cu124 / rocm6.2; tensorflow: and-cuda / cuda / cpu; jax: cuda12 / cpu
    kind: str  # cuda / rocm / cpu
    platforms: tuple[str, ...]
    pythons: dict[str, tuple[str, ...]] = field(repr=False)  # platform -> CPython minors
    provenance: tuple[Provenance, ...] = field(repr=False)
    cuda: str | None = None  # "12.4", or only the major ("12") where that is all the framework states
    min_driver: dict[str, str] = field(default_factory=dict)  # os -> the framework's own stated minimum
    archs: dict[str, ArchList] = field(default_factory=dict, repr=False)  # platform -> arch list (torch)
    min_cc: ComputeCapability | None = None  # the framework's stated minimum GPU (jax)
    pins: dict[str, str] = field(default_factory=dict, repr=False)  # pip CUDA libraries -> specifier
    pins_known: bool = True  # False: the build uses pip CUDA libraries, but which versions was not read
    extras: tuple[str, ...] = ()
    blocked: str | None = None  # why this build cannot install at all, though it is published
    record: Any = field(default=None, repr=False)  # the database record, for the emitters' details

    @property
    def cuda_major(self) -> str | None:
        return self.cuda.split(".")[0] if self.cuda else None

    @property
    def label(self) -> str:
        if self.framework == "torch":
            return f"torch {self.version}+{self.flavor}"
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
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
        provenance=(release.provenance, variant.provenance),
        cuda=variant.cuda,
        archs=variant.archs,
        pins=variant.pins,
        # Before 1.13 the CUDA libraries were inside the torch wheel; since then only the PyPI build's
        # pins could be read from PyPI.
        pins_known=bool(variant.pins) or variant.kind != "cuda" or release.version < _FIRST_TORCH_WITH_PIP_CUDA,
        record=(release, variant),
    )


def tensorflow_builds(release: TensorflowRelease) -> list[Build]:
    """`[and-cuda]` (pip CUDA, Linux), the plain GPU build (system or conda CUDA), then CPU."""
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
                extras=("and-cuda",),
                blocked=None if and_cuda.installable else (and_cuda.note or "its [and-cuda] pins cannot install"),
                record=release,
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
                record=release,
            )
        )
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
        )
    )
    return builds


def jax_builds(release: JaxRelease) -> list[Build]:
    """Newest CUDA extra first, then the CPU jaxlib."""
    from packaging.utils import canonicalize_name  # packaging.utils pulls in packaging.tags: keep it off torch's path

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
            )
        )
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
        )
    )
    return builds


def builds_of(database: Database, framework: str) -> list[Build]:
    """All builds of a framework, newest release first, each release's builds in preference order."""
    if framework == "torch":
        return [torch_build(r, v) for r in database.torch_releases for v in ordered_variants(r)]
    if framework == "tensorflow":
        return [b for r in database.tensorflow_releases for b in tensorflow_builds(r)]
    if framework == "jax":
        return [b for r in database.jax_releases for b in jax_builds(r)]
    raise KeyError(framework)


def ordered_variants(release: TorchRelease) -> list[Variant]:
    """Newest CUDA first, then ROCm, then CPU: the preference among a torch release's builds."""

    def rank(variant: Variant) -> tuple[int, tuple[int, ...]]:
        if variant.cuda:
            return (0, tuple(-int(p) for p in variant.cuda.split(".")))
        if variant.rocm:
            return (1, tuple(-int(p) for p in variant.rocm.split(".")))
        return (2, ())

    return sorted(release.variants.values(), key=rank)
