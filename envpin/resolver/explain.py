"""Turn a failed solve into one or two sentences a person can act on, plus concrete fixes.

The message names the deciding fact of the newest release the user could have meant. Fixes come from
asking the same question with one constraint lifted: ignore the driver (→ the driver to install), ignore the
Python version (→ the Python to use), drop the version specs or extras (→ the newest release that does work).
They come in the order of how little they change the request: a driver or Python for exactly what was asked,
the same release in another build (torch==2.5.1+cu124 → 2.5.1+cu118), the release nearest to the one asked for
(torch==2.6.* on an RTX 5090 → 2.7.0, the first with sm_120), the newest that runs, a CPU build, another OS.
With several frameworks, each is first solved alone; if each fits alone, the clash between their CUDA
library pins is the answer.

A solve on a conda channel (`--conda-source conda-forge|pytorch-channel`) is explained by the same code: its
builds were judged by the same checks. What only a conda channel can lack — the release (the pytorch channel
ended with 2.5.1), a companion's own build beside torch's — is said in the channel's words, and the fixes add the
other channels that do have an answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envpin.base.record import replace
from envpin.compat.drivers import driver_at_least, minimum_driver
from envpin.compat.model import Database
from envpin.resolver.accelerators import MPS, amd_fixes, carries
from envpin.resolver.builds import CHANNEL_NAMES, CONDA_PACKAGES, PYTORCH_CHANNEL_LAST, Build, builds_of
from envpin.resolver.choice import build_plan, jetson_notes
from envpin.resolver.fitness import Verdict, assess
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.provider import BuildProvider
from envpin.resolver.queries import closest_miss, has_cuda_builds, make_provider, pin_clash, resolve
from envpin.resolver.request import CHANNELS, PIP, PYTORCH_CHANNEL, Request
from envpin.resolver.target import Target
from envpin.vocabulary.frameworks import COMPANIONS, CPU_PACKAGES, FRAMEWORKS, PACKAGES

CODES = {
    "platform": "unsupported-platform",
    "python": "python-unsupported",
    "installable": "not-installable",
    "kind": "no-gpu-build",
    "driver": "driver-too-old",
    "gpu": "gpu-unsupported",
    "numpy": "numpy-conflict",
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
    names = PACKAGES[framework]
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
    asked = request.gpu_asked.get(framework)
    if asked is not None and target.has_nvidia and not has_cuda_builds(database, framework, target.platform, request.channel):
        # the project asks for this framework's GPU build (`jaxlib=0.3.15=*cuda*`) where it has none at all: that,
        # not which of its releases the database knows, is why nothing here can be what the file meant
        return _answer(database, target, "no-gpu-build",
                       f"{asked} asks for {framework}'s NVIDIA GPU build, and no {framework} release has one for "
                       f"{target.platform}",
                       [*_platform_fixes(database, target, framework, request.channel),
                        f"or use {framework}'s CPU build: {asked.rsplit(' (', 1)[0]} without its CUDA build, which "
                        "leaves the GPU unused"])
    builds = provider.builds(framework)
    matching = [b for b in builds if _matches(spec, b) and extras <= set(b.extras)]
    if not matching and request.channel != PIP:
        return _conda_no_release(database, target, request, framework, builds)
    if not matching:
        return _answer(database, target, "no-matching-release", _no_release_message(builds, framework, spec, extras),
                       _fixes_without_specs(database, target, request))
    if any(provider.verdict(b).fits for b in matching) and request.channel != PIP:
        return _conda_companion_conflict(database, target, request, provider)
    if any(provider.verdict(b).fits for b in matching):
        return _companion_conflict(database, target, request, provider)
    allowed = provider.allowed_kinds.get(framework, frozenset())
    possible = [b for b in matching if any(carries(b, kind, target.platform) for kind in allowed)
                and target.platform in b.platforms]
    # The deciding fact is the check that fails after every earlier one passed, on the newest release
    # that gets that far: "no build has code for this GPU" beats "the newest release needs a newer driver"
    # when no driver would help.
    # With no build of an allowed kind on the platform, the allowed kind's builds say which platforms they have.
    judged = possible or [b for b in matching if any(carries(b, kind, target.platform) for kind in allowed)] or matching
    miss = closest_miss([provider.verdict(b) for b in judged])
    if miss.why_not.check == "numpy" and request.numpy is not None:
        return _numpy_refusal(database, target, request, provider, framework, scope, matching)
    also = ""
    if miss.why_not.check == "driver":
        # A newer driver is only the answer if some build would then fit; otherwise the GPU decides.
        without_driver = [_relaxed(database, target, provider, b, "driver") for b in judged]
        if not any(v.fits for v in without_driver):
            miss = closest_miss(without_driver)
            also = f" (and driver {target.driver or 'none'} is too old for it as well)"
    newest_version = miss.build.version
    conda = request.channel != PIP
    if not possible and "cuda" in allowed:
        code = "no-gpu-build"
        message = f"no {scope} release has an NVIDIA GPU build for {target.platform}"
        if conda:
            versions = _versions(matching)
            named = f"{CONDA_PACKAGES[framework]} {versions[0]}" if len(versions) == 1 else f"{CONDA_PACKAGES[framework]} matching {scope}"
            message = f"{_where(request)} has no NVIDIA GPU build of {named} for {target.platform}"
    else:
        no_driver = miss.why_not.check == "driver" and target.driver is None and miss.build.kind == "cuda"
        code = "no-driver" if no_driver else CODES[miss.why_not.check]
        several = len({b.version for b in matching}) > 1
        subject = f"no {scope} release fits this machine; the closest, {miss.build.label}," if several else (
            f"{framework} {newest_version} does not fit this machine:")
        if conda:
            subject = f"no {scope} release on {miss.build.where} fits this machine; the closest, {miss.build.label}," if several else (
                f"{miss.build.where}'s {miss.build.conda_package} {newest_version} does not fit this machine: its {miss.build.conda_build} build")
        message = f"{subject} {_lower_first(miss.why_not.message, miss.build)}{also}{_missing_rocm(miss.build, allowed)}"
    # The fixes, the ones that change least of what was asked first: the machine as it could be (a driver, a
    # Python) for exactly the request; then the same release in another build; the release nearest the one asked
    # for; the newest that runs; a CPU build; another OS or channel.
    fixes = _driver_fixes(database, target, provider, matching)
    fixes += _amd_driver_fixes(database, target, provider, matching)
    fixes += _macos_fixes(database, target, provider, matching)
    fixes += _python_fixes(database, target, provider, matching)
    near = _fixes_near_the_request(database, target, request, framework)
    fixes += [text for text, _, _ in near]
    moves = {text: (framework, version) for text, _, version in near}
    fixes += _fixes_without_specs(database, target, request, already={pins for _, pins, _ in near})
    if "rocm" in allowed and code in ("gpu-unsupported", "unsupported-platform"):
        fixes += amd_fixes(database, target, builds,
                           lambda build, machine: _relaxed(database, machine, provider, build, "").fits)
    if "rocm" in allowed and framework == "tensorflow":
        fixes += _amd_tensorflow_fixes(database, target)
    if code == "gpu-unsupported":
        fixes += jetson_notes(database, target, framework)  # on a Jetson: NVIDIA's builds for it, or that there are none
    mps_miss = code == "no-gpu-build" and MPS in allowed
    if (code in ("gpu-unsupported", "driver-too-old", "no-driver") or mps_miss) and framework == "torch":
        cpu = next((b for b in builds if b.version == newest_version and b.kind == "cpu"
                    and (not conda or target.platform in b.platforms)), None)
        if cpu is not None:
            fixes.append(cpu_fix := f"or use the CPU build: --spec 'torch=={newest_version}+cpu'")
            moves[cpu_fix] = ("torch", str(newest_version))
    elif framework != "torch" and target.has_nvidia and request.channel == PIP:
        if framework == "jax" and code in ("driver-too-old", "no-gpu-build"):
            fixes += _jax_cuda11_fixes(database, target, request, matching)
        fixes += _cpu_build_fixes(database, target, request)
    fixes += _platform_fixes(database, target, framework, request.channel)
    fixes += _channel_fixes(database, target, request)
    return _answer(database, target, code, message, fixes, moves)


def _numpy_refusal(database: Database, target: Target, request: Request, provider: BuildProvider, framework: str,
                   scope: str, matching: list[Build]) -> Unsatisfiable:
    """Every build that runs here requires a numpy the project's bound excludes: the bound, and the newest release
    that would fit without it, with the numpy that release requires."""
    from envpin.resolver.numpy_fit import numpy_needed  # noqa: PLC0415 - only a solve with a numpy bound

    bound = request.numpy
    assert bound is not None
    freed = _plan_if_any(database, target, replace(request, numpy=None))
    build = freed.builds.get(framework) if freed is not None and freed.builds else None
    if build is None:
        build = closest_miss([provider.verdict(b) for b in matching]).build
    needed = numpy_needed(build, target)
    several = len({b.version for b in matching}) > 1
    subject = (f"no {scope} release that runs on this machine can be installed beside {bound.asked}: each one's own "
               "requirement on numpy excludes it" if several else
               f"{framework} {matching[0].version} cannot be installed beside {bound.asked}: its own requirement on "
               "numpy excludes it")
    message = f"{subject}; without it, {build.label} would fit (it requires numpy{needed})"
    fixes = []
    if freed is not None:
        fixes.append(f"allow numpy{needed} instead of {bound.asked}: {_pins(freed)} then fits")
    fixes += _numpy_python_fixes(database, target, request, matching)
    fixes += _fixes_without_specs(database, target, request)
    return _answer(database, target, "numpy-conflict", message, fixes)


def _numpy_python_fixes(database: Database, target: Target, request: Request, matching: list[Build]) -> list[str]:
    """The Python nearest the target's on which the bound has an answer (the releases' numpy requirement is often
    per Python: tensorflow 2.17.1 requires numpy>=1.23.5 on 3.11, >=1.26.0 on 3.12)."""
    pythons = {p for b in matching if b.pythons for p in b.pythons.get(target.platform, ()) if p != target.python}
    if not pythons:
        return []
    minor = int(target.python.split(".")[1])
    for python in sorted(pythons, key=lambda p: (abs(int(p.split(".")[1]) - minor), -int(p.split(".")[1]))):
        answer = _plan_if_any(database, replace(target, python=python), request)
        if answer is not None:
            return [f"use Python {python}: {_pins(answer)} fits beside {request.numpy.asked if request.numpy else 'it'} "
                    f"there (--python {python})"]
    return []


def _fixes_near_the_request(database: Database, target: Target, request: Request, framework: str,
                            ) -> list[tuple[str, str, str]]:
    """(fix, pins, the framework release it moves to) for the answers nearest to a version spec: the same release in another build (the spec
    without its local tag: torch==2.5.1+cu124 → 2.5.1+cu118), then the release nearest to the ones asked for
    that runs here (torch==2.6.* on an RTX 5090 → 2.7.0, the first with sm_120, not the newest)."""
    spec = request.specifiers.get(framework)
    if not spec or not str(spec):
        return []
    fixes: list[tuple[str, str, str]] = []
    public = SpecifierSet(",".join(f"{c.operator}{c.version.split('+')[0]}" for c in spec))
    if str(public) != str(spec):
        answer = _plan_if_any(database, target, _with_spec(request, framework, public))
        if answer is not None:
            pins = _pins(answer)
            pin = _framework_pin(answer, framework)
            return [(f"{pins}: the same release, in a build that runs on this machine (--spec '{pin}')", pins,
                     pin.partition("==")[2].split("+")[0])]  # nothing is nearer
    known = sorted({b.version for b in builds_of(database, framework, request.channel)})
    asked = [i for i, version in enumerate(known) if _matches_public(public, version)]
    if not asked:
        return fixes
    freed = make_provider(database, target, _with_spec(request, framework, None))
    fitting = {v.build.version for v in freed.fitting(framework)} - {known[i] for i in asked}
    # nearest first in release order; of two as near, the newer
    for version in sorted(fitting, key=lambda v: (min(abs(known.index(v) - i) for i in asked), -known.index(v)))[:2]:
        moved = _with_spec(request, framework, SpecifierSet(f"=={version}"))
        answer = _plan_if_any(database, target, moved)
        freed_companions: tuple[str, ...] = ()
        if answer is None and framework == "torch":
            # torchvision==0.13.* beside torch==1.12.*: a companion pinned to the old release moves with torch
            freed_companions = tuple(name for name in COMPANIONS if request.specifiers.get(name))
            for name in freed_companions:
                moved = _with_spec(moved, name, None)
            answer = _plan_if_any(database, target, moved) if freed_companions else None
        if answer is not None:
            pins = _pins(answer)
            also = "".join(f", without {name}{request.specifiers[name]}, which pairs only with other torch releases"
                           for name in freed_companions)
            if all(pins != done for _, done, _ in fixes):
                fixes.append((f"{pins} is the release nearest to {framework}{spec} that runs on this machine "
                              f"(--spec '{framework}=={version}'{also})", pins, str(version)))
            break
    return fixes


def _with_spec(request: Request, framework: str, spec: SpecifierSet | None) -> Request:
    specifiers = {n: s for n, s in request.specifiers.items() if n != framework}
    if spec is not None:
        specifiers[framework] = spec
    return replace(request, specifiers=specifiers)


def _matches_public(spec: SpecifierSet, version) -> bool:
    return spec.contains(str(version), prereleases=True)


def _framework_pin(answer: Plan, framework: str) -> str:
    return next((p.requirement for p in answer.packages if p.name == framework), framework)


# JAX's own find-links page, where its CUDA 11 jaxlib wheels (last: 0.4.25) are; PyPI never had them (jax.yaml)
JAX_FIND_LINKS = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"


def _jax_cuda11_fixes(database: Database, target: Target, request: Request, matching: list[Build]) -> list[str]:
    """A driver too old for CUDA 12 may still run CUDA 11: the newest JAX release whose CUDA 11 extra needs a jaxlib
    only on JAX's find-links page (jax.yaml `missing_extras`), named as a route with the driver it needs. envpin has
    not recorded that page's wheels, so it names the route and does not plan from it (docs/gpu-first.md)."""
    requirement = minimum_driver(database, "11", target.driver_os, request.policy)
    if requirement is None or target.driver is None or not driver_at_least(target.driver, requirement.minimum):
        return []
    releases = sorted({b.version: b for b in matching if b.channel == PIP}.values(), key=lambda b: b.version, reverse=True)
    for build in releases:
        extra = "cuda11_pip"  # the extra JAX's install docs of the 0.4 series name for the CUDA 11 wheels
        if extra in build.jax_release.missing_extras and target.python in build.jax_release.python:
            return [f"or take JAX's CUDA 11 route, which driver {target.driver} runs ({requirement.rule}: ≥ "
                    f"{requirement.minimum}): pip install 'jax[{extra}]=={build.version}' -f {JAX_FIND_LINKS} "
                    f"(jax {build.version}'s CUDA 11 jaxlib is only on that page; envpin has not recorded it, so it "
                    "does not plan from it, and the GPU's arch list was not checked)"]
    return []


