"""Questions about one solve that the solver, its explanation and other readers share: which build kinds a
framework may use here, the provider for a request, the resolution itself, and how two builds compare.

`solve` answers with a Plan or an explained failure; `explain` asks these same questions with one constraint
lifted. Both sit on top of this module, so neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Mapping

from resolvelib import BaseReporter, ResolutionImpossible, ResolutionTooDeep, Resolver

from envpin.base.record import Record, record
from envpin.compat.model import Database
from envpin.resolver.accelerators import carries, gpu_kind
from envpin.resolver.builds import Build, builds_of
from envpin.resolver.fitness import CHECKS, Verdict
from envpin.resolver.provider import BuildProvider, Candidate, Requirement, library_name, representatives
from envpin.resolver.request import PIP, Request
from envpin.resolver.target import Target
from envpin.vocabulary.frameworks import COMPANIONS, PACKAGE_ORDER, PACKAGES
from envpin.vocabulary.platforms import MACOS_ARM64
from envpin.vocabulary.variants import CPU, CUDA, ROCM, XPU, kind_of


@record
class Resolution(Record):
    """What resolvelib made of a request: the provider it asked (its verdicts explain a failure) and the chosen
    candidate per identifier, or None when there is no solution."""

    provider: BuildProvider
    chosen: Mapping[str, Candidate] | None


def resolve(database: Database, target: Target, request: Request) -> Resolution:
    provider = make_provider(database, target, request)
    try:
        result = Resolver(provider, BaseReporter()).resolve(requirements_of(request), max_rounds=5000)
    except (ResolutionImpossible, ResolutionTooDeep):
        return Resolution(provider, None)
    return Resolution(provider, result.mapping)


def make_provider(database: Database, target: Target, request: Request) -> BuildProvider:
    frameworks = request.solved_frameworks
    kinds = {f: allowed_kinds(database, target, request, f) for f in frameworks}
    return BuildProvider(
        database,
        target,
        policy=request.policy,
        allowed_kinds=kinds,
        order=frameworks,
        # CUDA library pins must agree only between CUDA builds: beside `tensorflow-cpu` or `jax[cpu]` (CPU by the
        # project's own choice) every CUDA build of torch may be taken, not only those whose pins were read
        shared_libraries=sum("cuda" in k for k in kinds.values()) > 1,
        channel=request.channel,
        companions=companions_required(request),
        numpy=request.numpy,
        preferred_cuda={"torch": request.torch_cuda} if request.torch_cuda else {},
    )


def companions_required(request: Request) -> frozenset[str]:
    """On a conda channel the companions asked for (`--framework torch`) come with torch wherever torch is paired
    with them: they are conda packages with builds of their own, which must exist beside the torch build. pip's
    are in every variant of the index, and a plan leaves out one the database does not pair."""
    if request.channel == PIP:
        return frozenset()
    return frozenset(name for name in request.packages if name in COMPANIONS)


def requirements_of(request: Request) -> list[Requirement]:
    return [
        Requirement(name, request.specifiers.get(name), "the request", extras=request.extras.get(name, frozenset()))
        for name in sorted(request.required, key=PACKAGE_ORDER.index)
    ]


def allowed_kinds(database: Database, target: Target, request: Request, framework: str) -> frozenset[str]:
    """The kind of build the machine's best GPU calls for (CUDA, MPS, ROCm, XPU: `envpin.resolver.accelerators`),
    CPU otherwise, unless the specs name a build (`+rocm6.2`, `+xpu`, `+cpu`, `[cuda12]`).

    This is the one preference rule of every vendor (docs/gpu-first.md): only builds that use the GPU qualify while
    the framework has such builds for the platform, so a newer build that would run on the CPU never beats an older
    one that uses the GPU (an M1 on macOS 13 gets torch 2.8.0 with MPS, not 2.11.0 on the CPU); where none of them
    fits, the solve is refused with the fixes (the macOS, driver or Python the newest one needs, or the CPU build by
    name). A framework with no build of that kind for the platform at all (JAX on native Windows, ROCm on Windows,
    TensorFlow on macOS) gets its CPU build, and the plan's headline says so.
    """
    named = named_kinds(request, framework)
    if named:
        return named
    if framework in request.gpu_asked and target.has_nvidia:
        return frozenset({CUDA})  # a project line asks for its NVIDIA GPU build: no silent CPU build instead
    if target.os == "macos" and target.platform != MACOS_ARM64:
        return frozenset({CPU})  # an Intel Mac: no GPU build of any framework in the database
    kind = gpu_kind(target, lambda kind: has_builds(database, framework, target.platform, kind, request.channel))
    if kind != CPU and request.gpu_asked and not _has_matching(database, target, request, framework, kind):
        # another framework is the project's GPU one; this one's line (`tensorflow>=2.13` on native Windows) has no
        # build of that kind here, and pip installs its CPU build: so does the plan, which says so
        return frozenset({CPU})
    return frozenset({kind})


def _has_matching(database: Database, target: Target, request: Request, framework: str, kind: str) -> bool:
    """Whether a build of the kind, of a release the request's spec allows, exists for the target's platform."""
    spec = request.specifiers.get(framework)
    for build in builds_of(database, framework, request.channel):
        if not carries(build, kind, target.platform) or target.platform not in build.platforms:
            continue
        local = f"+{build.flavor}" if framework == "torch" else ""
        if spec is None or spec.contains(f"{build.version}{local}", prereleases=True):
            return True
    return False


def has_cuda_builds(database: Database, framework: str, platform: str, channel: str = PIP) -> bool:
    return has_builds(database, framework, platform, CUDA, channel)


def has_builds(database: Database, framework: str, platform: str, kind: str, channel: str = PIP) -> bool:
    return any(carries(b, kind, platform) and platform in b.platforms for b in builds_of(database, framework, channel))


def named_kinds(request: Request, framework: str) -> frozenset[str]:
    """The kinds of build the request names for the framework (`+cpu`, `+rocm6.2`, `[cuda12]`); empty: none."""
    if framework in request.cpu_only:
        return frozenset({CPU})  # a project's tensorflow-cpu or cpu index: the CPU build, on any machine
    named = set()
    for name in PACKAGES[framework]:
        for clause in request.specifiers.get(name, ()):
            local = clause.version.partition("+")[2]
            if local:
                kind = kind_of(local)  # a local part that is no tag (+abc) finds no build: named as cpu
                named.add(kind if kind in (CUDA, ROCM, XPU) else CPU)
        for extra in request.extras.get(name, ()):
            named.add(ROCM if extra.startswith("rocm") else CUDA)
    return frozenset(named)


def closest_miss(verdicts: list[Verdict]) -> Verdict:
    """The build that got furthest through the checks: its rejection is the most telling reason.

    Ties go to the newest release, and among its builds stopped by the driver, to the one that asks for the
    oldest driver (the smallest upgrade)."""

    def rank(verdict: Verdict) -> tuple:
        needs = verdict.why_not.needs_driver
        driver = tuple(-int(p) for p in needs.split(".")) if needs else ()
        return (CHECKS.index(verdict.why_not.check), verdict.build.kind == "cuda", verdict.build.version, driver)

    return max(verdicts, key=rank)


def pin_clash(build: Build, others: list[Build]) -> str | None:
    """The first library two builds pin incompatibly, or a CUDA major they do not share, in words."""
    if build.kind != "cuda":
        return None
    for other in others:
        if other is None or other.kind != "cuda" or other is build:
            continue
        if other.cuda_major != build.cuda_major:
            return f"{build.label} is CUDA {build.cuda_major} and {other.label} is CUDA {other.cuda_major}"
        theirs = {library_name(n): s for n, s in other.pins.items()}
        for name, specifier in build.pins.items():
            other_spec = theirs.get(library_name(name))
            if other_spec is not None and not _intersect(specifier, other_spec):
                return f"{build.label} needs {library_name(name)}{specifier} but {other.label} pins {other_spec}"
    return None


def _intersect(first: str, second: str) -> bool:
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - heavy, and only pin clashes need it: kept off the solve path

    both = SpecifierSet(first) & SpecifierSet(second)
    return any(both.contains(v, prereleases=True) for v in representatives(first) | representatives(second))
