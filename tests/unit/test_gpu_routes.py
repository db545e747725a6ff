"""Routes outside PyTorch's and PyPI's indexes, named with their facts (docs/gpu-first.md): envpin names them in an
answer or as a fix and never plans from an index whose contents it has not recorded.

Each case: the machine, what the answer must say, and what it must not (a route named where it cannot help).
The facts come from the frozen database: jax.yaml's `missing_extras` (the CUDA 11 jaxlib only on JAX's find-links
page, read in jax's PyPI metadata), cuda.yaml's CUDA 11 minor-version minimum (NVIDIA's release notes), and
tensorflow.yaml's `metal:` (Apple's tensorflow-metal table and wheel files on PyPI), gpus.yaml's `jetpack:` (L4T
release -> JetPack, from dusty-nv/jetson-containers) and `jetson:` (NVIDIA's per-JetPack wheel folders), and
tensorflow.yaml's `amd_wheels:` (AMD's ROCm docs: tensorflow-rocm off PyPI from ROCm 6.1).
"""

from __future__ import annotations

import pytest

from envpin.resolver.plan import Plan
from tests.unit.test_solve_accelerators import Case, _texts, run_case

A100, V100, ORIN = "NVIDIA A100-SXM4-40GB", "NVIDIA Tesla V100-SXM2-16GB", "Orin (nvgpu)"
FIND_LINKS = "-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"

