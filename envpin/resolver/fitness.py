"""Does one build run on the target? Pure, and explains itself either way.

The checks run in a fixed order (platform, the wheels' tags for the C library and a free-threaded Python, Python, installable, kind of build, driver, GPUs, and last the
project's numpy bound against the build's own numpy requirement) and the first failure is the verdict's rejection. ROCm, XPU and Apple silicon builds go through the same checks, with
their own driver and GPU facts (`envpin.resolver.accelerators`). `ignore` switches checks off, which is how the explainer asks
"what if the driver were newer?" or "what if this were Python 3.12?".

A rejection says why twice: `message`, the sentence a failed solve prints, and `brief`, the few words a cell of
`envpin matrix` shows ("driver below 580", "no sm_61 kernels"). A build that fits may still fit with a caveat
(`caveats`): a GPU reached only by JIT from PTX, or a check passed without the facts to decide it. Both
commands read the same verdicts, so the grid can never say other than the solve.

pip builds and conda builds (`Build.channel`) go through the same checks. Where the database lacks the facts a
check needs (conda.yaml records no Pythons and no GPU architecture lists), the check passes on what it does
know, the verdict names it in `unchecked` and says so in `unverified`: it never guesses.
"""

from __future__ import annotations

from envpin.base.record import Record, record
from envpin.compat.archs import TEGRA_CAPABILITIES, coverage
from envpin.compat.drivers import DriverRequirement, cuda_at_least, driver_at_least, minimum_driver
from envpin.compat.model import Database, Provenance
from envpin.resolver.accelerators import (
    check_amd_driver,
    check_amd_gpus,
    check_intel_gpus,
    check_macos_wheel,
    compute_amd_gpus,
    of_kind,
    runs_on,
)
from envpin.resolver.builds import Build
from envpin.resolver.request import PIP, NumpyBound
from envpin.resolver.target import Target
from envpin.resolver.wheel_fit import check_wheel_tags, wheel_tags_matter

CHECKS = ("platform", "python", "installable", "kind", "driver", "gpu", "numpy")


@record
class Rejection(Record):
    check: str  # one of CHECKS
    message: str  # the sentence, naming the build: "cu128 has no code for NVIDIA GeForce GTX 1080 Ti (sm_61); …"
    brief: str  # the same in a few words, without the build: "no sm_61 kernels"
    needs_driver: str | None = None  # for `driver`: the oldest driver that would do


@record
class Caveat(Record):
    """What a build that fits rests on beyond the checks the database decides: JIT from PTX (`ptx`), or a check
    passed without the facts to decide it (`unchecked`: an arch list or Pythons not in the database)."""

    kind: str  # ptx | unchecked
    brief: str


@record(eq=False)
class Verdict(Record):
    build: Build
    reasons: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()
    rejection: Rejection | None = None
    unchecked: tuple[str, ...] = ()  # checks passed without the facts to decide them fully (see `unverified`)
    caveats: tuple[Caveat, ...] = ()  # a build that fits: what it fits with (PTX JIT, a check not decided)

    @property
    def fits(self) -> bool:
        return self.rejection is None

    @property
    def why_not(self) -> Rejection:
        """The rejection of a verdict known not to fit."""
        if self.rejection is None:
            raise AssertionError(f"{self.build.label} fits: no rejection")
        return self.rejection


