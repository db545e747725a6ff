"""Can the pinned builds run on a given machine? The builds a file pins, judged by the resolver's own
fitness checks (platform, Python, driver, compute capability: envpin.resolver.fitness) against a Target made
from target options, a facts file or a `[tool.envpin]` target."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from envpin.base.record import Record, record, replace
from envpin.check.conda_builds import CONDA_FRAMEWORKS, candidates, newest_candidates, oldest_release, unversioned
from envpin.check.judged import PIP_FRAMEWORKS, Judged, release_versions, tensorflow_build_for
from envpin.check.ranges import picked_build
from envpin.compat.drivers import driver_at_least, minimum_driver
from envpin.compat.model import Database, JaxlibFindLinksRelease
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.model import Contents, Pin, Problem, can_coexist, scope_oses
from envpin.readers.rules import (
    bound_variant,
    file_variants,
    holds_numpy_below_2,
    jax_release_of,
    numpy_2_out_of_reach,
    problem,
    public,
    tensorflow_release_of,
    torch_release_of,
)
from envpin.readers.variants import TORCH_FAMILY, jax_cuda_major, local_variant, split_local
from envpin.resolver.builds import (
    CHANNEL_NAMES,
    Build,
    builds_of,
    jax_builds,
    jaxlib_find_links_build,
    tensorflow_builds,
    torch_build,
)
from envpin.resolver.fitness import Rejection, Verdict, assess, other_vendors_build
from envpin.resolver.request import PYTORCH_CHANNEL
from envpin.resolver.target import Target
from envpin.vocabulary.markers import marker_holds
from envpin.vocabulary.names import canonical_name

ALL_KINDS = frozenset({"cuda", "rocm", "xpu", "cpu"})
# conda packages (and pixi's system-requirements.cuda, read as `__cuda`) whose version is a CUDA the driver must run
CUDA_PACKAGE_PINS = frozenset({"cudatoolkit", "pytorch-cuda", "cuda-version", "__cuda"})
_TARGET_IDS = {
    "platform": "CHK-TARGET-PLATFORM",
    "python": "CHK-TARGET-PYTHON",
    "installable": "CHK-TARGET-UNINSTALLABLE",
    "kind": "CHK-TARGET-PLATFORM",
    "driver": "CHK-TARGET-DRIVER",
    "gpu": "CHK-TARGET-GPU",
}


@record
class CheckTarget(Record):
    """A machine the lock must run on: `--os … --driver …`, `--facts FILE`, or a `[tool.envpin]` target."""

    name: str
    target: Target
    python_known: bool = True  # False: no Python was given, so the Python check is left to the file's own pin
    flags: str = ""  # the target options that describe it, for the fix's `envpin solve` command
    spec: TargetSpec | None = None  # the options themselves, for `check --fix`'s solve


def command_line_target(spec: TargetSpec, database: Database) -> CheckTarget:
    """The machine of the target options (`--os … --driver …` or `--facts FILE`)."""
    target = spec.resolve(database)
    return CheckTarget(f"on {short_description(target)}", target, True, spec.flags, spec)


def configured_target(named: NamedTarget, database: Database) -> CheckTarget:
    """A `[tool.envpin]` target; without a Python (given or in its facts file) the Python check is left out."""
    spec = named.spec
    return CheckTarget(f"on {named.name}", spec.resolve(database), bool(spec.python or spec.facts_file), spec.flags,
                       spec)


def short_description(target: Target) -> str:
    """`linux-x86_64, Python 3.11, driver 470.82.01, NVIDIA GeForce RTX 3090 (sm_86)`: the target in a message."""
    driver = f"driver {target.driver}" if target.driver else "no NVIDIA driver"
    gpus = _gpus_named(target) or "no GPU named"
    return f"{target.platform}, Python {target.python}, {driver}, {gpus}"


def target_fit(contents: Contents, database: Database, check_target: CheckTarget, policy: str) -> list[Problem]:
    """Every fact that fails for every framework pin on this target, each with its fix (not only the first)."""
    problems = _no_entry_for(contents, check_target) + _python_mismatch(contents, check_target)
    if contents.kind in ("pixi.toml", "pyproject.toml") and contents.platforms and \
            check_target.target.platform not in contents.platforms:
        return problems + [problem(
            "CHK-TARGET-PLATFORM", "workspace.platforms",
            f"{check_target.name}: the pixi workspace is for {', '.join(contents.platforms)}, not "
            f"{check_target.target.platform}: pixi installs nothing there",
            f"add {check_target.target.platform}'s conda subdir to the workspace's platforms (and solve it), or do "
            "not install it there")]
    if contents.kind == "pixi.lock":
        contents, chosen = _pixi_environments(contents, database, check_target, policy)
        problems += chosen
    problems += _exported_elsewhere(contents, check_target)
    problems += _manifest_python(contents, check_target)
    cuda_supplied = _supplies_cuda(contents)
    for judged in _target_builds(contents, database, check_target.target, check_target.python_known):
        problems += _judge(judged, database, check_target, policy, cuda_supplied=cuda_supplied)
        problems += _picked_numpy_1(judged, contents, check_target)
    problems += _cuda_package_pins(contents, database, check_target, policy)
    problems += _no_wheel_for_platform(contents, database, check_target)
    problems += _no_wheel_for_python(contents, database, check_target)
    problems += _local_cuda_jaxlib(contents, check_target)
    return _python_once_a_line(problems)


def _python_once_a_line(problems: list[Problem]) -> list[Problem]:
    """A line's Python mismatch said once: a wheel URL's tag (`…-cp37-cp37m-linux_x86_64.whl`) and the release's
    Pythons in the database (torch 1.11.0: 3.7-3.10) are two readings of one fact; the first, the line's own, stays."""
    seen: set[str] = set()
    kept = []
    for found in problems:
        if found.id == "CHK-TARGET-PYTHON":
            if found.where in seen:
                continue
            seen.add(found.where)
        kept.append(found)
    return kept


