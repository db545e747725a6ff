"""`solve`: the request and the target in, a Plan (or an Unsatisfiable answer with fixes) out."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from resolvelib import BaseReporter, ResolutionImpossible, ResolutionTooDeep, Resolver

from envpin.compat.model import Database, TorchRelease, Variant
from envpin.resolver.fitness import CHECKS, Verdict
from envpin.resolver.plan import PinnedPackage, Plan, Unsatisfiable
from envpin.resolver.provider import COMPANIONS, BuildProvider, Candidate, Requirement, ordered_variants
from envpin.resolver.request import Request
from envpin.resolver.target import Target


def solve(database: Database, target: Target, request: Request) -> Plan | Unsatisfiable:
    provider = BuildProvider(database, target, policy=request.policy, allowed_kinds=allowed_kinds(target, request))
    requirements = [
        Requirement(name, request.specifiers.get(name, SpecifierSet()), "the request") for name in sorted(request.required)
    ]
    try:
        result = Resolver(provider, BaseReporter()).resolve(requirements, max_rounds=2000)
    except (ResolutionImpossible, ResolutionTooDeep):
        from envpin.resolver.explain import explain_failure  # only on the unhappy path

        return explain_failure(database, target, request, provider)
    return _plan(database, target, request, provider, result.mapping)


def allowed_kinds(target: Target, request: Request) -> frozenset[str]:
    """CUDA builds for an NVIDIA machine, CPU otherwise, unless the specs name a variant (`==2.5.1+rocm6.2`)."""
    named = set()
    for specifier in request.specifiers.values():
        for clause in specifier:
            local = clause.version.partition("+")[2]
            if local:
                named.add("cuda" if local.startswith("cu") else "rocm" if local.startswith("rocm") else "cpu")
    if named:
        return frozenset(named)
    if target.os == "macos" or not target.has_nvidia:
        return frozenset({"cpu"})
    return frozenset({"cuda"})


def _plan(
    database: Database, target: Target, request: Request, provider: BuildProvider, chosen: dict[str, Candidate]
) -> Plan:
    torch = chosen["torch"]
    release, variant = torch.torch_releases[0], torch.variant
    verdict = provider.verdict(release, variant)
    packages = [_pin(torch, release, target, request)]
    reasons = [_target_line(target), *_build_kind_reasons(target, variant), *verdict.reasons]
    reasons += _choice_reasons(provider, request, release, variant)
    reasons += _index_reasons(release, variant, target, packages[0])
    for name in request.packages:
        if name == "torch":
            continue
        candidate = chosen.get(name) or _paired_companion(name, release, variant)
        if candidate is None:
            reasons.append(f"no {name} release is paired with torch {release.version} in the database; left out")
            continue
        packages.append(_pin(candidate, release, target, request))
    pairs = [f"{p.name} {p.version}" for p in packages[1:]]
    if pairs:
        reasons.append(f"{' and '.join(pairs)} pair with torch {release.version} ({variant.name})")
    if variant.cudnn:
        reasons.append(f"torch {release.version}+{variant.name} uses cuDNN {variant.cudnn}")
    warnings = _warnings(database, release, variant, verdict, target)
    return Plan(
        target=target,
        db_version=database.version,
        accelerator="mps" if target.platform == "macos-arm64" else variant.name,
        index_url=packages[0].index_url,
        packages=tuple(packages),
        reasons=tuple(reasons),
        warnings=warnings,
        python_range=release.pythons_for(variant, target.platform),
    )


def _pin(candidate: Candidate, release: TorchRelease, target: Target, request: Request) -> PinnedPackage:
    """Full local version tied to its index, unless PyPI's own wheel is this very build."""
    per_variant = candidate.name == "torch" or release.companions[candidate.name].per_variant
    from_pypi = target.os == "macos" or release.pypi.get(target.platform) == candidate.variant.name
    if from_pypi or not per_variant:
        return PinnedPackage(candidate.name, str(candidate.version), None)
    index = f"{request.torch_index}/{candidate.variant.name}"
    return PinnedPackage(candidate.name, str(candidate.local_version), index)


def _paired_companion(name: str, release: TorchRelease, variant: Variant) -> Candidate | None:
    from packaging.version import Version

    companion = release.companions.get(name)
    if companion is None:
        return None
    return Candidate(name, Version(companion.version), variant, (release,))


