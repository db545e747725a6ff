"""Turn a failed solve into one or two sentences a person can act on, plus concrete fixes.

The message names the deciding fact of the newest release the user could have meant. Fixes come from
asking the same question with one constraint lifted: ignore the driver (→ the driver to install), ignore the
Python version (→ the Python to use), drop the version specs or extras (→ the newest release that does work).
With several frameworks, each is first solved alone; if each fits alone, the clash between their CUDA
library pins is the answer.
"""

from __future__ import annotations

from dataclasses import replace

from packaging.specifiers import SpecifierSet

from envpin.compat.model import Database
from envpin.resolver.builds import Build
from envpin.resolver.choice import build_plan
from envpin.resolver.fitness import Verdict, assess
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.provider import COMPANIONS, BuildProvider
from envpin.resolver.queries import closest_miss, has_cuda_builds, make_provider, pin_clash, resolve
from envpin.resolver.request import FRAMEWORKS, Request
from envpin.resolver.target import Target

CODES = {
    "platform": "unsupported-platform",
    "python": "python-unsupported",
    "installable": "not-installable",
    "kind": "no-gpu-build",
    "driver": "driver-too-old",
    "gpu": "gpu-unsupported",
}


def explain_failure(database: Database, target: Target, request: Request, provider: BuildProvider) -> Unsatisfiable:
    frameworks = request.solved_frameworks
    if len(frameworks) == 1:
        return _explain_framework(database, target, request, provider, frameworks[0])
    alone = {}
    for framework in frameworks:
        single = _only(request, framework)
        resolution = resolve(database, target, single)
        if resolution.chosen is None:
            return _explain_framework(database, target, single, resolution.provider, framework)
        alone[framework] = build_plan(database, target, single, resolution.provider, resolution.chosen)
    return _explain_clash(database, target, request, alone)


def _plan_if_any(database: Database, target: Target, request: Request) -> Plan | None:
    """The answer to the question with one constraint lifted, when it has one (its failure needs no words)."""
    resolution = resolve(database, target, request)
    if resolution.chosen is None:
        return None
    return build_plan(database, target, request, resolution.provider, resolution.chosen)


def _only(request: Request, framework: str) -> Request:
    names = FRAMEWORKS[framework]
    return replace(
        request,
        frameworks=tuple(f for f in request.frameworks if f == framework),
        packages=tuple(p for p in request.packages if p in names),
        specifiers={n: s for n, s in request.specifiers.items() if n in names},
        required=frozenset(n for n in request.required if n in names),
        extras={n: e for n, e in request.extras.items() if n in names},
    )


# ---------------------------------------------------------------- one framework


def _explain_framework(
    database: Database, target: Target, request: Request, provider: BuildProvider, framework: str
) -> Unsatisfiable:
    spec = request.specifiers.get(framework, SpecifierSet())
    extras = request.extras.get(framework, frozenset())
    scope = _scope(framework, spec, extras)
    builds = provider.builds(framework)
    matching = [b for b in builds if _matches(spec, b) and extras <= set(b.extras)]
    if not matching:
        return _answer(database, target, "no-matching-release", _no_release_message(builds, framework, spec, extras),
                       _fixes_without_specs(database, target, request))
    if any(provider.verdict(b).fits for b in matching):
        return _companion_conflict(database, target, request, provider)
    allowed = provider.allowed_kinds.get(framework, frozenset())
    possible = [b for b in matching if b.kind in allowed and target.platform in b.platforms]
    # The deciding fact is the check that fails after every earlier one passed, on the newest release
    # that gets that far: "no build has code for this GPU" beats "the newest release needs a newer driver"
    # when no driver would help.
    miss = closest_miss([provider.verdict(b) for b in (possible or matching)])
    also = ""
    if miss.rejection.check == "driver":
        # A newer driver is only the answer if some build would then fit; otherwise the GPU decides.
        without_driver = [_relaxed(database, target, provider, b, "driver") for b in (possible or matching)]
        if not any(v.fits for v in without_driver):
            miss = closest_miss(without_driver)
            also = f" (and driver {target.driver or 'none'} is too old for it as well)"
    newest_version = miss.build.version
    if not possible:
        code = "no-gpu-build"
        message = f"no {scope} release has an NVIDIA GPU build for {target.platform}"
    else:
        code = "no-driver" if miss.rejection.check == "driver" and target.driver is None else CODES[miss.rejection.check]
        several = len({b.version for b in matching}) > 1
        subject = f"no {scope} release fits this machine; the closest, {miss.build.label}," if several else (
            f"{framework} {newest_version} does not fit this machine:")
        message = f"{subject} {_lower_first(miss.rejection.message, miss.build)}{also}"
    fixes = _driver_fixes(database, target, provider, matching)
    fixes += _python_fixes(database, target, provider, matching)
    fixes += _fixes_without_specs(database, target, request)
    fixes += _platform_fixes(database, target, framework)
    if code in ("gpu-unsupported", "driver-too-old", "no-driver") and framework == "torch":
        cpu = next((b for b in builds if b.version == newest_version and b.kind == "cpu"), None)
        if cpu is not None:
            fixes.append(f"or use the CPU build: --spec 'torch=={newest_version}+cpu'")
    return _answer(database, target, code, message, fixes)