def _amd_tensorflow_fixes(database: Database, target: Target) -> list[str]:
    """TensorFlow on an AMD GPU where PyPI's tensorflow-rocm (which ends at ROCm 6.0) does not fit: AMD's own wheels
    for the ROCm releases the AMD driver supports (tensorflow.yaml `amd_wheels:`), named and not planned from."""
    supported = None
    if target.amdgpu_driver:
        wanted = ".".join(target.amdgpu_driver.split(".")[:2])
        row = next((r for r in database.accelerators.amd_drivers if r.driver == wanted), None)
        supported = set(row.rocm) if row is not None else None
    rows = [w for w in database.tensorflow_amd_wheels if supported is None or w.rocm in supported]
    if not rows:
        return []
    listed = "; ".join(f"ROCm {w.rocm}: tensorflow-rocm {', '.join(w.tensorflow)}" for w in rows)
    driver = f" that AMD GPU driver {target.amdgpu_driver} supports" if supported is not None else ""
    return [f"or AMD's own tensorflow-rocm wheels, off PyPI from ROCm 6.1, at {rows[0].url} (pip install "
            f"tensorflow-rocm==<version> -f <the ROCm release's folder there>), for the ROCm releases{driver}: {listed} "
            "(AMD's ROCm docs); envpin has not recorded their files or gfx lists, so it names them and does not plan "
            "from them"]


