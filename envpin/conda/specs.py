"""A solved Plan as a conda-native environment, for one channel strategy (pure: values in, values out).

Which conda builds fit is not decided here. A solve with `--conda-source conda-forge|pytorch-channel`
(`Request.channel`) chooses among the channel's builds (`envpin.resolver.builds.conda_builds`, from conda.yaml)
with the same fitness checks and the same resolvelib provider as pip builds, and explains a failure in the same
words (`envpin.resolver.explain`). This module only writes the chosen builds as match specs, and says why each
spec is spelled as it is:

- `pip`: conda's python and pip, and the Plan's pins in the `pip:` list with the PyTorch index: what
  `--format environment.yml` writes. The only route for torch >= 2.6, after the pytorch channel ended.
- `conda-forge`: `pytorch=2.4.0=cuda120*` (`tensorflow=…=cuda…*`, `jaxlib=…=cuda…*`) with `cuda-version` bounded.
  conda-forge's CUDA builds depend only on `__cuda`, and `cuda-version 12.x` constrains `__cuda >=12`, so the
  solver accepts any driver of the same major and, left alone, would take a newer CPU build or CUDA libraries
  the driver's policy does not allow; the build string and the `cuda-version` bounds say what envpin decided.
- `pytorch-channel`: `pytorch=2.5.1=*cuda12.4*` with `pytorch-cuda=12.4` on `-c pytorch -c nvidia` (1.13–2.5.1),
  `cudatoolkit=11.x` for 1.12, `cpuonly` for the CPU build. The pytorch-cuda metapackage does not depend on
  `__cuda`, so nothing in the channel stops a 12.4 build on an older driver: the solve checked the driver.
"""

from __future__ import annotations

from envpin.base.record import Record, record
from envpin.conda.errors import CondaInputError
from envpin.emit.common import _requirement_sort_key, pip_lines
from envpin.resolver.builds import Build
from envpin.resolver.plan import Plan
from envpin.resolver.request import CHANNELS, CONDA_FORGE, PIP, PYTORCH_CHANNEL
from envpin.resolver.target import Target
from envpin.vocabulary.frameworks import COMPANIONS

STRATEGIES = CHANNELS


@record
class CondaEnvironment(Record):
    """What an environment.yml holds, plus why."""

    strategy: str
    channels: tuple[str, ...]
    dependencies: tuple[str, ...]  # conda match specs: "python=3.12", "pytorch=2.4.0=cuda120*"
    pip: tuple[str, ...] = ()  # lines of the `pip:` section
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@record
class _Part(Record):
    """One framework's share of the environment."""

    dependencies: tuple[str, ...]
    channels: tuple[str, ...]
    reasons: tuple[str, ...]
    cuda: str | None = None  # the CUDA X.Y of a conda-forge CUDA build, for the shared `cuda-version` bounds


