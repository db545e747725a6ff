"""Fixes that install another build are the answer of the solve `envpin solve` runs, for the machine diagnosed.

`diagnosed_target` describes the machine of a Case as the target flags of a solve (a TargetSpec that never
detects: it is the machine the facts and the error text describe, wherever the doctor runs). Its GPUs are the
facts' or, where the facts have none, the ones the error text names with the capability it gives; its driver
is the facts', else the pasted nvidia-smi's, else, when the text proves a CUDA program ran on the GPU, the
oldest driver that runs both that GPU and the installed build (database) — said so in the fix, never taken
for the real one. Its Python is a `--python` flag, else the environment's, else the host's.

`solve_for` asks `envpin.app.planning.plan`, the library call behind `envpin solve`, for the installed release
first (`torch==2.6.0`: another build of it), then relaxed in the order the solve's own fixes give (the
nearest release that runs here, each such fix naming its `--spec`), then for no release at all. The first
answer that is a plan is the fix; when none is, the fix is the solve's own refusal and fixes.
"""

from __future__ import annotations

import re

from envpin.app.planning import Planned, SolveOptions, plan
from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record
from envpin.compat.drivers import minimum_driver
from envpin.compat.gpus import lookup_gpu
from envpin.compat.model import ComputeCapability
from envpin.doctor.model import Case
from envpin.doctor.pasted import text_driver
from envpin.facts.host import is_python_version
from envpin.machine.spec import TargetSpec
from envpin.resolver.plan import Unsatisfiable
from envpin.vocabulary.variants import CUDA, kind_of

# A solve's fix that moves the request to another release names it as `--spec '<framework>==<version>'`
_SPEC_IN_FIX = re.compile(r"--spec '([A-Za-z0-9_.\-]+==[^'+]+)'")
# Messages that only a CUDA program running on an NVIDIA GPU prints: the GPU and a working driver are there
_RAN_ON_GPU = re.compile(r"with CUDA capability sm_\d+ is not compatible|no kernel image is available for execution"
                         r"|cudaErrorNoKernelImageForDevice|which is of cuda capability \d+\.\d+")


@record
class DiagnosedTarget(Record):
    """The machine of a Case as solve flags, and what of it was inferred rather than read (for the fix)."""

    spec: TargetSpec
    inferred: tuple[str, ...] = ()


@record
class Solved(Record):
    """The answer a fix shows: the planned answer, the requirements it was asked for, the machine it was
    solved for, and why the installed release was passed over (None when it was kept)."""

    planned: Planned
    specs: tuple[str, ...]
    target: DiagnosedTarget
    passed_over: str | None = None

    @property
    def command(self) -> str:
        """The `envpin solve` command line that gives the same answer (docs/doctor.md)."""
        words = ["envpin", "solve", "--framework", self.planned.request.frameworks[0] if self.planned.request.frameworks else "torch"]
        for spec in self.specs:
            words += ["--spec", spec]
        return " ".join(words) + " " + self.target.spec.flags


def diagnosed_target(case: Case) -> DiagnosedTarget:
    """The machine the case describes, as the flags of a solve for it."""
    host = case.host
    inferred: list[str] = []
    names = [gpu.name for gpu in host.gpus]
    nvidia = [gpu for gpu in host.gpus if gpu.vendor == "nvidia"]
    # a capability the facts hold (a probe's) is passed on; otherwise the solve reads it from the database by name
    capabilities = [str(g.compute_capability) for g in nvidia] if nvidia and all(g.compute_capability for g in nvidia) else []
    gfx = [str(g.gfx) for g in host.gpus if g.vendor == "amd"] if all(g.gfx for g in host.gpus if g.vendor == "amd") else []
    from_text = not host.gpus and bool(case.text_gpus)
    if not host.gpus and case.gpus:  # the environment's framework reported them (probe), the host did not
        names = [g.name for g in case.gpus]
        capabilities = [str(g.capability) for g in case.gpus] if all(g.capability for g in case.gpus) else []
    elif from_text:
        names = [g.name for g in case.text_gpus]
        capabilities = [str(g.capability) for g in case.text_gpus] if all(g.capability for g in case.text_gpus) else []
        inferred.append(f"the GPU is the one the error text names ({', '.join(names)}); the facts have none")
    driver = host.driver.version if host.driver else None
    if driver is None and names and not host.gpus:
        driver = _pasted_driver(case)
        if driver:
            inferred.append(f"driver {driver} is the one the pasted text shows")
    if driver is None and names and not any(g.vendor != "nvidia" for g in host.gpus) and _ran_on_gpu(case):
        seen = [g.capability or _capability_of(case, g.name) for g in case.text_gpus] + [g.capability for g in case.gpus]
        driver, why = _oldest_driver_that_ran(case, seen)
        if driver:
            inferred.append(why)
    python = case.flags.python
    if python is None and case.env is not None and is_python_version(case.env.python.version):
        python = case.env.python.version
    if python is None:
        python = host.python.version
    python = ".".join(python.split(".")[:2])  # a solve is for a Python minor
    spec = TargetSpec(
        os=host.os, arch=host.arch, python=python, driver=driver or "none", wsl=host.wsl or None,
        gpus=tuple(names), compute_capabilities=tuple(capabilities), gfx=tuple(gfx),
        amdgpu_driver=host.amdgpu_driver, rocm=host.rocm, macos=host.macos, detect=False,
    )
    return DiagnosedTarget(spec, tuple(inferred))