def _cpu_build_fixes(database: Database, target: Target, request: Request) -> list[str]:
    """TensorFlow and JAX have no `+cpu` tag to ask for: their CPU build is what a machine without the NVIDIA
    driver gets, so the fix says that (TensorFlow on native Windows after 2.10 has only its CPU build)."""
    answer = _plan_if_any(database, replace(target, driver=None, driver_cuda=None), request)
    if answer is None:
        return []
    return [f"or use the CPU build: {_pins(answer)}, which leaves the GPU unused (--driver none)"]


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


def _no_release_message(builds: Sequence[Build], framework: str, spec: SpecifierSet, extras: frozenset[str]) -> str:
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


def _answer(database: Database, target: Target, code: str, message: str, fixes: list[str],
            moves: dict[str, tuple[str, str]] | None = None) -> Unsatisfiable:
    unique = list(dict.fromkeys(fixes))
    moves = dict(moves or {})
    if unique and unique[0].startswith("or "):  # an alternative ("or use the CPU build") that comes first is the first
        first = unique[0]
        unique[0] = first[len("or "):]
        if first in moves:
            moves[unique[0]] = moves.pop(first)
    return Unsatisfiable(target, database.version, code, message, tuple(unique), moves)


def _relaxed(database: Database, target: Target, provider: BuildProvider, build: Build, lifted: str) -> Verdict:
    return assess(
        database,
        target,
        build,
        policy=provider.policy,
        allowed_kinds=provider.allowed_kinds.get(build.framework, frozenset()),
        ignore=frozenset({lifted}),
        numpy=provider.numpy,
    )