def _lower_first(message: str, build: Build) -> str:
    """Rejections start with the build's own name; after "the closest, torch 2.5.1+cu124," say it once."""
    for prefix in (f"{build.label} ", f"{build.flavor} "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def _scope(framework: str, spec: SpecifierSet, extras: frozenset[str]) -> str:
    extra_text = f"[{','.join(sorted(extras))}]" if extras else ""
    return f"{framework}{extra_text}{spec}"


def _matches(spec: SpecifierSet, build: Build) -> bool:
    local = f"+{build.flavor}" if build.framework == "torch" else ""
    return spec.contains(f"{build.version}{local}", prereleases=True)


def _no_release_message(builds: list[Build], framework: str, spec: SpecifierSet, extras: frozenset[str]) -> str:
    versions = sorted({b.version for b in builds})
    if not versions:
        return f"the database has no {framework} releases"
    known = f"{versions[0]} … {versions[-1]}"
    if extras:
        with_extras = sorted({b.version for b in builds if extras <= set(b.extras)})
        in_spec = [b for b in builds if _matches(spec, b)]
        if in_spec and with_extras:
            return (
                f"no {framework} release matching {framework}{spec} has the [{','.join(sorted(extras))}] extra; "
                f"the first release with it is {with_extras[0]}"
            )
        if not with_extras:
            return f"no {framework} release in the database has the [{','.join(sorted(extras))}] extra"
    return f"no {framework} release in the database matches {_scope(framework, spec, extras)} (it knows {known})"


def _answer(database: Database, target: Target, code: str, message: str, fixes: list[str]) -> Unsatisfiable:
    return Unsatisfiable(target, database.version, code, message, tuple(dict.fromkeys(fixes)))


def _relaxed(database: Database, target: Target, provider: BuildProvider, build: Build, lifted: str) -> Verdict:
    return assess(
        database,
        target,
        build,
        policy=provider.policy,
        allowed_kinds=provider.allowed_kinds.get(build.framework, frozenset()),
        ignore=frozenset({lifted}),
    )


def _driver_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[Build]) -> list[str]:
    for version in _versions(matching):
        unlocked = []
        for build in (b for b in matching if b.version == version and b.kind == "cuda"):
            rejection = provider.verdict(build).rejection
            if rejection and rejection.needs_driver and _relaxed(database, target, provider, build, "driver").fits:
                unlocked.append((rejection.needs_driver, build))
        if unlocked:
            driver, build = min(unlocked, key=lambda item: tuple(int(p) for p in item[0].split(".")))
            return [f"install NVIDIA driver {driver} or newer to use {build.label}"]
    return []


def _python_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[Build]) -> list[str]:
    for version in _versions(matching):
        for build in (b for b in matching if b.version == version):
            if provider.verdict(build).rejection and _relaxed(database, target, provider, build, "python").fits:
                pythons = build.pythons.get(target.platform, ())
                best = _nearest_python(target.python, pythons)
                return [f"use Python {best}: {build.label} has wheels for {', '.join(pythons)} on {target.platform} "
                        f"(--python {best})"]
    return []


def _versions(builds: list[Build]) -> list:
    return sorted({b.version for b in builds}, reverse=True)


def _nearest_python(wanted: str, pythons: tuple[str, ...]) -> str:
    def minor(version: str) -> int:
        return int(version.split(".")[1])

    return min(pythons, key=lambda p: (abs(minor(p) - minor(wanted)), -minor(p)))


