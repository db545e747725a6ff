"""Packages built for one framework release, as their own metadata (or the framework's) says.

A project that pins `torchdata==0.6.1` beside `torch>=2.0.1` can only install with torch 2.0.1: torchdata
0.6.1's wheel requires `torch (==2.0.1)`. Left out of the solve, the solver moves torch and pip cannot resolve
the result. Each record is one Requires-Dist read from a wheel's METADATA on PyPI (the file named in
`source`), so the torch requirement becomes part of the solve and a conflict names the line that asks for it.
`triton` is the other way round: it does not name torch, torch names it (torch 2.0.0 and 2.0.1 require
`triton (==2.0.0)` on Linux x86_64), so triton 2.0.0 allows those torch releases.

The suffixed CUDA packages (`cuml-cu11`, `nvidia-cublas-cu12`, `cupy-cuda12x`) and `[cuNN]` extras are for one CUDA
major: `cuda_major_of_requirement` says which, for the plan's check against the solved build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Tied:
    package: str
    version: str
    torch: str  # the torch releases it installs with, as a specifier
    source: str  # the wheel whose METADATA says so


_FILES = "https://files.pythonhosted.org/packages"
TIED = (
    Tied("torchdata", "0.6.1", "==2.0.1",
         f"{_FILES}/5b/4e/f45637dec313942f0af18804f8a5ed84b61a35ff47299a9c41f630023b39/"
         "torchdata-0.6.1-cp310-cp310-macosx_10_13_x86_64.whl"),
    Tied("torchtext", "0.16.0", "==2.1.0",
         f"{_FILES}/6e/ad/0c1e8c2b4c21a77b5b8c22ef38399635ab5bfaeffa6eeddd59b945f1ff2d/"
         "torchtext-0.16.0-cp310-cp310-macosx_10_13_x86_64.whl"),
    Tied("xformers", "0.0.18", "==2.0.0",
         f"{_FILES}/7e/b6/a51ff1c6432e33a194feb53971b5daf6832123d102ac4556c6508ca37278/"
         "xformers-0.0.18-cp310-cp310-manylinux2014_x86_64.whl"),
    # torch's own Requires-Dist: `triton (==2.0.0) ; platform_system == "Linux" and platform_machine == "x86_64"`
    Tied("triton", "2.0.0", "==2.0.0||==2.0.1",
         f"{_FILES}/8c/4d/17e07377c9c3d1a0c4eb3fde1c7c16b5a0ce6133ddbabc08ceef6b7f2645/"
         "torch-2.0.1-cp310-cp310-manylinux1_x86_64.whl and "
         f"{_FILES}/b6/b1/f562cb533751c272d23f605858cd17d6a6c50fa8cd3c1f99539e2acd359f/"
         "torch-2.0.0-cp310-cp310-manylinux1_x86_64.whl"),
)
_SUFFIX = re.compile(r"-cu(?:da)?(\d{2})(?:x)?$")
_EXTRA = re.compile(r"^cu(?:da)?(\d{2})$")


def tied_to(name: str, specifier: str) -> Tied | None:
    """The record for an exact pin (`==0.6.1`) of a package built for one torch release."""
    exact = re.fullmatch(r"==\s*([^,;\s]+)", specifier.strip())
    if exact is None:
        return None
    return next((t for t in TIED if t.package == name and t.version == exact.group(1)), None)


def torch_specifiers(tied: Tied) -> list[str]:
    """`==2.0.0||==2.0.1` (either release) as the one specifier a solve can take: the narrowest range holding both."""
    options = tied.torch.split("||")
    if len(options) == 1:
        return [options[0]]
    versions = sorted(o.removeprefix("==") for o in options)
    return [f">={versions[0]},<={versions[-1]}"]


def cuda_major_of_requirement(name: str, extras: tuple[str, ...]) -> str | None:
    """`cuml-cu11` -> 11, `cupy-cuda12x` -> 12, `nvidia-cublas-cu12` -> 12, `jax[cuda13]`-style extras of other
    packages (`onnxruntime[cu12]`, `cuml[cu13]`) -> that major."""
    match = _SUFFIX.search(name)
    if match:
        return str(int(match.group(1)))
    for extra in extras:
        match = _EXTRA.match(extra)
        if match:
            return str(int(match.group(1)))
    return None