def _picked_numpy_1(judged: Judged, contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """A range the installer resolves to a build compiled against NumPy 1.x there (`torch>=2.0.1` held at 2.0.1 by
    `torchdata==0.6.1`), beside a numpy the file does not hold below 2: `import` fails with NumPy 2. (An exact pin
    is judged so on every platform, without a target: CHK-NUMPY-ABI of the file's own rules.)"""
    pin, target = judged.pin, check_target.target
    if pin.version or pin.manager != "pip" or not judged.decided or len(judged.builds) != 1:
        return []
    build = judged.builds[0]
    if build.channel != "pip" or target.platform not in build.numpy_below_2:
        return []
    if numpy_2_out_of_reach(contents, [target.python] if check_target.python_known and target.python else ()):
        return []  # Python 3.8 or older: pip finds no NumPy 2 there
    numpy = [p for p in contents.pins if p.name == "numpy" and p.manager == "pip" and can_coexist(p, pin)]
    if any(holds_numpy_below_2(p) for p in numpy):
        return []
    shown = f"the file has {', '.join(p.shown for p in numpy)}" if numpy else "the file does not hold numpy below 2"
    return [problem(
        "CHK-NUMPY-ABI", pin.where,
        f"{check_target.name}: for {pin.shown} the installer takes {build.label}, compiled against NumPy 1.x; with "
        f"NumPy 2 its import fails ('A module that was compiled using NumPy 1.x cannot be run in NumPy 2'), and "
        f"{shown}", "add numpy<2 (or change the numpy line to a 1.x release)",
        severity="error" if numpy else "warning")]


_OS_WORDS = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}


def _pixi_environments(contents: Contents, database: Database, check_target: CheckTarget,
                       policy: str) -> tuple[Contents, list[Problem]]:
    """A pixi.lock on this target: each environment as the platform pixi chooses there locks it."""
    from envpin.check.pixi_lock import for_target  # noqa: PLC0415 - only a pixi.lock needs it
    from envpin.vocabulary.platforms import conda_subdir  # noqa: PLC0415 - only a pixi.lock needs it

    target = check_target.target

    def needed(cuda: str) -> str | None:
        requirement = minimum_driver(database, cuda, target.os, policy)
        return requirement.minimum if requirement is not None else None

    def runs(cuda: str) -> bool:
        minimum = needed(cuda)
        return target.driver is not None and (minimum is None or driver_at_least(target.driver, minimum))

    return for_target(contents, check_target.name, conda_subdir(target.platform), runs,
                      lambda cuda: needed(cuda) or f"one that runs CUDA {cuda}",
                      driver_present=target.driver is not None or target.os == "macos")