def _target_line(target: Target) -> str:
    driver = f"driver {target.driver} (CUDA {target.driver_cuda or '?'})" if target.driver else "no NVIDIA driver"
    gpus = ", ".join(f"{g.name} ({g.compute_capability.sm})" for g in target.gpus) or "no NVIDIA GPU"
    wsl = " (WSL2)" if target.wsl else ""
    return f"target: {target.platform}{wsl}, Python {target.python}, {driver}, {gpus}"


def _build_kind_reasons(target: Target, variant: Variant) -> list[str]:
    if variant.cuda:
        return []
    if target.os == "macos":
        return ["macOS has no CUDA: torch's macOS wheels are CPU builds, with Metal (MPS) on Apple silicon"]
    if variant.rocm:
        return [f"ROCm {variant.rocm} was asked for by name; envpin does not check AMD GPUs"]
    if not target.has_nvidia and target.gpus:
        return ["no NVIDIA driver was found, so the GPUs cannot be used: this is the CPU build (install a driver, or pass --driver)"]
    if not target.has_nvidia:
        return ["no NVIDIA driver or GPU was found: this is the CPU build"]
    return ["a CPU build was asked for by name"]


def _choice_reasons(provider: BuildProvider, request: Request, release: TorchRelease, variant: Variant) -> list[str]:
    spec = request.specifiers.get("torch")
    reasons = [f"torch {release.version} is the newest release{f' matching torch{spec}' if spec else ''} that fits"]
    newer = [r for r in provider.database.torch_releases if r.version > release.version and _matches(spec, r)]
    if newer:
        reasons.append(f"torch {newer[0].version} was passed over: {_closest_miss(provider, newer[0])}")
    siblings = [v for v in ordered_variants(release) if v.kind == variant.kind]
    passed = [provider.verdict(release, v) for v in siblings[: siblings.index(variant)]]
    reasons += [f"{v.variant.name} was passed over: {v.rejection.message}" for v in passed if v.rejection]
    if variant.kind == "cuda":
        reasons.append(f"{variant.name} is the newest CUDA build of torch {release.version} that fits")
    return reasons


def _matches(spec: SpecifierSet | None, release: TorchRelease) -> bool:
    if not spec:
        return True
    return any(spec.contains(f"{release.version}+{v.name}", prereleases=True) for v in release.variants.values())


def _closest_miss(provider: BuildProvider, release: TorchRelease) -> str:
    """The rejection of the build that got furthest through the checks: the most telling reason."""
    return closest_miss([provider.verdict(release, v) for v in ordered_variants(release)])


def closest_miss(verdicts: list[Verdict]) -> str:
    rejected = [v for v in verdicts if v.rejection]
    if len(rejected) < len(verdicts) or not rejected:
        return "it fits, but not together with the requested companion versions"
    best = max(rejected, key=lambda v: (CHECKS.index(v.rejection.check), v.variant.kind == "cuda"))
    return best.rejection.message


def _index_reasons(release: TorchRelease, variant: Variant, target: Target, torch: PinnedPackage) -> list[str]:
    platform = target.platform
    pypi_variant = release.pypi.get(platform)
    if torch.index_url is None and target.os != "macos":
        return [f"PyPI's torch {release.version} for {platform} is the {variant.name} build: no extra index needed"]
    if torch.index_url is None:
        return []
    reasons = []
    if pypi_variant == "cpu" and variant.kind != "cpu":
        reasons.append(
            f"PyPI's torch wheels for {platform} are CPU-only (plain `pip install torch` gives "
            "'Torch not compiled with CUDA enabled')"
        )
    reasons.append(
        f"the {variant.name} build comes from {torch.index_url}; the full local version {torch.version} "
        "keeps pip from falling back to another build"
    )
    return reasons


def _warnings(
    database: Database, release: TorchRelease, variant: Variant, verdict: Verdict, target: Target
) -> tuple[str, ...]:
    notes = [f"unverified: {text}" for text in verdict.unverified]
    for companion in release.companions.values():
        if companion.provenance.unverified:
            notes.append(f"unverified: {companion.provenance.unverified}")
    notes += [f"known issue: {issue.text}" for issue in release.known_issues if target.platform in issue.platforms]
    return tuple(dict.fromkeys(notes))
