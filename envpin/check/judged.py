"""What a framework pin installs on a target, before it is judged: the value between the readers of pins
(exact, range, conda) and the target checks."""

from __future__ import annotations

from packaging.version import Version

from envpin.base.record import Record, record
from envpin.compat.model import Database
from envpin.readers.model import Pin
from envpin.resolver.builds import Build
from envpin.resolver.target import Target

# pip projects whose wheels are a framework build -> the framework
PIP_FRAMEWORKS = {"torch": "torch", "tensorflow": "tensorflow", "tensorflow-cpu": "tensorflow",
                  "tensorflow-gpu": "tensorflow", "jax": "jax", "jaxlib": "jax"}


@record
class Judged(Record):
    """What one pin installs on the target: the build the file decides, or the builds its installer chooses
    among (a conda pin without a build string, a plain `tensorflow==X`), or why there is none."""

    pin: Pin
    builds: tuple[Build, ...] = ()
    decided: bool = True  # False: the solver or installer picks any of `builds` that fits
    failure: str | None = None  # there is no build at all: why
    failure_id: str = "CHK-TARGET-PLATFORM"
    explicit_cpu: bool = False  # the file asks for the CPU build by name (tensorflow-cpu, +cpu, cpuonly)
    note: str = ""  # how the build was chosen, for the message ("pip would take torch 2.12.1+cu126")
    severity: str | None = None
    fix: str = ""  # the fix, where it is more than regenerating the pins (a narrower range, another index)


def tensorflow_build_for(pin: Pin, builds: list[Build], target: Target) -> Build:
    """The TensorFlow build a pip pin installs on the target: `tensorflow[and-cuda]` (Linux, 2.14 on), the plain
    wheel's GPU support where TensorFlow built one for the platform (Linux up to 2.13 and native Windows up to
    2.10, with a system or conda CUDA), else the CPU build; `tensorflow-cpu` is always the CPU build, and so is
    `tensorflow` where the release's GPU build is another project (`gpu_package`: tensorflow-gpu before 2.1)."""
    cpu = builds[-1]
    if pin.name == "tensorflow-cpu":
        return cpu
    gpu_package = cpu.tensorflow_release.gpu_package.get(target.platform)
    if gpu_package is not None and pin.name != gpu_package:
        return cpu  # 1.15.2-2.0.4: `tensorflow` is the CPU build, tensorflow-gpu the GPU one
    if "and-cuda" in pin.extras:
        return next((b for b in builds if b.flavor == "and-cuda"), cpu)
    return next((b for b in builds if b.flavor == "cuda" and target.platform in b.platforms), cpu)


def release_versions(database: Database, framework: str) -> list[Version]:
    """The versions of a framework's pip releases in the database, newest first."""
    if framework == "torch":
        return [r.version for r in database.torch_releases]
    if framework == "tensorflow":
        return [r.version for r in database.tensorflow_releases]
    return [r.version for r in database.jax_releases]
