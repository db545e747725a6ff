"""The chosen builds as a Plan: the pins, each tied to its index, and the reasons a person reads.

resolvelib decides which builds; this module only says them, with why each was taken and what newer one was
passed over and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from envpin.compat.archs import TEGRA_CAPABILITIES
from envpin.compat.model import PYPI_INDEX, CompanionBuild, Database
from envpin.resolver.accelerators import kind_reasons, metal_route, mps_reasons, mps_runs
from envpin.resolver.builds import Build, builds_of, newest_first
from envpin.resolver.fitness import Verdict, assess, driver_requirement
from envpin.resolver.plan import PinnedPackage, Plan
from envpin.resolver.provider import BuildProvider, Candidate, library_name
from envpin.resolver.queries import closest_miss, has_builds, has_cuda_builds, named_kinds, pin_clash
from envpin.resolver.request import NumpyBound, Request
from envpin.resolver.target import Target
from envpin.vocabulary.frameworks import COMPANIONS, TORCH
from envpin.vocabulary.platforms import MACOS_ARM64
from envpin.vocabulary.variants import CPU, CUDA, cuda_tag

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version


def build_plan(
    database: Database, target: Target, request: Request, provider: BuildProvider, chosen: Mapping[str, Candidate]
) -> Plan:
    packages: list[PinnedPackage] = []
    reasons = [f"target: {target.describe()}"]
    warnings: list[str] = []
    notes: list[str] = []
    accelerators: dict[str, str] = {}
    headline = None
    for framework in request.solved_frameworks:
        build = chosen[framework].framework_build
        verdict = provider.verdict(build)
        accelerators[framework] = accelerator_of(build, target)
        kind_said = _beside_the_gpu_framework(request, target, build) or _kind_reasons(database, target, build)
        reasons += kind_said
        if framework == request.solved_frameworks[0]:
            headline = cpu_headline(database, target, request, build, accelerators[framework], kind_said, policy=provider.policy)
        reasons += verdict.reasons
        reasons += _choice_reasons(provider, request, build, chosen)
        if build.channel != request.channel:
            raise AssertionError(f"{build.label} in a solve for {request.channel}")
        if build.channel != "pip":
            conda_packages, conda_reasons = _conda_packages(database, request, build, chosen)
            packages += conda_packages
            reasons += conda_reasons
        elif framework == "torch":
            torch_packages, torch_reasons = _torch_packages(request, target, build, chosen)
            packages += torch_packages
            reasons += torch_reasons
        else:
            package, framework_reasons, framework_notes = _other_package(target, build)
            packages.append(package)
            reasons += framework_reasons
            notes += framework_notes
        warnings += [f"unverified: {text}" for text in verdict.unverified]
        warnings += _known_issues(build, target)
        if target.platform == MACOS_ARM64 and build.framework == TORCH and build.channel == "pip":
            warnings += mps_reasons(database, build, target)[1]
    numpy_pin, numpy_reasons = _numpy_bound(target, [chosen[f].framework_build for f in request.solved_frameworks],
                                            request.numpy)
    if numpy_pin is not None:
        packages.append(numpy_pin)
    reasons += numpy_reasons
    for bound, reason in _plan_bounds([chosen[f].framework_build for f in request.solved_frameworks]):
        packages.append(bound)
        reasons.append(reason)
    if len(request.solved_frameworks) > 1:
        reasons += _shared_library_reasons(request, chosen)
    first = request.solved_frameworks[0]
    return Plan(
        target=target,
        db_version=database.version,
        accelerator=accelerators[first],
        index_url=next((p.index_url for p in packages if p.index_url), None),
        packages=tuple(packages),
        reasons=tuple(dict.fromkeys(reasons)),
        warnings=tuple(dict.fromkeys(warnings)),
        accelerators=accelerators,
        notes=tuple(notes),
        channel=request.channel,
        builds={f: chosen[f].framework_build for f in request.solved_frameworks},
        headline=headline,
    )


def cpu_headline(database: Database, target: Target, request: Request, build: Build, accelerator: str,
                 kind_said: list[str], *, policy: str) -> str | None:
    """The preference rule's last clause: a CPU answer on a machine with a GPU says so first, with why no build here
    uses the GPU and, where the database has one that would with another driver, that build and the driver."""
    if accelerator != CPU or not _has_gpu(target):
        return None
    if CPU in named_kinds(request, build.framework):
        return f"the CPU build of {build.framework}, as asked: the GPU is left unused"
    why = kind_said[0] if kind_said else f"{build.framework} has no GPU build for this machine in the database"
    needs = _gpu_build_with_a_driver(database, target, build, policy) if not target.has_nvidia and target.gpus else None
    return f"runs on the CPU: {why}" + (f"; {needs}" if needs else "")


def _has_gpu(target: Target) -> bool:
    return bool(target.has_nvidia or target.gpus or target.amd_gpus or target.apple_gpus
                or any(g.family for g in target.intel_gpus) or target.platform == MACOS_ARM64)


def _gpu_build_with_a_driver(database: Database, target: Target, build: Build, policy: str) -> str | None:
    """NVIDIA GPUs without their driver: the newest CUDA build of the framework that would run on them, and the
    driver it needs (the checks of a solve, with the driver lifted)."""
    # newest release first, as the builds come: judged until one would run
    for candidate in (b for b in builds_of(database, build.framework, build.channel) if b.kind == CUDA):
        verdict = assess(database, target, candidate, policy=policy, allowed_kinds=frozenset({CUDA}),
                         ignore=frozenset({"driver"}))
        requirement = driver_requirement(database, target, candidate, policy) if verdict.fits else None
        if requirement is not None:
            return f"{candidate.label} would use the GPU with an NVIDIA driver ≥ {requirement.minimum} (--driver)"
    return None


def _numpy_bound(target: Target, builds: list[Build], asked: NumpyBound | None) -> tuple[PinnedPackage | None, list[str]]:
    """numpy<2 beside wheels compiled against NumPy 1.x whose metadata does not cap numpy (torch ≤ 2.2, TensorFlow
    2.7-2.11 and 2.14.0, jaxlib ≤ 0.4.25: the database's `numpy_below_2`): NumPy 2 lacks their C ABI. A numpy bound
    given with --spec is pinned too (a project's own numpy line stays in its file, where the plan writes it)."""
    old = [b for b in builds if b.channel == "pip" and target.platform in b.numpy_below_2]
    specifiers, reasons = [], []
    if old:
        names = " and ".join(b.label for b in old)
        specifiers.append("<2")
        reasons.append(f"{names} {'was' if len(old) == 1 else 'were'} compiled against NumPy 1.x, and `import` fails "
                       "with NumPy 2 ('A module that was compiled using NumPy 1.x cannot be run in NumPy 2'): numpy<2 "
                       "keeps pip from installing NumPy 2")
    if asked is not None and asked.from_spec and asked.specifier:
        specifiers.append(asked.specifier)
        reasons.append(f"numpy{asked.specifier} is pinned as asked ({asked.asked})")
    if not specifiers:
        return None, reasons
    return PinnedPackage("numpy", ",".join(specifiers), None, bound=True), reasons


def _plan_bounds(builds: list[Build]) -> list[tuple[PinnedPackage, str]]:
    """The bounds the database records beside a build (`plan_bounds`): a library its metadata leaves open, at a
    version its plugin cannot load (jax-cuda12-plugin 0.4.23-0.4.25, built for cuDNN 8, and pip's cuDNN 9)."""
    found = []
    for build in builds:
        for package, specifier in build.bounds.items():
            reason = (f"{build.label}'s metadata lets pip take a {package} its plugin cannot load; {package}"
                      f"{specifier} keeps pip on one it can")
            found.append((PinnedPackage(package, specifier, None, bound=True), reason))
    return found


def accelerator_of(build: Build, target: Target) -> str:
    """`cuXYZ`, `rocmX.Y` (as the index names it), `xpu`, `mps` or `cpu`: what the build runs on here."""
    if build.framework == TORCH:
        if target.platform == MACOS_ARM64:
            on_macos = build.channel != "pip" or mps_runs(build.torch_record[0], target) is not False
            return "mps" if on_macos else CPU
        return build.flavor
    if build.kind == "rocm":
        return f"rocm{build.rocm}" if build.rocm else "rocm"
    if build.kind != CUDA:
        return CPU
    return cuda_tag(build.gpu_cuda)


def _kind_reasons(database: Database, target: Target, build: Build) -> list[str]:
    if build.kind == "cuda":
        return []
    if build.kind in ("rocm", "xpu") or target.amd_gpus or target.intel_gpus:
        ours = kind_reasons(database, target, build, lambda kind: has_builds(database, build.framework, target.platform, kind,
                                                                    build.channel))
        if build.kind in ("rocm", "xpu") or ours:
            return ours
    if target.platform == MACOS_ARM64 and build.framework == TORCH and build.channel == "pip":
        return mps_reasons(database, build, target)[0]
    if target.os == "macos":
        mps = " with Metal (MPS) on Apple silicon" if build.framework == "torch" else ""
        if build.channel != "pip":
            return [f"macOS has no CUDA: {build.where}'s macOS {build.conda_package} builds are CPU builds{mps}"]
        route = metal_route(database, target, build)
        return [f"macOS has no CUDA: {build.framework}'s macOS wheels are CPU builds{mps}" + (f"; {route}" if route else "")]
    if target.has_nvidia and not has_cuda_builds(database, build.framework, target.platform, build.channel):
        route = " (WSL2 is the way to the GPU on Windows)" if target.os == "windows" else ""
        if build.channel != "pip":
            return [f"{build.where} has no NVIDIA GPU build of {build.conda_package} for {target.platform}: "
                    f"this is its CPU build{route}"]
        return [f"{build.framework} has no NVIDIA GPU build for {target.platform}: this is its CPU build{route}",
                *jetson_notes(database, target, build.framework)]
    jetson = jetson_driver_reason(database, target, build.framework)
    if jetson is not None:
        return [jetson]
    if not target.has_nvidia and target.gpus:
        return ["no NVIDIA driver was found, so the GPUs cannot be used: this is the CPU build (install a driver, or pass --driver)"]
    if not target.has_nvidia:
        return [f"no NVIDIA driver or GPU was found: this is the CPU build of {build.framework}"]
    return [f"a CPU build of {build.framework} was asked for by name"]


def _beside_the_gpu_framework(request: Request, target: Target, build: Build) -> list[str]:
    """A framework's CPU build beside the one the project asks for as a GPU build, where its own line has no GPU
    build here (`tensorflow>=2.13.0` on native Windows beside torch from a CUDA index): what pip installs."""
    if build.kind != CPU or not request.gpu_asked or build.framework in request.gpu_asked or not target.has_nvidia \
            or build.framework in request.cpu_only:
        return []
    asked = "; ".join(f"{framework}: {line}" for framework, line in request.gpu_asked.items())
    return [f"{request.spec_text(build.framework)} has no NVIDIA GPU build for {target.platform}: this is its CPU "
            f"build, as pip installs it; the GPU is for what the project asks for as a GPU build ({asked})"]


def jetson_driver_reason(database: Database, target: Target, framework: str) -> str | None:
    """A Jetson without a desktop driver: its driver is its JetPack (L4T release), so the answer names that and
    NVIDIA's wheels for it (gpus.yaml `jetpack:` and `jetson:`), which envpin names and does not plan from."""
    tegra = [g for g in target.gpus if g.compute_capability in TEGRA_CAPABILITIES]
    if not tegra or target.has_nvidia:
        return None
    gpu = f"{tegra[0].name} ({tegra[0].compute_capability.sm}) is a Jetson GPU"
    support = database.jetson.get(framework)
    release = target.jetson
    if release is None and not (target.l4t or target.jetpack):
        return (f"{gpu}, whose driver comes with its JetPack: this is the CPU build; give the JetPack with --jetpack "
                "(6.1, or the L4T release r36.4.0 that /etc/nv_tegra_release names) for the Jetson builds")
    if release is None:
        named = f"L4T {target.l4t}" if target.l4t else f"JetPack {target.jetpack}"
        where = f"; NVIDIA's Jetson builds: {support.builds}" if support is not None and support.builds else ""
        return (f"{gpu} on {named}, which the database's JetPack table does not know: this is the CPU build{where} "
                "(envpin names them and does not plan from them)")
    cuda = f", CUDA {release.cuda}" if release.cuda else ""
    lead = f"{gpu} on JetPack {release.jetpack} (L4T {release.l4t}{cuda}), the Jetson's driver"
    if support is None:
        return f"{lead}: this is the CPU build"
    if support.per_jetpack is None:
        return f"{lead}: this is the CPU build; {support.text}"
    folder = support.per_jetpack.format(folder=release.folder)
    return (f"{lead}: this is the CPU build from PyPI; NVIDIA's {framework} wheels for JetPack {release.jetpack} are "
            f"at {folder} (envpin has not recorded that folder's wheels, so it names it and does not plan from it)")


def jetson_notes(database: Database, target: Target, framework: str) -> list[str]:
    """On a Jetson (a GPU whose compute capability exists only on Tegra): where the framework's Jetson builds are."""
    jetson = database.jetson.get(framework)
    if jetson is None or not any(g.compute_capability in TEGRA_CAPABILITIES for g in target.gpus):
        return []
    where = f" ({jetson.builds})" if jetson.builds else ""
    return [f"on Jetson: {jetson.text}{where}"]


def _choice_reasons(provider: BuildProvider, request: Request, build: Build, chosen: Mapping[str, Candidate]) -> list[str]:
    framework = build.framework
    spec = request.specifiers.get(framework)
    where = f" on {build.where}" if build.channel != "pip" else ""
    reasons = [f"{framework} {build.version} is the newest release{f' matching {framework}{spec}' if spec else ''}{where} "
               "that fits"]
    # the builds of this release and of each newer one (builds come newest release first), and of no older one: what
    # the reasons compare the choice with
    releases: dict[Version, list[Build]] = {}
    for other in newest_first(provider.builds(framework), build.version):
        releases.setdefault(other.version, []).append(other)
    newer = sorted((v for v, builds in releases.items() if v > build.version and any(_matches(spec, b) for b in builds)),
                   reverse=True)
    of_kind = [v for v in newer if any(b.kind == build.kind for b in releases[v])]
    if newer and build.kind != "cpu" and newer[0] not in of_kind:
        # a release with no build of this kind at all (torch 2.15.0 has no ROCm build) says so, and the newest
        # release that has one says why that one did not fit
        reasons.append(f"{framework} {newer[0]} was passed over: the database has no {build.kind} build of it"
                       f"{_missing_extra(provider, framework, newer[0], build)}")
        newer = of_kind
    if newer:
        same = [b for b in releases[newer[0]] if b.kind == build.kind]
        verdicts = [provider.verdict(b) for b in same or releases[newer[0]]]
        reasons.append(f"{framework} {newer[0]} was passed over: {_why_not(verdicts, chosen, framework, provider.target)}")
    fitting_newer = [v for v in newer[1:] if any(provider.verdict(b).fits for b in releases[v])]
    if fitting_newer:
        verdicts = [provider.verdict(b) for b in releases[fitting_newer[0]]]
        reasons.append(f"{framework} {fitting_newer[0]} was passed over: {_why_not(verdicts, chosen, framework, provider.target)}")
    said = {newer[0]} if newer else set()
    said |= {fitting_newer[0]} if fitting_newer else set()
    # the preference rule at work: a newer release of the same wheel that would run on the CPU here (torch 2.11.0 on
    # macOS 13, whose MPS needs 14) was passed over for this one, which uses the GPU
    on_cpu = next((verdict for v in newer if v not in said for b in releases[v] if b.kind == build.kind
                   and (verdict := provider.verdict(b)).rejection is not None and verdict.why_not.check == "kind"), None)
    if on_cpu is not None:
        reasons.append(f"{framework} {on_cpu.build.version} was passed over: {on_cpu.why_not.message}; a build that uses "
                       "the GPU comes first")
    siblings = [b for b in releases[build.version] if b.kind == build.kind]
    for sibling in siblings[: siblings.index(build)]:
        rejection = provider.verdict(sibling).rejection
        # a build for another platform is no alternative here (TensorFlow 2.10's Linux and Windows GPU builds
        # share one label): saying it was passed over would name the chosen release as refused; one built for this
        # platform whose wheels do not install here (torch 2.6.0+cu126's need glibc 2.28) is, and is said
        alternative = rejection is not None and (rejection.check != "platform"
                                                 or provider.target.platform in sibling.platforms)
        if rejection and alternative and sibling.label != build.label:
            reasons.append(f"{sibling.label} was passed over: {rejection.message.removeprefix(f'{sibling.label}: ')}")
    if build.kind == "cuda" and framework == "torch" and build.channel == "pip":
        reasons.append(f"{build.flavor} is the newest CUDA build of torch {build.version} that fits")
    elif build.kind == "cuda" and build.channel != "pip":
        reasons.append(f"{build.conda_build} is the newest CUDA build of {build.where}'s {build.conda_package} "
                       f"{build.version} that fits")
    return reasons


def _missing_extra(provider: BuildProvider, framework: str, version: Version, build: Build) -> str:
    """Why a JAX release has no build of this kind, where jax.yaml's `missing_extras` says (a plugin not on PyPI)."""
    if framework != "jax" or not build.extras:
        return ""
    release = next((b.jax_release for b in provider.builds(framework) if b.version == version), None)
    missing = release.missing_extras.get(build.extras[0]) if release else None
    return f" (jax[{build.extras[0]}] {version}: {missing})" if missing else ""


def _matches(spec: SpecifierSet | None, build: Build) -> bool:
    if not spec:
        return True
    local = f"+{build.flavor}" if build.framework == "torch" else ""
    return spec.contains(f"{build.version}{local}", prereleases=True)


def _why_not(verdicts: list[Verdict], chosen: Mapping[str, Candidate], framework: str, target: Target) -> str:
    fitting = [v for v in verdicts if v.fits]
    if fitting:
        others = [c.build for n, c in chosen.items() if c.build and n != framework]
        clash = pin_clash(fitting[0].build, others) or _numpy_pair_clash(fitting[0].build, others, target)
        return clash or companion_gap(fitting[0].build, chosen) or "it fits alone, but not together with the rest of the request"
    return closest_miss(verdicts).why_not.message


def _numpy_pair_clash(build: Build, others: list[Build], target: Target) -> str | None:
    """Two builds that need numpy versions no one numpy satisfies (jax 0.10.2's numpy>=2.0, torch 2.2.2's numpy<2)."""
    from envpin.resolver.numpy_fit import meet  # noqa: PLC0415 - only a plan of several frameworks
    from envpin.resolver.provider import numpy_of  # noqa: PLC0415 - as above

    mine = numpy_of(build, target)
    for other in others:
        theirs = numpy_of(other, target)
        if mine and theirs and not meet(mine, theirs):
            return f"{build.label} needs numpy{mine} and {other.label} numpy{theirs}: no numpy serves both"
    return None


def companion_gap(build: Build, chosen: Mapping[str, Candidate]) -> str | None:
    """Why a conda torch build that fits could not bring the companions the plan has: their own builds."""
    if build.channel == "pip":
        return None
    for name in (n for n in COMPANIONS if n in chosen):
        pairing = build.companions.get(name)
        if pairing is not None and not pairing.platforms:
            return f"{build.where} has no {name} {pairing.version} build beside its {build.conda_build} build"
    return None


def _conda_packages(
    database: Database, request: Request, build: Build, chosen: Mapping[str, Candidate]
) -> tuple[list[PinnedPackage], list[str]]:
    """A conda build's pins: the conda version of the framework and of the companions it brings (envpin.conda.specs
    turns them into match specs with the build's CUDA)."""
    packages = [PinnedPackage(build.framework, str(build.version), None)]
    reasons: list[str] = []
    if build.framework != "torch":
        return packages, reasons
    paired = []
    for name in (n for n in request.packages if n in COMPANIONS):
        pairing = build.companions.get(name)
        if name not in chosen or pairing is None:
            reasons.append(f"{build.where} pairs no {name} with pytorch {build.version} in the database; left out")
            continue
        packages.append(PinnedPackage(name, str(chosen[name].version), None))
        paired.append(f"{name} {chosen[name].version}")
    if paired:
        how = "its own pairs" if build.channel == "pytorch-channel" else f"as pip pairs them, each with its own {build.conda_build} build"
        reasons.append(f"{' and '.join(paired)} pair with pytorch {build.version} on {build.where} ({how})")
        pip_release = database.torch_release(str(build.version))
        differ = [f"{p.name} {pip_release.companions[p.name].version}" for p in packages[1:]
                  if pip_release is not None and p.name in pip_release.companions
                  and pip_release.companions[p.name].version != p.version]
        if differ:
            reasons.append(f"pip pairs torch {build.version} with {', '.join(differ)}")
    return packages, reasons


def _torch_packages(
    request: Request, target: Target, build: Build, chosen: Mapping[str, Candidate]
) -> tuple[list[PinnedPackage], list[str]]:
    release, variant = build.torch_record
    from_pypi = target.os == "macos" or release.pypi.get(target.platform) == build.flavor
    torch = (PinnedPackage("torch", str(build.version), None) if from_pypi else
             PinnedPackage("torch", f"{build.version}+{build.flavor}", f"{request.torch_index}/{build.flavor}"))
    packages, reasons = [torch], _index_reasons(build, target, torch)
    for name in request.packages:
        if name not in COMPANIONS:
            continue
        pairing = build.companions.get(name)
        versions = pairing.versions_on(target.platform, target.python) if pairing is not None else ()
        if not versions:
            reasons.append(_companion_left_out(name, build, target))
            continue
        version = str(chosen[name].version) if name in chosen else versions[0]
        paired = pairing.build_on(target.platform, version, target.python) if pairing is not None else None
        if paired is None:
            raise AssertionError(f"{name} {version} was chosen beside {build.label} without a build on {target.platform}")
        packages.append(_companion_pin(name, paired, request))
        reasons.append(_companion_reason(name, paired, build, accelerator_of(build, target)))
    if variant.cudnn:
        reasons.append(f"torch {build.version}+{variant.name} uses cuDNN {variant.cudnn}")
    return packages, reasons


def _companion_pin(name: str, paired: CompanionBuild, request: Request) -> PinnedPackage:
    """PyPI's wheel by its plain version; a PyTorch index's by its full local version, tied to that index."""
    if paired.index == PYPI_INDEX:
        return PinnedPackage(name, paired.version, None)
    return PinnedPackage(name, f"{paired.version}+{paired.index}", f"{request.torch_index}/{paired.index}")


def _companion_reason(name: str, paired: CompanionBuild, build: Build, accelerator: str) -> str:
    where = "PyPI" if paired.index == PYPI_INDEX else f"the {paired.index} index"
    # torch's macOS arm64 wheel is one build for the CPU and MPS: its companions' are too
    kind = "its macOS arm64 wheel, with MPS" if accelerator == "mps" else "a CPU build"
    built = f"built for CUDA {paired.cuda}" if paired.cuda else kind if build.kind == "cpu" else "its own build"
    variant_cuda = build.torch_record[1].cuda
    # The import check is worth saying only where the two CUDAs differ (a companion of another build's CUDA)
    check = {"minor": "its import check wants the same CUDA major.minor",
             "major": "its import check wants the same CUDA major only"}.get(paired.cuda_check) if (
        paired.cuda and paired.cuda != variant_cuda) else None
    return (f"{name} {paired.version} from {where} pairs with torch {build.version} ({accelerator}): {built}"
            + (f"; {check}" if check else ""))


def _companion_left_out(name: str, build: Build, target: Target) -> str:
    release, variant = build.torch_record
    companion = release.companions.get(name)
    if companion is None:
        return f"no {name} release is paired with torch {build.version} in the database; left out"
    if not companion.builds:
        return f"{name} {companion.version} has no {variant.name} build for {target.platform}; left out"
    recorded = ", ".join(dict.fromkeys(
        f"{b.version} on {'PyPI' if b.index == PYPI_INDEX else b.index}"
        + (f" (CUDA {b.cuda})" if b.cuda else "") for b in companion.builds if target.platform in b.platforms))
    return (f"no {name} build in the database installs and imports beside torch {build.version}+{variant.name} on "
            f"{target.platform} ({recorded or 'none recorded for this platform'}); left out")


def _index_reasons(build: Build, target: Target, torch: PinnedPackage) -> list[str]:
    release, variant = build.torch_record
    platform = target.platform
    if torch.index_url is None and target.os != "macos":
        return [f"PyPI's torch {build.version} for {platform} is the {variant.name} build: no extra index needed"]
    if torch.index_url is None:
        return []
    reasons = []
    if release.pypi.get(platform) == "cpu" and variant.kind != "cpu":
        reasons.append(
            f"PyPI's torch wheels for {platform} are CPU-only (plain `pip install torch` gives "
            "'Torch not compiled with CUDA enabled')"
        )
    reasons.append(
        f"the {variant.name} build comes from {torch.index_url}; the full local version {torch.version} "
        "keeps pip from falling back to another build"
    )
    return reasons


def _other_package(target: Target, build: Build) -> tuple[PinnedPackage, list[str], list[str]]:
    """The pin, reasons and extra steps for a TensorFlow or JAX build (always from PyPI)."""
    if build.rocm_build is not None:
        return _rocm_package(build)
    if build.framework == "tensorflow":
        return _tensorflow_package(target, build, build.tensorflow_release)
    if build.kind == "cuda":
        extra = build.jax_release.extras[build.flavor]
        cudnn = f", cuDNN ≥ {extra.min_cudnn}" if extra.min_cudnn else ""
        reason = (
            f"jax[{build.extras[0]}] {build.version} installs jax-cuda{extra.cuda_major}-plugin {extra.plugin} with "
            f"CUDA {extra.cuda_major} libraries from PyPI{cudnn}"
        )
        return PinnedPackage("jax", str(build.version), None, build.extras), [reason], []
    return PinnedPackage("jax", str(build.version), None), [f"jax {build.version} with the CPU jaxlib"], []


def _rocm_package(build: Build) -> tuple[PinnedPackage, list[str], list[str]]:
    rocm = build.rocm_build
    assert rocm is not None  # only called for a JAX or TensorFlow ROCm build
    what = f"installs {rocm.plugin}" if rocm.plugin else "is AMD's ROCm build of TensorFlow"
    built = f"built for ROCm {rocm.rocm}" if rocm.rocm else "the ROCm it was built for is not stated in its metadata"
    reason = f"{build.label} {what} ({built}) from PyPI; it uses the ROCm installed on the machine"
    step = (f"install the ROCm {rocm.rocm} user space (AMD's amdgpu-install), which the wheel loads from /opt/rocm"
            if rocm.rocm else "install the ROCm user space the wheel was built for (AMD's amdgpu-install)")
    package = PinnedPackage(rocm.package, rocm.pin, None, (rocm.extra,) if rocm.extra else ())
    return package, [reason], [f"before pip: {step}"]


def _tensorflow_package(target: Target, build: Build, release) -> tuple[PinnedPackage, list[str], list[str]]:
    version = str(build.version)
    gpu = release.gpu.get(target.platform)
    if build.flavor == "and-cuda":
        pins = ", ".join(f"{n}{s}" for n, s in sorted(build.pins.items()) if "cudnn" in n or "runtime" in n)
        reason = (
            f"tensorflow[and-cuda] {version} was tested with CUDA {gpu.cuda} and cuDNN {gpu.cudnn}, which the extra "
            f"installs from PyPI ({pins})"
        )
        return PinnedPackage("tensorflow", version, None, ("and-cuda",)), [reason], []
    if build.flavor == "cuda":
        # before 2.1 the GPU build is its own project (tensorflow-gpu): `tensorflow` there is the CPU build
        name = release.gpu_package.get(target.platform, "tensorflow")
        reason = f"{name} {version} was tested with CUDA {gpu.cuda} and cuDNN {gpu.cudnn}"
        if name != "tensorflow":
            reason += f" (tensorflow {version} is TensorFlow's CPU build)"
        if gpu.conda:
            step = f"conda install -c conda-forge {gpu.conda}"
            return PinnedPackage(name, version, None), [reason], [f"before pip: {step}"]
        step = f"install CUDA {gpu.cuda} and cuDNN {gpu.cudnn} on the system ({name} {version} has no [and-cuda] extra)"
        return PinnedPackage(name, version, None), [reason], [step]
    package = release.cpu_package.get(target.platform, "tensorflow")
    return PinnedPackage(package, version, None), [f"{package} {version} is TensorFlow's CPU build"], []


def _known_issues(build: Build, target: Target) -> list[str]:
    if build.channel != "pip":
        return []  # the database's known issues are about the pip wheels
    if build.framework == "jax":
        note = build.jax_release.note
        return [f"note: {note}"] if note else []
    release = build.torch_record[0] if build.framework == "torch" else build.tensorflow_release
    return [f"known issue: {issue.text}" for issue in release.known_issues if target.platform in issue.platforms]


def _shared_library_reasons(request: Request, chosen: Mapping[str, Candidate]) -> list[str]:
    builds = [chosen[f].framework_build for f in request.solved_frameworks]
    gpu_builds = [b for b in builds if b.kind == "cuda"]
    if len(gpu_builds) < 2:
        return []
    reasons = [f"{', '.join(b.label for b in gpu_builds)} share CUDA {gpu_builds[0].cuda_major}"]
    shared: dict[str, list[str]] = {}
    for build in gpu_builds:
        for name, specifier in build.pins.items():
            shared.setdefault(library_name(name), []).append(f"{build.framework} {specifier}")
    for name, specs in sorted(shared.items()):
        if len(specs) > 1:
            reasons.append(f"{name}: {' and '.join(specs)} agree")
    bundling = [b for b in gpu_builds if b.framework == "torch" and b.channel == "pip" and not b.pins
                and b.torch_record[0].bundles_its_cuda(b.torch_record[1])]
    for build in bundling:
        reasons.append(f"{build.label} carries its CUDA libraries in torch/lib (the PyTorch-index wheels up to 2.0.1 "
                       "name no nvidia-* package): it pins no library the other frameworks could pin differently")
    if not bundling and any(b.framework == "torch" and b.channel == "pip" for b in gpu_builds):
        reasons.append("beside another framework, envpin keeps to torch builds whose CUDA library pins were read "
                       "from PyPI (the PyPI build), so that every shared pin is checked")
    return reasons
