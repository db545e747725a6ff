"""A solver Plan as a conda-native environment, for one channel strategy (pure: values in, values out).

- `pip`: conda's python and pip, and the Plan's pins in the `pip:` list with the PyTorch index: what
  `--format environment.yml` writes. The only route for torch >= 2.6, after the pytorch channel ended.
- `conda-forge`: `pytorch=2.4.0=cuda120*` (`tensorflow=…=cuda…*`, `jaxlib=…=cuda…*`) with `cuda-version` bounded.
  conda-forge's CUDA builds depend only on `__cuda`, and `cuda-version 12.x` constrains `__cuda >=12`, so the
  solver accepts any driver of the same major and, left alone, would take a newer CPU build or CUDA libraries
  the driver's policy does not allow; the build string and the `cuda-version` bounds say what envpin decided.
- `pytorch-channel`: `pytorch=2.5.1=*cuda12.4*` with `pytorch-cuda=12.4` on `-c pytorch -c nvidia` (1.13–2.5.1),
  `cudatoolkit=11.x` for 1.12, `cpuonly` for the CPU build. The pytorch-cuda metapackage does not depend on
  `__cuda`, so nothing in the channel stops a 12.4 build on an older driver: envpin checks it here.

Which builds exist is the database's `conda.yaml`; the driver rules are `envpin.compat.drivers`.
"""

from __future__ import annotations

from dataclasses import dataclass

from envpin.compat.drivers import driver_at_least, minimum_driver
from envpin.compat.model import CondaRelease, Database
from envpin.conda.errors import CondaInputError, CondaUnavailable
from envpin.resolver.plan import PinnedPackage, Plan
from envpin.resolver.target import Target
from envpin.vocabulary.frameworks import PINNED_FRAMEWORK_OF as _FRAMEWORK_OF  # plan package -> its framework

STRATEGIES = ("pip", "conda-forge", "pytorch-channel")
PYTORCH_CHANNEL_LAST = "2.5.1"  # pytorch/pytorch#138506: "2.5 will be the last release … on the pytorch channel"

# The conda package that carries each framework's CUDA build (conda-forge feedstock outputs)
_CONDA_FORGE_PACKAGE = {"torch": "pytorch", "tensorflow": "tensorflow", "jax": "jaxlib"}


@dataclass(frozen=True)
class CondaEnvironment:
    """What an environment.yml holds, plus why."""

    strategy: str
    channels: tuple[str, ...]
    dependencies: tuple[str, ...]  # conda match specs: "python=3.12", "pytorch=2.4.0=cuda120*"
    pip: tuple[str, ...] = ()  # lines of the `pip:` section
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Part:
    """One framework's share of the environment."""

    dependencies: tuple[str, ...]
    channels: tuple[str, ...]
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    cuda: str | None = None  # the CUDA X.Y of a conda-forge CUDA build, for the shared `cuda-version` bounds