def _driver_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[Build]) -> list[str]:
    for release in _releases(matching):
        unlocked = []
        for build in (b for b in release if b.kind == "cuda"):
            rejection = provider.verdict(build).rejection
            if rejection and rejection.needs_driver and _relaxed(database, target, provider, build, "driver").fits:
                unlocked.append((rejection.needs_driver, build))
        if unlocked:
            driver, build = min(unlocked, key=lambda item: tuple(int(p) for p in item[0].split(".")))
            return [f"install NVIDIA driver {driver} or newer to use {build.label}"]
    return []


def _missing_rocm(build: Build, allowed: frozenset[str]) -> str:
    """A JAX release whose ROCm extra cannot resolve says why (jax.yaml `missing_extras`: its plugin is not on PyPI)."""
    if build.framework != "jax" or build.channel != PIP or "rocm" not in allowed or build.kind == "rocm":
        return ""
    missing = [f"jax[{name}] {build.version} {text}" for name, text in build.jax_release.missing_extras.items()
               if name.startswith("rocm")]
    return f"; {'; '.join(missing)}" if missing else ""


def _amd_driver_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[Build]) -> list[str]:
    """A ROCm build refused by the AMD kernel driver: the oldest driver release that supports its ROCm."""
    for release in _releases(matching):
        for build in (b for b in release if b.kind == "rocm"):
            rejection = provider.verdict(build).rejection
            if rejection and rejection.check == "driver" and _relaxed(database, target, provider, build, "driver").fits:
                rocm = ".".join((build.rocm or "").split(".")[:2])
                # newer AMD drivers drop old user space, so the drivers that list this ROCm are named, oldest first
                drivers = [row.driver for row in reversed(database.accelerators.amd_drivers) if rocm in row.rocm]
                needs = f"an AMD GPU driver that supports ROCm {rocm} ({', '.join(drivers)} in AMD's driver/user-space matrix)" if (
                    drivers) else (f"an AMD GPU driver that supports ROCm {rocm} (the database's copy of AMD's "
                                   "driver/user-space matrix has no driver row for it yet)")
                uses = "bundles" if build.rocm_build is None else "was built for"
                return [f"install {needs} to use {build.label}, which {uses} ROCm {build.rocm}"]
    return []


