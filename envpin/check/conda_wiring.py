"""How an environment.yml asks the pytorch channel for a CUDA build, and when conda gives it the CPU build instead.

Every CUDA build of the channel's pytorch depends on one wiring package at its CUDA X.Y, and the CPU build on
neither (conda.yaml `cuda_package`; pytorch/builder conda/build_pytorch.sh on the release branches):

    torch <= 1.12   cudatoolkit >=X.Y,<X.(Y+1)   `pytorch=1.12.1 cudatoolkit=11.3 -c pytorch`
    torch >= 1.13   pytorch-cuda >=X.Y,<X.(Y+1)  `pytorch=1.13.1 pytorch-cuda=11.7 -c pytorch -c nvidia`
                    (pytorch-cuda depends on cuda-cudart, libcublas ... of the nvidia channel)

So a `cudatoolkit=X.Y` that no CUDA build of the release was made for leaves conda one build that installs, the CPU
one, and it takes it without an error; a `cudatoolkit` beside a 1.13+ pytorch chooses nothing, and without the nvidia
channel no CUDA build can install at all. These are facts of the file and the database, whatever the machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from envpin.check.conda_builds import CONDA_FRAMEWORKS, channel_strategy, matching_release
from envpin.compat.model import CondaRelease, Database
from envpin.readers.model import Contents, Pin, Problem, can_coexist
from envpin.readers.rules import problem
from envpin.resolver.request import PYTORCH_CHANNEL

WIRING_PACKAGES = ("cudatoolkit", "pytorch-cuda")
_CUDA_XY = re.compile(r"^(\d+\.\d+)(\.\d+)*$")


def pytorch_channel_wiring(contents: Contents, database: Database, platforms: Iterable[str] = ()) -> list[Problem]:
    """CHK-CONDA-WIRING for each pytorch-channel `pytorch` pin whose CUDA package beside it gets no CUDA build.
    `platforms`: the targets' platforms; none given, the platforms the release has CUDA builds for."""
    problems, platforms = [], tuple(platforms)
    for pin in contents.pins:
        if pin.manager != "conda" or CONDA_FRAMEWORKS.get(pin.name) != "torch" or not pin.version or pin.build:
            continue  # a build string chooses the build itself
        if channel_strategy(pin, contents, "torch") != PYTORCH_CHANNEL:
            continue
        release = matching_release(database, PYTORCH_CHANNEL, "torch", pin.version)
        if release is None or release.cuda_package is None:
            continue
        beside = [p for p in contents.pins if p.manager == "conda" and p.name in WIRING_PACKAGES
                  and can_coexist(pin, p) and _CUDA_XY.match(p.version or "")]
        if not beside or any(p.name == "cpuonly" for p in contents.pins if p.manager == "conda"):
            continue
        # a target on a platform the file does not install on (a linux-64 pixi workspace, a Windows target) is
        # CHK-TARGET-PLATFORM's: no conda build is chosen there at all
        scope = set(pin.platforms or contents.platforms)
        targets = tuple(p for p in platforms if not scope or p in scope)
        if platforms and not targets:
            continue
        found = _mistake(pin, beside, contents, release, targets or tuple(release.cuda))
        if found is not None:
            message, fix, severity, everywhere = found
            if not (targets or everywhere):
                severity = "warning"  # no target: true only of some platforms the file may be used on
            problems.append(problem("CHK-CONDA-WIRING", pin.where, message, fix, severity=severity))
    return problems