def assess(
    database: Database,
    target: Target,
    build: Build,
    *,
    policy: str,
    allowed_kinds: frozenset[str],
    ignore: frozenset[str] = frozenset(),
    numpy: NumpyBound | None = None,
) -> Verdict:
    reasons: list[str] = []
    # only the doubts a plan on this platform rests on (a note scoped to other platforms decides nothing here)
    unverified: list[str] = [text for p in build.provenance if (text := p.doubt_on(target.platform))]
    unchecked: list[str] = []
    caveats: list[Caveat] = []

    def verdict(rejection: Rejection | None = None) -> Verdict:
        return Verdict(build, tuple(reasons), tuple(dict.fromkeys(unverified)), rejection, tuple(unchecked),
                       tuple(caveats) if rejection is None else ())

    platform = target.platform
    if "platform" not in ignore and platform not in build.platforms:
        return verdict(Rejection("platform", f"{build.label} is not built for {platform}", f"not built for {platform}"))
    if "platform" not in ignore and (problem := check_macos_wheel(target, build, reasons, unverified)):
        return verdict(Rejection("platform", problem, f"no wheel for macOS {target.macos}"))
    # the C library and the Python ABI, as the wheels' tags say (a platform question asked before the Python's)
    if wheel_tags_matter(target) and (tagged := check_wheel_tags(database, target, build, reasons, unverified,
                                                                  unchecked)):
        check, message, brief = tagged
        if check not in ignore:
            return verdict(Rejection(check, message, brief))
    if "python" not in ignore and build.pythons is None:
        unchecked.append("python")
        unverified.append(f"the database does not record which Pythons {build.where} built {build.conda_package} "
                          f"{build.version} for: Python {target.python} was not checked")
        caveats.append(Caveat("unchecked", f"its Pythons are not in the database: Python {target.python} not checked"))
    elif "python" not in ignore and build.pythons is not None and target.python not in build.pythons.get(platform, ()):
        pythons = build.pythons.get(platform, ())
        message = f"{build.label} has no wheel for Python {target.python} on {platform} ({_span(pythons)})"
        return verdict(Rejection("python", message, f"no wheel for Python {target.python} on {platform}"))
    if "installable" not in ignore and build.blocked:
        return verdict(Rejection("installable", f"{build.label} cannot be installed: {build.blocked}",
                                 f"cannot install: {build.blocked}"))
    if "kind" not in ignore and not of_kind(build, target, allowed_kinds):
        return verdict(_kind_rejection(target, build))
    if build.kind == "cuda" and "driver" not in ignore:
        rejection = _check_driver(database, target, build, policy, reasons, unverified)
        if rejection:
            return verdict(rejection)
    if build.kind == "cuda" and "gpu" not in ignore:
        rejection = _check_gpus(database, target, build, reasons, unverified, unchecked, caveats)
        if rejection:
            return verdict(rejection)
    if build.kind == "rocm" and "driver" not in ignore:
        refused = check_amd_driver(database, target, build, reasons, unverified, unchecked)
        if refused:
            brief = f"the AMD driver does not support ROCm {'.'.join((build.rocm or '').split('.')[:2])}"
            return verdict(Rejection("driver", refused[0], brief, refused[1]))
    if build.kind == "rocm" and "gpu" not in ignore and (problem := check_amd_gpus(database, target, build, reasons,
                                                                                      unverified)):
        gfx = ", ".join(dict.fromkeys(gpu.gfx for gpu in compute_amd_gpus(target)))
        known = build.gfx is not None
        return verdict(Rejection("gpu", problem, f"no {gfx} kernels" if known else "no gfx list known for this build"))
    if build.kind == "xpu" and "gpu" not in ignore and (problem := check_intel_gpus(target, build, reasons)):
        return verdict(Rejection("gpu", problem, f"not supported on this Intel GPU on {target.platform}"))
    if numpy is not None and "numpy" not in ignore and build.numpy is not None:
        from envpin.resolver.numpy_fit import numpy_clash, numpy_needed  # noqa: PLC0415 - only a solve with a numpy bound

        clash = numpy_clash(build, target, numpy)
        if clash is not None:
            return verdict(Rejection("numpy", clash, f"requires numpy{numpy_needed(build, target)}"))
        reasons.append(f"{build.label} requires numpy{numpy_needed(build, target)} (its wheels' Requires-Dist), which "
                       f"{numpy.asked} allows")
    return verdict()


_KIND_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "cpu": "CPU"}


def _kind_rejection(target: Target, build: Build) -> Rejection:
    """A build that does not run on the kind the machine's GPU calls for. Torch's macOS arm64 wheel, which would
    install, is named with the macOS its MPS backend needs: that it runs on the CPU is the whole reason."""
    if runs_on(build, target) == "cpu" and build.kind == "cpu" and target.macos is not None \
            and build.framework == "torch" and build.channel == "pip":
        support = build.torch_record[0].macos
        needed = support.mps_macos if support is not None else "?"
        return Rejection("kind", f"{build.label} runs on the CPU on macOS {target.macos}: its MPS backend needs macOS "
                                 f"≥ {needed}", f"runs on the CPU: MPS needs macOS ≥ {needed}")
    return Rejection("kind", f"{build.label} is a {build.kind} build", _kind_brief(target, build))