def _macos_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[Build]) -> list[str]:
    """On Apple silicon where no build's MPS runs on this macOS (or none installs): the macOS the newest release
    needs for its MPS backend and its wheel, and the smallest update that brings MPS (an older release)."""
    allowed = provider.allowed_kinds.get(matching[0].framework, frozenset()) if matching else frozenset()
    if MPS not in allowed or target.macos is None:
        return []
    needs: list[tuple[str, Build, str]] = []  # (macOS needed, build, its MPS minimum), newest release first
    for release in _releases(matching):
        for build in (b for b in release if b.channel == PIP):
            support = build.torch_record[0].macos
            if support is None:
                continue
            needed = max(support.mps_macos, support.wheel_macos_for(target.python), key=_numbers)
            if _relaxed(database, replace(target, macos=needed), provider, build, "").fits:
                needs.append((needed, build, support.mps_macos))
                break
    if not needs:
        return []
    smallest = min(needs, key=lambda need: _numbers(need[0]))  # min keeps the first, the newest, of equal needs
    chosen = [needs[0]] if smallest[0] == needs[0][0] else [needs[0], smallest]
    return [f"update macOS to {needed} or newer to use torch {build.version} with MPS (its MPS backend needs macOS "
            f"≥ {minimum})" for needed, build, minimum in chosen]


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _python_fixes(database: Database, target: Target, provider: BuildProvider, matching: list[Build]) -> list[str]:
    for release in _releases(matching):
        for build in release:
            if build.pythons is None:
                continue  # a build whose Pythons are not recorded is never refused for its Python
            if provider.verdict(build).rejection and _relaxed(database, target, provider, build, "python").fits:
                pythons = build.pythons.get(target.platform, ())
                best = _nearest_python(target.python, pythons)
                return [f"use Python {best}: {build.label} has wheels for {', '.join(pythons)} on {target.platform} "
                        f"(--python {best})"]
    return []


