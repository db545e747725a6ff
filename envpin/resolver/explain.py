"""Turn a failed solve into one or two sentences a person can act on, plus concrete fixes.

The message names the deciding fact of the newest release the user asked for. Fixes come from asking the
same question with one constraint lifted: ignore the driver (→ the driver to install), ignore the Python
version (→ the Python to use), ignore the user's version specs (→ the newest release that does work).
"""

from __future__ import annotations

from dataclasses import replace

from packaging.specifiers import SpecifierSet

from envpin.compat.model import Database, TorchRelease
from envpin.resolver.fitness import Verdict, assess
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.provider import COMPANIONS, BuildProvider, ordered_variants
from envpin.resolver.request import Request
from envpin.resolver.target import Target

CODES = {
    "platform": "unsupported-platform",
    "python": "python-unsupported",
    "kind": "no-matching-build",
    "driver": "driver-too-old",
    "gpu": "gpu-unsupported",
}


def explain_failure(database: Database, target: Target, request: Request, provider: BuildProvider) -> Unsatisfiable:
    spec = request.specifiers.get("torch", SpecifierSet())
    matching = [release for release in database.torch_releases if _matches(spec, release)]
    if not matching:
        known = f"{database.torch_releases[-1].version} … {database.torch_releases[0].version}"
        return _answer(
            database,
            target,
            "no-matching-release",
            f"no torch release in the database {database.version} matches torch{spec} (it knows {known})",
            _fixes_without_specs(database, target, request),
        )
    fitting = [r for r in matching if any(provider.verdict(r, v).fits for v in r.variants.values())]
    if fitting:
        return _companion_conflict(database, target, request, fitting)
    newest = matching[0]
    verdicts = [provider.verdict(newest, v) for v in ordered_variants(newest)]
    miss = _closest(verdicts)
    scope = f"torch{spec}" if str(spec) else "torch"
    more = f" (nor does any older release matching {scope})" if len(matching) > 1 else ""
    message = f"torch {newest.version} does not fit this machine{more}: {miss.rejection.message}"
    if miss.rejection.check == "driver" and target.driver is None:
        code = "no-driver"
    else:
        code = CODES[miss.rejection.check]
    fixes = _driver_fixes(database, target, provider, matching)
    fixes += _python_fixes(database, target, provider, matching)
    fixes += _fixes_without_specs(database, target, request)
    if code in ("gpu-unsupported", "driver-too-old", "no-driver") and newest.variants.get("cpu"):
        fixes.append(f"or use the CPU build: --spec 'torch=={newest.version}+cpu'")
    return _answer(database, target, code, message, fixes)


def _answer(database: Database, target: Target, code: str, message: str, fixes: list[str]) -> Unsatisfiable:
    return Unsatisfiable(target, database.version, code, message, tuple(dict.fromkeys(fixes)))


def _matches(spec: SpecifierSet, release: TorchRelease) -> bool:
    return any(spec.contains(f"{release.version}+{v.name}", prereleases=True) for v in release.variants.values())


def _closest(verdicts: list[Verdict]) -> Verdict:
    from envpin.resolver.fitness import CHECKS

    return max(verdicts, key=lambda v: (CHECKS.index(v.rejection.check), v.variant.kind == "cuda"))


def _relaxed(
    database: Database, target: Target, provider: BuildProvider, release: TorchRelease, lifted: str
) -> list[Verdict]:
    verdicts = [
        assess(
            database,
            target,
            release,
            variant,
            policy=provider.policy,
            allowed_kinds=provider.allowed_kinds,
            ignore=frozenset({lifted}),
        )
        for variant in ordered_variants(release)
    ]
    return [v for v in verdicts if v.fits]


def _driver_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[TorchRelease]) -> list[str]:
    for release in matching:
        unlocked = [v for v in _relaxed(database, target, provider, release, "driver") if v.variant.cuda]
        needs = [(provider.verdict(release, v.variant).rejection, v) for v in unlocked]
        needs = [(r.needs_driver, v) for r, v in needs if r is not None and r.needs_driver]
        if needs:
            driver, verdict = min(needs, key=lambda item: tuple(int(p) for p in item[0].split(".")))
            return [f"install NVIDIA driver {driver} or newer to use torch {release.version}+{verdict.variant.name}"]
    return []


def _python_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[TorchRelease]) -> list[str]:
    for release in matching:
        unlocked = _relaxed(database, target, provider, release, "python")
        if unlocked:
            pythons = release.pythons_for(unlocked[0].variant, target.platform)
            best = _nearest_python(target.python, pythons)
            return [
                f"use Python {best}: torch {release.version}+{unlocked[0].variant.name} has wheels for "
                f"{', '.join(pythons)} on {target.platform} (--python {best})"
            ]
    return []


def _nearest_python(wanted: str, pythons: tuple[str, ...]) -> str:
    def minor(version: str) -> int:
        return int(version.split(".")[1])

    return min(pythons, key=lambda p: (abs(minor(p) - minor(wanted)), -minor(p)))


def _fixes_without_specs(database: Database, target: Target, request: Request) -> list[str]:
    if not any(str(s) for s in request.specifiers.values()):
        return []
    from envpin.resolver.solve import solve

    relaxed = replace(request, specifiers={}, required=frozenset({"torch"}))
    answer = solve(database, target, relaxed)
    if isinstance(answer, Plan):
        torch = answer.packages[0]
        return [f"torch {torch.version} ({answer.accelerator}) is the newest release that runs on this machine: drop the version spec"]
    return []


def _companion_conflict(
    database: Database, target: Target, request: Request, fitting: list[TorchRelease]
) -> Unsatisfiable:
    clashes = []
    for name in COMPANIONS:
        spec = request.specifiers.get(name)
        if spec is None:
            continue
        paired = [r for r in fitting if name in r.companions and spec.contains(r.companions[name].version, prereleases=True)]
        if not paired:
            versions = sorted({r.companions[name].version for r in fitting if name in r.companions})
            clashes.append(
                f"{name}{spec} pairs with none of the torch releases that fit ({_short(fitting)}), "
                f"whose {name} releases are {', '.join(versions) or 'unknown'}"
            )
    message = "; ".join(clashes) or "the requested versions of torch and its companions do not pair with each other"
    return _answer(database, target, "conflicting-specs", message, _fixes_without_specs(database, target, request))


def _short(releases: list[TorchRelease]) -> str:
    versions = [str(r.version) for r in releases]
    return ", ".join(versions) if len(versions) <= 4 else f"{versions[-1]} … {versions[0]}"
