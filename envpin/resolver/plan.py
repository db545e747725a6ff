"""What a solve produces: a Plan (pins, index, reasons) or an Unsatisfiable answer (message, fixes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from envpin.base.record import Record, field, record
from envpin.resolver.target import Target

if TYPE_CHECKING:
    from envpin.resolver.builds import Build


@record
class PinnedPackage(Record):
    name: str
    version: str  # the full version to pin: "2.5.1+cu124", or "2.5.1" when PyPI serves the build; a bound: "<2"
    index_url: str | None  # None: PyPI
    extras: tuple[str, ...] = ()
    bound: bool = False  # `version` is a specifier the builds need (numpy<2), not one version

    @property
    def requirement(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.name}{extras}{self.version}" if self.bound else f"{self.name}{extras}=={self.version}"


RESOLVED = "resolved"  # Resolution.status: a resolver installed every line together, on paper
NOT_RESOLVED = "not-resolved"  # it could not be asked (offline, an index unreachable, a line a lock cannot hold)


@record
class Resolution(Record):
    """The whole environment (the project's lines beside the pins) as a resolver answered it: `solve --resolve`."""

    status: str  # RESOLVED or NOT_RESOLVED
    detail: str  # how it was resolved (engine, index, platform), or why it was not, in one line
    packages: tuple[str, ...] = ()  # RESOLVED: every package of the environment, pinned: "protobuf==5.29.5"
    passed_over: tuple[str, ...] = ()  # newer framework builds the resolver's conflicts ruled out, each with why
    # the pip part as uv resolved it, a complete PEP 751 document (TOML: every file's sha256 and index), which the
    # file formats write; empty where nothing was resolved
    lock: str = field(default="", compare=False, repr=False)
    conda: tuple[str, ...] = ()  # the conda part as rattler solved it: "python=3.12.0=hab00c5b_0_cpython"
    again: tuple[str, ...] = ()  # the options that resolve it again, for a written file's regenerate line


@record
class Plan(Record):
    target: Target
    db_version: str
    accelerator: str  # cpu, cuXYZ, rocmX.Y, mps (of the first framework; `accelerators` has each)
    index_url: str | None
    packages: tuple[PinnedPackage, ...]
    reasons: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    resolution: Resolution | None = None  # the whole environment resolved (`--resolve`); None: not asked
    accelerators: Mapping[str, str] | None = None  # framework -> accelerator
    notes: tuple[str, ...] = ()  # steps outside pip that the plan needs (conda CUDA for TF on Windows)
    channel: str = "pip"  # where the builds come from: pip wheels, or conda-forge / pytorch-channel builds
    # framework -> the build chosen (envpin.conda.specs writes a conda plan's match specs from them)
    builds: Mapping[str, Build] = field(default_factory=dict, compare=False, repr=False)
    # A CPU answer on a machine with a GPU says so first (docs/gpu-first.md): why no build here uses the GPU, and
    # what the newest one that could would need. None where the plan uses the GPU, or there is none.
    headline: str | None = None


@record
class Unsatisfiable(Record):
    target: Target
    db_version: str
    code: str
    message: str
    fixes: tuple[str, ...]
    # fix -> (framework, release) for a fix that moves a framework to another release (`--spec 'torch==2.7.0'`): the
    # release as data, for whatever follows the fix (a project's tied lines), never read back from the sentence
    moves: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)
