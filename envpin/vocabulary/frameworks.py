"""The frameworks envpin solves for, and the packages it pins for each.

`FRAMEWORKS` is their order everywhere (the solve, its output, the probe's document). `PACKAGES` are the
distributions envpin pins for a framework, the framework's own package first; torch's companions
(torchvision, torchaudio) are released and built with it and pinned with it. `--framework` also takes the
`ALIASES`.
"""

from __future__ import annotations

TORCH, TENSORFLOW, JAX = "torch", "tensorflow", "jax"
FRAMEWORKS = (TORCH, TENSORFLOW, JAX)

PACKAGES = {TORCH: ("torch", "torchvision", "torchaudio"), TENSORFLOW: ("tensorflow",), JAX: ("jax",)}
COMPANIONS = PACKAGES[TORCH][1:]  # torchvision, torchaudio: paired with a torch release, built in its variants
TORCH_FAMILY = PACKAGES[TORCH]
ALIASES = {"pytorch": TORCH, "tf": TENSORFLOW}

PACKAGE_ORDER = tuple(package for framework in FRAMEWORKS for package in PACKAGES[framework])
FRAMEWORK_OF = {package: framework for framework in FRAMEWORKS for package in PACKAGES[framework]}

# The CPU-only package a plan pins in a framework's place on some platforms (tensorflow.yaml `cpu_package`).
CPU_PACKAGES = {TENSORFLOW: ("tensorflow-cpu",)}
# The package a plan pins in a framework's place for an AMD GPU (tensorflow.yaml `rocm:`): AMD's TensorFlow build.
ROCM_PACKAGES = {TENSORFLOW: ("tensorflow-rocm",)}
# What a plan may pin, by framework: its packages, its CPU-only package and its ROCm package.
PINNED_FRAMEWORK_OF = {
    **FRAMEWORK_OF,
    **{package: framework for table in (CPU_PACKAGES, ROCM_PACKAGES)
       for framework, packages in table.items() for package in packages},
}

# The distributions that install a framework's importable module (`import tensorflow` works after any of
# them): what the verify probe looks for. envpin/verify/probe.py cannot import envpin and keeps a copy of this
# table; tests/unit/test_vocabulary.py holds the two together.
DISTRIBUTIONS = {
    TORCH: ("torch",),
    TENSORFLOW: ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-rocm", "tf-nightly"),
    JAX: ("jax",),
}


def framework_named(text: str) -> str | None:
    """The framework `--framework TEXT` names (`PyTorch` -> torch, `tf` -> tensorflow), or None."""
    name = ALIASES.get(text.lower(), text.lower())
    return name if name in PACKAGES else None
