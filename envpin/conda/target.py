"""A conda target: the solver's Target plus its conda subdir and virtual packages, and where the channels are.

`envpin conda …`, `envpin check --solve` and the conda backends of `envpin install` all describe the target
with the same TargetSpec as every other command; this module turns it into what a conda solve needs.
"""

from __future__ import annotations

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record, replace
from envpin.compat.model import Database
from envpin.conda.backends import native_subdir
from envpin.conda.channels import Channels
from envpin.conda.rattler_solve import Solution, solve_environment
from envpin.conda.virtual import VirtualPackage, conda_subdir, virtual_packages
from envpin.facts.host import HostFacts
from envpin.machine.spec import TargetSpec
from envpin.resolver.target import Target, make_target


@record
class CondaTargetFacts(Record):
    target: Target
    subdir: str  # linux-64, win-64, osx-arm64 …
    virtual_packages: tuple[VirtualPackage, ...]


def conda_target(spec: TargetSpec, database: Database, facts: HostFacts | None = None) -> CondaTargetFacts:
    """`facts`: the spec's facts where a solve already made them (detecting twice could even disagree)."""
    facts = spec.facts() if facts is None else facts
    if facts.libc is None and spec.probes_this_machine:
        # a solve's detection leaves the C library out (it needs none); a conda target on this machine has this
        # machine's glibc, which `__glibc` names
        from envpin.host import platform_info  # noqa: PLC0415 - detection, for a target that is this machine

        if platform_info.os_name() == facts.os:
            facts = replace(facts, libc=platform_info.libc(facts.os))
    target = make_target(database, facts)
    return CondaTargetFacts(target, conda_subdir(target), tuple(virtual_packages(target, facts.libc, spec.macos_version)))


def native_conda_target(spec: TargetSpec, database: Database, facts: HostFacts | None = None) -> CondaTargetFacts:
    """The conda target of an environment made here, which must be this machine: a conda environment runs only
    where its subdir does."""
    found = conda_target(spec, database, facts)
    if found.subdir != native_subdir():
        raise EnvpinInputError(f"the target is {found.subdir}, and an environment made here is for {native_subdir()}: "
                               "install on the target, or write a lock for it (envpin conda lock)")
    return found


def solve_for_target(text: str, origin: str, spec: TargetSpec, database: Database,
                     channels: Channels) -> tuple[CondaTargetFacts, Solution]:
    """An environment.yml's text solved for the target with the virtual packages envpin builds for it."""
    found = conda_target(spec, database)
    solution = solve_environment(text, channels.location, found.virtual_packages, found.subdir, origin=origin,
                                 cache_dir=channels.cache_dir)
    return found, solution
