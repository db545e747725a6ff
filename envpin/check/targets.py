"""Can the pinned builds run on a given machine? The builds a file pins, judged by the resolver's own
fitness checks (platform, Python, driver, compute capability: envpin.resolver.fitness) against a Target made
from target options, a facts file or a `[tool.envpin]` target."""

from __future__ import annotations

from dataclasses import dataclass

from envpin.check.model import Contents, Pin, Problem, can_coexist, scope_oses
from envpin.check.rules import (
    bound_variant,
    jax_release_of,
    problem,
    public,
    tensorflow_release_of,
    torch_release_of,
)
from envpin.check.variants import TORCH_FAMILY, jax_cuda_major
from envpin.compat.model import Database
from envpin.resolver.builds import jax_builds, tensorflow_builds, torch_build
from envpin.resolver.fitness import assess
from envpin.resolver.target import Target
from envpin.target_spec import NamedTarget, TargetSpec

_TARGET_IDS = {
    "platform": "CHK-TARGET-PLATFORM",
    "python": "CHK-TARGET-PYTHON",
    "installable": "CHK-TARGET-UNINSTALLABLE",
    "kind": "CHK-TARGET-PLATFORM",
    "driver": "CHK-TARGET-DRIVER",
    "gpu": "CHK-TARGET-GPU",
}


@dataclass(frozen=True)
class CheckTarget:
    """A machine the lock must run on: `--os … --driver …`, `--facts FILE`, or a `[tool.envpin]` target."""

    name: str
    target: Target
    python_known: bool = True  # False: no Python was given, so the Python check is left to the file's own pin
    flags: str = ""  # the target options that describe it, for the fix's `envpin solve` command


def command_line_target(spec: TargetSpec, database: Database) -> CheckTarget:
    """The machine of the target options (`--os … --driver …` or `--facts FILE`)."""
    target = spec.resolve(database)
    return CheckTarget(f"on {short_description(target)}", target, True, spec.flags)


def configured_target(named: NamedTarget, database: Database) -> CheckTarget:
    """A `[tool.envpin]` target; without a Python (given or in its facts file) the Python check is left out."""
    spec = named.spec
    return CheckTarget(f"on {named.name}", spec.resolve(database), bool(spec.python or spec.facts_file), spec.flags)


def short_description(target: Target) -> str:
    """`linux-x86_64, Python 3.11, driver 470.82.01, NVIDIA GeForce RTX 3090 (sm_86)`: the target in a message."""
    driver = f"driver {target.driver}" if target.driver else "no NVIDIA driver"
    gpus = ", ".join(f"{g.name} ({g.compute_capability.sm})" for g in target.gpus) or "no GPU named"
    return f"{target.platform}, Python {target.python}, {driver}, {gpus}"


def target_fit(contents: Contents, database: Database, check_target: CheckTarget, policy: str) -> list[Problem]:
    problems = _no_entry_for(contents, check_target)
    target = check_target.target
    for pin, build, failure in _target_builds(contents, database, target):
        if failure:
            problems.append(problem("CHK-TARGET-PLATFORM", pin.where, f"{check_target.name}: {failure}",
                                    _solve_fix(pin, check_target)))
            continue
        ignore = frozenset() if check_target.python_known else frozenset({"python"})
        verdict = assess(database, target, build, policy=policy, allowed_kinds=frozenset({"cuda", "rocm", "cpu"}),
                         ignore=ignore)
        if verdict.rejection is not None:
            rejection = verdict.rejection
            fix = (f"install NVIDIA driver ≥ {rejection.needs_driver} there, or {_solve_fix(pin, check_target)}"
                   if rejection.needs_driver else _solve_fix(pin, check_target))
            if rejection.check == "driver" and target.driver is None:
                # A CUDA build without any NVIDIA driver still imports and runs, on the CPU: a waste, not a failure.
                problems.append(problem("CHK-TARGET-DRIVER", pin.where, f"{check_target.name}: {rejection.message}; "
                                        "it will run on the CPU only", _solve_fix(pin, check_target), severity="warning"))
                continue
            problems.append(problem(_TARGET_IDS[rejection.check], pin.where,
                                    f"{check_target.name}: {rejection.message}", fix))
        elif build.kind == "cpu" and target.has_nvidia and target.gpus:
            gpus = ", ".join(g.name for g in target.gpus)
            problems.append(problem(
                "CHK-TARGET-CPU-BUILD", pin.where,
                f"{check_target.name}: {pin.shown} installs {build.label}, a CPU build, on a machine with {gpus}",
                _solve_fix(pin, check_target),
            ))
    return problems


def _no_entry_for(contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """A lock whose torch entries are all for other platforms cannot install torch on the target at all."""
    torches = [p for p in contents.pins if p.name == "torch" and p.manager == "pip" and p.version]
    target = check_target.target
    if not torches or not all(_scope_excludes(p, target) for p in torches):
        return []
    platforms = sorted({platform for p in torches for platform in p.platforms}) or ["other platforms"]
    return [problem(
        "CHK-TARGET-PLATFORM", torches[0].where,
        f"{check_target.name}: no torch entry of this file installs on {target.platform} "
        f"(its torch wheels are for {', '.join(platforms)})",
        f"relock with {target.platform} among the lock's environments, or {_solve_fix(torches[0], check_target)}",
    )]


def _target_builds(contents: Contents, database: Database, target: Target):
    """(pin, Build, None) for each framework pin whose build the file decides on this target, or
    (pin, None, why) when there is no such build there."""
    for pin in contents.pins:
        if pin.manager != "pip" or not pin.version or (pin.scope and _scope_excludes(pin, target)):
            continue
        if pin.name == "torch":
            release = torch_release_of(database, public(pin))
            if release is None:
                continue
            name = bound_variant(pin, contents) or release.pypi.get(target.platform)
            if name is None:
                yield pin, None, f"PyPI has no torch {release.version} wheel for {target.platform}"
            elif name in release.variants:
                yield pin, torch_build(release, release.variants[name]), None
        elif pin.name == "tensorflow" and "and-cuda" in pin.extras:
            release = tensorflow_release_of(database, public(pin))
            build = next((b for b in tensorflow_builds(release) if b.flavor == "and-cuda"), None) if release else None
            if build:
                yield pin, build, None
        elif pin.name == "jax":
            release = jax_release_of(database, public(pin))
            if release is None:
                continue
            major = jax_cuda_major("jax", pin.version, pin.extras) or _jax_plugin_major(contents, pin)
            flavor = f"cuda{major}" if major else "cpu"
            build = next((b for b in jax_builds(release) if b.flavor == flavor), None)
            if build:
                yield pin, build, None


def _jax_plugin_major(contents: Contents, jax: Pin) -> str | None:
    for pin in contents.pins:
        if pin.name.startswith("jax-cuda") and can_coexist(pin, jax):
            return jax_cuda_major(pin.name, pin.version, frozenset())
    return None


def _scope_excludes(pin: Pin, target: Target) -> bool:
    """Whether the entry plainly belongs to another OS: its wheels are for other platforms, or its markers
    say another OS."""
    if pin.platforms and target.platform not in pin.platforms:
        return True
    oses = scope_oses(pin)
    return bool(oses) and target.os not in oses


def _solve_fix(pin: Pin, check_target: CheckTarget) -> str:
    framework = "torch" if pin.name in TORCH_FAMILY else pin.name
    flags = f" {check_target.flags}" if check_target.flags else ""
    return f"regenerate the pins for it: `envpin solve --framework {framework}{flags}`"
