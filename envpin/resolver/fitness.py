"""Does one build (torch release × variant) run on the target? Pure, and explains itself either way.

The checks run in a fixed order (platform, Python, kind of build, driver, GPUs) and the first failure is the
verdict's rejection. `ignore` switches checks off, which is how the explainer asks "what if the driver were
newer?" or "what if this were Python 3.12?".
"""

from __future__ import annotations

from dataclasses import dataclass

from envpin.compat.archs import coverage
from envpin.compat.drivers import cuda_at_least, driver_at_least, minimum_driver
from envpin.compat.model import Database, TorchRelease, Variant
from envpin.resolver.target import Target

CHECKS = ("platform", "python", "kind", "driver", "gpu")


@dataclass(frozen=True)
class Rejection:
    check: str  # one of CHECKS
    message: str
    needs_driver: str | None = None  # for `driver`: the oldest driver that would do


@dataclass(frozen=True)
class Verdict:
    release: TorchRelease
    variant: Variant
    reasons: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()
    rejection: Rejection | None = None

    @property
    def fits(self) -> bool:
        return self.rejection is None


def assess(
    database: Database,
    target: Target,
    release: TorchRelease,
    variant: Variant,
    *,
    policy: str,
    allowed_kinds: frozenset[str],
    ignore: frozenset[str] = frozenset(),
) -> Verdict:
    reasons: list[str] = []
    unverified: list[str] = [u for u in (release.provenance.unverified, variant.provenance.unverified) if u]

    def reject(check: str, message: str, needs_driver: str | None = None) -> Verdict:
        return Verdict(release, variant, tuple(reasons), tuple(unverified), Rejection(check, message, needs_driver))

    label = f"torch {release.version}+{variant.name}"
    platform = target.platform
    if "platform" not in ignore and platform not in variant.platforms:
        return reject("platform", f"{label} is not built for {platform}")
    pythons = release.pythons_for(variant, platform)
    if "python" not in ignore and target.python not in pythons:
        return reject("python", f"{label} has no wheel for Python {target.python} on {platform} ({_span(pythons)})")
    if "kind" not in ignore and variant.kind not in allowed_kinds:
        return reject("kind", f"{label} is a {variant.kind} build")
    if variant.cuda and "driver" not in ignore:
        rejection = _check_driver(database, target, variant, policy, reasons, unverified)
        if rejection:
            return reject(*rejection)
    if variant.cuda and "gpu" not in ignore:
        message = _check_gpus(target, variant, reasons, unverified)
        if message:
            return reject("gpu", message)
    return Verdict(release, variant, tuple(reasons), tuple(unverified))


def _check_driver(
    database: Database, target: Target, variant: Variant, policy: str, reasons: list[str], unverified: list[str]
) -> tuple[str, str, str | None] | None:
    requirement = minimum_driver(database, variant.cuda, target.os, policy)
    if requirement is None:
        return "driver", f"the database has no driver minimum for CUDA {variant.cuda} on {target.os}", None
    if requirement.provenance.unverified:
        unverified.append(requirement.provenance.unverified)
    if target.driver is None:
        return "driver", f"{variant.name} needs an NVIDIA driver ≥ {requirement.minimum} and none was found", (
            requirement.minimum
        )
    if not driver_at_least(target.driver, requirement.minimum):
        return (
            "driver",
            f"{variant.name} needs driver ≥ {requirement.minimum} ({requirement.rule}); this machine has {target.driver}",
            requirement.minimum,
        )
    reasons.append(f"driver {target.driver} runs {variant.name}: {requirement.rule} needs ≥ {requirement.minimum}")
    return None


def _check_gpus(target: Target, variant: Variant, reasons: list[str], unverified: list[str]) -> str | None:
    archs = variant.archs.get(target.platform)
    if archs is None:
        return f"the database has no arch list for {variant.name} on {target.platform}"
    if archs.provenance.unverified:
        unverified.append(archs.provenance.unverified)
    if not target.gpus:
        reasons.append("no GPU was named, so the compute capability was not checked")
    for gpu in target.gpus:
        covered = coverage(gpu.compute_capability, archs)
        if covered is None:
            return f"{variant.name} has no code for {gpu.name} ({gpu.compute_capability.sm}); it targets {archs.describe()}"
        if covered.how == "ptx" and target.driver_cuda and not cuda_at_least(target.driver_cuda, variant.cuda):
            return (
                f"{variant.name} reaches {gpu.name} ({gpu.compute_capability.sm}) only through PTX, and JIT needs a "
                f"driver for CUDA {variant.cuda} (this one supports {target.driver_cuda})"
            )
        reasons.append(
            f"{gpu.name} is {gpu.compute_capability.sm}; {variant.name} runs on it through {covered.describe(gpu.compute_capability)}"
        )
    return None


def _span(pythons: tuple[str, ...]) -> str:
    if not pythons:
        return "no Python at all"
    ordered = sorted(pythons, key=lambda v: tuple(int(p) for p in v.split(".")))
    return f"it has {ordered[0]}" if len(ordered) == 1 else f"it has {ordered[0]}–{ordered[-1]}"