def conda_environment(
    plan: Plan, database: Database, strategy: str, policy: str = "minor", project=None
) -> CondaEnvironment:
    """The environment for `plan` under `strategy`; CondaUnavailable (exit 1) when the strategy has no build
    that fits, with the ways out. `project` (envpin.project) adds a repository's own conda and pip packages."""
    if strategy not in STRATEGIES:
        raise CondaInputError(f"--conda-source {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if strategy == "pip":
        return _pip_environment(plan, project)
    groups = _by_framework(plan.packages)
    accelerators = {f: (plan.accelerators or {}).get(f, plan.accelerator) for f in groups}
    parts = {}
    if strategy == "pytorch-channel":
        for framework, packages in groups.items():
            parts[framework] = _pytorch_channel(database, plan.target, framework, packages, accelerators[framework], policy)
        return _assemble(plan, strategy, parts, None, project)
    major = _shared_cuda_major(database, plan.target, policy, groups, accelerators)
    for framework, packages in groups.items():
        parts[framework] = _conda_forge_choice(database, plan.target, framework, packages, accelerators[framework],
                                               policy, major)
    return _assemble(plan, strategy, parts, _cuda_version_bounds(plan.target, policy, parts), project)


# ---------------------------------------------------------------- pip (what envpin emits without --conda-source)


def _pip_environment(plan: Plan, project) -> CondaEnvironment:
    from envpin.emit.common import pip_lines

    channels = tuple(project.channels) if project is not None and project.channels else ("conda-forge",)
    conda = tuple(sorted(project.conda_packages)) if project is not None else ()
    return CondaEnvironment(
        strategy="pip",
        channels=channels,
        dependencies=(f"python={plan.target.python}", "pip", *conda),
        pip=tuple(pip_lines(plan, project)),
        reasons=("conda supplies python and pip; the GPU frameworks are the pinned pip wheels, with their own CUDA",),
    )


# ---------------------------------------------------------------- conda-forge


def _shared_cuda_major(
    database: Database, target: Target, policy: str, groups: dict[str, list[PinnedPackage]], accelerators: dict[str, str]
) -> int | None:
    """The newest CUDA major in which every GPU framework has a conda-forge build that runs here: the builds of one
    environment share conda-forge's CUDA libraries, so they must agree on the major."""
    majors = None
    for framework, packages in groups.items():
        if not accelerators[framework].startswith("cu"):
            continue
        fitting = {int(c.split(".")[0]) for c in _conda_forge_fitting(database, target, policy, packages, framework)}
        majors = fitting if majors is None else majors & fitting
        if not majors:
            raise CondaUnavailable(
                f"the conda-forge GPU builds of {', '.join(groups)} share no CUDA major that runs here",
                ("solve the frameworks one at a time", "--conda-source pip"),
            )
    return max(majors) if majors else None


def _conda_forge_choice(
    database: Database, target: Target, framework: str, packages: list[PinnedPackage], accelerator: str, policy: str,
    major: int | None,
) -> _Part:
    main = packages[0]
    version = _base_version(main.version)
    package = _CONDA_FORGE_PACKAGE[framework]
    release = _release(database, "conda-forge", framework, version, package, target)
    warnings = list(_unverified(release))
    if accelerator.startswith("cu"):
        fitting = _conda_forge_fitting(database, target, policy, packages, framework)
        cuda = max((c for c in fitting if int(c.split(".")[0]) == major), key=_cuda_tuple)
        build = f"cuda{cuda.replace('.', '')}*"
        reasons = [f"conda-forge's {package} {version} {build[:-1]} build (built with CUDA {cuda}; "
                   f"CUDA builds on conda-forge for {target.platform}: {', '.join(release.cuda[target.platform])})"]
        warnings.append(f"conda-forge's {package} builds: their GPU architecture lists are not in the database, so "
                        "the compute capability was checked only against what the CUDA toolkit can target")
    else:
        cuda = None
        build = "cpu*"
        reasons = [_cpu_build(package, version, accelerator, target, release, "conda-forge")]
    dependencies = []
    if framework == "jax":
        dependencies.append(f"jax={version}")  # the noarch `jax`; its CUDA is in jaxlib
    dependencies.append(f"{package}={version}={build}")
    for companion in packages[1:]:
        dependencies.append(_conda_forge_companion(database, target, companion, cuda))
    return _Part(tuple(dependencies), ("conda-forge",), tuple(reasons), tuple(warnings), cuda)


def _conda_forge_fitting(
    database: Database, target: Target, policy: str, packages: list[PinnedPackage], framework: str
) -> list[str]:
    """The CUDA builds of the framework's release that run here and that every companion (torchvision,
    torchaudio) was also built for: conda-forge's companions are per-CUDA builds of their own."""
    package = _CONDA_FORGE_PACKAGE[framework]
    release = _release(database, "conda-forge", framework, _base_version(packages[0].version), package, target)
    fitting = _fitting_cuda(database, release, target, policy, package, "conda-forge")
    so_far = f"{package} {release.version}"
    for companion in packages[1:]:
        label = f"{companion.name} {_base_version(companion.version)}"
        built = _companion_release(database, companion).cuda.get(target.platform, ())
        shared = [c for c in fitting if c in built]
        if not shared:
            raise CondaUnavailable(
                f"conda-forge's {label} is built for CUDA {', '.join(built) or 'none'} on {target.platform}, and "
                f"{so_far} leave{'s' if ' and ' not in so_far else ''} CUDA {', '.join(fitting)}: no CUDA build fits all",
                ("ask for torch alone (--spec 'torch==…' without --framework torch)", "--conda-source pip"),
            )
        fitting = shared
        so_far = f"{so_far} and {label}"
    return fitting


def _companion_release(database: Database, package: PinnedPackage) -> CondaRelease:
    version = _base_version(package.version)
    release = database.conda_release("conda-forge", package.name, version)
    if release is None:
        have = _versions(database, "conda-forge", package.name)
        raise CondaUnavailable(
            f"conda-forge has no {package.name} {version} (database {database.version}; it has {have})",
            ("ask for torch alone (--spec 'torch==…' without --framework torch)", "--conda-source pytorch-channel or pip"),
        )
    return release


def _conda_forge_companion(database: Database, target: Target, package: PinnedPackage, cuda: str | None) -> str:
    release = _companion_release(database, package)
    if cuda is None and target.platform not in release.cpu:
        raise CondaUnavailable(f"conda-forge has no CPU build of {package.name} {release.version} for {target.platform}",
                               ("--conda-source pip",))
    # No build string: conda-forge's torchvision/torchaudio CUDA builds require a CUDA pytorch, so pinning
    # pytorch's build is enough to keep both on the GPU (the CUDA chosen is one every companion was built for).
    return f"{package.name}={release.version}"


def _cuda_version_bounds(target: Target, policy: str, parts: dict[str, _Part]) -> str | None:
    """`cuda-version>=LOW,<HIGH` shared by every conda-forge CUDA build: at least what each build was made with,
    at most what the driver runs under the policy (the whole major by minor-version compatibility, the driver's own
    CUDA under `strict`)."""
    chosen = [p.cuda for p in parts.values() if p.cuda]  # one major: _shared_cuda_major saw to it
    if not chosen:
        return None
    low = max(chosen, key=_cuda_tuple)
    major = int(low.split(".")[0])
    if policy == "strict" and target.driver_cuda and int(target.driver_cuda.split(".")[0]) == major:
        return f"cuda-version>={low},<={target.driver_cuda}"
    return f"cuda-version>={low},<{major + 1}"


# ---------------------------------------------------------------- the pytorch channel


def _pytorch_channel(
    database: Database, target: Target, framework: str, packages: list[PinnedPackage], accelerator: str, policy: str
) -> _Part:
    if framework != "torch":
        raise CondaUnavailable(
            f"the pytorch channel has only PyTorch, not {framework}",
            ("--conda-source conda-forge", "--conda-source pip"),
        )
    version = _base_version(packages[0].version)
    release = _release(database, "pytorch-channel", "torch", version, "pytorch", target)
    warnings = list(_unverified(release))
    reasons = []
    if accelerator.startswith("cu"):
        digits = accelerator[2:]  # "cu124" -> 12.4: the CUDA of the pip build envpin chose
        prefer = f"{digits[:-1]}.{digits[-1]}" if digits.isdigit() else None
        cuda = _choose_cuda(database, release, target, policy, "pytorch", "the pytorch channel", prefer)
        dependencies = [f"pytorch={version}=*cuda{cuda}*", f"{release.cuda_package}={cuda}"]
        channels = ("pytorch", "nvidia", "conda-forge") if release.cuda_package == "pytorch-cuda" else ("pytorch", "conda-forge")
        reasons.append(
            f"the pytorch channel's pytorch {version} CUDA {cuda} build with {release.cuda_package}={cuda}"
            + (" (the CUDA of the pip build envpin chose)" if cuda == prefer else "")
        )
        if release.cuda_package == "cudatoolkit":
            reasons.append("torch 1.12 and older use the legacy `cudatoolkit` package; conda-forge supplies it "
                           "(the official 1.12 command for CUDA 11.6 adds -c conda-forge)")
    else:
        if target.platform not in release.cpu:
            raise CondaUnavailable(f"the pytorch channel has no CPU build of pytorch {version} for {target.platform} "
                                   "in the database", ("--conda-source conda-forge", "--conda-source pip"))
        dependencies = [f"pytorch={version}", "cpuonly"]
        channels = ("pytorch", "conda-forge")
        reasons.append(_cpu_build("pytorch", version, accelerator, target, release, "the pytorch channel"))
    for companion in packages[1:]:
        paired = release.companions.get(companion.name)
        if paired is None:
            raise CondaUnavailable(f"the database pairs no {companion.name} with the pytorch channel's pytorch {version}")
        if paired != _base_version(companion.version):
            reasons.append(f"the pytorch channel pairs pytorch {version} with {companion.name} {paired} "
                           f"(pip: {_base_version(companion.version)})")
        dependencies.append(f"{companion.name}={paired}")
    return _Part(tuple(dependencies), channels, tuple(reasons), tuple(warnings))


# ---------------------------------------------------------------- choosing a CUDA build


def _choose_cuda(
    database: Database, release: CondaRelease, target: Target, policy: str, package: str, where: str, prefer: str | None
) -> str:
    """The CUDA build to use: the one the pip plan chose when the channel has it and it fits, else the newest that
    fits."""
    fitting = _fitting_cuda(database, release, target, policy, package, where)
    return prefer if prefer in fitting else max(fitting, key=_cuda_tuple)


def _fitting_cuda(
    database: Database, release: CondaRelease, target: Target, policy: str, package: str, where: str
) -> list[str]:
    """The release's CUDA builds for the platform that the driver runs under the policy and whose toolkit can
    target every GPU; CondaUnavailable naming the decisive fact when there is none."""
    builds = release.cuda.get(target.platform, ())
    if not builds:
        raise CondaUnavailable(
            f"{where} has no CUDA build of {package} {release.version} for {target.platform} "
            f"(database {database.version})",
            ("--conda-source pip",) + (("a CPU build: --driver none",) if target.platform in release.cpu else ()),
        )
    refusals = []
    fitting = []
    for cuda in builds:
        refusal = _driver_refusal(database, target, cuda, policy) or _gpu_refusal(database, target, cuda)
        if refusal:
            refusals.append(refusal)
        else:
            fitting.append(cuda)
    if not fitting:
        raise CondaUnavailable(f"no CUDA build of {package} {release.version} on {where} runs here: {refusals[-1]}")
    return fitting


def _driver_refusal(database: Database, target: Target, cuda: str, policy: str) -> str | None:
    requirement = minimum_driver(database, cuda, target.os, policy)
    if requirement is None:
        return f"CUDA {cuda}'s driver minimum is not in the database"
    if target.driver is None or not driver_at_least(target.driver, requirement.minimum):
        return (f"CUDA {cuda} needs driver >= {requirement.minimum} ({requirement.rule}), "
                f"the target has {target.driver or 'none'}")
    return None


def _gpu_refusal(database: Database, target: Target, cuda: str) -> str | None:
    """A GPU older than anything the build's toolkit can compile for cannot run it, whatever its arch list."""
    toolkit = database.toolkits.get(cuda)
    if toolkit is None or not toolkit.targets:
        return None
    oldest = min(toolkit.targets)
    for gpu in target.gpus:
        if gpu.compute_capability < oldest:
            return (f"CUDA {cuda} targets compute capability {oldest} and newer; "
                    f"{gpu.name} is {gpu.compute_capability}")
    return None


# ---------------------------------------------------------------- putting it together


def _assemble(plan: Plan, strategy: str, parts: dict[str, _Part], cuda_bounds: str | None, project) -> CondaEnvironment:
    dependencies = [f"python={plan.target.python}"]
    channels: list[str] = []
    reasons: list[str] = []
    warnings: list[str] = []
    for part in parts.values():
        dependencies += [d for d in part.dependencies if d not in dependencies]
        channels += [c for c in part.channels if c not in channels]
        reasons += part.reasons
        warnings += [w for w in part.warnings if w not in warnings]
    if cuda_bounds:
        dependencies.append(cuda_bounds)
        reasons.append(_bounds_reason(plan.target, cuda_bounds))
    pip: list[str] = []
    if project is not None:
        channels += [c for c in project.channels if c not in channels]
        dependencies += sorted(p for p in project.conda_packages if p not in dependencies)
        pip = _project_pip(project)
        pip = list(project.index_options) + pip if pip else []
    if pip:
        dependencies.append("pip")
    return CondaEnvironment(strategy, tuple(channels), tuple(dependencies), tuple(pip), tuple(reasons), tuple(warnings))


def _project_pip(project) -> list[str]:
    from envpin.emit.common import _requirement_sort_key

    lines = sorted(dict.fromkeys(r.text for r in project.other_requirements), key=_requirement_sort_key)
    return lines + list(project.other_lines)


def _bounds_reason(target: Target, bounds: str) -> str:
    if "<=" in bounds:
        return f"{bounds}: the CUDA libraries stay at or below the driver's CUDA {target.driver_cuda} (--driver-policy strict)"
    return (f"{bounds}: conda-forge's CUDA libraries of that major; driver {target.driver} runs them by minor-version "
            "compatibility, and the build string keeps the solver off the CPU build")


def _by_framework(packages: tuple[PinnedPackage, ...]) -> dict[str, list[PinnedPackage]]:
    groups: dict[str, list[PinnedPackage]] = {}
    for package in packages:
        framework = _FRAMEWORK_OF.get(package.name)
        if framework is None:
            raise CondaInputError(f"{package.name} is not a framework envpin maps to conda packages")
        groups.setdefault(framework, []).append(package)
    for framework, members in groups.items():  # the framework's own package first, companions after
        members.sort(key=lambda p: p.name not in ("torch", "tensorflow", "tensorflow-cpu", "jax"))
    return groups


def _release(database: Database, strategy: str, framework: str, version: str, package: str, target: Target) -> CondaRelease:
    release = database.conda_release(strategy, framework, version)
    if release is not None:
        return release
    where = "conda-forge" if strategy == "conda-forge" else "the pytorch channel"
    fixes = []
    have = [str(r.version) for r in database.conda_releases if (r.strategy, r.framework) == (strategy, framework)]
    if strategy == "pytorch-channel" and _version_tuple(version) > _version_tuple(PYTORCH_CHANNEL_LAST):
        message = (f"the pytorch channel ended with pytorch {PYTORCH_CHANNEL_LAST} (pytorch/pytorch#138506); "
                   f"{package} {version} is not on it")
        fixes.append(f"--spec 'torch<={PYTORCH_CHANNEL_LAST}'")
    else:
        message = f"{where} has no {package} {version} in database {database.version}"
        nearest = _nearest(have, version)
        if nearest:
            fixes.append(f"--spec '{'torch' if framework == 'torch' else framework}=={nearest}' (the nearest release {where} has)")
    other = "pytorch-channel" if strategy == "conda-forge" else "conda-forge"
    if framework == "torch" and database.conda_release(other, framework, version) is not None:
        fixes.append(f"--conda-source {other}")
    fixes.append("--conda-source pip")
    raise CondaUnavailable(message, tuple(fixes))


def _cpu_build(package: str, version: str, accelerator: str, target: Target, release: CondaRelease, where: str) -> str:
    """Why the CPU build, after checking there is one for the platform (CondaUnavailable otherwise)."""
    if target.platform not in release.cpu:
        raise CondaUnavailable(f"{where} has no CPU build of {package} {version} for {target.platform} in the database",
                               ("--conda-source pip",))
    if accelerator.startswith("rocm"):
        raise CondaUnavailable(f"{where} has no ROCm build of {package}", ("--conda-source pip",))
    if accelerator == "mps":
        return f"{where}'s {package} {version} for macOS (the CPU build; PyTorch's MPS backend is part of macOS builds)"
    return f"{where}'s CPU build of {package} {version} (the plan is a CPU build: {accelerator})"


def _unverified(release: CondaRelease) -> list[str]:
    return [f"unverified: {release.provenance.unverified}"] if release.provenance.unverified else []


def _versions(database: Database, strategy: str, framework: str) -> str:
    have = sorted((r.version for r in database.conda_releases if (r.strategy, r.framework) == (strategy, framework)),
                  reverse=True)
    return ", ".join(str(v) for v in have[:8]) + (" …" if len(have) > 8 else "") if have else "none"


def _nearest(versions: list[str], wanted: str) -> str | None:
    """The newest listed release not newer than `wanted`, else the oldest newer one."""
    older = [v for v in versions if _version_tuple(v) <= _version_tuple(wanted)]
    if older:
        return max(older, key=_version_tuple)
    return min(versions, key=_version_tuple) if versions else None


def _base_version(version: str) -> str:
    return version.partition("+")[0]


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def _cuda_tuple(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)