def _versions(builds: list[Build]) -> list:
    return sorted({b.version for b in builds}, reverse=True)


def _releases(builds: list[Build]) -> list[list[Build]]:
    """The builds of each release, newest release first (each release's in their order)."""
    grouped: dict[Version, list[Build]] = {}
    for build in builds:
        grouped.setdefault(build.version, []).append(build)
    return [grouped[version] for version in sorted(grouped, reverse=True)]


def _nearest_python(wanted: str, pythons: tuple[str, ...]) -> str:
    def minor(version: str) -> int:
        return int(version.split(".")[1])

    return min(pythons, key=lambda p: (abs(minor(p) - minor(wanted)), -minor(p)))


def _fixes_without_specs(database: Database, target: Target, request: Request, already: set[str] | None = None) -> list[str]:
    """Drop the version specs and the extras: what is the newest answer that does work? (Not said again when a
    nearer fix already offers the same pins.)"""
    if not any(str(s) for s in request.specifiers.values()) and not request.extras:
        return []
    relaxed = replace(request, specifiers={}, extras={}, required=frozenset(PACKAGES[f][0] for f in request.solved_frameworks))
    answer = _plan_if_any(database, target, relaxed)
    if answer is None or _pins(answer) in (already or set()):
        return []
    return [f"{_pins(answer)} is the newest that runs on this machine (without the requested versions and extras)"]


def _pins(answer: Plan) -> str:
    """The frameworks of an answer in a fix: pip pins with their flavor, conda builds by name."""
    if answer.channel != PIP:
        return ", ".join(build.label for build in answer.builds.values())
    accelerators = answer.accelerators or {}
    cpu_packages = {name: framework for framework, names in CPU_PACKAGES.items() for name in names}
    return ", ".join(f"{p.requirement} ({accelerators.get(cpu_packages.get(p.name, p.name), answer.accelerator)})"
                     for p in answer.packages if p.name in FRAMEWORKS or p.name in cpu_packages)


def _platform_fixes(database: Database, target: Target, framework: str, channel: str = PIP) -> list[str]:
    if target.os == "windows" and target.has_nvidia and has_cuda_builds(database, framework, "linux-x86_64", channel):
        source = "" if channel == PIP else f" --conda-source {channel}"
        return [f"or run Linux under WSL2, where {framework}'s Linux GPU builds work: "
                f"envpin solve --framework {framework} --os linux --driver {target.driver}{source}"]
    return []


# ---------------------------------------------------------------- conda channels


def _where(request: Request) -> str:
    return CHANNEL_NAMES[request.channel]


def _channel_fixes(database: Database, target: Target, request: Request) -> list[str]:
    """On a conda channel: the other sources (conda channels and pip wheels) that do answer the same request."""
    if request.channel == PIP:
        return []
    fixes = []
    for other in (c for c in CHANNELS if c != request.channel):
        answer = _plan_if_any(database, target, replace(request, channel=other))
        if answer is not None:
            fixes.append(f"--conda-source {other}: {_pins(answer)}")
    return fixes


