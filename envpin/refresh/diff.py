"""The current database + what PyPI says -> a proposal (pure).

For each new release the proposal holds a complete record in the database's schema, built from PyPI facts
only: upload date, Python minors per platform (wheel tags), which build PyPI serves per platform and its
`nvidia-*`/`cuda-*` pins (METADATA), companions (their `torch` requirement), TensorFlow's `[and-cuda]` pins,
JAX's CUDA extras and whether the plugin version they need exists. Fields the schema requires but PyPI cannot
give (a torch variant's arch list, JAX's stated driver and compute-capability minimums) are carried over from
the release before, and the record's `unverified:` says so; each such fact is also listed as a CuratedNeed
with where to read it. A record that cannot be made complete without guessing (a CUDA version cuda.yaml does
not know, a METADATA that could not be read) is held back and reported, never written half.

Existing records are never changed: where PyPI disagrees with one (`--recheck`), the proposal lists a
Disagreement for a person to review.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from envpin.base.record import Record
from envpin.base.record import record as frozen_record
from envpin.compat.model import Database, JaxRelease, TensorflowRelease, TorchRelease
from envpin.refresh.index import PackageIndex, Release, representative_wheels
from envpin.refresh.metadata import (
    Metadata,
    applies,
    base_pins,
    base_requirement,
    cuda_extras,
    extra_pins,
    extra_requirement,
    requirements,
    rocm_extras,
    rocm_of_summary,
)
from envpin.refresh.plan import (
    FAMILIES,
    Observations,
    companion_candidates,
    family_releases,
    known_releases,
    linux_wheel,
    new_releases,
    plugin_release,
    previous_companion,
)
from envpin.refresh.wheels import sort_pythons
from envpin.vocabulary.frameworks import COMPANIONS
from envpin.vocabulary.platforms import PLATFORMS
from envpin.vocabulary.variants import tag_for as variant_name  # CUDA x.y (None: cpu) -> the torch variant

FILES = {"torch": "torch.yaml", "tensorflow": "tensorflow.yaml", "jax": "jax.yaml"}
STUB_BYTES = 100_000  # a wheel this small holds no framework: it is a stub that installs another package

WHERE_TORCH_VARIANTS = ("https://download.pytorch.org/whl/torch/ (the +cuXYZ/+cpu/+rocm file names), "
                        "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py on the release branch "
                        "(CUDA_ARCHES, ROCM_ARCHES), and RELEASE.md's Release Compatibility Matrix")
WHERE_TORCH_ARCHS = ("torch.cuda.get_arch_list() of the wheel (or the CUDA_ARCH_FLAGS string in "
                     "torch/lib/libtorch_python.so), TORCH_CUDA_ARCH_LIST in pytorch/pytorch "
                     ".ci/manywheel/build_cuda.sh on the release branch, RELEASE.md's PyTorch CUDA Support Matrix")
WHERE_CUDA_TABLES = ("NVIDIA CUDA toolkit release notes, section 'CUDA Driver', Table 3 (toolkit driver, Linux and "
                     "Windows) and Table 2 (minor-version compatibility), "
                     "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/; compute capabilities it can "
                     "target: `nvcc --list-gpu-arch` of that toolkit")
WHERE_TF_TESTED = "tensorflow/docs site/en/install/source.md, 'Tested build configurations' (Linux GPU)"
WHERE_JAX_MINIMUMS = "jax-ml/jax docs/installation.md (driver, SM version) and CHANGELOG.md (cuDNN, built-with CUDA)"
WHERE_TF_ARCHS = ("tensorflow/python/platform/build_info.py of the Linux x86_64 wheel (`cuda_compute_capabilities`), "
                  "read with `scripts/wheel_member.py URL build_info.py`")
WHERE_ROCM_GFX = ("the gfx targets of the code objects in the clang offload bundles of the wheel's shared libraries "
                  "(jax-rocm plugins: _linalg.so, _prng.so, _solver.so; tensorflow-rocm: libtensorflow_framework.so.2, "
                  "libtensorflow_cc.so.2, which also name the /opt/rocm-X.Y.Z they were built with); see "
                  "SOURCES-ROCM.md")


@frozen_record
class ProposedRecord(Record):
    file: str  # torch.yaml
    family: str
    version: str
    record: Mapping[str, Any]  # in the schema's key order
    read: tuple[str, ...]  # the PyPI reads it rests on


@frozen_record
class Disagreement(Record):
    subject: str  # "torch 2.15.0"
    field: str  # "pypi.linux-x86_64"
    database: str
    pypi: str


@frozen_record
class CuratedNeed(Record):
    subject: str
    what: str
    where: str


@frozen_record
class HeldBack(Record):
    subject: str
    why: str


@frozen_record
class Proposal(Record):
    database_version: str
    new_version: str
    read_date: str
    records: tuple[ProposedRecord, ...]
    sources: Mapping[str, Mapping[str, Mapping[str, str]]]  # file -> source id -> source mapping
    disagreements: tuple[Disagreement, ...]
    curated: tuple[CuratedNeed, ...]
    held_back: tuple[HeldBack, ...]
    summary: tuple[str, ...]  # one line per package read
    checked: tuple[str, ...] = ()  # what existing records were compared with PyPI

    @property
    def changes(self) -> bool:
        return bool(self.records)


class _Context:
    """What every builder needs, and where it leaves what it could not do."""

    def __init__(self, database: Database, observations: Observations, read_date: str, new_version: str):
        self.database = database
        self.observations = observations
        self.read_date = read_date
        self.new_version = new_version
        self.curated: list[CuratedNeed] = []
        self.held: list[HeldBack] = []
        self.disagreements: list[Disagreement] = []
        self.checked: list[str] = []
        self.cited: dict[str, set[str]] = {}  # file -> packages whose source it cites
        self.members_read: dict[str, set[str]] = {}  # package -> wheel members read for it (for its source's title)

    def source_id(self, package: str, file: str) -> str:
        self.cited.setdefault(file, set()).add(package)
        return source_id(package, self.read_date)

    def metadata(self, filename: str) -> Metadata | None:
        read = self.observations.metadata.get(filename)
        return read.metadata if read else None

    def member(self, wheel: str, member: str) -> tuple[str | None, str]:
        """(the member's text or None, how it was read or why not)."""
        read = self.observations.members.get((wheel, member))
        if read is not None:
            return read.text, f"{wheel}: {member} (HTTP range requests)"
        return None, self.observations.failed_members.get((wheel, member), "not read")

    def index(self, package: str) -> PackageIndex | None:
        return self.observations.indexes.get(package)

    def read_index(self, package: str) -> PackageIndex:
        """The index of a package a builder needs: `propose` holds a release back when one could not be read."""
        index = self.observations.indexes.get(package)
        assert index is not None, f"{package} was not read"
        return index


class _Incomplete(Exception):
    """A record that cannot be made complete from what was read: held back, with this reason."""


def source_id(package: str, read_date: str) -> str:
    return f"refresh-pypi-{package}-{read_date}"


def propose(database: Database, observations: Observations, read_date: str, recheck: int = 1) -> Proposal:
    """Everything the refresh proposes; `read_date` (YYYY-MM-DD) dates the sources and the new version;
    the `recheck` newest known releases of each framework are compared with PyPI."""
    new_version = max(read_date.replace("-", "."), database.version)
    ctx = _Context(database, observations, read_date, new_version)
    records = []
    builders: dict[str, Callable[[_Context, Release], ProposedRecord]] = {
        "torch": _torch_record, "tensorflow": _tensorflow_record, "jax": _jax_record}
    for family, build in builders.items():
        if family not in observations.requested:
            continue
        index = ctx.index(family)
        if not family_releases(database, family):
            ctx.held.append(HeldBack(family, f"the database lists no {family} release (a file it leaves out): "
                                             "refresh only extends what a curator started"))
            continue
        if index is None:
            ctx.held.append(HeldBack(family, f"{family} could not be read from PyPI: nothing proposed for it"))
            continue
        for release in new_releases(database, family, index):
            missing = [p for p in FAMILIES[family] if p in observations.requested and ctx.index(p) is None]
            subject = f"{family} {release.version}"
            if missing:
                ctx.held.append(HeldBack(subject, f"{', '.join(missing)} could not be read from PyPI"))
                continue
            try:
                records.append(build(ctx, release))
            except _Incomplete as reason:
                ctx.held.append(HeldBack(subject, str(reason)))
        rechecked = known_releases(database, family, index, recheck)
        for known in rechecked:
            _recheck(ctx, family, known)
        _check_all_known(ctx, family, index, {r.version for r in rechecked})
    return Proposal(
        database_version=database.version,
        new_version=new_version,
        read_date=read_date,
        records=tuple(records),
        sources=_sources(ctx, records),
        disagreements=tuple(ctx.disagreements),
        curated=tuple(dict.fromkeys(ctx.curated)),
        held_back=tuple(ctx.held),
        summary=tuple(_summary(ctx, p) for p in observations.requested),
        checked=tuple(ctx.checked),
    )


# ---------------------------------------------------------------- torch


def pypi_builds(ctx: _Context, release: Release) -> tuple[dict[str, list[str]], dict[str, tuple[dict, str | None]], list[str]]:
    """What PyPI says of a torch release: Pythons per platform, and per platform the CUDA libraries its wheel
    pins with the CUDA x.y they give (None: no CUDA library named)."""
    pythons = _pythons(release)
    metadata, read = _platform_metadata(ctx, release)
    builds = {}
    for platform in PLATFORMS:
        if platform in metadata:
            pins = base_pins(metadata[platform], platform, pythons.get(platform, ()), is_cuda_library)
            cuda = cuda_of(pins)
            if pins and cuda is None:
                raise _Incomplete(f"the {platform} wheel pins CUDA libraries but no exact CUDA runtime/toolkit "
                                  f"version: {_pins_text(pins)}")
            builds[platform] = (pins, cuda)
    return pythons, builds, read


def _torch_record(ctx: _Context, release: Release) -> ProposedRecord:
    version = str(release.version)
    pythons, builds, read = pypi_builds(ctx, release)
    src = ctx.source_id("torch", "torch.yaml")
    pypi, pins_by_platform, cuda_by_variant = {}, {}, {}
    for platform, (pins, cuda) in builds.items():
        if cuda is None and platform.startswith("linux"):
            # torch 1.12's Linux wheel was a CUDA build that named no CUDA library: METADATA cannot tell.
            raise _Incomplete(f"the {platform} wheel names no CUDA library, and METADATA cannot tell a CPU build "
                              "from a self-contained CUDA build")
        variant = variant_name(cuda)
        pypi[platform] = variant
        pins_by_platform[platform] = pins
        if cuda is not None:  # None is the cpu variant, which is never looked up here
            cuda_by_variant[variant] = cuda
    variants = {}
    for variant in sorted(set(pypi.values()), key=_variant_order):
        platforms = [p for p in PLATFORMS if pypi.get(p) == variant]
        if variant == "cpu":
            variants["cpu"] = {
                "platforms": platforms, "sources": [src],
                "unverified": f"the PyPI wheels for {', '.join(platforms)} name no CUDA library in their METADATA "
                              "and are taken as CPU builds; the +cpu builds on download.pytorch.org were not read"}
        else:
            variants[variant] = _torch_cuda_variant(ctx, release, variant, cuda_by_variant[variant], platforms,
                                                    pins_by_platform, src)
    record: dict[str, Any] = {
        "version": version, "released": release.uploaded, "python": pythons, "pypi": pypi, "variants": variants}
    for name in COMPANIONS:
        companion = _companion(ctx, name, release)
        if companion is not None:
            record[name] = companion
    record["sources"] = [src]
    record["unverified"] = (f"proposed by envpin refresh from PyPI alone (read {ctx.read_date}): only the builds "
                            "PyPI serves are listed; the other variants on download.pytorch.org (other CUDA "
                            "versions, +cpu on Linux, ROCm) need a curated update")
    record["added"] = ctx.new_version
    ctx.curated.append(CuratedNeed(f"torch {version}", "the variants on download.pytorch.org (only PyPI's builds "
                                   "are proposed)", WHERE_TORCH_VARIANTS))
    return ProposedRecord("torch.yaml", "torch", version, _drop_none(record), tuple(read))


def _torch_cuda_variant(ctx: _Context, release: Release, name: str, cuda: str, platforms: list[str],
                        pins_by_platform: dict[str, dict[str, str]], src: str) -> dict[str, Any]:
    subject = f"torch {release.version}+{name}"
    if cuda not in ctx.database.toolkits:
        ctx.curated.append(CuratedNeed(f"CUDA {cuda}", f"a cuda.yaml toolkit record (driver, targets) for "
                                       f"{subject}", WHERE_CUDA_TABLES))
        raise _Incomplete(f"{subject}: CUDA {cuda} is not in cuda.yaml, so the record would not validate")
    archs, carried_from = {}, set()
    for platform in platforms:
        if not platform.startswith(("linux", "windows")):
            continue
        found = carried_arch_set(ctx.database, release.version, name, platform)
        if found is None:
            ctx.curated.append(CuratedNeed(subject, f"the arch list for {platform}", WHERE_TORCH_ARCHS))
            raise _Incomplete(f"{subject}: no earlier {name} build on {platform} to carry an arch list from")
        archs[platform], earlier = found
        carried_from.add(f"torch {earlier}+{name}")
    first = pins_by_platform[platforms[0]]
    pins = {key: first[key] for key in sorted(first)}
    differing = [p for p in platforms[1:] if pins_by_platform[p] != first]
    unverified = (f"arch lists carried over from {', '.join(sorted(carried_from))} "
                  f"({', '.join(f'{p}: {s}' for p, s in archs.items())}): PyPI metadata does not say which GPUs a "
                  "wheel is built for")
    if differing:
        unverified += (f"; the pins are those of the {platforms[0]} wheel, the {', '.join(differing)} wheel pins "
                       f"{_pins_text(pins_by_platform[differing[0]])}")
    ctx.curated.append(CuratedNeed(subject, "the arch lists (carried over from the release before)",
                                   WHERE_TORCH_ARCHS))
    variant: dict[str, Any] = {"cuda": cuda, "cudnn": _exact(pins.get(f"nvidia-cudnn-cu{cuda.split('.')[0]}"))}
    variant.update(pins=pins, platforms=platforms, archs=archs, sources=[src], unverified=unverified)
    return _drop_none(variant)


def carried_arch_set(database: Database, version: Version, variant: str, platform: str) -> tuple[str, Version] | None:
    """The arch set of the newest earlier release's build of the same variant on the platform."""
    for record in database.torch_releases:  # newest first
        build = record.variants.get(variant)
        if record.version < version and build is not None and platform in build.archs:
            return build.archs[platform].name, record.version
    return None


def _companion(ctx: _Context, name: str, torch_release: Release) -> dict[str, Any] | None:
    """The torchvision/torchaudio to pair, from their `torch` requirements (see SCHEMA.md torch.yaml)."""
    index = ctx.read_index(name)
    torch_version = torch_release.version
    subject = f"torch {torch_version}"
    src = ctx.source_id(name, "torch.yaml")
    requirements_of = {}
    for candidate in companion_candidates(ctx.database, index, torch_release):
        wheel = linux_wheel(candidate)
        metadata = ctx.metadata(wheel.filename) if wheel else None
        if metadata is None:
            raise _Incomplete(f"the METADATA of {name} {candidate.version} could not be read")
        requirement = base_requirement(metadata, "torch")
        requirements_of[candidate.version] = (candidate, requirement)
    exact = [c for c, r in requirements_of.values() if r is not None and _pins_exactly(r.specifier, torch_version)]
    admits = [c for c, r in requirements_of.values() if r is not None and r.specifier.contains(torch_version)]
    same_day = [c for c in admits if _within_a_day(c.uploaded, torch_release.uploaded)]
    previous = previous_companion(ctx.database, name, torch_version)
    if exact:
        chosen = max(exact, key=lambda r: r.version)
        how = f"{name} {chosen.version} requires {requirements_of[chosen.version][1]}"
    elif [c for c in same_day if c.version != previous]:
        chosen = max((c for c in same_day if c.version != previous), key=lambda r: r.version)
        how = (f"{name} {chosen.version} requires {requirements_of[chosen.version][1]} and was uploaded the same "
               f"day as torch {torch_version} (PyPI only)")
    elif previous is not None and previous in requirements_of and requirements_of[previous][0] in admits:
        chosen = requirements_of[previous][0]
        how = (f"{name} {chosen.version} requires {requirements_of[previous][1]}, which admits {torch_version}, and "
               f"no newer {name} pairs with it; carried over from the release before")
    else:
        ctx.curated.append(CuratedNeed(subject, f"the {name} release to pair with it (none on PyPI names it)",
                                       f"https://pypi.org/project/{name}/ and the {name} README/installation table"))
        return None
    per_variant = _per_variant(ctx.database, name, chosen, previous)
    companion: dict[str, Any] = {"version": str(chosen.version)}
    if not per_variant:
        companion["per_variant"] = False
    companion["sources"] = [src]
    companion["unverified"] = (f"pairing from PyPI: {how}; whether download.pytorch.org has +cuXXX builds of it "
                               "was not read")
    return companion


def _per_variant(database: Database, name: str, chosen: Release, previous: Version | None) -> bool:
    """Carried over for the same release; otherwise a py3-none wheel serves every variant, a CPython one not."""
    if previous is not None and chosen.version == previous:
        for record in database.torch_releases:
            if name in record.companions and Version(record.companions[name].version) == previous:
                return record.companions[name].per_variant
    return not any(w.tags.pure or w.tags.per_platform_pure for w in chosen.wheels)


def is_cuda_library(name: str) -> bool:
    return name.startswith(("nvidia-", "cuda-"))


def cuda_of(pins: Mapping[str, str]) -> str | None:
    """The CUDA x.y a wheel is built for, from its exact cuda-toolkit or CUDA runtime pin."""
    for name, specifier in sorted(pins.items()):
        if name == "cuda-toolkit" or name.startswith("nvidia-cuda-runtime"):
            exact = _exact(specifier)
            if exact:
                return ".".join(exact.split(".")[:2])
    return None


# ---------------------------------------------------------------- TensorFlow


def _tensorflow_record(ctx: _Context, release: Release) -> ProposedRecord:
    version = str(release.version)
    metadata, read = _platform_metadata(ctx, release)
    src = ctx.source_id("tensorflow", "tensorflow.yaml")
    python = {}
    for platform, pythons in _pythons(release).items():
        installs = stub_target(metadata.get(platform), platform, version)
        small = all((w.size or STUB_BYTES) < STUB_BYTES for w in release.wheels if platform in w.tags.platforms)
        if installs or small:
            ctx.curated.append(CuratedNeed(f"tensorflow {version}", f"the Pythons on {platform}: the tensorflow "
                                           f"wheel there is a stub that installs {installs or 'another package'}",
                                           f"https://pypi.org/project/{installs or 'tensorflow'}/#files"))
            continue
        python[platform] = pythons
    linux = metadata.get("linux-x86_64")
    if linux is None or "linux-x86_64" not in python:
        raise _Incomplete("no Linux x86_64 tensorflow wheel to read the GPU build from")
    pins = extra_pins(linux, "and-cuda", "linux-x86_64", python["linux-x86_64"])
    if not pins:
        raise _Incomplete("its Linux wheel has no [and-cuda] extra, so the GPU build's CUDA cannot be read from PyPI")
    cuda = _lower_bound(pins, lambda n: n.startswith("nvidia-cuda-runtime"))
    cudnn = _lower_bound(pins, lambda n: n.startswith("nvidia-cudnn"))
    if cuda is None:
        raise _Incomplete(f"its [and-cuda] extra pins no CUDA runtime: {_pins_text(pins)}")
    gpu = _tensorflow_gpu(ctx, version, representative_wheels(release)["linux-x86_64"].filename, cuda, cudnn, read)
    gpu["sources"] = [src]
    ctx.curated.append(CuratedNeed(f"tensorflow {version}", "the tested CUDA/cuDNN of the GPU build", WHERE_TF_TESTED))
    and_cuda: dict[str, Any] = {"pins": pins, "sources": [src]}
    others = sorted(name for name in pins if not is_cuda_library(name))
    if others:
        ctx.curated.append(CuratedNeed(f"tensorflow[and-cuda] {version}", f"whether {', '.join(others)} install "
                                       "(the tensorrt trap of 2.14/2.15)", "https://pypi.org/project/"
                                       f"{others[0]}/#files; SOURCES-TF-JAX.md"))
    record: dict[str, Any] = {"version": version, "released": release.uploaded, "python": python,
                              "gpu": {"linux-x86_64": _drop_none(gpu)}, "and_cuda": and_cuda}
    cpu = _tensorflow_cpu_platforms(ctx, release.version)
    if cpu:
        record["cpu_package"] = {platform: "tensorflow-cpu" for platform in cpu}
    rocm = _tensorflow_rocm(ctx, release.version)
    if rocm is not None:
        record["rocm"] = rocm
    numpy = _tensorflow_numpy(ctx, version, metadata, python, representative_wheels(release), src)
    if numpy is not None:
        record["numpy"] = numpy
    record["sources"] = [src] + ([ctx.source_id("tensorflow-cpu", "tensorflow.yaml")] if cpu else [])
    record["unverified"] = f"proposed by envpin refresh from PyPI alone (read {ctx.read_date})"
    record["added"] = ctx.new_version
    return ProposedRecord("tensorflow.yaml", "tensorflow", version, _drop_none(record), tuple(read))


def _tensorflow_numpy(ctx: _Context, version: str, metadata: Mapping[str, Metadata], python: Mapping[str, list[str]],
                      wheels: Mapping[str, Any], src: str) -> dict[str, Any] | None:
    """The release's own Requires-Dist on numpy (tensorflow.yaml `numpy`), from the METADATA of its real wheels (not
    the stubs: their package's was not read, which the report says); None where the platforms disagree."""
    from envpin.refresh.numpy_requires import numpy_field  # noqa: PLC0415 - tensorflow only

    read = {platform: ([line for line in metadata[platform].requires_dist if _project_name(line) == "numpy"],
                       wheels[platform].filename) for platform in python if platform in metadata}
    pythons = tuple(sorted({p for ps in python.values() for p in ps}, key=lambda v: tuple(map(int, v.split(".")))))
    try:
        return numpy_field("tensorflow", version, read, pythons, [src]) if read else None
    except ValueError as error:
        ctx.curated.append(CuratedNeed(f"tensorflow {version}", f"its numpy requirement ({error})",
                                       "scripts/record-numpy-requirements"))
        return None


def _project_name(requirement: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - only a tensorflow record

    try:
        return Requirement(requirement).name.lower()
    except InvalidRequirement:
        return ""


def _tensorflow_gpu(ctx: _Context, version: str, wheel: str, pinned_cuda: str, cudnn: str | None,
                    read: list[str]) -> dict[str, Any]:
    """The Linux GPU record: the CUDA and arch list its wheel's build_info.py names (where it was read), the cuDNN
    floor of the [and-cuda] pins. Where build_info.py could not be read, the CUDA is the pins' and no arch list is
    written (a solve then says the GPU was not checked); `unverified` says which."""
    from envpin.refresh.build_info import MEMBER, BuildInfoError, parse_build_info  # noqa: PLC0415 - tensorflow only

    tested = f"the tested build configuration in {WHERE_TF_TESTED} was not read"
    text, how = ctx.member(wheel, MEMBER)
    info, reason = None, how
    if text is not None:
        try:
            info = parse_build_info(text)
        except BuildInfoError as error:
            reason = f"{MEMBER} of {wheel} does not parse: {error}"
    if info is None or not info.is_cuda_build or not info.archs:
        reason = reason if info is None else f"{MEMBER} of {wheel} names no CUDA build or no GPU code"
        ctx.curated.append(CuratedNeed(f"tensorflow {version}", "the arch list of the GPU build", WHERE_TF_ARCHS))
        return {"cuda": pinned_cuda, "cudnn": cudnn,
                "unverified": f"CUDA/cuDNN taken from the lower bounds of the [and-cuda] pins (nvidia-cuda-runtime "
                              f"{pinned_cuda}, nvidia-cudnn {cudnn}); the arch list was not read ({reason}); {tested}"}
    read.append(how)
    ctx.members_read.setdefault("tensorflow", set()).add(MEMBER)
    cuda = info.cuda or pinned_cuda
    differs = "" if cuda == pinned_cuda else f", while the [and-cuda] pins' nvidia-cuda-runtime floor is {pinned_cuda}"
    return {"cuda": cuda, "cudnn": cudnn, "archs": list(info.archs),
            "unverified": f"CUDA {cuda} and the arch list as {MEMBER} of {wheel} names them (cuda_version "
                          f"{info.cuda_version}{differs}); cuDNN from the lower bound of the [and-cuda] pins "
                          f"(nvidia-cudnn {cudnn}); {tested}"}


def _tensorflow_rocm(ctx: _Context, version: Version) -> dict[str, Any] | None:
    """tensorflow-rocm for the release: its newest build V.N (2.14.0.600 for 2.14.0), with the Pythons of its wheel
    tags. METADATA names no ROCm, and the gfx targets are in its libraries: neither is read, `unverified` says so
    (a solve names such a build and does not choose it)."""
    index = ctx.index("tensorflow-rocm")
    if index is None:
        return None
    builds = [r for r in index.finals() if r.wheels and r.version.release[:3] == version.release[:3]
              and len(r.version.release) <= 4 and not r.version.is_postrelease]
    if not builds:
        return None
    build = builds[-1]
    pythons = _pythons(build)
    platforms = [p for p in PLATFORMS if p in pythons]
    if not platforms:
        return None
    ctx.curated.append(CuratedNeed(f"tensorflow-rocm {build.version}", "the ROCm it was built for and the gfx targets "
                                   "of its HIP kernels", WHERE_ROCM_GFX))
    return {"pin": str(build.version), "python": pythons[platforms[0]], "platforms": platforms,
            "sources": [ctx.source_id("tensorflow-rocm", "tensorflow.yaml")],
            "unverified": f"from PyPI's tensorflow-rocm {build.version} files (read {ctx.read_date}): the ROCm it was "
                          "built for and the gfx targets of its HIP kernels were not read (its METADATA names neither: "
                          "they are in its shared libraries), so a solve does not choose it"}


def stub_target(metadata: Metadata | None, platform: str, version: str) -> str | None:
    """The package a stub `tensorflow` wheel installs on the platform (tensorflow-intel==V on Windows)."""
    if metadata is None:
        return None
    for requirement in requirements(metadata):
        name = requirement.name.lower().replace("_", "-")
        if name.startswith("tensorflow-") and _pins_exactly(requirement.specifier, Version(version)) \
                and applies(requirement.marker, platform, ("3.12",)):
            return name
    return None


def _tensorflow_cpu_platforms(ctx: _Context, version: Version) -> list[str]:
    index = ctx.index("tensorflow-cpu")
    release = index.releases.get(version) if index else None
    if release is None:
        return []
    big = {p for w in release.wheels if (w.size or 0) >= STUB_BYTES for p in w.tags.platforms}
    return [p for p in PLATFORMS if p in big]


# ---------------------------------------------------------------- JAX


def _jax_record(ctx: _Context, release: Release) -> ProposedRecord:
    version = str(release.version)
    wheel = next(iter(representative_wheels(release).values()), None)
    metadata = ctx.metadata(wheel.filename) if wheel else None
    if wheel is None or metadata is None:
        raise _Incomplete(f"the METADATA of jax {version} could not be read")
    read = [_read_line(ctx, wheel.filename)]
    jaxlib = _jaxlib_release(ctx, metadata, release.version)
    pythons = _pythons(jaxlib)
    sources = [ctx.source_id("jax", "jax.yaml"), ctx.source_id("jaxlib", "jax.yaml")]
    extras, missing = {}, {}
    for extra, major in cuda_extras(metadata):
        built = _jax_extra(ctx, release.version, metadata, extra, major, read)
        if isinstance(built, str):
            missing[extra] = built
        elif built is not None:
            extras[extra] = built
            sources += [s for s in built["sources"] if s not in sources]
    rocm = {}
    for extra, project in rocm_extras(metadata):
        built = _jax_rocm_extra(ctx, release.version, metadata, extra, project, pythons.get("linux-x86_64", []), read)
        if isinstance(built, str):
            missing[extra] = built
        elif built is not None:
            rocm[extra] = built
            sources += [s for s in built["sources"] if s not in sources]
    record: dict[str, Any] = {
        "version": version, "released": release.uploaded,
        "python": list(sort_pythons(v for vs in pythons.values() for v in vs)),
        "platforms": [p for p in PLATFORMS if p in pythons],
    }
    if extras:
        record["extras"] = extras
    if missing:
        record["missing_extras"] = missing
    if rocm:
        record["rocm"] = rocm
    record["sources"] = sources
    record["unverified"] = (f"proposed by envpin refresh from PyPI alone (read {ctx.read_date}); python/platforms "
                            f"are the wheel tags of jaxlib {jaxlib.version}")
    record["added"] = ctx.new_version
    # jaxlib's METADATA is not read here: without both, a numpy requirement would be half of it
    ctx.curated.append(CuratedNeed(f"jax {version}", f"its numpy requirement (jax's and jaxlib {jaxlib.version}'s "
                                   "Requires-Dist): run scripts/record-numpy-requirements, then --write",
                                   "https://pypi.org/project/jaxlib/#files"))
    return ProposedRecord("jax.yaml", "jax", version, _drop_none(record), tuple(read))


def _jaxlib_release(ctx: _Context, jax_metadata: Metadata, version: Version) -> Release:
    """jaxlib of the same version, else the newest one jax's own requirement allows."""
    index = ctx.read_index("jaxlib")
    if version in index.releases and index.releases[version].wheels:
        return index.releases[version]
    requirement = base_requirement(jax_metadata, "jaxlib")
    allowed = [r for r in index.finals() if r.wheels and requirement is not None and requirement.specifier.contains(r.version)]
    if not allowed:
        raise _Incomplete(f"no jaxlib on PyPI satisfies jax {version}'s requirement {requirement}")
    return allowed[-1]


def _jax_extra(ctx: _Context, version: Version, metadata: Metadata, extra: str, major: int, read: list[str]):
    """The extra's record, a text for missing_extras when its plugin does not exist, or None (left out)."""
    subject = f"jax[{extra}] {version}"
    project = f"jax-{extra}-plugin"
    requirement = extra_requirement(metadata, extra, project)
    if requirement is None:
        return None  # an alias or a local-CUDA extra: not one the database lists
    if project not in FAMILIES["jax"]:
        ctx.curated.append(CuratedNeed(subject, f"{project} is not among the packages refresh reads",
                                       f"https://pypi.org/project/{project}/ and {WHERE_JAX_MINIMUMS}"))
        return None
    found = plugin_release(metadata, extra, ctx.observations.indexes)
    if found is None:
        return f"{project} {requirement.specifier} is not on PyPI (read {ctx.read_date})"
    plugin = found[1]
    wheel = linux_wheel(plugin)
    plugin_metadata = ctx.metadata(wheel.filename) if wheel else None
    if wheel is None or plugin_metadata is None:
        raise _Incomplete(f"the METADATA of {project} {plugin.version} could not be read")
    read.append(_read_line(ctx, wheel.filename))
    platforms = [p for p in PLATFORMS if p.startswith("linux") and any(p in w.tags.platforms for w in plugin.wheels)]
    pjrt = _pjrt_release(ctx, plugin_metadata, extra)
    if isinstance(pjrt, str):
        return f"{project} {plugin.version} needs {pjrt}, which is not on PyPI (read {ctx.read_date})"
    if pjrt is not None:
        platforms = [p for p in platforms if any(p in w.tags.platforms for w in pjrt.wheels)]
    before = _earlier_jax_extra(ctx.database, version, extra)
    if before is None:
        ctx.curated.append(CuratedNeed(subject, "JAX's stated minimum driver and compute capability for a new CUDA "
                                       "extra", WHERE_JAX_MINIMUMS))
        return None
    earlier, carried = before
    # From jax 0.4.30 the NVIDIA wheels are the plugin's `with-cuda` extra; before, jax's own extra listed them.
    pins = extra_pins(plugin_metadata, "with-cuda") or {
        name: spec for name, spec in extra_pins(metadata, extra).items() if name.startswith("nvidia-")}
    ctx.curated.append(CuratedNeed(subject, "min_driver, min_cc, min_cudnn, built_with (carried over)",
                                   WHERE_JAX_MINIMUMS))
    built: dict[str, Any] = {
        "cuda": str(major), "built_with": carried.built_with, "plugin": str(plugin.version),
        "min_driver": dict(carried.min_driver), "min_cc": carried.min_cc, "min_cudnn": carried.min_cudnn,
        "pins": pins, "platforms": platforms,
        "sources": [ctx.source_id("jax", "jax.yaml"), ctx.source_id(project, "jax.yaml")]
                   + ([ctx.source_id(f"jax-{extra}-pjrt", "jax.yaml")] if pjrt is not None else []),
        "unverified": f"min_driver, min_cc, min_cudnn and built_with carried over from jax {earlier}[{extra}] "
                      f"({WHERE_JAX_MINIMUMS} not re-read)",
    }
    return _drop_none(built)


def _jax_rocm_extra(ctx: _Context, version: Version, metadata: Metadata, extra: str, project: str,
                    jaxlib_pythons: Sequence[str], read: list[str]):
    """A ROCm extra's record (jax.yaml `rocm:`), a text for missing_extras when its plugin or the plugin's pjrt is not
    on PyPI, or None (a plugin refresh does not read). The ROCm is the plugin's Summary (`ROCm:7.14.0`); the gfx
    targets are in its libraries and are not read, so `unverified` says so and a solve does not choose it."""
    subject = f"jax[{extra}] {version}"
    if project not in FAMILIES["jax"]:
        ctx.curated.append(CuratedNeed(subject, f"{project} is not among the packages refresh reads",
                                       f"https://pypi.org/project/{project}/ and {WHERE_ROCM_GFX}"))
        return None
    requirement = extra_requirement(metadata, extra, project)
    found = plugin_release(metadata, extra, ctx.observations.indexes, project)
    if found is None:
        return f"{project}{requirement.specifier if requirement else ''} is not on PyPI (read {ctx.read_date})"
    plugin = found[1]
    sources = [ctx.source_id("jax", "jax.yaml"), ctx.source_id(project, "jax.yaml")]
    wheel = linux_wheel(plugin)
    plugin_metadata = ctx.metadata(wheel.filename) if wheel else None
    not_read = ["the gfx targets of its HIP kernels were not read (they are in the offload bundles of its shared "
                "libraries, not in METADATA), so a solve does not choose it"]
    platforms = [p for p in PLATFORMS if p.startswith("linux") and any(p in w.tags.platforms for w in plugin.wheels)]
    rocm = None
    if wheel is None or plugin_metadata is None:
        reason = ctx.observations.failed_metadata.get(wheel.filename, "not read") if wheel else "no wheel"
        not_read.insert(0, f"the METADATA of {wheel.filename if wheel else project + ' ' + str(plugin.version)} "
                           f"could not be read ({reason}): its ROCm and its pjrt requirement are not known")
    else:
        read.append(_read_line(ctx, wheel.filename))
        pjrt_project = project.replace("-plugin", "-pjrt")
        pjrt = _pjrt_release(ctx, plugin_metadata, extra, pjrt_project)
        if isinstance(pjrt, str):
            return f"{project} {plugin.version} needs {pjrt}, which is not on PyPI (read {ctx.read_date})"
        if pjrt is not None:
            platforms = [p for p in platforms if any(p in w.tags.platforms for w in pjrt.wheels)]
            sources.append(ctx.source_id(pjrt_project, "jax.yaml"))
        rocm = rocm_of_summary(plugin_metadata.summary)
        if rocm is None:
            not_read.insert(0, f"its Summary names no ROCm ({plugin_metadata.summary!r})")
    plugin_pythons = {v for w in plugin.wheels if not w.yanked and "linux-x86_64" in w.tags.platforms
                      for v in w.tags.pythons}
    python = [v for v in jaxlib_pythons if v in plugin_pythons]
    if not python or not platforms:
        return f"{project} {plugin.version} has no Linux wheel for jaxlib {version}'s Pythons (read {ctx.read_date})"
    ctx.curated.append(CuratedNeed(subject, "the gfx targets of its plugin's HIP kernels", WHERE_ROCM_GFX))
    built: dict[str, Any] = {"plugin": f"{project} {plugin.version}", "rocm": rocm, "python": python,
                             "platforms": platforms, "sources": sources,
                             "unverified": f"from PyPI (read {ctx.read_date}): " + "; ".join(not_read)}
    return _drop_none(built)


def _pjrt_release(ctx: _Context, plugin_metadata: Metadata, extra: str, project: str | None = None):
    """The jax-cudaNN-pjrt (or jax-rocmNN-pjrt) release the plugin needs, the requirement text when PyPI has none,
    or None when the plugin needs no pjrt package (or refresh was not asked to read it)."""
    project = project or f"jax-{extra}-pjrt"
    requirement = base_requirement(plugin_metadata, project)
    index = ctx.index(project)
    if requirement is None or index is None:
        return None
    allowed = [r for r in index.finals() if r.wheels and requirement.specifier.contains(r.version, prereleases=True)]
    return allowed[-1] if allowed else f"{project}{requirement.specifier}"


def _earlier_jax_extra(database: Database, version: Version, extra: str):
    for record in database.jax_releases:  # newest first
        if record.version < version and extra in record.extras:
            return record.version, record.extras[extra]
    return None


# ---------------------------------------------------------------- existing records


def _recheck(ctx: _Context, family: str, release: Release) -> None:
    """Read a known release again and list where PyPI now disagrees with its record."""
    record = next(r for r in family_releases(ctx.database, family) if r.version == release.version)
    saved = (list(ctx.curated), set(ctx.cited.get(FILES[family], ())), {k: set(v) for k, v in ctx.members_read.items()})
    before = len(ctx.disagreements)
    try:
        read: Sequence[str]
        if family == "torch":
            read = _compare_torch(ctx, record, release)
        elif family == "tensorflow":
            proposed = _tensorflow_record(ctx, release)
            _compare_tensorflow(ctx, record, proposed.record)
            read = proposed.read
        else:  # jax (FILES[family] above refused any other family)
            proposed = _jax_record(ctx, release)
            _compare_jax(ctx, record, proposed.record)
            read = proposed.read
    except _Incomplete as reason:
        ctx.checked.append(f"{family} {release.version}: not re-read ({reason})")
        return
    finally:
        ctx.curated, ctx.cited[FILES[family]], ctx.members_read = saved  # a recheck proposes nothing: no curation, no sources
    found = len(ctx.disagreements) - before
    metadata_files = sum(": METADATA (" in line for line in read)
    others = f", {len(read) - metadata_files} other wheel file(s)" if len(read) > metadata_files else ""
    ctx.checked.append(f"{family} {release.version} re-read from PyPI ({metadata_files} METADATA file(s){others}): "
                       + (f"{found} disagreement(s)" if found else "agrees with the database"))


def _differ(ctx: _Context, subject: str, field: str, database: Any, pypi: Any) -> None:
    if database == pypi:
        return
    if isinstance(database, dict) and isinstance(pypi, dict):  # show only the entries that differ
        keys = [k for k in dict.fromkeys([*database, *pypi]) if database.get(k) != pypi.get(k)]
        database = {k: database.get(k, "(absent)") for k in keys}
        pypi = {k: pypi.get(k, "(absent)") for k in keys}
    ctx.disagreements.append(Disagreement(subject, field, _show(database), _show(pypi)))


def _compare_torch(ctx: _Context, record: TorchRelease, release: Release) -> list[str]:
    subject = f"torch {record.version}"
    pythons, builds, read = pypi_builds(ctx, release)
    _differ(ctx, subject, "released", record.released, release.uploaded)
    for platform in PLATFORMS:
        _differ(ctx, subject, f"python.{platform}", list(record.python.get(platform, ())), pythons.get(platform, []))
    for platform, (pins, cuda) in builds.items():
        name = record.pypi.get(platform)
        known = record.variants.get(name) if name else None
        if cuda is None:
            # No CUDA library named: a CPU build, or a self-contained CUDA build (torch 1.12) with no pins.
            if known is None or known.pins:
                _differ(ctx, subject, f"pypi.{platform}", name, "a wheel that names no CUDA library")
            continue
        _differ(ctx, subject, f"pypi.{platform}", name, variant_name(cuda))
        if known is None or known.name != variant_name(cuda):
            continue
        wanted = dict(sorted(pins.items()))
        if known.pins or platform == "linux-x86_64":  # "only the variant PyPI serves" (x86_64) must have them
            _differ(ctx, subject, f"variants.{known.name}.pins ({platform})", dict(sorted(known.pins.items())), wanted)
        cudnn = _exact(pins.get(f"nvidia-cudnn-cu{cuda.split('.')[0]}"))
        if cudnn and known.cudnn:
            _differ(ctx, subject, f"variants.{known.name}.cudnn", known.cudnn, cudnn)
    return read


def _compare_tensorflow(ctx: _Context, record: TensorflowRelease, proposed: Mapping[str, Any]) -> None:
    subject = f"tensorflow {record.version}"
    _differ(ctx, subject, "released", record.released, proposed["released"])
    for platform, pythons in proposed["python"].items():
        _differ(ctx, subject, f"python.{platform}", list(record.python.get(platform, ())), pythons)
    known = dict(sorted(record.and_cuda.pins.items())) if record.and_cuda else {}
    _differ(ctx, subject, "and_cuda.pins", known, dict(sorted(proposed["and_cuda"]["pins"].items())))
    read_archs = proposed["gpu"]["linux-x86_64"].get("archs")
    build = record.gpu.get("linux-x86_64")
    if read_archs is not None:  # only what build_info.py was read to say
        archs = build.archs if build is not None else None
        written = [f"sm_{c.major}{c.minor}" for c in archs.sass] + [f"compute_{c.major}{c.minor}" for c in archs.ptx] \
            if archs is not None else None
        _differ(ctx, subject, "gpu.linux-x86_64.archs", sorted(written) if written else None, sorted(read_archs))


def _compare_jax(ctx: _Context, record: JaxRelease, proposed: Mapping[str, Any]) -> None:
    subject = f"jax {record.version}"
    _differ(ctx, subject, "released", record.released, proposed["released"])
    _differ(ctx, subject, "python", list(record.python), proposed["python"])
    _differ(ctx, subject, "platforms", sorted(record.platforms), sorted(proposed["platforms"]))
    for name, extra in proposed.get("extras", {}).items():
        known = record.extras.get(name)
        if known is None:
            _differ(ctx, subject, f"extras.{name}", None, f"plugin {extra['plugin']}")
            continue
        _differ(ctx, subject, f"extras.{name}.plugin", known.plugin, extra["plugin"])
        _differ(ctx, subject, f"extras.{name}.pins", dict(sorted(known.pins.items())), dict(sorted(extra["pins"].items())))
    known_rocm = {build.extra: build for build in record.rocm}
    for name, built in proposed.get("rocm", {}).items():
        build = known_rocm.get(name)
        _differ(ctx, subject, f"rocm.{name}.plugin", build.plugin if build else None, built["plugin"])
        if build is not None and "rocm" in built:
            _differ(ctx, subject, f"rocm.{name}.rocm", build.rocm, built["rocm"])
    # Only the cudaNN extras: the database also lists aliases and local-CUDA extras refresh does not build.
    cuda_named = lambda names: sorted(n for n in names if n.startswith("cuda") and n[4:].isdigit())  # noqa: E731
    _differ(ctx, subject, "missing_extras (cudaNN)", cuda_named(record.missing_extras),
            cuda_named(proposed.get("missing_extras", {})))


def _check_all_known(ctx: _Context, family: str, index: PackageIndex, rechecked: set[Version]) -> None:
    """Cheap checks over every known release (no METADATA): yanked on PyPI; torch's Pythons per platform."""
    compared = [r for r in family_releases(ctx.database, family) if r.version in index.releases]
    ctx.checked.append(f"{family}: {len(compared)} known release(s) checked for yanked files"
                       + (", and their Pythons per platform against the wheel tags" if family == "torch" else ""))
    for record in family_releases(ctx.database, family):
        release = index.releases.get(record.version)
        if release is None:
            continue
        subject = f"{family} {record.version}"
        if release.yanked:
            _differ(ctx, subject, "yanked on PyPI", "listed", "every file yanked")
        if family == "torch" and record.version not in rechecked:
            pythons = _pythons(release)
            for platform in PLATFORMS:
                _differ(ctx, subject, f"python.{platform}", list(record.python.get(platform, ())),
                        pythons.get(platform, []))


# ---------------------------------------------------------------- shared


def _pythons(release: Release) -> dict[str, list[str]]:
    """CPython minors (GIL builds) per platform, from the release's wheel tags."""
    table: dict[str, set[str]] = {}
    for wheel in release.wheels:
        if wheel.yanked:
            continue
        for platform in wheel.tags.platforms:
            table.setdefault(platform, set()).update(wheel.tags.pythons)
    return {p: list(sort_pythons(table[p])) for p in PLATFORMS if table.get(p)}


def _platform_metadata(ctx: _Context, release: Release) -> tuple[dict[str, Metadata], list[str]]:
    metadata, read = {}, []
    for platform, wheel in representative_wheels(release).items():
        found = ctx.metadata(wheel.filename)
        if found is None:
            reason = ctx.observations.failed_metadata.get(wheel.filename, "not read")
            raise _Incomplete(f"the METADATA of {wheel.filename} could not be read ({reason})")
        metadata[platform] = found
        line = _read_line(ctx, wheel.filename)
        if line not in read:
            read.append(line)
    return metadata, read


def _read_line(ctx: _Context, filename: str) -> str:
    how = ctx.observations.metadata[filename].how
    return f"{filename}: METADATA ({'PEP 658 .metadata' if how == 'PEP 658' else 'HTTP range requests'})"


def _exact(specifier: str | None) -> str | None:
    if not specifier:
        return None
    try:
        clauses = list(SpecifierSet(specifier))
    except InvalidSpecifier:
        return None
    if len(clauses) == 1 and clauses[0].operator in ("==", "===") and "*" not in clauses[0].version:
        return clauses[0].version
    return None


def _pins_exactly(specifier: SpecifierSet, version: Version) -> bool:
    return any(c.operator in ("==", "===") and "*" not in c.version and Version(c.version) == version
               for c in specifier)


def _lower_bound(pins: Mapping[str, str], wanted: Callable[[str], bool]) -> str | None:
    """x.y of the lowest version a pin allows (`<13.0,>=12.5.82` -> 12.5)."""
    for name, specifier in sorted(pins.items()):
        if not wanted(name):
            continue
        for clause in SpecifierSet(specifier):
            if clause.operator in ("==", ">=", "~=") and "*" not in clause.version:
                return ".".join(clause.version.split(".")[:2])
    return None


def _within_a_day(first: str | None, second: str | None) -> bool:
    if not first or not second:
        return False
    return abs((date.fromisoformat(first) - date.fromisoformat(second)).days) <= 1


def _variant_order(name: str) -> tuple[int, str]:
    return (0 if name == "cpu" else 1, name)


def _pins_text(pins: Mapping[str, str]) -> str:
    return ", ".join(f"{name}{spec}" for name, spec in sorted(pins.items()))


def _show(value: Any) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}" if value else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value is not None}


def _sources(ctx: _Context, records: list[ProposedRecord]) -> dict[str, dict[str, dict[str, str]]]:
    """The source entries the proposed records cite, per file (ids already defined are not redefined)."""
    used: dict[str, set[str]] = {file: set() for file in FILES.values()}
    for record in records:
        _collect_source_ids(record.record, used[record.file])
    sources: dict[str, dict[str, dict[str, str]]] = {}
    for file, ids in used.items():
        for package in sorted(ctx.cited.get(file, ())):
            sid = source_id(package, ctx.read_date)
            if sid not in ids or sid in ctx.database.sources:
                continue
            index = ctx.index(package)
            members = "".join(f"; {m} of the Linux x86_64 wheel read with HTTP range requests"
                              for m in sorted(ctx.members_read.get(package, ())))
            sources.setdefault(file, {})[sid] = {
                "title": f"PyPI {package}: JSON API and PEP 691 simple API (releases, upload dates, wheel tags); "
                         f"wheel METADATA read through PEP 658 or HTTP range requests{members} (envpin refresh)",
                "url": index.read_from[0] if index and index.read_from else f"https://pypi.org/project/{package}/",
                "grade": "pypi",
                "read": ctx.read_date,
            }
    return sources


def _collect_source_ids(value: Any, into: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "sources" and isinstance(item, list):
                into.update(item)
            else:
                _collect_source_ids(item, into)
    elif isinstance(value, list):
        for item in value:
            _collect_source_ids(item, into)


def _summary(ctx: _Context, package: str) -> str:
    index = ctx.index(package)
    if index is None:
        return f"{package}: could not be read"
    finals = index.finals()
    newest = f"newest {finals[-1].version} ({finals[-1].uploaded})" if finals else "no final release"
    pre = [r for r in index.releases.values() if not r.final and r.files and finals and r.version > finals[-1].version]
    line = f"{package}: {len(index.releases)} releases on PyPI, {newest}"
    if pre:
        line += f"; pre-releases not proposed: {', '.join(str(r.version) for r in pre)}"
    if package in FILES:
        known = family_releases(ctx.database, package)
        line += f"; database newest {known[0].version}" if known else "; database lists none"
        new = new_releases(ctx.database, package, index)
        line += f"; new: {', '.join(str(r.version) for r in new) or 'none'}"
    for note in index.notes:
        line += f"; {note}"
    return line