def _mistake(pin: Pin, beside: list[Pin], contents: Contents, release: CondaRelease,
             platforms: tuple[str, ...]) -> tuple[str, str, str, bool] | None:
    """(message, fix, severity, whether it holds on every platform judged), or None when the wiring is right."""
    names = {p.name: p for p in beside}
    wiring = names.get(release.cuda_package or "")
    label = f"{pin.shown} (the pytorch channel's pytorch {release.version})"
    if wiring is None:
        other = beside[0]
        cuda = _xy(other)
        if release.cuda_package == "pytorch-cuda":
            nvidia = _has_nvidia(contents)
            message = (f"{label} with {other.shown}: from 1.13 the channel's CUDA builds depend on pytorch-cuda, not "
                       f"cudatoolkit, so {other.shown} chooses no build")
            if not nvidia:
                message += (", and without the nvidia channel, where pytorch-cuda's CUDA libraries are, no CUDA build "
                            "can install: conda installs the CPU build, without an error")
            else:
                message += ": conda may take the CPU build or any CUDA build"
            return message, _pytorch_cuda_fix(release, cuda, platforms, other), "error" if not nvidia else "warning", True
        message = (f"{label} with {other.shown}: up to 1.12 the channel's CUDA builds depend on cudatoolkit "
                   f"(pytorch-cuda starts with 1.13), so {other.shown} chooses no build and conda may take the CPU one")
        return message, _cudatoolkit_fix(release, cuda, platforms, other), "warning", True
    cuda = _xy(wiring)
    missing = [p for p in platforms if p in release.cuda and cuda not in release.cuda[p]]
    if missing:
        built = "; ".join(f"{p}: {', '.join(release.cuda[p]) or 'none'}" for p in missing)
        message = (f"{label} with {wiring.shown}: the channel has no CUDA {cuda} build of it on "
                   f"{', '.join(missing)} (its CUDA builds there: {built}); each CUDA build depends on {wiring.name} "
                   "of its own CUDA X.Y, so the only build that installs is the CPU one, and conda takes it without "
                   "an error")
        fix = _cudatoolkit_fix(release, cuda, missing, wiring) if wiring.name == "cudatoolkit" else \
            _pytorch_cuda_fix(release, cuda, missing, wiring)
        doubted = [p for p in missing if release.provenance.doubt_on(p)]
        if doubted:
            message += (f" (the channel's files for {', '.join(doubted)} were not read: the database has the builds "
                        "PyTorch's install commands name there)")
        severity = "warning" if len(doubted) == len(missing) else "error"
        return message, fix, severity, len(missing) == len([p for p in platforms if p in release.cuda])
    if wiring.name == "pytorch-cuda" and not _has_nvidia(contents) and wiring.index != "nvidia":
        message = (f"{label} with {wiring.shown}, and no nvidia channel: pytorch-cuda depends on cuda-cudart, "
                   "libcublas and the other CUDA libraries of the nvidia channel, so the environment does not solve")
        return message, "add the nvidia channel after pytorch (`channels: [pytorch, nvidia, conda-forge]`)", "error", True
    return None


def _xy(pin: Pin) -> str:
    match = _CUDA_XY.match(pin.version or "")
    return match.group(1) if match else ""


def _has_nvidia(contents: Contents) -> bool:
    return "nvidia" in contents.channels or any(p.index == "nvidia" for p in contents.pins if p.manager == "conda")


def _choices(release: CondaRelease, platforms: Iterable[str]) -> list[str]:
    """The CUDA X.Y the release was built for on every one of the platforms, oldest first."""
    sets = [set(release.cuda.get(p, ())) for p in platforms if p in release.cuda]
    common = set.intersection(*sets) if sets else set()
    return sorted(common, key=lambda t: tuple(map(int, t.split("."))))


def _nearest(choices: list[str], cuda: str) -> str | None:
    """The built CUDA closest above the one asked for (else the newest): the smallest change to the file."""
    key = tuple(map(int, cuda.split("."))) if cuda else (0, 0)
    above = [c for c in choices if tuple(map(int, c.split("."))) >= key]
    return above[0] if above else (choices[-1] if choices else None)


def _cudatoolkit_fix(release: CondaRelease, cuda: str, platforms: Iterable[str], pin: Pin) -> str:
    choices = _choices(release, platforms)
    nearest = _nearest(choices, cuda)
    if nearest is None:
        return f"pytorch {release.version} has no CUDA build there: take another release (`envpin solve --framework torch`)"
    return (f"pin a cudatoolkit pytorch {release.version} was built for ({', '.join(choices)}; the nearest: "
            f"cudatoolkit={nearest} for {pin.shown}) whose CUDA the driver runs, or regenerate the pins: "
            "`envpin solve --framework torch`")


def _pytorch_cuda_fix(release: CondaRelease, cuda: str, platforms: Iterable[str], pin: Pin) -> str:
    choices = _choices(release, platforms)
    nearest = _nearest(choices, cuda)
    if nearest is None:
        return f"pytorch {release.version} has no CUDA build there: take another release (`envpin solve --framework torch`)"
    return (f"replace {pin.shown} with pytorch-cuda={nearest} (pytorch {release.version}'s CUDA builds: "
            f"{', '.join(choices)}) and list the nvidia channel after pytorch (`-c pytorch -c nvidia`)")