def _conda_no_release(
    database: Database, target: Target, request: Request, framework: str, builds: Sequence[Build]
) -> Unsatisfiable:
    """No build of the channel matches the specs: the channel lacks the framework, the release, or the build."""
    where, package = _where(request), CONDA_PACKAGES[framework]
    spec = request.specifiers.get(framework, SpecifierSet())
    extras = request.extras.get(framework, frozenset())
    scope = _scope(framework, spec, extras)
    channel_fixes = _channel_fixes(database, target, request)
    if not builds:
        message = (f"the pytorch channel has only PyTorch, not {framework}" if request.channel == PYTORCH_CHANNEL
                   else f"{where} has no {package} releases in database {database.version}")
        return _answer(database, target, "no-matching-release", message, channel_fixes)
    have = sorted({b.version for b in builds}, reverse=True)
    asked = sorted({b.version for b in builds_of(database, framework) if _matches(spec, b)}, reverse=True)
    named = str(asked[0]) if len(asked) == 1 else f"release matching {scope}"
    fixes = []
    present = [v for v in asked if v in have]
    if present:
        tags = ", ".join(b.conda_build for b in builds if b.version == present[0])
        message = f"{where}'s {package} {present[0]} has no build matching {scope} (its builds: {tags})"
    elif request.channel == PYTORCH_CHANNEL and asked and asked[0] > PYTORCH_CHANNEL_LAST:
        message = (f"the pytorch channel ended with pytorch {PYTORCH_CHANNEL_LAST} (pytorch/pytorch#138506); "
                   f"pytorch {named} is not on it")
        fixes.append(f"--spec 'torch<={PYTORCH_CHANNEL_LAST}'")
    else:
        message = f"{where} has no {package} {named} in database {database.version}"
        nearest = _nearest(have, asked[0]) if asked else None
        if nearest is not None:
            fixes.append(f"--spec '{framework}=={nearest}' (the nearest release {where} has)")
    fixes += _fixes_without_specs(database, target, request)
    return _answer(database, target, "no-matching-release", message, fixes + channel_fixes)


def _nearest(versions: list, wanted) -> object | None:
    """The newest of `versions` not newer than `wanted`, else the oldest newer one."""
    older = [v for v in versions if v <= wanted]
    if older:
        return max(older)
    return min(versions) if versions else None


def _conda_companion_conflict(database: Database, target: Target, request: Request, provider: BuildProvider) -> Unsatisfiable:
    """torch fits, its companions do not come with it: on conda-forge each is a package with CUDA builds of its
    own, and every one must have been built for the CUDA of one torch build that runs here."""
    where = _where(request)
    spec = request.specifiers.get("torch", SpecifierSet())
    fitting = [v.build for v in provider.fitting("torch") if _matches(spec, v.build)]
    newest = max(b.version for b in fitting)
    release = [b for b in fitting if b.version == newest]
    cudas: list[str] = sorted((b.cuda for b in release if b.kind == "cuda" and b.cuda),
                              key=lambda c: tuple(int(p) for p in c.split(".")))
    so_far = f"{release[0].conda_package} {newest}"
    code, message = "no-matching-release", None
    fixes = ["ask for torch alone (--spec 'torch==…' without --framework torch)"] if "torch" in request.frameworks else []
    for name in (n for n in COMPANIONS if n in provider.companions):
        pairing = release[0].companions.get(name)
        if pairing is None:
            continue
        label = f"{name} {pairing.version}"
        wanted = request.specifiers.get(name)
        if wanted is not None and not wanted.contains(pairing.version, prereleases=True):
            code, message = "conflicting-specs", f"{name}{wanted} does not pair with {so_far} on {where}, which pairs {label}"
            break
        if request.channel == PYTORCH_CHANNEL:
            continue  # the channel's own pairs, built beside every build of the release
        own = database.conda_release(request.channel, name, pairing.version)
        if own is None:
            have = sorted((r.version for r in database.conda_releases if (r.strategy, r.framework) == (request.channel, name)),
                          reverse=True)
            shown = ", ".join(str(v) for v in have[:8]) + (" …" if len(have) > 8 else "") if have else "none"
            message = f"{where} has no {label} (database {database.version}; it has {shown})"
            break
        if target.platform not in own.cpu and not own.cuda.get(target.platform):
            message = f"{where} has no {label} build for {target.platform}"
            break
        if not cudas:
            if target.platform not in own.cpu:
                message = f"{where} has no CPU build of {label} for {target.platform}"
                break
            continue
        built = own.cuda.get(target.platform, ())
        shared = [c for c in cudas if c in built]
        if not shared:
            leave = "leaves" if " and " not in so_far else "leave"
            message = (f"{where}'s {label} is built for CUDA {', '.join(built) or 'none'} on {target.platform}, and "
                       f"{so_far} {leave} CUDA {', '.join(cudas)}: no CUDA build fits all")
            break
        cudas = shared
        so_far = f"{so_far} and {label}"
    if message is None:
        message = f"the requested versions of torch and its companions do not pair with each other on {where}"
        code = "conflicting-specs"
    fixes += _fixes_without_specs(database, target, request)
    fixes += _channel_fixes(database, target, request)
    return _answer(database, target, code, message, fixes)