def _exported_elsewhere(contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """A `conda env export` made on another OS: its platform-only packages (`ld_impl_linux-64`, `vc`) have no
    builds for the target's platform, so conda cannot create the environment there as written."""
    target = check_target.target
    if contents.exported_on is None or contents.exported_on == target.os:
        return []
    shown = ", ".join(contents.exported_only[:4]) + (", …" if len(contents.exported_only) > 4 else "")
    spec_list = contents.kind == "conda-specs"
    return [problem(
        "CHK-TARGET-PLATFORM", "line 1" if spec_list else "dependencies",
        f"{check_target.name}: this is a `{'conda list --export' if spec_list else 'conda env export'}` made on "
        f"{_OS_WORDS[contents.exported_on]} (it pins "
        f"{shown}, which conda installs there only, and every package's {contents.exported_on} build): conda "
        f"cannot create it on {target.platform} as written",
        f"translate it for that machine (`envpin solve --project DIR` drops the build strings and the "
        f"{contents.exported_on}-only packages, and says each), or export with `conda env export --from-history`")]


def _no_wheel_for_platform(contents: Contents, database: Database, check_target: CheckTarget) -> list[Problem]:
    """A requirement on a package that publishes no wheel for the target's platform and no sdist to build, as
    PyPI's recorded file lists say (the database's tied.yaml): `torch-xla` (Linux x86_64 wheels only) or
    `triton` on Windows, an exact `xformers==0.0.28.post3` there. A range is judged by every release it allows:
    only when none has a wheel there can pip install none."""
    from envpin.readers.tied import release_files  # noqa: PLC0415 - only a file with such a requirement needs it

    target = check_target.target
    problems = []
    for pin in contents.pins:
        if pin.manager != "pip" or _scope_excludes(pin, target) or pin.label.startswith(("git+", "http", "file:")):
            continue
        records = release_files(database, pin.name, f"=={pin.version}" if pin.version else pin.specifier)
        if not records or any(target.platform in r.platforms or r.sdist for r in records):
            continue
        platforms = sorted({p for r in records for p in r.platforms})
        first, last = records[0], records[-1]
        what = (f"{pin.shown} has no wheel for {target.platform} on PyPI and no sdist" if pin.version else
                f"{pin.shown}: {first.package} {first.version} has no wheel for {target.platform} on PyPI and no sdist"
                if len(records) == 1 else
                f"{pin.shown}: none of the {len(records)} releases of {first.package} it allows ({first.version} to "
                f"{last.version}) has a wheel for {target.platform} on PyPI or an sdist")
        elsewhere = any(target.platform in r.platforms or r.sdist for r in release_files(database, pin.name, ""))
        problems.append(problem(
            "CHK-TARGET-PLATFORM", pin.where,
            f"{check_target.name}: {what} (its wheels are for {', '.join(platforms) or 'no platform'}; "
            f"{last.source}): pip finds nothing to install there",
            f"leave it out on {target.platform} (a marker such as `; sys_platform == 'linux'`), or install it on "
            f"{' or '.join(platforms) or 'another platform'}"
            + (f", or take a release of {pin.name} that has a {target.platform} wheel" if elsewhere else "")))
    return problems


def _no_wheel_for_python(contents: Contents, database: Database, check_target: CheckTarget) -> list[Problem]:
    """A requirement on a package whose every release the line allows has wheels for the target's platform, none of
    them for its Python, and no sdist (the database's tied.yaml file lists: tensorflow-addons 0.22.0 and 0.23.0 are
    CPython 3.9-3.11 only): pip finds nothing to install on that Python."""
    from envpin.readers.tied import without_wheel_for_python  # noqa: PLC0415 - only a file with such a requirement needs it

    target = check_target.target
    if not check_target.python_known or not target.python:
        return []
    problems = []
    for pin in contents.pins:
        if pin.manager != "pip" or _scope_excludes(pin, target) or pin.label.startswith(("git+", "http", "file:")):
            continue
        found = without_wheel_for_python(database, pin.name, f"=={pin.version}" if pin.version else pin.specifier,
                                         target.platform, target.python)
        if found is None:
            continue
        records, pythons = found
        first, last = records[0], records[-1]
        what = (f"{pin.shown}: {first.package} {first.version} has no wheel for Python {target.python} on "
                f"{target.platform} and no sdist" if len(records) == 1 else
                f"{pin.shown}: none of the {len(records)} releases of {first.package} it allows ({first.version} to "
                f"{last.version}) has a wheel for Python {target.python} on {target.platform} or an sdist")
        problems.append(problem(
            "CHK-TARGET-PYTHON", pin.where,
            f"{check_target.name}: {what} (its wheels there are for CPython {', '.join(pythons)}; {last.source}): pip "
            "finds nothing to install there",
            f"use Python {pythons[-1]}, or leave {pin.name} out"))
    return problems


def all_rejections(database: Database, target: Target, build: Build, policy: str,
                   ignore: frozenset[str]) -> tuple[Verdict, list[Rejection]]:
    """Every check the build fails, in the fitness checks' order: assess stops at the first, so each failed
    check is switched off and the build assessed again. A build for another platform fails only that."""
    skipped = set(ignore)
    failed: list[Rejection] = []
    while True:
        verdict = assess(database, target, build, policy=policy, allowed_kinds=ALL_KINDS, ignore=frozenset(skipped))
        if verdict.rejection is None or verdict.rejection.check in skipped:
            return verdict, failed
        failed.append(verdict.rejection)
        if verdict.rejection.check == "platform":
            return verdict, failed
        skipped.add(verdict.rejection.check)


# what supplies the CUDA runtime and cuDNN beside a TensorFlow wheel that brings none: conda's packages, or
# the pip ones TensorFlow's own Linux instructions for 2.12/2.13 name
_CUDA_SUPPLIERS = ("cudatoolkit", "cuda-toolkit", "cuda-runtime", "cuda-cudart", "cudnn", "nvidia-cudnn-cu11",
                   "nvidia-cudnn-cu12", "nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12")


def _supplies_cuda(contents: Contents) -> bool:
    return any(pin.name in _CUDA_SUPPLIERS for pin in contents.pins)


def _judge(judged: Judged, database: Database, check_target: CheckTarget, policy: str, *,
           cuda_supplied: bool = False) -> list[Problem]:
    pin, target = judged.pin, check_target.target
    lead = f"{check_target.name}: " + (f"{judged.note}; " if judged.note else "")
    if judged.failure:
        return [problem(judged.failure_id, pin.where, f"{lead}{judged.failure}",
                        judged.fix or _solve_fix(pin, check_target), severity=judged.severity)]
    ignore = frozenset() if check_target.python_known else frozenset({"python"})
    assessed = [(build, *all_rejections(database, target, build, policy, ignore)) for build in judged.builds]
    if not assessed:
        return []
    if not judged.decided:
        fitting = [build for build, _, failed in assessed if not failed]
        if any(b.kind != "cpu" for b in fitting) or (fitting and (judged.explicit_cpu or not target.gpus)):
            return []
        # nothing the solver may take runs on the GPU here: report the newest GPU build's failures (or, with only a
        # CPU build left, that it is one)
        gpu_builds = [a for a in assessed if a[0].kind != "cpu" and target.platform in a[0].platforms]
        if fitting and not gpu_builds:
            return _cpu_problem(pin, fitting[0], lead, check_target, target)
        chosen = gpu_builds[0] if gpu_builds else assessed[0]
        problems = _rejection_problems(pin, chosen[2], lead, check_target, target)
        if fitting:
            problems = [replace(p, severity="warning", message=f"{p.message}; the installer falls back to "
                                f"{fitting[0].label}, a CPU build") for p in problems]
        return problems
    build, _, failed = assessed[0]
    if failed:
        return _rejection_problems(pin, failed, lead, check_target, target, judged.fix)
    if build.kind == "cpu" and target.has_nvidia and target.gpus and not judged.explicit_cpu:
        return _cpu_problem(pin, build, lead, check_target, target)
    unusable = _other_vendors_build(build, pin, target)
    if unusable:
        return [problem("CHK-TARGET-GPU", pin.where, f"{lead}{unusable}", _solve_fix(pin, check_target))]
    if build.framework == "tensorflow" and build.flavor == "cuda" and pin.manager == "pip" and not cuda_supplied \
            and target.has_nvidia and target.gpus:
        return _system_cuda_problem(pin, build, lead, target)
    return []


# JAX's monolithic CUDA jaxlib of its find-links page (`jaxlib==0.4.23+cuda12.cudnn89`, -f
# https://storage.googleapis.com/jax-releases/jax_cuda_releases.html) brings no CUDA: `jax[cudaNN_pip]` adds the
# nvidia-* wheels beside it, `jax[cudaNN_local]` (or the jaxlib alone) expects "a self-installed CUDA/cuDNN" (JAX's
# installation guide, google/jax docs/installation.md at 22e0708cc03c9bd3f94f5a58f0364ad6853383b2). The local
# version names what it was built for: cuda12.cudnn89 is CUDA 12 and cuDNN 8.9.
_JAXLIB_BUILT_FOR = re.compile(r"^cuda(\d{2})\.cudnn(\d)(\d+)$")
_JAX_LOCAL_EXTRA = re.compile(r"^cuda(\d{2})[-_](?:local|cudnn\d{2,3})$")  # cuda12_local, cuda11_cudnn82


def _local_cuda_jaxlib(contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """A CUDA jaxlib that loads CUDA and cuDNN from the system, with no `nvidia-*` wheel in the file to supply
    them: pip alone leaves JAX unable to use the GPU (CHK-TARGET-SYSTEM-CUDA, as for a plain TensorFlow wheel)."""
    target = check_target.target
    if not (target.has_nvidia and target.gpus) or target.os != "linux":
        return []  # the CUDA jaxlib wheels are Linux-only: elsewhere the platform checks speak
    problems = []
    for pin in contents.pins:
        if pin.manager != "pip" or _scope_excludes(pin, target):
            continue
        built_for = None
        if pin.name == "jaxlib" and pin.version:
            match = _JAXLIB_BUILT_FOR.match(split_local(pin.version)[1] or "")
            if match:
                built_for = (f"{pin.shown} is", f"CUDA {int(match.group(1))}",
                             f"cuDNN {match.group(2)}.{match.group(3)}")
            old_style = _JAXLIB_FIND_LINKS_LOCAL.match(split_local(pin.version)[1] or "")
            if old_style:  # jaxlib 0.1.x `+cuda111`: CUDA 11.1, and a cuDNN its name does not give
                built_for = (f"{pin.shown} is", f"CUDA {int(old_style.group(1))}.{old_style.group(2)}", "cuDNN")
        elif pin.name == "jax":
            match = next(filter(None, (_JAX_LOCAL_EXTRA.match(e) for e in sorted(pin.extras))), None)
            if match:
                built_for = (f"{pin.shown} installs", f"CUDA {int(match.group(1))}", "cuDNN")
        if built_for is None or _pip_cuda_beside(contents, pin):
            continue
        what, cuda, cudnn = built_for
        major = cuda.split()[1].split(".")[0]
        newer = f"`jax[cuda{major}_pip]` (the same jaxlib with NVIDIA's wheels), or a `jax[cuda{major}]` whose " \
                "plugin and NVIDIA wheels come from PyPI" if "." not in cuda else \
                "a newer JAX: `jax[cuda12]` installs its plugin and NVIDIA's CUDA wheels from PyPI"
        problems.append(problem(
            "CHK-TARGET-SYSTEM-CUDA", pin.where,
            f"{check_target.name}: {what} JAX's CUDA jaxlib of its find-links page, which loads {cuda} and "
            f"{cudnn} from the system: it brings neither and the file lists no nvidia-* wheel that would, so "
            "without them JAX runs on the CPU only",
            f"install {cuda} and {cudnn} on the machine, or take {newer}"))
    return problems


def _pip_cuda_beside(contents: Contents, jax: Pin) -> bool:
    """An nvidia-* wheel (or a `jax[cudaNN_pip]` extra, which pins them) in the same environment as `jax`."""
    return any(can_coexist(pin, jax) and pin.manager == "pip" and (
        pin.name.startswith("nvidia-") or (pin.name == "jax" and any(e.endswith(("_pip", "-pip")) for e in pin.extras)))
        for pin in contents.pins)


def _other_vendors_build(build: Build, pin: Pin, target: Target) -> str | None:
    """`fitness.other_vendors_build`, the judgement `solve --project` shares. An extra or a dependency group of
    such builds is a choice for other machines (docling-serve's `rocm` group), not a miss."""
    if any(label.startswith(("extra:", "group:", "feature:")) for label in pin.scope):
        return None
    return other_vendors_build(build, target)


def _system_cuda_problem(pin: Pin, build: Build, lead: str, target: Target) -> list[Problem]:
    """TensorFlow's plain GPU wheel (Linux up to 2.13, native Windows up to 2.10) loads a CUDA runtime and cuDNN
    it does not bring: with neither in the file nor on the machine, it imports and runs on the CPU only."""
    gpu = build.tensorflow_release.gpu[target.platform]
    supply = (f"`conda install -c conda-forge {gpu.conda}` in the environment" if gpu.conda
              else f"install CUDA {gpu.cuda} and cuDNN {gpu.cudnn} on the machine")
    return [problem("CHK-TARGET-SYSTEM-CUDA", pin.where,
                    f"{lead}{pin.shown} installs tensorflow {build.version}, whose GPU support loads CUDA {gpu.cuda} "
                    f"and cuDNN {gpu.cudnn} from the system: the wheel brings neither and nothing in the file does, "
                    "so without them it runs on the CPU only",
                    f"{supply} (`envpin solve` writes that step)"
                    + (", or take tensorflow[and-cuda] 2.14 or later, whose extra installs them from PyPI"
                       if target.os == "linux" else ""))]


def _rejection_problems(pin: Pin, failed: list[Rejection], lead: str, check_target: CheckTarget,
                        target: Target, fix: str = "") -> list[Problem]:
    problems = []
    for rejection in failed:
        if rejection.check == "driver" and target.driver is None:
            # A CUDA build without any NVIDIA driver still imports and runs, on the CPU: a waste, not a failure.
            problems.append(problem("CHK-TARGET-DRIVER", pin.where, f"{lead}{rejection.message}; it will run on the "
                                    "CPU only", _solve_fix(pin, check_target), severity="warning"))
            continue
        regenerate = fix or _solve_fix(pin, check_target)
        problems.append(problem(_TARGET_IDS[rejection.check], pin.where, f"{lead}{rejection.message}",
                                f"install NVIDIA driver ≥ {rejection.needs_driver} there, or {regenerate}"
                                if rejection.needs_driver else regenerate))
    return problems


def _cpu_problem(pin: Pin, build: Build, lead: str, check_target: CheckTarget, target: Target) -> list[Problem]:
    gpus = ", ".join(g.name for g in target.gpus)
    what = f"{build.label} is" if lead != f"{check_target.name}: " else f"{pin.shown} installs {build.label},"
    return [problem("CHK-TARGET-CPU-BUILD", pin.where, f"{lead}{what} a CPU build, on a machine with {gpus}",
                    _solve_fix(pin, check_target))]


def _no_entry_for(contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """A lock whose torch entries are all for other platforms cannot install torch on the target at all."""
    torches = [p for p in contents.pins if p.name == "torch" and p.manager == "pip" and p.version]
    target = check_target.target
    if not torches or not all(_scope_excludes(p, target) for p in torches):
        return []
    here = [p for p in torches if not _scope_excludes(p, target, python_known=False)]  # left out by the Python alone
    if here and check_target.python_known:
        # entries for this platform that the Python leaves out (taggui's cp311/cp312 Windows wheels on Python 3.9)
        pythons = sorted({v for p in here for v in p.pythons}) or [" and ".join(sorted(p.scope)) for p in here]
        return [problem(
            "CHK-TARGET-PYTHON", here[0].where,
            f"{check_target.name}: no torch entry of this file installs on {target.platform} with Python "
            f"{target.python} (those for {target.platform} are for Python {', '.join(pythons)})",
            f"use a Python they are for there, or add a torch line for Python {target.python}: "
            f"{_solve_fix(here[0], check_target)}")]
    platforms = sorted({platform for p in torches for platform in p.platforms}) or ["other platforms"]
    return [problem(
        "CHK-TARGET-PLATFORM", torches[0].where,
        f"{check_target.name}: no torch entry of this file installs on {target.platform} "
        f"(its torch wheels are for {', '.join(platforms)})",
        f"relock with {target.platform} among the lock's environments, or {_solve_fix(torches[0], check_target)}",
    )]


# The formats whose interpreter is the target's own: a conda file brings its Python with it.
_TARGET_PYTHON_KINDS = ("requirements", "uv.lock", "pylock")


def _python_mismatch(contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """The file's own Python limits against the target's Python: a lock's `requires-python`, and entries whose
    wheels are all for other CPython versions (cp311-only wheels cannot install on 3.12)."""
    target = check_target.target
    if check_target.python_known and contents.kind == "pyproject.toml" and contents.requires_python and \
            not admits_python(contents.requires_python, target.python):
        # pip and uv refuse to install the project on that Python ("requires a different Python"), whatever it lists
        return [problem("CHK-TARGET-PYTHON", contents.requires_python_where,
                        f"{check_target.name}: the project is for Python {contents.requires_python} (requires-python), "
                        f"not {target.python}: pip and uv refuse to install it there",
                        f"use a Python that {contents.requires_python} admits there, or widen requires-python")]
    if not check_target.python_known or contents.kind not in _TARGET_PYTHON_KINDS:
        return []
    flags = f" {check_target.flags}" if check_target.flags else ""
    fix = f"relock for Python {target.python}: `envpin lock{flags}`"
    if contents.requires_python and not admits_python(contents.requires_python, target.python):
        return [problem("CHK-TARGET-PYTHON", "requires-python",
                        f"{check_target.name}: the lock is for Python {contents.requires_python} (requires-python), "
                        f"not {target.python}", fix)]  # every entry was locked for that Python: one problem says it
    problems = []
    for pin in contents.pins:
        if not pin.pythons or target.python in pin.pythons or (pin.scope and _scope_excludes(pin, target)):
            continue
        if pin.platforms and target.platform not in pin.platforms:
            continue  # its wheels are for other platforms: the platform checks say so
        problems.append(problem("CHK-TARGET-PYTHON", pin.where,
                                f"{check_target.name}: {pin.shown} has wheels for CPython {', '.join(pin.pythons)} only, "
                                f"not {target.python}", fix))
    return problems


def _manifest_python(contents: Contents, check_target: CheckTarget) -> list[Problem]:
    """A pixi manifest's `python` dependency (pixi.toml or `[tool.pixi]`): the Pythons pixi installs. A target
    Python outside it is the same mismatch as a lock's requires-python (CHK-TARGET-PYTHON)."""
    from envpin.readers.project_files import pixi_python_spec  # noqa: PLC0415 - only a manifest with a python line

    target = check_target.target
    if not check_target.python_known or contents.kind not in ("pixi.toml", "pyproject.toml"):
        return []
    problems = []
    for pin in contents.pins:
        if pin.name != "python" or pin.manager != "conda" or _scope_excludes(pin, target):
            continue
        spec = pixi_python_spec(pin.label)
        if spec is None or admits_python(spec, target.python):
            continue
        allowed = pythons_admitted(spec)
        problems.append(problem(
            "CHK-TARGET-PYTHON", pin.where,
            f"{check_target.name}: the pixi manifest's `{pin.label}` leaves out Python {target.python}: pixi "
            f"installs a Python it allows ({', '.join(allowed) or 'none'}), not {target.python}",
            (f"check and solve for the Python pixi installs (--python {allowed[-1]})" if allowed
             else "fix the manifest's python line") + f", or widen the manifest's python to include {target.python}"))
    return problems


def pythons_admitted(requires_python: str) -> list[str]:
    """The Python minors (3.6 … 3.19) a `requires-python` or a pixi python line admits, oldest first: what a fix
    can offer instead of the target's."""
    return [f"3.{minor}" for minor in range(6, 20) if admits_python(requires_python, f"3.{minor}")]


def admits_python(requires_python: str, python: str) -> bool:
    """Whether a `requires-python` admits some release of the minor `python` ("3.12"); unreadable: yes."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - costly; only locks with requires-python need it

    try:
        specifier = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return True  # the format's own checks name a malformed value
    return any(specifier.contains(f"{python}.{patch}", prereleases=True) for patch in (0, 99))


def _target_builds(contents: Contents, database: Database, target: Target, python_known: bool) -> Iterator[Judged]:
    """What each framework pin of the file installs on this target."""
    has_jax = any(p.name == "jax" and p.manager == "pip" for p in contents.pins)
    for pin in contents.pins:
        if pin.scope and _scope_excludes(pin, target, python_known=python_known):
            continue
        if pin.manager == "conda":
            if pin.name in CONDA_FRAMEWORKS and (pin.version or unversioned(pin)):
                judged = _conda_judged(pin, contents, database, target)
                if judged is not None:
                    yield judged
            continue
        if pin.name not in PIP_FRAMEWORKS or (pin.name == "jaxlib" and has_jax
                                              and not _names_find_links_build(pin, database)):
            continue  # jax's own pin decides its jaxlib, unless the jaxlib names a find-links CUDA build
        if not pin.version:
            # a range, or no version at all: the installer takes the newest build the indexes offer there
            if pin.label and not pin.label.startswith(("git+", "http", "file:", ".", "/")) and "@" not in pin.label:
                judged = picked_build(pin, contents, database, target, python_known)
                if judged is not None:
                    yield judged
            continue
        if _offered_by_several_indexes(pin, contents):
            # `torch==2.0.0` beside `--extra-index-url …/cu117`: pip takes the highest build across the indexes,
            # `2.0.0+cu117` over PyPI's `2.0.0` where the index has a wheel for the target: judged as that range
            judged = picked_build(replace(pin, version=None, specifier=f"=={pin.version}"), contents, database,
                                  target, python_known)
            if judged is not None:
                yield replace(judged, pin=pin)
                continue
        judged = _pip_judged(pin, contents, database, target)
        if judged is not None:
            yield judged


def _offered_by_several_indexes(pin: Pin, contents: Contents) -> bool:
    """A torch pin of a public version (no `+variant`) in a file whose PyTorch indexes sit beside PyPI."""
    if pin.name != "torch" or local_variant(pin.version) or pin.index or contents.binds_indexes:
        return False
    variants, _ = file_variants(contents)
    return bool(variants) and bound_variant(pin, contents) is None


def _pip_judged(pin: Pin, contents: Contents, database: Database, target: Target) -> Judged | None:
    framework = PIP_FRAMEWORKS[pin.name]
    version = public(pin)
    if framework == "torch":
        release = torch_release_of(database, version)
        if release is None:
            return older_than_database(pin, database, target, "torch", version)
        name = bound_variant(pin, contents) or release.pypi.get(target.platform)
        if name is None:
            return Judged(pin, failure=f"PyPI has no torch {release.version} wheel for {target.platform}")
        if name not in release.variants:
            return None  # CHK-BUILD-UNKNOWN says so
        return Judged(pin, (torch_build(release, release.variants[name]),),
                      explicit_cpu=name == "cpu" and bound_variant(pin, contents) == "cpu")
    if framework == "tensorflow":
        release = tensorflow_release_of(database, version)
        if release is None:
            return older_than_database(pin, database, target, "tensorflow", version)
        return Judged(pin, (tensorflow_build_for(pin, tensorflow_builds(release), target),),
                      explicit_cpu=pin.name == "tensorflow-cpu")
    find_links = _find_links_jaxlib(pin, database)
    if find_links is not None:
        return find_links
    release = jax_release_of(database, version)
    if release is None:
        return _find_links_jax(pin, database) or older_than_database(pin, database, target, "jax", version)
    major = jax_cuda_major(pin.name, pin.version, pin.extras) or _jax_plugin_major(contents, pin)
    flavor = f"cuda{major}" if major else "cpu"
    build = next((b for b in jax_builds(release) if b.flavor == flavor), None)
    if build is None:
        return Judged(pin, failure=f"jax {release.version} has no [{flavor}] build")
    return Judged(pin, (build,), explicit_cpu=not {"cpu", "tpu"}.isdisjoint(pin.extras))  # jax[tpu]: for TPUs


_JAXLIB_FIND_LINKS_LOCAL = re.compile(r"^cuda(\d{2})(\d)$")  # +cuda111: CUDA 11.1 (jaxlib 0.1.x)
_JAXLIB_CUDNN_LOCAL = re.compile(r"^cuda\d{2}\.cudnn\d{2,3}$")  # +cuda11.cudnn82 (jaxlib 0.1.73 on)


def _names_find_links_build(pin: Pin, database: Database) -> bool:
    """A jaxlib pin of a find-links build: `+cuda111` always; `+cuda11.cudnn82` where its release is a find-links
    record (from 0.4.20 the jax records judge such a jaxlib through the jax line beside it)."""
    if not pin.version:
        return False
    public_version, local = split_local(pin.version)
    if _JAXLIB_FIND_LINKS_LOCAL.match(local or ""):
        return True
    return bool(_JAXLIB_CUDNN_LOCAL.match(local or "")) and _find_links_release(database, public_version) is not None


def _find_links_release(database: Database, version: str) -> JaxlibFindLinksRelease | None:
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    return next((r for r in database.jaxlib_find_links if r.version == wanted), None)


def _find_links_jaxlib(pin: Pin, database: Database) -> Judged | None:
    """`jaxlib==0.1.69+cuda111`, `jaxlib==0.3.25+cuda11.cudnn82`: the find-links build it names (jax.yaml
    `find_links:`), or why there is none; None for any other jax pin."""
    if pin.name != "jaxlib" or not pin.version:
        return None
    public_version, local = split_local(pin.version)
    local = local or ""
    release = _find_links_release(database, public_version)
    if _JAXLIB_CUDNN_LOCAL.match(local) and release is None:
        return None  # a release the jax records judge (0.4.20 on), or one older than them all
    if not _JAXLIB_FIND_LINKS_LOCAL.match(local) and not _JAXLIB_CUDNN_LOCAL.match(local):
        return None
    releases = database.jaxlib_find_links
    if release is None:
        known = f"{releases[-1].version}-{releases[0].version}" if releases else "none"
        return Judged(pin, failure=f"jaxlib {public_version}+{local} of JAX's find-links page is not in the "
                      f"compatibility database {database.version} (its find-links jaxlib: {known}): its Python, "
                      "driver and GPU support were not checked", failure_id="CHK-RELEASE-UNKNOWN", severity="warning")
    if local not in release.builds:
        built = ", ".join(f"+{name}" for name in release.builds)
        return Judged(pin, failure_id="CHK-BUILD-UNKNOWN", failure=(
            f"JAX's find-links page ({release.url}) has no jaxlib {release.version}+{local}: its CUDA builds are "
            f"{built}"))
    return Judged(pin, (jaxlib_find_links_build(release, local),))


def _find_links_jax(pin: Pin, database: Database) -> Judged | None:
    """`jax[cuda11_cudnn82]==0.4.7`: a jax release older than the jax records whose CUDA extra pins a find-links
    jaxlib build (its setup.py at the tag): judged as that build. None where no find-links record says so."""
    if pin.name != "jax" or not pin.version:
        return None
    try:
        wanted = Version(public(pin))
    except InvalidVersion:
        return None
    for release in database.jaxlib_find_links:
        if wanted in release.jax:
            pinned = {canonical_name(e): local for e, local in release.extras.items()}
            local = next((pinned[canonical_name(e)] for e in sorted(pin.extras) if canonical_name(e) in pinned), None)
            return Judged(pin, (jaxlib_find_links_build(release, local),)) if local else None
    return None


def _conda_judged(pin: Pin, contents: Contents, database: Database, target: Target) -> Judged | None:
    found = candidates(pin, contents, database) if pin.version else \
        newest_candidates(pin, contents, database, target.platform)
    if found is None:
        return None
    where = CHANNEL_NAMES[found.strategy]
    if not pin.version and found.release is not None:
        # no version: conda takes the newest release with a build the file allows, judged as that release
        why = f", {found.why}" if found.why else ""
        note = f"conda takes {found.release.framework} {found.release.version}, the newest on {where} with a build " \
               f"for {target.platform}{why}"
        on_platform = tuple(b for b in found.builds if target.platform in b.platforms)
        return Judged(pin, on_platform, decided=found.decided and len(on_platform) == 1, note=note,
                      explicit_cpu=found.decided and all(b.kind == "cpu" for b in on_platform))
    if found.release is None:
        oldest = oldest_release(database, found.strategy, found.framework)
        try:
            older = oldest is not None and Version(pin.version or "") < oldest
        except InvalidVersion:
            older = False
        if older:
            return older_than_database(pin, database, target, found.framework, pin.version or "", channel=where,
                                       oldest=oldest)
        try:
            predates = _predates_the_gpus(pin, found.framework, Version(pin.version or ""), database, target, where)
        except InvalidVersion:
            predates = None
        if predates is not None:
            return predates  # a release between the channel's recorded ones, older than every pip torch
        unrecorded = _unrecorded_channel_release(pin, database, target, found.framework, pin.version or "", where)
        if unrecorded is not None:
            return unrecorded
        return Judged(pin, failure=f"{where} has no {pin.shown} release in the compatibility database "
                      f"{database.version}", failure_id="CHK-RELEASE-UNKNOWN", severity="warning")
    release = found.release
    on_platform = tuple(b for b in found.builds if target.platform in b.platforms)
    if not on_platform and found.strategy == PYTORCH_CHANNEL and release.cuda_package \
            and found.why.startswith(release.cuda_package) and target.platform in release.cpu:
        return None  # no CUDA build for that X.Y: conda takes the CPU build, which CHK-CONDA-WIRING reports
    predates = _predates_the_gpus(pin, release.framework, release.version, database, target, where,
                                  gpu_builds=any(b.kind == "cuda" for b in on_platform))
    if predates is not None:
        return predates
    if not found.builds:
        return Judged(pin, failure=f"{where} has no {release.framework} {release.version} build for {found.why}")
    if not on_platform:
        asked = f" as {found.why} asks" if found.why else ""
        doubt = release.provenance.doubt_on(target.platform)
        if doubt and release.provenance.unverified_on:
            # the channel's files for this platform were not read: the record names what install commands say
            return Judged(pin, failure=f"{where}'s {release.framework} {release.version} build{asked} for "
                          f"{target.platform} is not in the compatibility database, whose builds there are not read "
                          f"from the channel ({doubt})", severity="warning")
        return Judged(pin, failure=f"{where} has no {release.framework} {release.version} build{asked} for "
                      f"{target.platform}")
    note = f"{pin.shown} ({found.why})" if found.why else ""
    explicit_cpu = found.decided and all(b.kind == "cpu" for b in on_platform)
    return Judged(pin, on_platform, decided=found.decided and len(on_platform) == 1, explicit_cpu=explicit_cpu,
                  note=note)


def older_than_database(pin: Pin, database: Database, target: Target, framework: str, version: str,
                        channel: str = "", oldest: Version | None = None) -> Judged | None:
    """A release older than every one the database knows: a warning that says so, and, where the database shows
    that no release up to a later one has code for the target's GPU, the error that this older one has none
    (a release never gains GPU architectures after it is published). `oldest`: the oldest release the database
    holds for the pin's source, where that is not its pip releases (a conda channel's records start later)."""
    oldest = oldest if oldest is not None else _oldest_known(database, framework)
    try:
        older = oldest is not None and Version(version) < oldest
    except InvalidVersion:
        return None
    if not older:
        return _between_releases(pin, database, target, framework, version, channel)
    # Only torch's arch lists say which GPUs a build has code for; JAX and TensorFlow state a minimum, which an
    # older release does not break for a newer GPU. Only releases from this one on are asked: the oldest ones
    # carry PTX that later ones dropped (1.0-1.5: 5.0+PTX, 3.7+PTX), so arch lists do not grow release by release.
    first = _first_later_release_for_gpus(database, target, framework, Version(version))
    where = f" on {channel}" if channel else ""
    if first is not None and oldest is not None:
        return Judged(pin, failure_id="CHK-TARGET-GPU", failure=(
            f"{framework} {version}{where} is older than every release in the compatibility database "
            f"{database.version} (oldest {oldest}), and the oldest {framework} there with code for "
            f"{_gpus_named(target)} is {first}, so this one has none"))
    if pin.manager == "pip" and framework == "torch":
        return None  # rules.releases says a pip torch is older than the database, once for the file
    return Judged(pin, failure_id="CHK-RELEASE-UNKNOWN", severity="warning", failure=(
        f"{framework} {version}{where} is older than every release in the compatibility database {database.version} "
        f"(oldest {oldest}): its Python, platform, driver and GPU support were not checked"))


def _between_releases(pin: Pin, database: Database, target: Target, framework: str, version: str,
                      channel: str) -> Judged | None:
    """A torch release the database lacks between two it holds (1.8.2, the LTS release the PyTorch index alone
    served): where neither neighbour has code for the target's GPU, the error that this one has none either;
    otherwise nothing (CHK-RELEASE-UNKNOWN says the release is unknown)."""
    if framework != "torch" or not target.gpus:
        return None
    pinned = Version(version)
    known = release_versions(database, framework)
    before = max((v for v in known if v < pinned), default=None)
    after = min((v for v in known if v > pinned), default=None)
    if before is None or after is None:
        return None  # newer than the database: nothing to infer
    if any(_fits_gpus(database, target, b) for b in builds_of(database, framework) if b.version in (before, after)):
        return None
    where = f" on {channel}" if channel else ""
    return Judged(pin, failure_id="CHK-TARGET-GPU", failure=(
        f"{framework} {version}{where} is not in the compatibility database {database.version}, and neither release "
        f"beside it ({before}, {after}) has code for {_gpus_named(target)}, so this one has none"))


def _fits_gpus(database: Database, target: Target, build) -> bool:
    """A CUDA build whose code runs on every GPU of the target (platform, Python and driver aside)."""
    ignore = frozenset({"python", "driver", "installable"})
    return build.kind == "cuda" and assess(database, target, build, policy="minor", allowed_kinds=ALL_KINDS,
                                           ignore=ignore).fits


def _predates_the_gpus(pin: Pin, framework: str, version: Version, database: Database, target: Target,
                       where: str, gpu_builds: bool = True) -> Judged | None:
    """A conda torch release older than every pip release in torch.yaml, whose builds' arch lists the database has
    not got (they are checked through the pip wheel of the same CUDA): where no pip torch up to a later release has
    code for the target's GPUs, this older one has none either (a release never gains architectures); elsewhere
    its CUDA builds' GPU code is not known, which is said (a warning), not passed over."""
    if framework != "torch" or not target.gpus or database.torch_release(str(version)) is not None:
        return None
    oldest = _oldest_known(database, "torch")
    if oldest is None or version >= oldest:
        return None
    first = _first_release_for_gpus(database, target, "torch", since=version)
    if first is None or first <= oldest:
        if not gpu_builds:
            return None  # a CPU build: no GPU code to know
        return Judged(pin, failure_id="CHK-RELEASE-UNKNOWN", severity="warning", failure=(
            f"{where}'s torch {version} is older than every pip torch in the compatibility database "
            f"{database.version} (oldest {oldest}), whose arch lists stand in for the channel's builds: the GPU code "
            "of its CUDA builds is not recorded, so the GPU was not checked"))
    return Judged(pin, failure_id="CHK-TARGET-GPU", failure=(
        f"{where}'s torch {version} is older than every pip torch in the compatibility database "
        f"{database.version} (oldest {oldest}), and the oldest torch there with code for {_gpus_named(target)} is "
        f"{first}, so this one has none"))


def _oldest_known(database: Database, framework: str) -> Version | None:
    return min(release_versions(database, framework), default=None)


def _unrecorded_channel_release(pin: Pin, database: Database, target: Target, framework: str, version: str,
                                where: str) -> Judged | None:
    """A channel torch release the channel's records lack (the pytorch channel's 1.10.2) whose pip release the
    database holds: where no pip torch from it on up to a later one has code for the target's GPUs, this one has
    none either (the channel's builds come from the same release process, and a release never gains
    architectures); otherwise nothing, and the release is said to be unknown."""
    try:
        pinned = Version(version)
    except InvalidVersion:
        return None
    if framework != "torch" or database.torch_release(str(pinned)) is None:
        return None
    first = _first_later_release_for_gpus(database, target, framework, pinned)
    if first is None:
        return None
    return Judged(pin, failure_id="CHK-TARGET-GPU", failure=(
        f"{where}'s torch {version} is not among the channel's records in the compatibility database "
        f"{database.version}, and no pip torch from {version} on has code for {_gpus_named(target)} before {first}, "
        "so this one has none"))


def _first_later_release_for_gpus(database: Database, target: Target, framework: str,
                                  pinned: Version) -> Version | None:
    """The oldest torch release after `pinned` with code for every GPU of the target, where none from `pinned` on
    has it before: what shows that a release the database lacks, or whose builds it has not read, has none
    either (a release never gains architectures). None where some release from `pinned` on has it, where none
    has, and for a target without GPUs or a framework other than torch (only torch's arch lists say which GPUs
    a build has code for)."""
    if framework != "torch" or not target.gpus:
        return None
    first = _first_release_for_gpus(database, target, framework, since=pinned)
    return first if first is not None and first > pinned else None


def _gpus_named(target: Target) -> str:
    """`NVIDIA GeForce RTX 5090 (sm_120)`, each GPU of the target: how the messages name them."""
    return ", ".join(f"{g.name} ({g.compute_capability.sm})" for g in target.gpus)


def _first_release_for_gpus(database: Database, target: Target, framework: str, since: Version) -> Version | None:
    """The oldest pip release from `since` on with a CUDA build whose code runs on every GPU of the target
    (platform, Python and driver aside)."""
    fitting = [b.version for b in builds_of(database, framework) if b.version >= since and _fits_gpus(database, target, b)]
    return min(fitting, default=None)


def _cuda_package_pins(contents: Contents, database: Database, check_target: CheckTarget,
                       policy: str) -> list[Problem]:
    """`cudatoolkit=11.3`, `pytorch-cuda=12.1`, `cuda-version=12.4`, pixi's `system-requirements.cuda`: the CUDA
    a conda environment installs needs a driver that runs it, whether or not a framework build is judged too."""
    target = check_target.target
    if target.driver is None or target.os == "macos":
        return []
    problems = []
    for pin in contents.pins:
        if pin.manager != "conda" or pin.name not in CUDA_PACKAGE_PINS or not pin.version:
            continue
        if pin.platforms and target.platform not in pin.platforms:
            continue  # a pixi platform's or target table's CUDA for another system (`cuda-linux-64` on Windows)
        cuda = ".".join(pin.version.split(".")[:2])
        if not cuda.replace(".", "").isdigit():
            continue
        requirement = minimum_driver(database, cuda, target.os, policy)  # "12" (cuda-version 12): any 12.x
        if requirement is None or driver_at_least(target.driver, requirement.minimum):
            continue
        runs = f" (up to CUDA {target.driver_cuda})" if target.driver_cuda else ""
        problems.append(problem(
            "CHK-TARGET-DRIVER", pin.where,
            f"{check_target.name}: {pin.shown} is CUDA {cuda}, which needs driver ≥ {requirement.minimum} "
            f"({requirement.rule}); this machine has {target.driver}",
            f"install NVIDIA driver ≥ {requirement.minimum} there, or pin a CUDA the driver runs{runs}",
        ))
    return problems


def _jax_plugin_major(contents: Contents, jax: Pin) -> str | None:
    """The CUDA major another line gives this jax: a jax-cudaNN plugin, the same jax with a `[cudaNN]` extra
    (pip merges the extras every line asks of one package: `jax==0.10.2` and `jax[cuda12]==0.10.2` install one
    jax with [cuda12]), or a CUDA jaxlib of JAX's find-links page (`jaxlib==0.4.23+cuda12.cudnn89`)."""
    for pin in contents.pins:
        if not can_coexist(pin, jax) or pin is jax:
            continue
        if pin.name.startswith(("jax-cuda", "jaxlib")) or (pin.name == "jax" and pin.extras):
            major = jax_cuda_major(pin.name, pin.version, pin.extras)
            if major:
                return major
    return None


def _scope_excludes(pin: Pin, target: Target, *, python_known: bool = True) -> bool:
    """Whether the entry belongs to another machine: its wheels are for other platforms, its markers say
    another OS, or its markers, evaluated for the target as pip evaluates them, leave it out
    (`; python_version < "3.10"` on Python 3.12, `; platform_machine == "aarch64"` on x86_64). Without a known
    Python, markers on the Python are not evaluated."""
    if pin.platforms and target.platform not in pin.platforms:
        return True
    oses = scope_oses(pin)
    if oses and target.os not in oses:
        return True
    python = target.python if python_known else None
    return any(not marker_holds(label, os_name=target.os, arch=target.arch, python=python)
               for label in pin.scope if ":" not in label.split(" ", 1)[0])  # `extra:cpu`, `group:dev`: no markers


def _solve_fix(pin: Pin, check_target: CheckTarget) -> str:
    # the framework `solve` knows (tensorflow-gpu, tensorflow-cpu: tensorflow; jaxlib: jax), not the project's name
    framework = "torch" if pin.name in TORCH_FAMILY else PIP_FRAMEWORKS.get(pin.name, pin.name)
    flags = f" {check_target.flags}" if check_target.flags else ""
    return f"regenerate the pins for it: `envpin solve --framework {framework}{flags}`"
