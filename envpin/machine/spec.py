"""The machine a command is about, as the user described it: flags, a facts file, or `[tool.envpin]` targets.

A TargetSpec is what was said, not yet what is true: `facts()` makes HostFacts of it (the facts file, with
each given flag laid over it, detecting this machine only for what is left open), and `resolve(database)`
completes those from the one loaded database into the Target the solver reads. `to_argv()` says the same
machine back as target options, for a fix or a regenerate line.
"""

from __future__ import annotations

import shlex

from envpin.base.record import Record, record, replace
from envpin.base.userfiles import read_json
from envpin.compat.model import Database
from envpin.facts.host import HostFacts, PythonInfo, from_json
from envpin.resolver.target import Target, TargetOverrides, apply_overrides, make_target

PLACEHOLDER_PYTHON = "3.0"  # a configured target that names no Python: the checks are told to skip Python


@record
class TargetSpec(TargetOverrides):
    """The target flags (TargetOverrides' fields: os, arch, driver, gpus, compute_capabilities, python, gfx,
    amdgpu_driver, rocm, macos), and where the rest comes from."""

    facts_file: str | None = None  # `envpin detect --format json` taken on the target
    macos_version: str | None = None  # conda targets: the __osx virtual package
    detect: bool = True  # False for a configured target: it describes another machine, never this one
    origin: str = "--facts"  # how a bad facts file is named in an error

    @property
    def given(self) -> bool:
        """Whether the user described a target at all (else: this machine)."""
        return bool(self.os or self.arch or self.driver or self.gpus or self.compute_capabilities or self.python
                    or self.facts_file or self.gfx or self.amdgpu_driver or self.rocm or self.macos or self.wsl
                    or self.glibc or self.jetpack)

    @property
    def probes_this_machine(self) -> bool:
        """Whether facts() detects this machine: no facts file, detection allowed, and the flags leave a fact
        open. Every fact a solve needs given (os, arch, Python, the driver, and GPUs unless the driver is
        'none') means a solve for another machine, which does not probe this one."""
        if self.facts_file or not self.detect:
            return False
        fully_given = self.os and self.arch and self.python and self.driver is not None
        return not (fully_given and (self.gpus or self.compute_capabilities or self.gfx or self.driver == "none"))

    def with_python(self, python: str | None) -> TargetSpec:
        """The project's Python (`python=3.10` in its environment.yml) when the user gave none."""
        if python is None or self.python is not None or self.facts_file:
            return self
        return replace(self, python=python)

    def facts(self) -> HostFacts:
        """HostFacts for the target: flags over the facts file over detection."""
        return self.laid_over(self._base_facts())

    def laid_over(self, facts: HostFacts) -> HostFacts:
        """`facts` with the flags laid over them: the flags win (a facts file a command read itself, as doctor's)."""
        return apply_overrides(facts, self)

    def _base_facts(self) -> HostFacts:
        if self.facts_file:
            return from_json(read_json(self.facts_file, self.origin), origin=f"{self.origin} {self.facts_file}")
        if not self.probes_this_machine:
            return HostFacts(os=str(self.os), arch=str(self.arch), python=PythonInfo(self.python or PLACEHOLDER_PYTHON))
        from envpin.host import detect_host  # noqa: PLC0415 - the probes are for this machine only, not another's

        return detect_host(probe_environment=False)

    def resolve(self, database: Database) -> Target:
        return make_target(database, self.facts())

    def to_argv(self) -> tuple[str, ...]:
        """The same machine as the target options of a solve: `--facts FILE` and the flags laid over it (the conda
        fact --macos-version is not a solve option and is left out)."""
        return (("--facts", str(self.facts_file)) if self.facts_file else ()) + super().to_argv()

    @property
    def flags(self) -> str:
        return shlex.join(self.to_argv())


@record
class NamedTarget(Record):
    """One machine of a fleet inventory or of `[tool.envpin].targets`."""

    name: str
    spec: TargetSpec
