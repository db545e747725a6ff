"""A repository's own requirements, read from its files, and what envpin makes of them."""

from __future__ import annotations

from dataclasses import dataclass

# The names under which repositories ask for a GPU framework, mapped to the package envpin solves.
# tensorflow-gpu was the GPU package up to TF 2.11; jaxlib comes with jax's extras.
GPU_PACKAGE_ALIASES = {
    "torch": "torch",
    "pytorch": "torch",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "tensorflow": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "jax": "jax",
    "jaxlib": "jax",
}

# conda packages that only supply CUDA to a GPU framework: envpin's pins bring their own (pip wheels).
CONDA_CUDA_PACKAGES = {"cudatoolkit", "cudnn", "pytorch-cuda", "cuda-version", "cuda-toolkit", "cpuonly", "nccl"}


@dataclass(frozen=True)
class ProjectRequirement:
    name: str  # canonical distribution name
    text: str  # the requirement as written, without hashes and comments
    specifier: str
    extras: tuple[str, ...]
    marker: str | None
    origin: str  # "requirements.txt:3"


@dataclass(frozen=True)
class Project:
    requirements: tuple[ProjectRequirement, ...]  # every pip requirement, GPU frameworks included
    other_lines: tuple[str, ...]  # editable installs, URLs, local paths: kept verbatim
    index_options: tuple[str, ...]  # --extra-index-url … that are not the PyTorch index
    conda_packages: tuple[str, ...]  # conda dependencies of an environment.yml that are not GPU/CUDA ones
    channels: tuple[str, ...]
    python: str | None  # an exact `python=3.10` from an environment.yml
    files: tuple[str, ...]  # what was read, in order
    notes: tuple[str, ...]  # what envpin dropped or changed, and why

    @property
    def gpu_requirements(self) -> tuple[ProjectRequirement, ...]:
        return tuple(r for r in self.requirements if r.name in GPU_PACKAGE_ALIASES)

    @property
    def other_requirements(self) -> tuple[ProjectRequirement, ...]:
        return tuple(r for r in self.requirements if r.name not in GPU_PACKAGE_ALIASES)
