"""A repository's own requirements, read from its files, and what envpin makes of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envpin.base.record import Record, record, replace

if TYPE_CHECKING:
    from envpin.compat.model import Database

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
    # conda-forge's metapackages that choose pytorch's CUDA or CPU build (what pixi manifests name)
    "pytorch-gpu": "torch",
    "pytorch-cpu": "torch",
}

PYTHON_ABI = "python_abi"  # conda's package that pins the CPython ABI (`python_abi=3.9=2_cp39`) beside python

# Packages whose name asks for a framework's CPU build.
CPU_PACKAGES = {"tensorflow-cpu": "tensorflow", "pytorch-cpu": "torch"}
# conda packages that only supply CUDA to a GPU framework: envpin's pins bring their own (pip wheels).
CONDA_CUDA_SUPPLIERS = {"cudatoolkit", "cudnn", "pytorch-cuda", "cuda-version", "cuda-toolkit", "cpuonly", "nccl"}


@record
class ProjectRequirement(Record):
    name: str  # canonical distribution name
    text: str  # the requirement as written, without hashes and comments
    specifier: str
    extras: tuple[str, ...]
    marker: str | None
    origin: str  # "requirements.txt:3"
    # the line as written where a `${NAME}` in it was expanded: `text` holds the values, which the solve and a lock
    # need; what envpin writes holds the names, which pip expands where it installs (docs/hardening.md)
    written: str = ""

    @property
    def as_written(self) -> str:
        return self.written or self.text


@record
class Project(Record):
    requirements: tuple[ProjectRequirement, ...]  # every pip requirement, GPU frameworks included
    other_lines: tuple[str, ...]  # editable installs, URLs, local paths: kept verbatim
    index_options: tuple[str, ...]  # --extra-index-url … that are not the PyTorch index
    conda_packages: tuple[str, ...]  # conda dependencies of an environment.yml that are not GPU/CUDA ones
    channels: tuple[str, ...]
    python: str | None  # an exact `python=3.10` from an environment.yml
    files: tuple[str, ...]  # what was read, in order
    notes: tuple[str, ...]  # what envpin dropped or changed, and why
    cpu_only: tuple[str, ...] = ()  # frameworks the project asks for as CPU builds by name: they stay CPU
    # (framework, the line): the frameworks a line asks for as a GPU build (a CUDA extra, tag, name or build string)
    gpu_asked: tuple[tuple[str, str], ...] = ()
    python_tied: tuple[str, ...] = ()  # conda specs of a `conda env export` whose build was for its Python
    exported_pip: tuple[str, ...] = ()  # the origins of a `conda env export`'s pip pins, resolved for its Python
    platforms: tuple[str, ...] = ()  # the conda subdirs a pixi workspace installs on; empty: any
    by_platform: tuple[tuple[tuple[str, ...], str, str, str], ...] = ()  # (subdirs, manager, text, origin) lines
    # a pixi manifest's `python` dependency as PEP 440 (`==3.10.*`, `>=3.11,<3.13`) and where it is: the Pythons
    # pixi installs, so a target's Python outside it is refused
    python_spec: str | None = None
    python_origin: str = ""
    requires_python: str | None = None  # a pyproject.toml's `requires-python`: pip and uv install it on no other
    # the CUDA X.Y the project pins for torch (conda's `cudatoolkit=11.3`) and that line: the build a solve keeps
    # where it runs
    torch_cuda: tuple[str, str] | None = None

    def for_target(self, python: str, os_name: str, arch: str = "x86_64", database: Database | None = None) -> Project:
        """The project for the machine solved: a GPU framework line whose marker does not hold there is left
        out (`torch==2.0.1+cu118; python_version < "3.10"` on Python 3.12: pip skips it), said; a package with
        wheels for Linux only and no sdist (triton, torch-xla: the database's tied.yaml, tied.linux_only_packages)
        is left out elsewhere, said; then for_python."""
        from envpin.vocabulary.markers import marker_holds  # noqa: PLC0415 - only a project with markers needs packaging.markers

        skipped = [r for r in self.gpu_requirements
                   if r.marker and not marker_holds(r.marker, os_name=os_name, arch=arch, python=python)]
        if skipped:
            notes = tuple(f"{r.origin}: {r.text} is not for this machine (its marker does not hold here); left out"
                          for r in skipped)
            kept = tuple(r for r in self.requirements if r not in skipped)
            return replace(self, requirements=kept, notes=self.notes + notes).for_target(python, os_name, arch, database)
        if os_name == "linux" or database is None:
            return self.for_python(python)
        from envpin.readers.tied import linux_only_packages  # noqa: PLC0415 - reads the recorded facts: only off Linux

        # triton, torch-xla: PyPI has Linux wheels of them only, and no sdist (tied.yaml is read only for such a name)
        linux_only = linux_only_packages(database, (r.name for r in self.requirements))
        # with a marker that holds here (`torch-xla; sys_platform != 'darwin'` on Windows) pip would still try it
        dropped = [r for r in self.requirements if r.name in linux_only
                   and (not r.marker or marker_holds(r.marker, os_name=os_name, arch=arch, python=python))]
        if not dropped:
            return self.for_python(python)
        notes = tuple(f"{r.origin}: {r.text} is left out on {os_name}: {r.name} publishes wheels for Linux only "
                      "and no sdist" for r in dropped)
        kept = tuple(r for r in self.requirements if r not in dropped)
        return replace(self, requirements=kept, notes=self.notes + notes).for_python(python)

    def for_python(self, python: str) -> Project:
        """The project solved for another Python than the one it was exported with: the conda packages whose
        exported build was for that Python keep their name and lose the version (numpy 1.21.5 has no build
        for Python 3.12), and the notes say which."""
        if not self.python_tied or self.python is None or python == self.python:
            return self
        # python_abi's version is the Python's own (`python_abi=3.8=2_cp38` beside `python=3.8.5`): conda installs
        # the one of the Python it installs, so the exported one goes, where the others only lose their version
        abi = [spec for spec in self.python_tied if spec.split("=", 1)[0] == PYTHON_ABI]
        relaxed = {spec: spec.split("=", 1)[0] for spec in self.python_tied if spec not in abi}
        notes: tuple[str, ...] = (f"the conda packages built for Python {self.python} are left unpinned for Python "
                                  f"{python}: " + ", ".join(relaxed),) if relaxed else ()
        if abi:
            notes += (f"dropped {', '.join(abi)}: it is Python {self.python}'s ABI, and conda installs the one of Python "
                      f"{python} with it",)
        # the export's pip pins were resolved for its Python too, but which of them have wheels for another one
        # only each package's files say: they are kept, and said
        exported = [r.text for r in self.other_requirements if r.origin in self.exported_pip and r.specifier.startswith("==")]
        if exported:
            shown = ", ".join(exported[:5]) + (f", … {len(exported)} in all" if len(exported) > 5 else "")
            notes += (f"the pip section's exact pins were resolved for Python {self.python} and are kept at their "
                      f"versions for Python {python} ({shown}): one without a wheel for Python {python} fails to "
                      "install and has to be moved by hand",)
        return replace(self, conda_packages=tuple(relaxed.get(p, p) for p in self.conda_packages if p not in abi),
                       notes=self.notes + notes, python_tied=(), exported_pip=())

    @property
    def gpu_requirements(self) -> tuple[ProjectRequirement, ...]:
        return tuple(r for r in self.requirements if r.name in GPU_PACKAGE_ALIASES)

    @property
    def other_requirements(self) -> tuple[ProjectRequirement, ...]:
        return tuple(r for r in self.requirements if r.name not in GPU_PACKAGE_ALIASES)