def conda_environment(
    plan: Plan, database=None, strategy: str | None = None, policy: str = "minor", project=None
) -> CondaEnvironment:
    """The environment for `plan` under `strategy` (default: the channel the plan was solved for). A conda plan
    renders only under its own channel; `pip` renders a pip plan. `project` (envpin.project) adds a repository's
    own conda and pip packages. `database` is not needed any more (the plan's builds carry their records)."""
    strategy = strategy or plan.channel
    if strategy not in STRATEGIES:
        raise CondaInputError(f"--conda-source {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if strategy != plan.channel:
        raise CondaInputError(f"this plan was solved for {plan.channel} builds, not {strategy}: solve it with "
                              f"--conda-source {strategy}")
    if strategy == PIP:
        return _pip_environment(plan, project)
    companions = {p.name: p.version for p in plan.packages if p.name not in plan.builds}
    parts = {}
    for framework, build in plan.builds.items():
        accelerator = (plan.accelerators or {}).get(framework, plan.accelerator)
        if strategy == PYTORCH_CHANNEL:
            parts[framework] = _pytorch_channel(build, companions, accelerator, plan.target)
        else:
            parts[framework] = _conda_forge(build, companions, accelerator, plan.target)
    bounds = _cuda_version_bounds(plan.target, policy, parts) if strategy == CONDA_FORGE else None
    return _assemble(plan, strategy, parts, bounds, project)


# ---------------------------------------------------------------- pip (what envpin emits without --conda-source)


def _pip_environment(plan: Plan, project) -> CondaEnvironment:
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


def _conda_forge(build: Build, companions: dict[str, str], accelerator: str, target: Target) -> _Part:
    package, version, release = build.conda_package, build.version, build.conda_release
    if build.kind == "cuda":
        spec = f"{package}={version}={build.conda_build}*"
        reasons = [f"conda-forge's {package} {version} {build.conda_build} build (built with CUDA {build.cuda}; "
                   f"CUDA builds on conda-forge for {target.platform}: {', '.join(release.cuda[target.platform])})"]
    else:
        spec = f"{package}={version}=cpu*"
        reasons = [_cpu_reason(build, accelerator)]
    dependencies = [f"jax={version}"] if build.framework == "jax" else []  # the noarch `jax`; its CUDA is in jaxlib
    dependencies.append(spec)
    # No build string: conda-forge's torchvision/torchaudio CUDA builds require a CUDA pytorch, so pinning
    # pytorch's build is enough to keep both on the GPU (the solve chose a CUDA every companion was built for).
    dependencies += _companion_specs(build, companions)
    return _Part(tuple(dependencies), ("conda-forge",), tuple(reasons), build.cuda if build.kind == "cuda" else None)


def _cuda_version_bounds(target: Target, policy: str, parts: dict[str, _Part]) -> str | None:
    """`cuda-version>=LOW,<HIGH` shared by every conda-forge CUDA build: at least what each build was made with,
    at most what the driver runs under the policy (the whole major by minor-version compatibility, the driver's own
    CUDA under `strict`)."""
    chosen = [p.cuda for p in parts.values() if p.cuda]  # one major: the solve's shared `cuda` requirement saw to it
    if not chosen:
        return None
    low = max(chosen, key=_cuda_tuple)
    major = int(low.split(".")[0])
    if policy == "strict" and target.driver_cuda and int(target.driver_cuda.split(".")[0]) == major:
        return f"cuda-version>={low},<={target.driver_cuda}"
    return f"cuda-version>={low},<{major + 1}"


# ---------------------------------------------------------------- the pytorch channel


def _pytorch_channel(build: Build, companions: dict[str, str], accelerator: str, target: Target) -> _Part:
    release, version = build.conda_release, build.version
    reasons = []
    if build.kind == "cuda":
        cuda = build.cuda
        dependencies = [f"pytorch={version}=*cuda{cuda}*", f"{release.cuda_package}={cuda}"]
        channels = ("pytorch", "nvidia", "conda-forge") if release.cuda_package == "pytorch-cuda" else ("pytorch", "conda-forge")
        reasons.append(f"the pytorch channel's pytorch {version} CUDA {cuda} build with {release.cuda_package}={cuda}")
        if release.cuda_package == "cudatoolkit":
            reasons.append("torch 1.12 and older use the legacy `cudatoolkit` package; conda-forge supplies it "
                           "(the official 1.12 command for CUDA 11.6 adds -c conda-forge)")
    else:
        dependencies = [f"pytorch={version}", "cpuonly"]
        channels = ("pytorch", "conda-forge")
        reasons.append(_cpu_reason(build, accelerator))
    dependencies += _companion_specs(build, companions)
    return _Part(tuple(dependencies), channels, tuple(reasons))


def _companion_specs(build: Build, companions: dict[str, str]) -> list[str]:
    return [f"{name}={companions[name]}" for name in COMPANIONS if name in companions and name in build.companions]


def _cpu_reason(build: Build, accelerator: str) -> str:
    if accelerator == "mps":
        return (f"{build.where}'s {build.conda_package} {build.version} for macOS (the CPU build; PyTorch's MPS "
                "backend is part of macOS builds)")
    return f"{build.where}'s CPU build of {build.conda_package} {build.version}"


# ---------------------------------------------------------------- putting it together


def _assemble(plan: Plan, strategy: str, parts: dict[str, _Part], cuda_bounds: str | None, project) -> CondaEnvironment:
    dependencies = [f"python={plan.target.python}"]
    channels: list[str] = []
    reasons: list[str] = []
    for part in parts.values():
        dependencies += [d for d in part.dependencies if d not in dependencies]
        channels += [c for c in part.channels if c not in channels]
        reasons += part.reasons
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
    # The plan's warnings are the solve's: what the fitness checks could not verify for these builds.
    return CondaEnvironment(strategy, tuple(channels), tuple(dependencies), tuple(pip), tuple(reasons),
                            tuple(plan.warnings))


def _project_pip(project) -> list[str]:
    lines = sorted(dict.fromkeys(r.as_written for r in project.other_requirements), key=_requirement_sort_key)
    return lines + list(project.other_lines)


def _bounds_reason(target: Target, bounds: str) -> str:
    if "<=" in bounds:
        return f"{bounds}: the CUDA libraries stay at or below the driver's CUDA {target.driver_cuda} (--driver-policy strict)"
    return (f"{bounds}: conda-forge's CUDA libraries of that major; driver {target.driver} runs them by minor-version "
            "compatibility, and the build string keeps the solver off the CPU build")


def _cuda_tuple(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)