def _companion_conflict(database: Database, target: Target, request: Request, provider: BuildProvider) -> Unsatisfiable:
    fitting = [v.build for v in provider.fitting("torch") if _matches(request.specifiers.get("torch", SpecifierSet()), v.build)]
    clashes = []
    for name in COMPANIONS:
        spec = request.specifiers.get(name)
        if spec is None:
            continue
        releases = {b.torch_record[0].version: b.torch_record[0] for b in fitting}.values()
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
    constrained = [f for f in request.solved_frameworks if any(n in request.specifiers for n in PACKAGES[f])]
    if len(constrained) < 2:
        return []  # freeing the others would change nothing (and would only ask this question again)
    fixes = []
    for framework in constrained:
        names = PACKAGES[framework]
        kept = {n: s for n, s in request.specifiers.items() if n in names}
        relaxed = replace(request, specifiers=kept, extras={n: e for n, e in request.extras.items() if n in names})
        answer = _plan_if_any(database, target, relaxed)
        if answer is not None:
            beside = ", ".join(p.requirement for p in answer.packages if p.name in FRAMEWORKS and p.name not in names)
            asked = ", ".join(request.spec_text(n) for n in kept)
            fixes.append(f"keeping {asked}: {beside} fits beside it")
    return fixes


def _numpy_clash_of(target: Target, alone: dict[str, Plan]) -> str | None:
    """Where the frameworks' own answers need numpy versions no one numpy satisfies (torch 2.2.2's numpy<2 beside
    jax 0.10.2's numpy>=2.0), in words."""
    from envpin.resolver.numpy_fit import meet  # noqa: PLC0415 - only a failed solve of several frameworks
    from envpin.resolver.provider import numpy_of  # noqa: PLC0415 - as above

    builds = [b for plan in alone.values() for b in plan.builds.values()]
    for position, build in enumerate(builds):
        for other in builds[position + 1:]:
            mine, theirs = numpy_of(build, target), numpy_of(other, target)
            if mine and theirs and not meet(mine, theirs):
                return f"{build.label} needs numpy{mine} and {other.label} numpy{theirs}: no numpy serves both"
    return None


def _explain_clash(database: Database, target: Target, request: Request, alone: dict[str, Plan]) -> Unsatisfiable:
    """Each framework fits alone; their CUDA majors or library pins do not meet."""
    builds = {}
    for framework in alone:
        provider = make_provider(database, target, _only(request, framework))
        builds[framework] = [v.build for v in provider.fitting(framework) if v.build.pins_known
                             and _matches(request.specifiers.get(framework, SpecifierSet()), v.build)]
    first, *others = alone
    newest = {f: builds[f][0] for f in builds if builds[f]}
    clash = next((c for o in others if first in newest and o in newest
                  and (c := pin_clash(newest[o], [newest[first]]))), None)
    numpy = _numpy_clash_of(target, alone)
    message = "the frameworks cannot share one environment: " + (
        clash or numpy or "no releases with agreeing CUDA library pins")
    fixes = _fixes_keeping_one_framework(database, target, request)
    fixes += _fixes_without_specs(database, target, request)
    fixes += _channel_fixes(database, target, request)
    return _answer(database, target, "pins-clash", message, fixes)