ROUTES = [
    (Case("jax-a100-driver-470", "driver 470 runs CUDA 11 (≥ 450.80.02), not JAX's CUDA 12 (≥ 525)", "!driver-too-old",
          gpus=(A100,), driver="470.82.01", python="3.10", framework="jax"),
     ("pip install 'jax[cuda11_pip]==0.4.25' " + FIND_LINKS, "≥ 450.80.02", "does not plan from it",
      "install NVIDIA driver 525 or newer"), ()),
    (Case("jax-a100-driver-470-old-pin", "jax<=0.4.20 has no GPU build on PyPI at all: its CUDA 11 route is the way",
          "!no-gpu-build", gpus=(A100,), driver="470.82.01", python="3.9", framework="jax", specs=("jax<=0.4.20",)),
     ("pip install 'jax[cuda11_pip]==0.4.20' " + FIND_LINKS,), ()),
    (Case("jax-v100-driver-418", "driver 418 is below CUDA 11's 450.80.02: the route cannot help, and is not named",
          "!driver-too-old", gpus=(V100,), driver="418.40", python="3.10", framework="jax"),
     ("install NVIDIA driver 525 or newer",), ("cuda11_pip",)),
    # tensorflow-metal on Apple silicon: named beside PyPI's CPU wheels, never pinned
    (Case("tf-mac-newest", "TensorFlow 2.21 is newer than every tensorflow-metal pairing: the newest pairing is named",
          "2.21.0", os="macos", arch="arm64", macos="14.5", framework="tensorflow"),
     ("tensorflow-metal plugin pairs with no tensorflow as new as 2.21.0", "tensorflow-metal==1.2.0",
      "--spec 'tensorflow>=2.18,<2.19'", "envpin names it and does not pin it"), ()),
    (Case("tf-mac-2.16", "tensorflow 2.16 pairs with tensorflow-metal 1.1.0 (Apple's v2.14-v2.18 row)", "2.16.2",
          os="macos", arch="arm64", macos="13.6", framework="tensorflow", specs=("tensorflow==2.16.*",)),
     ("tensorflow-metal 1.1.0 (PyPI) adds the Metal GPU to tensorflow 2.16.2", "macOS ≥ 12.1"), ("1.2.0",)),
    (Case("tf-mac-2.16-py312", "tensorflow-metal 1.1.0 has no cp312 wheel: said", "2.16.2", os="macos", arch="arm64",
          macos="13.6", python="3.12", framework="tensorflow", specs=("tensorflow==2.16.*",)),
     ("its wheels are for Python 3.9, 3.10, 3.11, not 3.12",), ()),
    (Case("tf-linux", "no Mac: no tensorflow-metal", "2.21.0", framework="tensorflow"), (), ("tensorflow-metal",)),
    # AMD's own tensorflow-rocm wheels (off PyPI from ROCm 6.1): named with the ROCm rows the AMD driver supports
    (Case("tf-rx7900xtx-driver-6.4", "driver 6.4 (ROCm 6.1-7.1) runs none of PyPI's tensorflow-rocm with gfx1100",
          "!gpu-unsupported", gpus=("AMD Radeon RX 7900 XTX",), amdgpu_driver="6.4", framework="tensorflow"),
     ("AMD's own tensorflow-rocm wheels", "https://repo.radeon.com/rocm/manylinux",
      "ROCm 6.2: tensorflow-rocm 2.14.1, 2.15.1, 2.16.1", "that AMD GPU driver 6.4 supports", "does not plan from them"),
     ()),
    (Case("tf-rx7900xtx-driver-5.7", "driver 5.7 (ROCm 5.5-6.1): only the ROCm 6.1 row", "!gpu-unsupported",
          gpus=("AMD Radeon RX 7900 XTX",), amdgpu_driver="5.7", framework="tensorflow", specs=("tensorflow==2.13.1",)),
     ("ROCm 6.1: tensorflow-rocm 2.13.1",), ("ROCm 6.2:",)),
    (Case("tf-mi300x", "PyPI's tensorflow-rocm has no gfx942: AMD's wheels named", "!gpu-unsupported",
          gpus=("AMD Instinct MI300X",), framework="tensorflow"), ("ROCm 6.2: tensorflow-rocm 2.14.1",), ()),
    (Case("tf-rx7900xtx", "PyPI's tensorflow-rocm 2.14.0.600 fits: a plan, no route", "2.14.0.600",
          gpus=("AMD Radeon RX 7900 XTX",), framework="tensorflow"), (), ("repo.radeon.com",)),
    # a Jetson: its JetPack (L4T release) is its driver; NVIDIA's per-JetPack wheel folders are named, never planned
    (Case("orin-jetpack-6.1", "JetPack 6.1 is L4T 36.4.0 with CUDA 12.6 (gpus.yaml jetpack:)", "2.14.1+cpu",
          gpus=(ORIN,), arch="aarch64", python="3.10", jetpack="6.1"),
     ("JetPack 6.1 (L4T 36.4.0, CUDA 12.6), the Jetson's driver",
      "https://developer.download.nvidia.com/compute/redist/jp/v61/pytorch/", "does not plan from it"),
     ("install a driver",)),
    (Case("orin-l4t-35.4.1", "L4T r35.4.1 as /etc/nv_tegra_release gives it is JetPack 5.1.2", "2.15.0+cpu",
          gpus=(ORIN,), arch="aarch64", python="3.11", jetpack="r35.4.1"),
     ("JetPack 5.1.2 (L4T 35.4.1)", "/jp/v512/pytorch/"), ()),
    (Case("orin-tf-jetpack-6.1", "TensorFlow's JetPack folder", "2.21.0", gpus=(ORIN,), arch="aarch64", python="3.10",
          jetpack="6.1", framework="tensorflow"), ("https://developer.download.nvidia.com/compute/redist/jp/v61 ",), ()),
    (Case("orin-jax-jetpack-6.1", "no Jetson JAX: said", "0.6.2", gpus=(ORIN,), arch="aarch64", python="3.10",
          jetpack="6.1", framework="jax"), ("no Jetson build of jaxlib",), ("/jp/v61",)),
    (Case("orin-no-jetpack", "a Jetson GPU without its JetPack: the answer asks for it, not for a desktop driver",
          "2.14.1+cpu", gpus=(ORIN,), arch="aarch64", python="3.10"), ("give the JetPack with --jetpack",),
     ("install a driver",)),
    (Case("orin-unknown-jetpack", "a JetPack the table does not know: kept, said, and the general Jetson page named",
          "2.14.1+cpu", gpus=(ORIN,), arch="aarch64", python="3.10", jetpack="7.0"),
     ("JetPack 7.0, which the database's JetPack table does not know", "install-pytorch-jetson-platform"), ("/jp/v70",)),
]


@pytest.mark.parametrize(("case", "says", "never"), ROUTES, ids=[c.id for c, _, _ in ROUTES])
def test_route_is_named_with_its_facts(database, case, says, never):
    answer = run_case(database, case)
    texts = _texts(answer)
    if case.expect.startswith("!"):
        assert getattr(answer, "code", None) == case.expect[1:], f"{case.fact}: {texts}"
    else:
        assert isinstance(answer, Plan) and answer.packages[0].version == case.expect, f"{case.fact}: {texts}"
        assert all(p.name != "tensorflow-metal" for p in answer.packages), case.fact  # named, never pinned
    for text in says:
        assert text in texts, f"{case.fact}: {text!r} not in\n{texts}"
    for text in never:
        assert text not in texts, f"{case.fact}: {text!r} in\n{texts}"
