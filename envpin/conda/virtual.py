"""The conda virtual packages of a target, built from envpin's own facts.

conda solvers gate packages on virtual packages: `__cuda` (the newest CUDA the driver supports), `__glibc`,
`__linux`/`__unix`, `__win`, `__osx`, `__archspec`. Detecting them on the machine that solves is wrong when the
environment is for another machine, and an inherited `CONDA_OVERRIDE_CUDA` is wrong as often as not, so envpin
builds them from the target (HostFacts + target options) and hands them to the solver explicitly.
"""

from __future__ import annotations

import re

from envpin.base.record import Record, record
from envpin.conda.errors import CondaInputError
from envpin.facts.host import Libc
from envpin.resolver.target import Target
from envpin.vocabulary.platforms import PLATFORMS, split_key
from envpin.vocabulary.platforms import conda_subdir as _subdir_of

# envpin platform -> conda subdir (the database's platforms)
CONDA_SUBDIRS = {platform: _subdir_of(platform) for platform in PLATFORMS}
# The generic microarchitecture of each conda subdir, as conda's and rattler's `__archspec` name it: the platform
# key's architecture (x86_64, aarch64, arm64). True of every machine of the platform, so it guesses nothing (a
# finer level such as x86_64_v3 would need the CPU's flags).
_ARCHSPEC = {subdir: split_key(platform)[1] for platform, subdir in CONDA_SUBDIRS.items()}
_VERSION = re.compile(r"^\d+(\.\d+)*$")
# The glibc assumed for a Linux target that says none (no --glibc, no facts file): the default both pixi and
# conda-lock solve with. pixi: `libc = { family = "glibc", version = "2.28" }`, its default system requirements
# for Linux (prefix-dev/pixi docs/features/system_requirements.md@e69a3d1ba1af2f8d120d9e346d30948233f72268);
# conda-lock: `FakePackage(name="__glibc", version="2.28")` in default_virtual_package_repodata
# (conda/conda-lock conda_lock/virtual_package.py@0115216a655e950e9b2a909a6efa0e44186d6da0). glibc 2.28 is
# manylinux_2_28's floor, which today's Linux wheels of the GPU frameworks need anyway.
DEFAULT_GLIBC = "2.28"


@record
class VirtualPackage(Record):
    name: str  # "__cuda"
    version: str  # "12.1"
    build: str = "0"

    def __str__(self) -> str:
        """The `name=version=build` form conda, pixi and rattler print."""
        return f"{self.name}={self.version}={self.build}"


def conda_subdir(target: Target) -> str:
    subdir = CONDA_SUBDIRS.get(target.platform)
    if subdir is None:
        raise CondaInputError(f"{target.platform} has no conda subdir envpin knows ({', '.join(CONDA_SUBDIRS)})")
    return subdir


def virtual_packages(
    target: Target, libc: Libc | None, macos_version: str | None = None, kernel: str | None = None
) -> tuple[VirtualPackage, ...]:
    """Every virtual package a solver needs for `target`.

    `libc` is HostFacts.libc (glibc's version becomes `__glibc`); `macos_version` is needed for `__osx`;
    `kernel` is the Linux kernel release, which HostFacts does not carry: `__linux` is then `0`, what conda itself
    reports when it cannot read the kernel version (packages almost never constrain it).
    """
    subdir = conda_subdir(target)
    packages: list[VirtualPackage] = []
    if target.os == "linux":
        packages += [VirtualPackage("__unix", "0"), VirtualPackage("__linux", _version(kernel or "0", "--kernel"))]
        packages += _glibc(libc)
    elif target.os == "windows":
        packages.append(VirtualPackage("__win", "0"))
    else:
        if not macos_version:
            raise CondaInputError(
                "the target's macOS version is unknown, and conda packages for macOS depend on `__osx`: give it (e.g. 14.5)"
            )
        packages += [VirtualPackage("__unix", "0"), VirtualPackage("__osx", _version(macos_version, "macOS version"))]
    packages.append(VirtualPackage("__archspec", "1", _ARCHSPEC[subdir]))
    if target.os != "macos" and target.has_nvidia:
        if not target.driver_cuda:
            raise CondaInputError(f"driver {target.driver}: the newest CUDA it supports is unknown, so `__cuda` cannot be set")
        packages.append(VirtualPackage("__cuda", target.driver_cuda))
    return tuple(packages)


def _glibc(libc: Libc | None) -> list[VirtualPackage]:
    if libc is None:
        raise CondaInputError(
            "the target's glibc version is unknown, and Linux conda packages depend on `__glibc`: "
            "pass --facts from `envpin detect --format json` taken on the target, or --glibc X.Y"
        )
    if libc.name == "musl":
        return []  # musl has no __glibc; packages that need it will not solve, which is the truth
    if libc.name != "glibc" or not libc.version:
        raise CondaInputError(f"the target's C library is {libc.name} {libc.version or '(no version)'}, not a glibc "
                              "envpin can name for `__glibc`; pass --glibc X.Y")
    return [VirtualPackage("__glibc", _version(libc.version, "glibc version"))]


def _version(text: str, what: str) -> str:
    if not _VERSION.match(text.strip()):
        raise CondaInputError(f"{what} {text!r}: expected a version such as 2.35")
    return text.strip()


def find(packages: tuple[VirtualPackage, ...], name: str) -> VirtualPackage | None:
    return next((p for p in packages if p.name == name), None)


def conda_lock_spec(packages: tuple[VirtualPackage, ...], subdir: str) -> dict:
    """The `virtual-packages.yml` document conda-lock reads with --virtual-package-spec (conda-lock otherwise
    injects its defaults, `__cuda` 11.4 among them). A build string other than 0 follows the version after a
    space, as conda-lock parses it (`__archspec: "1 x86_64"`)."""
    listed = {p.name: p.version if p.build == "0" else f"{p.version} {p.build}" for p in packages}
    return {"subdirs": {subdir: {"packages": listed}}}


OVERRIDES = {"__cuda": "CONDA_OVERRIDE_CUDA", "__glibc": "CONDA_OVERRIDE_GLIBC", "__osx": "CONDA_OVERRIDE_OSX"}


def override_environment(base: dict[str, str], packages: tuple[VirtualPackage, ...]) -> dict[str, str]:
    """The environment for a conda / mamba / micromamba run: every inherited CONDA_OVERRIDE_* removed (an
    unvalidated value is exactly what envpin is here to avoid), then the target's `__cuda`, `__glibc` and `__osx`.
    An empty CONDA_OVERRIDE_CUDA tells conda there is no CUDA driver, so a target without one gets that."""
    environment = {k: v for k, v in base.items() if not k.startswith("CONDA_OVERRIDE_")}
    for name, variable in OVERRIDES.items():
        package = find(packages, name)
        if package is not None:
            environment[variable] = package.version
    if find(packages, "__cuda") is None:
        environment["CONDA_OVERRIDE_CUDA"] = ""
    return environment
