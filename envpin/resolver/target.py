"""The machine a solve is for: HostFacts, overridden by target flags, completed from the database.

Each dataclass here has a docstring: without one, `dataclass` writes one with inspect.signature, which
every solve would pay for."""

from __future__ import annotations

from dataclasses import dataclass, replace

from envpin.compat.drivers import driver_max_cuda, parse_driver_version
from envpin.compat.gpus import lookup_gpu
from envpin.compat.model import ComputeCapability, Database
from envpin.errors import EnvpinInputError
from envpin.facts import (
    ARCHITECTURES,
    OPERATING_SYSTEMS,
    Driver,
    Gpu,
    HostFacts,
    is_compute_capability,
    is_python_version,
    normalize_arch,
)
from envpin.vocabulary.platforms import platform_key


@dataclass(frozen=True)
class TargetGpu:
    """A GPU of the target with its compute capability, and where that came from."""

    name: str
    compute_capability: ComputeCapability
    capability_source: str  # "probe" (NVML / nvidia-smi / the user) or "database"


@dataclass(frozen=True)
class Target:
    """The machine a solve is for, complete: platform, Python, driver and its CUDA, GPUs."""

    os: str
    arch: str
    python: str  # "3.11"
    driver: str | None
    driver_cuda: str | None
    gpus: tuple[TargetGpu, ...]
    wsl: bool = False

    @property
    def platform(self) -> str:
        return platform_key(self.os, self.arch)

    @property
    def has_nvidia(self) -> bool:
        return self.driver is not None

    def describe(self) -> str:
        driver = f"driver {self.driver} (CUDA {self.driver_cuda or '?'})" if self.driver else "no NVIDIA driver"
        gpus = ", ".join(f"{g.name} ({g.compute_capability.sm})" for g in self.gpus) or "no NVIDIA GPU"
        return f"{self.platform}{' (WSL2)' if self.wsl else ''}, Python {self.python}, {driver}, {gpus}"


@dataclass(frozen=True)
class TargetOverrides:
    """The target flags as given (None or empty: not given)."""

    os: str | None = None
    arch: str | None = None
    driver: str | None = None  # a version, or "none"
    gpus: tuple[str, ...] = ()
    compute_capabilities: tuple[str, ...] = ()
    python: str | None = None


def apply_overrides(facts: HostFacts, overrides: TargetOverrides) -> HostFacts:
    """Target flags win over the facts file, which wins over detection."""
    updated = facts
    if overrides.os is not None:
        if overrides.os not in OPERATING_SYSTEMS:
            raise EnvpinInputError(f"--os {overrides.os!r}: expected one of {', '.join(OPERATING_SYSTEMS)}")
        updated = replace(updated, os=overrides.os, wsl=False)
    if overrides.arch is not None:
        arch = normalize_arch(overrides.arch)
        if arch not in ARCHITECTURES:
            raise EnvpinInputError(f"--arch {overrides.arch!r}: expected one of {', '.join(ARCHITECTURES)}")
        updated = replace(updated, arch=arch)
    if overrides.python is not None:
        if not is_python_version(overrides.python):
            raise EnvpinInputError(f"--python {overrides.python!r}: expected a Python version such as 3.11")
        updated = replace(updated, python=replace(updated.python, version=overrides.python))
    if overrides.driver is not None:
        updated = replace(updated, driver=_driver_override(overrides.driver))
    if overrides.gpus or overrides.compute_capabilities:
        updated = replace(updated, gpus=_gpu_overrides(overrides.gpus, overrides.compute_capabilities))
    return updated


def _driver_override(text: str) -> Driver | None:
    if text.strip().lower() in ("none", "no"):
        return None
    if not text.strip():
        raise EnvpinInputError("--driver '': expected an NVIDIA driver version such as 535.104.05, or 'none'")
    parse_driver_version(text)  # raises a one-line error for nonsense
    return Driver(version=text.strip(), cuda=None, source="override")


def _gpu_overrides(names: tuple[str, ...], capabilities: tuple[str, ...]) -> tuple[Gpu, ...]:
    for capability in capabilities:
        if not is_compute_capability(capability):
            raise EnvpinInputError(f"--compute-capability {capability!r}: expected X.Y such as 8.6")
    if names and capabilities and len(capabilities) not in (1, len(names)):
        raise EnvpinInputError("give one --compute-capability for all --gpu names, or one for each")
    if not names:
        return tuple(Gpu(i, f"GPU {i} (compute capability {cc})", cc) for i, cc in enumerate(capabilities))
    paired = capabilities * len(names) if len(capabilities) == 1 else capabilities or (None,) * len(names)
    return tuple(Gpu(i, name, cc) for i, (name, cc) in enumerate(zip(names, paired, strict=True)))


def make_target(database: Database, facts: HostFacts) -> Target:
    """Resolve every GPU's compute capability and the driver's CUDA; an unknown GPU is an error with the way out."""
    driver = facts.driver.version if facts.driver else None
    if driver is not None:
        parse_driver_version(driver)
    driver_cuda = None
    if facts.driver is not None:
        driver_cuda = facts.driver.cuda or driver_max_cuda(database, facts.driver.version, facts.os)
    return Target(
        os=facts.os,
        arch=facts.arch,
        python=_python_minor(facts.python.version),
        driver=driver,
        driver_cuda=driver_cuda,
        gpus=tuple(_target_gpu(database, gpu) for gpu in facts.gpus),
        wsl=facts.wsl,
    )


def _target_gpu(database: Database, gpu: Gpu) -> TargetGpu:
    if gpu.compute_capability:
        capability = ComputeCapability.parse(gpu.compute_capability)
        newest = max((t for toolkit in database.toolkits.values() for t in toolkit.targets), default=None)
        if newest is not None and capability.major > newest.major + 1:
            # A GPU one generation past the database is real and gets an answer; 99.9 is a typo.
            raise EnvpinInputError(
                f"compute capability {gpu.compute_capability} of {gpu.name!r}: no NVIDIA GPU has it (the newest that "
                f"database {database.version} knows is {newest.major}.{newest.minor}); check the value"
            )
        return TargetGpu(gpu.name, capability, "probe")
    model = lookup_gpu(database, gpu.name)
    if model is None:
        raise EnvpinInputError(
            f"unknown GPU {gpu.name!r}: not in the compatibility database {database.version}; "
            "pass its compute capability with --compute-capability X.Y "
            "(`nvidia-smi --query-gpu=compute_cap --format=csv` prints it)"
        )
    return TargetGpu(gpu.name, model.compute_capability, "database")


def _python_minor(version: str) -> str:
    major, minor = version.split(".")[:2]
    return f"{major}.{''.join(ch for ch in minor if ch.isdigit())}"