def _kind_brief(target: Target, build: Build) -> str:
    """Why a build of another kind is not the answer here: a CUDA build without a driver, or a build envpin takes
    only when it is asked for by name (`+cpu`, `+rocm6.2`)."""
    kind = _KIND_NAMES.get(build.kind, build.kind)
    if build.kind == "cuda" and not target.has_nvidia:
        return "a CUDA build, and no NVIDIA driver here"
    if build.kind == "cpu":
        return "a CPU build: taken only when asked for by name"
    article = "an" if kind == "XPU" else "a"
    return f"{article} {kind} build: not for this machine unless asked for by name"


def driver_requirement(database: Database, target: Target, build: Build, policy: str) -> DriverRequirement | None:
    """The framework's own stated minimum where it gives one (JAX), else NVIDIA's tables for the build's CUDA."""
    stated = build.min_driver.get(target.os)
    if stated:
        rule = f"{build.framework}'s stated minimum for CUDA {build.cuda_major}"
        return DriverRequirement(stated, rule, Provenance(()))
    return minimum_driver(database, build.gpu_cuda, target.driver_os, policy)


def _check_driver(
    database: Database, target: Target, build: Build, policy: str, reasons: list[str], unverified: list[str]
) -> Rejection | None:
    requirement = driver_requirement(database, target, build, policy)
    if requirement is None:
        return Rejection("driver", f"the database has no driver minimum for CUDA {build.cuda} on {target.driver_os}",
                         f"no driver minimum known for CUDA {build.cuda} on {target.driver_os}")
    if requirement.doubt_decides(target.driver):
        unverified.append(str(requirement.provenance.unverified))
    what = _short(build)
    if target.driver is None:
        message = f"{what} needs an NVIDIA driver ≥ {requirement.minimum} and none was found"
        return Rejection("driver", message, f"needs an NVIDIA driver ≥ {requirement.minimum}", requirement.minimum)
    if not driver_at_least(target.driver, requirement.minimum):
        message = f"{what} needs driver ≥ {requirement.minimum} ({requirement.rule}); this machine has {target.driver}"
        return Rejection("driver", message, f"driver below {requirement.minimum}", requirement.minimum)
    reasons.append(f"driver {target.driver} runs {what} ({requirement.rule}: ≥ {requirement.minimum})")
    return None


def _check_gpus(
    database: Database, target: Target, build: Build, reasons: list[str], unverified: list[str], unchecked: list[str],
    caveats: list[Caveat],
) -> Rejection | None:
    if not target.gpus:
        reasons.append("no GPU was named, so the compute capability was not checked")
        caveats.append(Caveat("unchecked", "no GPU named: compute capability not checked"))
        return None
    jetson = database.jetson.get(build.framework)
    tegra = [g for g in target.gpus if g.compute_capability in TEGRA_CAPABILITIES]
    if tegra and jetson is not None and not jetson.pypi_cuda and build.channel == PIP:
        if jetson.provenance.unverified:
            unverified.append(jetson.provenance.unverified)
        message = (f"{build.framework}'s CUDA wheels from PyPI do not run on Jetson (Tegra) GPUs such as {tegra[0].name} "
                   f"({tegra[0].compute_capability.sm}): {jetson.text}")
        return Rejection("gpu", message, f"PyPI's CUDA wheels do not run on Jetson ({tegra[0].compute_capability.sm})")
    if build.archs and (target.platform in build.archs or not build.toolkit_known):
        return _check_arch_list(target, build, reasons, unverified, caveats)
    if build.min_cc is not None:
        for gpu in target.gpus:
            if gpu.compute_capability < build.min_cc:
                message = (f"{build.label} supports GPUs from compute capability {build.min_cc}; "
                           f"{gpu.name} is {gpu.compute_capability}")
                brief = f"needs compute capability ≥ {build.min_cc}; {gpu.compute_capability.sm} is older"
                return Rejection("gpu", message, brief)
        reasons.append(f"{build.label} supports compute capability ≥ {build.min_cc}: every GPU here qualifies")
        return None
    unchecked.append("gpu")
    if build.toolkit_known:
        return _check_toolkit_targets(database, target, build, reasons, unverified, caveats)
    unverified.append(f"the GPU architectures compiled into {build.framework} {build.version} are not in the database; "
                      "the GPUs' compute capability was not checked")
    caveats.append(Caveat("unchecked", "its GPU architectures are not in the database: compute capability not checked"))
    return None