def _capability_of(case: Case, name: str) -> ComputeCapability | None:
    model = lookup_gpu(case.database, name)
    return model.compute_capability if model else None


def _pasted_driver(case: Case) -> str | None:
    for _source, text in case.texts:
        driver = text_driver(text)
        if driver:
            return driver
    return None


def _ran_on_gpu(case: Case) -> bool:
    return case.search_pattern(_RAN_ON_GPU) is not None


def _oldest_driver_that_ran(case: Case, capabilities: list[ComputeCapability | None]) -> tuple[str | None, str]:
    """The oldest driver that runs the GPU (its architecture's first CUDA toolkit) and the installed CUDA build
    (its CUDA's minimum, minor-version compatibility): the message proves the driver ran both."""
    database = case.database
    os_name = case.driver_os
    floors: list[tuple[str, str]] = []
    for capability in {c for c in capabilities if c is not None}:
        first = min((t for t in database.toolkits.values() if capability in t.targets),
                    key=lambda t: tuple(int(p) for p in t.version.split(".")), default=None)
        value = (first.driver_windows if os_name == "windows" else first.driver_linux) if first else None
        if first is not None and value:
            floors.append((value, f"CUDA {first.version} is the first to target {capability.sm}"))
    build_cuda = case.torch.cuda if case.torch and case.torch.cuda else None
    tag = case.local_tag("torch")
    if build_cuda is None and kind_of(tag) == CUDA and tag:
        digits = tag[2:]
        build_cuda = f"{digits[:-1]}.{digits[-1]}" if digits.isdigit() and len(digits) >= 2 else None
    if build_cuda:
        requirement = minimum_driver(database, build_cuda, os_name, "minor")
        if requirement is not None:
            floors.append((requirement.minimum, f"the installed CUDA {build_cuda} build needs it"))
    if not floors:
        return None, ""
    value, reason = max(floors, key=lambda item: tuple(int(p) for p in re.findall(r"\d+", item[0])))
    return value, (f"the driver is not in the facts: solved for {value}, the oldest that runs what the message shows "
                   f"ran ({reason}; database {database.version}); run `envpin doctor` on that machine for its own")


def solve_for(case: Case, framework: str = "torch", keep_release: bool = True,
              extra_specs: tuple[str, ...] = ()) -> Solved | str:
    """The answer of `envpin solve` for the diagnosed machine, or a one-line reason there is none to ask for."""
    try:
        target = diagnosed_target(case)
        target.spec.resolve(case.database)  # an unknown GPU name, a bad version: said once, here
    except EnvpinInputError as error:
        return f"`envpin solve --framework {framework}` picks the build once it knows the machine: {error}"
    release = case.release(framework)
    asked: list[tuple[str, ...]] = []
    if keep_release and release is not None:
        asked.append((f"{framework}=={release}", *extra_specs))
    if not asked:
        asked.append(tuple(extra_specs))
    passed_over = None
    first: Solved | None = None
    tried: set[tuple[str, ...]] = set()
    while asked:
        specs = asked.pop(0)
        if specs in tried:
            continue
        tried.add(specs)
        try:
            planned = plan(SolveOptions(frameworks=(framework,), specs=specs), target.spec, case.database)
        except EnvpinInputError:
            continue
        solved = Solved(planned, specs, target, passed_over)
        first = first or solved
        if planned.ok:
            return solved
        answer = planned.answer
        if specs and specs[0] == f"{framework}=={release}" and isinstance(answer, Unsatisfiable):
            passed_over = f"no build of {framework} {release} fits this machine: {answer.message}"
            # relaxed in the order of the solve's own fixes: each that names another release, then no release
            for fix in answer.fixes:
                moved = _SPEC_IN_FIX.search(fix)
                if moved and moved.group(1).startswith(f"{framework}=="):
                    asked.append((moved.group(1), *extra_specs))
        if not asked and specs != tuple(extra_specs):
            asked.append(tuple(extra_specs))
    if first is None:
        return f"run `envpin solve --framework {framework}` on this machine for the build that fits"
    return first