def _fixes_without_specs(database: Database, target: Target, request: Request) -> list[str]:
    """Drop the version specs and the extras: what is the newest answer that does work?"""
    if not any(str(s) for s in request.specifiers.values()) and not request.extras:
        return []
    relaxed = replace(request, specifiers={}, extras={}, required=frozenset(FRAMEWORKS[f][0] for f in request.solved_frameworks))
    answer = _plan_if_any(database, target, relaxed)
    if answer is None:
        return []
    accelerators = answer.accelerators or {}
    pins = ", ".join(f"{p.requirement} ({accelerators.get(p.name, answer.accelerator)})"
                     for p in answer.packages if p.name in FRAMEWORKS)
    return [f"{pins} is the newest that runs on this machine (without the requested versions and extras)"]


def _platform_fixes(database: Database, target: Target, framework: str) -> list[str]:
    if target.os == "windows" and target.has_nvidia and has_cuda_builds(database, framework, "linux-x86_64"):
        return [f"or run Linux under WSL2, where {framework}'s Linux GPU builds work: "
                f"envpin solve --framework {framework} --os linux --driver {target.driver}"]
    return []


def _companion_conflict(database: Database, target: Target, request: Request, provider: BuildProvider) -> Unsatisfiable:
    fitting = [v.build for v in provider.fitting("torch") if _matches(request.specifiers.get("torch", SpecifierSet()), v.build)]
    clashes = []
    for name in COMPANIONS:
        spec = request.specifiers.get(name)
        if spec is None:
            continue
        releases = {b.record[0].version: b.record[0] for b in fitting}.values()
        paired = [r for r in releases if name in r.companions and spec.contains(r.companions[name].version, prereleases=True)]
        if not paired:
            versions = sorted({r.companions[name].version for r in releases if name in r.companions})
            torch_versions = sorted(str(r.version) for r in releases)
            span = ", ".join(torch_versions) if len(torch_versions) <= 4 else f"{torch_versions[0]} … {torch_versions[-1]}"
            clashes.append(
                f"{name}{spec} pairs with none of the torch releases that fit ({span}), "
                f"whose {name} releases are {', '.join(versions) or 'unknown'}"
            )
    message = "; ".join(clashes) or "the requested versions of torch and its companions do not pair with each other"
    return _answer(database, target, "conflicting-specs", message, _fixes_without_specs(database, target, request))


# ---------------------------------------------------------------- several frameworks


def _fixes_keeping_one_framework(database: Database, target: Target, request: Request) -> list[str]:
    """Keep one framework's versions as asked and free the others': what would sit beside it?"""
    constrained = [f for f in request.solved_frameworks if any(n in request.specifiers for n in FRAMEWORKS[f])]
    if len(constrained) < 2:
        return []  # freeing the others would change nothing (and would only ask this question again)
    fixes = []
    for framework in constrained:
        names = FRAMEWORKS[framework]
        kept = {n: s for n, s in request.specifiers.items() if n in names}
        relaxed = replace(request, specifiers=kept, extras={n: e for n, e in request.extras.items() if n in names})
        answer = _plan_if_any(database, target, relaxed)
        if answer is not None:
            beside = ", ".join(p.requirement for p in answer.packages if p.name in FRAMEWORKS and p.name not in names)
            asked = ", ".join(request.spec_text(n) for n in kept)
            fixes.append(f"keeping {asked}: {beside} fits beside it")
    return fixes


def _explain_clash(database: Database, target: Target, request: Request, alone: dict[str, Plan]) -> Unsatisfiable:
    """Each framework fits alone; their CUDA majors or library pins do not meet."""
    builds = {}
    for framework in alone:
        provider = make_provider(database, target, _only(request, framework))
        builds[framework] = [v.build for v in provider.fitting(framework) if v.build.pins_known
                             and _matches(request.specifiers.get(framework, SpecifierSet()), v.build)]
    first, *others = alone
    newest = {f: builds[f][0] for f in builds if builds[f]}
    clash = next((c for o in others if (c := pin_clash(newest[o], [newest[first]]))), None)
    message = "the frameworks cannot share one environment: " + (clash or "no releases with agreeing CUDA library pins")
    fixes = _fixes_keeping_one_framework(database, target, request)
    fixes += _fixes_without_specs(database, target, request)
    return _answer(database, target, "pins-clash", message, fixes)
