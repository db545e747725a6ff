"""Which conda builds a file's conda framework pins can install: the solver's own candidates.

`pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0`, `pytorch=1.13 pytorch-cuda=11.7 -c pytorch -c nvidia`,
`pytorch=2.4.0=cuda120*` on conda-forge, `tensorflow=2.15=cuda118*`, `jaxlib=0.4.23=cuda120*`: each names a
channel strategy (conda.yaml's `pytorch-channel` or `conda-forge`), a release and, where the file says, the CUDA
(the build string, `pytorch-cuda=X.Y`, the legacy `cudatoolkit=X.Y`, `cuda-version=X.Y`) or the CPU build
(`cpuonly`, a `cpu` build string). The builds are envpin.resolver.builds' (`conda_release_builds`), the ones a
`solve --conda-source` chooses among, so check judges them with the same fitness checks as pip builds.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from envpin.base.record import Record, record, replace
from envpin.compat.model import CondaRelease, Database
from envpin.readers.model import Contents, Pin, can_coexist
from envpin.resolver.builds import Build, conda_release_builds
from envpin.resolver.request import CONDA_FORGE, PYTORCH_CHANNEL

# the conda package that carries a framework's build -> the framework (conda's `pytorch` is already `torch`)
CONDA_FRAMEWORKS = {"torch": "torch", "tensorflow": "tensorflow", "tensorflow-gpu": "tensorflow", "jaxlib": "jax"}
_PYTORCH_CHANNEL_BUILD = re.compile(r"^py\d")  # the pytorch channel's `py3.10_cuda12.1_cudnn8.9.2_0`, `py3.9_cpu_0`
_CONDA_FORGE_BUILD = re.compile(r"^(cuda\d+|cpu)")  # conda-forge's `cuda120_py312h…_301`, `cpu_mkl_py311h…`
_PYTORCH_CHANNEL_CUDA = re.compile(r"cuda(\d+\.\d+)")
_CONDA_FORGE_CUDA = re.compile(r"^cuda(\d+)")
_CUDA_PINS = ("pytorch-cuda", "cudatoolkit", "cuda-version")


@record
class CondaCandidates(Record):
    """The conda builds one framework pin can install on the file's channels."""

    pin: Pin
    framework: str
    strategy: str  # pytorch-channel / conda-forge
    release: CondaRelease | None  # None: the database has no such release on that channel
    builds: tuple[Build, ...]  # what the file allows of the release's builds (one when it names the build)
    decided: bool  # the file names the build (CUDA X.Y or CPU); else the solver chooses among `builds`
    why: str  # how the file chose: "pytorch-cuda=12.1 beside it", "its build string", "" when undecided


def conda_framework_pins(contents: Contents) -> list[Pin]:
    return [p for p in contents.pins if p.manager == "conda" and p.name in CONDA_FRAMEWORKS and p.version]


_ANY_VERSION = re.compile(r"^(?:[^:\s]+::)?[A-Za-z0-9_.\-]+(?:\s*[= ]\s*\*)?(?:[ =]\S+)?\s*$")


def unversioned(pin: Pin) -> bool:
    """A conda framework line with no version at all (`pytorch::pytorch`, pixi's `pytorch-gpu = "*"`), whatever
    its build: conda installs the newest release it can."""
    return pin.manager == "conda" and pin.version is None and bool(_ANY_VERSION.match(pin.label)) \
        and not any(c in pin.label for c in "<>!~,|")


def newest_candidates(pin: Pin, contents: Contents, database: Database, platform: str) -> CondaCandidates | None:
    """For an unversioned conda framework pin: the builds of the newest release on its channel that has a build
    the file allows (its build string, `pytorch-cuda=12.1` beside it) for the platform, as conda's solver takes
    the newest version it can. None when the channel is not one envpin models or no release has such a build."""
    framework = CONDA_FRAMEWORKS[pin.name]
    strategy = channel_strategy(pin, contents, framework)
    if strategy is None:
        return None
    for release in database.conda_releases:  # newest first
        if (release.strategy, release.framework) != (strategy, framework):
            continue
        found = candidates(replace(pin, version=str(release.version)), contents, database)
        if found is not None and any(platform in b.platforms for b in found.builds):
            return replace(found, pin=pin)
    return None