def _check_toolkit_targets(
    database: Database, target: Target, build: Build, reasons: list[str], unverified: list[str], caveats: list[Caveat]
) -> Rejection | None:
    """No arch list, but the CUDA toolkit the build was compiled with is known (conda builds): a GPU older than
    anything that toolkit can compile for cannot run the build, whatever its arch list."""
    unverified.append(f"{build.where}'s {build.conda_package} builds: their GPU architecture lists are not in the "
                      "database, so the compute capability was checked only against what the CUDA toolkit can target")
    toolkit = database.toolkits.get(build.gpu_cuda)
    if toolkit is None or not toolkit.targets:
        return None
    oldest = min(toolkit.targets)
    for gpu in target.gpus:
        if gpu.compute_capability < oldest:
            message = (f"{build.label} was built with CUDA {build.cuda}, which targets compute capability {oldest} and "
                       f"newer; {gpu.name} is {gpu.compute_capability}")
            return Rejection("gpu", message, f"no {gpu.compute_capability.sm} kernels (CUDA {build.cuda} targets ≥ {oldest})")
    reasons.append(f"CUDA {build.cuda} (the toolkit of {build.label}) targets compute capability {oldest} and "
                   "newer: every GPU here qualifies")
    caveats.append(Caveat("unchecked", f"its GPU architectures are not in the database: checked only against what "
                                       f"CUDA {build.cuda} can target"))
    return None


def _check_arch_list(
    target: Target, build: Build, reasons: list[str], unverified: list[str], caveats: list[Caveat]
) -> Rejection | None:
    archs = build.archs.get(target.platform)
    if archs is None:
        return Rejection("gpu", f"the database has no arch list for {_short(build)} on {target.platform}",
                         f"no arch list known for {target.platform}")
    if archs.provenance.doubt_on(target.platform):
        unverified.append(archs.provenance.unverified or "")
    for gpu in target.gpus:
        sm = gpu.compute_capability.sm
        covered = coverage(gpu.compute_capability, archs)
        if covered is None:
            return Rejection("gpu", f"{_short(build)} has no code for {gpu.name} ({sm}); it targets {archs.describe()}",
                             f"no {sm} kernels")
        if covered.how == "ptx" and target.driver_cuda and not cuda_at_least(target.driver_cuda, build.gpu_cuda):
            message = (f"{_short(build)} reaches {gpu.name} ({sm}) only through PTX, and JIT needs a "
                       f"driver for CUDA {build.cuda} (this one supports {target.driver_cuda})")
            return Rejection("gpu", message, f"{sm} only by PTX JIT, which needs a driver for CUDA {build.cuda}")
        if covered.how == "ptx":
            via = f"compute_{covered.via.major}{covered.via.minor}"
            caveats.append(Caveat("ptx", f"{sm} only by JIT from {via} PTX (compiled on first use)"))
        reasons.append(
            f"{gpu.name} is {gpu.compute_capability.sm}; {_short(build)} runs on it through "
            f"{covered.describe(gpu.compute_capability)}"
        )
    return None


def _span(pythons: tuple[str, ...]) -> str:
    if not pythons:
        return "no Python at all"
    ordered = sorted(pythons, key=lambda v: tuple(int(p) for p in v.split(".")))
    return f"it has {ordered[0]}" if len(ordered) == 1 else f"it has {ordered[0]}–{ordered[-1]}"


def _short(build: Build) -> str:
    """A pip torch build is named by its variant (`cu124`) in sentences about it, any other by its label."""
    return build.flavor if build.framework == "torch" and build.channel == "pip" else build.label


def other_vendors_build(build: Build, target: Target) -> str | None:
    """A ROCm or XPU build on a machine whose GPUs are NVIDIA's only: it installs and imports, and sees no GPU.
    The sentence `envpin check` reports for a file that pins it and `envpin solve --project` refuses such a line
    with, so that the two cannot disagree on it; None when the build can use a GPU of the target (or the target
    names none). A build asked for by name on the command line is the user's choice and is not judged here."""
    if build.kind not in ("rocm", "xpu") or not target.has_nvidia or not target.gpus:
        return None
    if target.amd_gpus if build.kind == "rocm" else target.intel_gpus:
        return None
    vendor = "an AMD (ROCm)" if build.kind == "rocm" else "an Intel (XPU)"
    return (f"{build.label} is {vendor} build: it cannot use {', '.join(g.name for g in target.gpus)}, and runs on "
            "the CPU only there")