def candidates(pin: Pin, contents: Contents, database: Database) -> CondaCandidates | None:
    """The builds of one conda framework pin, or None when its channel is not one envpin models (defaults, a
    private channel)."""
    framework = CONDA_FRAMEWORKS[pin.name]
    strategy = channel_strategy(pin, contents, framework)
    if strategy is None:
        return None
    release = matching_release(database, strategy, framework, pin.version or "")
    if release is None:
        return CondaCandidates(pin, framework, strategy, None, (), False, "")
    builds = conda_release_builds(database, release)
    if pin.build and pin.build.strip("*") == "cuda":  # `cuda*` (pixi's pytorch-gpu): any CUDA build, never the CPU one
        builds = [b for b in builds if b.kind == "cuda"]
    cuda, why = _chosen_cuda(pin, contents, strategy, release.cuda_package)
    if cuda == "cpu":
        return CondaCandidates(pin, framework, strategy, release, tuple(b for b in builds if b.kind == "cpu"), True, why)
    if cuda is not None:
        chosen = [b for b in builds if b.cuda == cuda]
        if not chosen and strategy == CONDA_FORGE and "." in cuda:
            # cuda-version=X.Y on conda-forge allows every build of that major made with CUDA <= X.Y
            major = cuda.split(".")[0]
            chosen = [b for b in builds if b.cuda_major == major and _cuda_key(b.gpu_cuda) <= _cuda_key(cuda)]
        return CondaCandidates(pin, framework, strategy, release, tuple(chosen), True, why)
    return CondaCandidates(pin, framework, strategy, release, tuple(builds), False, "")


def channel_strategy(pin: Pin, contents: Contents, framework: str) -> str | None:
    """The channel the package comes from: its `channel::` prefix, its build string, a pytorch-channel
    metapackage beside it (pytorch-cuda, cpuonly), or the file's channels (the pytorch channel only ever
    carried torch)."""
    if pin.index in ("pytorch", "nvidia"):
        return PYTORCH_CHANNEL if framework == "torch" else None
    if pin.index == "conda-forge":
        return CONDA_FORGE
    if pin.index:
        return None
    if pin.build and _PYTORCH_CHANNEL_BUILD.match(pin.build) and framework == "torch":
        return PYTORCH_CHANNEL
    if pin.build and _CONDA_FORGE_BUILD.match(pin.build.lstrip("*")):
        return CONDA_FORGE
    if framework == "torch" and ("pytorch" in contents.channels or any(
            p.manager == "conda" and p.name in ("pytorch-cuda", "cpuonly") for p in contents.pins)):
        return PYTORCH_CHANNEL
    if "conda-forge" in contents.channels:
        return CONDA_FORGE
    return None


def matching_release(database: Database, strategy: str, framework: str, version: str) -> CondaRelease | None:
    """The newest release a conda version matches: `2.1.0` exactly, `2.1` as conda's 2.1.*."""
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    for release in database.conda_releases:  # newest first
        if (release.strategy, release.framework) != (strategy, framework):
            continue
        if release.version == wanted or str(release.version).startswith(f"{version}."):
            return release
    return None


def oldest_release(database: Database, strategy: str, framework: str) -> Version | None:
    versions = [r.version for r in database.conda_releases if (r.strategy, r.framework) == (strategy, framework)]
    return min(versions) if versions else None


def _chosen_cuda(pin: Pin, contents: Contents, strategy: str, wiring: str | None = None) -> tuple[str | None, str]:
    """"cpu", a CUDA X.Y (conda-forge's build string: only the digits, `cuda120` = 12.0), or None. On the pytorch
    channel only the release's own wiring package (`wiring`: cudatoolkit up to 1.12, pytorch-cuda from 1.13)
    chooses a build; the other one beside it chooses nothing (envpin.check.conda_wiring says so)."""
    build = (pin.build or "").lstrip("*")
    if build:
        if re.search(r"(^|_)cpu(_|\*|$)", build):
            return "cpu", f"its build string {pin.build}"
        match = (_PYTORCH_CHANNEL_CUDA if strategy == PYTORCH_CHANNEL else _CONDA_FORGE_CUDA).search(build)
        if match:
            digits = match.group(1)
            cuda = digits if "." in digits else f"{digits[:-1]}.{digits[-1]}"
            return cuda, f"its build string {pin.build}"
    for other in contents.pins:
        if other.manager != "conda" or not can_coexist(pin, other):
            continue
        if other.name == "cpuonly":
            return "cpu", "cpuonly beside it"
        cuda = re.match(r"^(\d+\.\d+)(\.\d+)*$", other.version or "") if other.name in _CUDA_PINS else None
        if cuda:  # `pytorch-cuda=11.7.0`, `cudatoolkit=11.3.1`: the builds are named by CUDA X.Y
            if strategy == PYTORCH_CHANNEL and (other.name == "cuda-version" or wiring and other.name != wiring):
                continue  # the pytorch channel's builds are chosen by their wiring package, not cuda-version
            return cuda.group(1), f"{other.shown} beside it"
    return None, ""


def _cuda_key(cuda: str) -> tuple[int, int]:
    major, _, minor = cuda.partition(".")
    return int(major), int(minor or 0)
