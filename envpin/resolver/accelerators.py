"""AMD ROCm, Intel XPU and Apple MPS: which kind of build a machine's GPUs call for, and the checks and fixes
that are theirs, with the same rigour as CUDA's.

- The kind: an NVIDIA GPU with its driver calls for CUDA; else Apple silicon for MPS; else an AMD discrete GPU for
  ROCm; else a discrete Intel GPU of xpu.yaml's families for XPU; else an AMD APU for ROCm; else an Intel integrated
  Arc for XPU; else the CPU. An integrated GPU beside a better one is display-only here: it never turns the machine
  into its vendor's target.
- One preference rule for every vendor (docs/gpu-first.md): a build qualifies only if it runs on the kind the
  machine's GPU calls for (`of_kind`), so a build that uses the GPU always beats one that does not, and among those
  the newest release wins. What a build runs on is its own kind, except torch's macOS arm64 wheel, one wheel for the
  CPU and the GPU: an MPS build on a macOS its MPS backend supports, a CPU build on an older one (`runs_on`).
- ROCm builds: the GPU's gfx target must be in the build's gfx list (rocm.yaml; the counterpart of the compute
  capability check), and the AMD kernel driver must support the build's ROCm (AMD's support matrix).
- XPU builds: the Intel GPU must belong to a family the builds are validated on, on this platform.
- Apple silicon: the arm64 wheel's macOS tag must not be newer than the Mac's macOS; MPS needs its own minimum,
  below which the same wheel runs on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from packaging.version import Version

from envpin.base.record import replace
from envpin.compat.model import AmdDriverSupport, Database, MetalPlugin, TorchRelease
from envpin.facts.checks import amdgpu_module_of, is_amd_release
from envpin.resolver.builds import Build
from envpin.resolver.target import Target, TargetAmdGpu
from envpin.vocabulary.platforms import MACOS_ARM64

CUDA, ROCM, XPU, CPU = "cuda", "rocm", "xpu", "cpu"
MPS = "mps"


# ---------------------------------------------------------------- which kind of build


def compute_amd_gpus(target: Target) -> tuple[TargetAmdGpu, ...]:
    """The AMD GPUs a ROCm build must run on: the discrete ones, or the integrated ones when there is no other."""
    discrete = tuple(g for g in target.amd_gpus if not g.integrated)
    return discrete or target.amd_gpus


def gpu_kind(target: Target, has_builds: Callable[[str], bool]) -> str:
    """The kind of build this machine's GPUs call for (`has_builds(kind)`: the framework has such builds for the
    platform). Best accelerator first; a kind without builds here falls through to the next."""
    if target.has_nvidia and has_builds(CUDA):
        return CUDA
    if target.platform == MACOS_ARM64 and has_builds(MPS):
        return MPS  # every Apple silicon Mac has its GPU; torch's arm64 wheel carries the Metal backend
    discrete_amd = any(not g.integrated for g in target.amd_gpus)
    discrete_intel = any(g.family and g.discrete for g in target.intel_gpus)
    integrated_amd = any(g.integrated for g in target.amd_gpus)
    integrated_intel = any(g.family and not g.discrete for g in target.intel_gpus)
    for kind, present in ((ROCM, discrete_amd), (XPU, discrete_intel), (ROCM, integrated_amd), (XPU, integrated_intel)):
        if present and has_builds(kind):
            return kind
    return CPU


def runs_on(build: Build, target: Target) -> str:
    """What the build runs on here: its own kind (cuda, rocm, xpu, cpu), except torch's macOS arm64 build, which has
    the Metal (MPS) backend: `mps` where that backend runs on the Mac's macOS (or the macOS is not given, which the
    plan says), `cpu` where the macOS is older than the release's MPS needs. A conda build is taken to be what its
    accelerator says (`mps`): mps.yaml records the pip wheels only."""
    if build.kind != CPU or build.framework != "torch" or target.platform != MACOS_ARM64:
        return build.kind
    if build.channel != "pip":
        return MPS
    return CPU if mps_runs(build.torch_record[0], target) is False else MPS


def carries(build: Build, kind: str, platform: str) -> bool:
    """Whether the build can run as `kind` on the platform at all (torch's macOS arm64 wheel carries MPS)."""
    if build.kind == kind:
        return True
    return kind == MPS and platform == MACOS_ARM64 and build.framework == "torch" and build.kind == CPU


def of_kind(build: Build, target: Target, allowed: frozenset[str]) -> bool:
    """The preference rule's test: the build runs on one of the allowed kinds here. A build asked for as a CPU build
    is one whatever its wheel also carries (`torch==2.8.0+cpu` on a Mac is the MPS wheel, taken for the CPU)."""
    return build.kind in allowed or runs_on(build, target) in allowed


def kind_reasons(database: Database, target: Target, build: Build, has_builds: Callable[[str], bool]) -> list[str]:
    """Why this build's kind, for an AMD, Intel or Apple machine (empty: nothing of theirs to say)."""
    reasons = []
    if build.kind == ROCM:
        reasons += _left_out_integrated(target)
        if not target.amd_gpus:
            reasons.append(f"ROCm ({build.flavor}) was asked for by name")
        return reasons
    if build.kind == XPU:
        if not target.intel_gpus:
            reasons.append("the XPU build was asked for by name")
        return reasons
    if build.kind != CPU:
        return reasons
    if target.amd_gpus and not target.has_nvidia:
        if not has_builds(ROCM):
            reasons.append(_no_rocm_here(database, target, build))
    if target.intel_gpus and not target.has_nvidia and not target.amd_gpus:
        if not any(g.family for g in target.intel_gpus):
            names = ", ".join(g.name for g in target.intel_gpus)
            reasons.append(f"{names}: not a GPU family PyTorch's XPU builds are validated on (Arc, Data Center GPU "
                           "Max): this is the CPU build")
        elif not has_builds(XPU):
            reasons.append(f"{build.framework} has no XPU build for {target.platform}: this is its CPU build")
    return reasons


def _no_rocm_here(database: Database, target: Target, build: Build) -> str:
    if target.os == "windows" and build.framework == "torch":
        vendor = [f"{i.name} ({i.url})" for i in database.accelerators.vendor_indexes if target.platform in i.platforms]
        elsewhere = f"; AMD's own index has Windows wheels: {', '.join(vendor)} (envpin does not plan from it)" if vendor else ""
        return ("PyTorch's indexes have ROCm builds of torch only for Linux x86_64, none for Windows: this is the "
                f"CPU build from PyPI{elsewhere}")
    return f"{build.framework} has no ROCm build for {target.platform} in the database: this is its CPU build"


def _left_out_integrated(target: Target) -> list[str]:
    integrated = [g for g in target.amd_gpus if g.integrated]
    if integrated and any(not g.integrated for g in target.amd_gpus):
        names = ", ".join(f"{g.name} ({g.gfx or 'target unknown'})" for g in integrated)
        return [f"{names}: an integrated GPU beside a discrete one; the build is chosen for the discrete GPU"]
    return []


# ---------------------------------------------------------------- ROCm checks


def check_amd_driver(database: Database, target: Target, build: Build, reasons: list[str],
                     unverified: list[str], unchecked: list[str]) -> tuple[str, str | None] | None:
    """(message, the oldest driver release that would do) when the AMD kernel driver cannot run the build's ROCm.

    A JAX or TensorFlow ROCm wheel bundles no ROCm: it loads the ROCm installed on the machine, which must be the one
    it was built for; the driver is checked against that."""
    if build.rocm_build is not None:
        if build.rocm is None:
            unchecked.append("driver")
            unverified.append(f"the ROCm that {build.label} was built for is not stated in its wheel's metadata: "
                              "neither the AMD driver nor the installed ROCm was checked against it")
            return None
        reasons.append(f"{build.label} bundles no ROCm: it loads the ROCm user space installed on the machine "
                       f"(built for ROCm {build.rocm})")
        if target.rocm and _x_y(target.rocm) != build.rocm:
            unverified.append(f"{build.label} was built for ROCm {build.rocm}, and the installed ROCm is {target.rocm}: "
                              f"install ROCm {build.rocm} if it does not load")
    rocm = _x_y(build.rocm or "")
    driver, assumed = target.amdgpu_driver, False
    if driver is None and target.rocm:
        driver, assumed = _x_y(target.rocm), True
    if driver is None:
        unchecked.append("driver")
        reasons.append(f"the AMD kernel driver was not given (--amdgpu-driver), so it was not checked against ROCm {rocm}"
                       + _module_seen(target.amdgpu_module))
        return None
    if assumed:
        unverified.append(f"the AMD kernel driver is assumed to be the one of the installed ROCm {target.rocm} "
                          "(amdgpu-install puts both on the machine); pass --amdgpu-driver when it is not")
    if target.amdgpu_driver_package:
        reasons.append(f"amdgpu-dkms {target.amdgpu_driver_package} is of AMD GPU driver {driver}: the release "
                       "field AMD's package versions carry after the module version")
    if target.amdgpu_driver_module:
        shipped = database.accelerators.amdgpu_modules[target.amdgpu_driver_module]
        reasons.append(f"the loaded amdgpu-dkms module {shipped.module} is the one AMD GPU driver {driver} ships "
                       "(pass --amdgpu-driver to say otherwise)" if target.amdgpu_module == shipped.module else
                       f"the amdgpu-dkms given, module {shipped.module}, is the one AMD GPU driver {driver} ships")
        if shipped.provenance.unverified:
            unverified.append(f"amdgpu module {shipped.module} as driver {driver}: {shipped.provenance.unverified}")
    row = _driver_row(database, driver)
    if row is None:
        unchecked.append("driver")
        module = amdgpu_module_of(driver) if not is_amd_release(driver) else None
        unverified.append(f"the amdgpu-dkms given ({driver}, module {module}) is of an AMD GPU driver release the "
                          f"database does not know; ROCm {rocm} was not checked against it" if module else
                          f"AMD GPU driver {driver} is not in AMD's driver/user-space matrix as the database has it; "
                          f"ROCm {rocm} was not checked against it")
        return None
    if rocm in row.rocm:
        bundles = f"{build.flavor} bundles it" if build.rocm_build is None else f"{build.label} needs it"
        reasons.append(f"AMD GPU driver {driver} supports ROCm {rocm} user space ({bundles}): "
                       f"AMD's matrix lists {', '.join(row.rocm)}")
        return None
    needs = next((r.driver for r in reversed(database.accelerators.amd_drivers) if rocm in r.rocm), None)
    uses = f"{build.flavor} bundles" if build.rocm_build is None else f"{build.label} was built for"
    message = (f"{uses} ROCm {rocm}, which AMD GPU driver {driver} does not support "
               f"(it supports ROCm {', '.join(row.rocm)})")
    return message, needs


def _module_seen(module: str | None) -> str:
    """What the probe read of a loaded amdgpu module that rocm.yaml does not tie to a driver release (those it ties
    are the target's driver already): AMD's matrix names releases (6.4, 30.10), not module versions, and does not
    cover a kernel's own amdgpu."""
    if module is None:
        return ""
    if module.startswith("in-tree"):
        return (f"; the loaded amdgpu is the kernel's own ({module}), which AMD's driver/user-space matrix does not "
                "cover")
    return (f"; the loaded amdgpu-dkms module is {module}, and which AMD GPU driver release ships it is unknown to "
            "the database: give the release with --amdgpu-driver")


def _driver_row(database: Database, driver: str) -> AmdDriverSupport | None:
    wanted = _x_y(driver)
    return next((row for row in database.accelerators.amd_drivers if row.driver == wanted), None)


def check_amd_gpus(database: Database, target: Target, build: Build, reasons: list[str],
                   unverified: list[str]) -> str | None:
    """The counterpart of the compute-capability check: every AMD GPU the build runs on has kernels in it."""
    gpus = compute_amd_gpus(target)
    if not gpus:
        reasons.append("no AMD GPU was named, so the gfx target was not checked")
        return None
    gfx = build.gfx
    if gfx is None:
        return (f"the database has no gfx list for {build.label}, so it cannot say that it has "
                f"kernels for {', '.join(f'{g.name} ({g.gfx})' for g in gpus)}")
    if gfx.provenance.unverified:
        unverified.append(gfx.provenance.unverified)
    for gpu in gpus:
        if not gpu.gfx:
            return f"the target of {gpu.name} is not known (its name does not say): give it with --gfx gfxNNNN"
        if gpu.gfx not in gfx.targets:
            return f"{_built(build)} has no kernels for {gpu.name} ({gpu.gfx}); it was built for {gfx.describe()}"
        gap = next((g for g in database.accelerators.library_gaps if g.gfx == gpu.gfx
                    and _numbers(build.rocm or "0") >= _numbers(g.from_rocm)), None)
        if gap is not None and build.rocm_build is None:
            return (f"{build.flavor} lists {gpu.gfx}, but the {gap.library} it bundles has no {gpu.gfx} kernels from "
                    f"ROCm {gap.from_rocm} on ({gpu.name})")
        if gap is not None:  # a JAX or TensorFlow ROCm wheel bundles no ROCm: the machine's libraries are used
            reasons.append(f"note: AMD's {gap.library} has no {gpu.gfx} kernels from ROCm {gap.from_rocm} on; "
                           f"{build.label} uses the ROCm installed here, which must be older")
        reasons.append(f"{gpu.name} is {gpu.gfx}; {_built(build)} was built for it")
    return None


def _built(build: Build) -> str:
    """How a reason names a ROCm build: the variant of a torch build (`rocm7.2`), the wheel of another."""
    return build.flavor if build.rocm_build is None else build.label


# ---------------------------------------------------------------- XPU checks


def check_intel_gpus(target: Target, build: Build, reasons: list[str]) -> str | None:
    gpus = [g for g in target.intel_gpus if g.family]
    if not gpus:
        reasons.append("no Intel GPU was named, so the GPU family was not checked")
        return None
    for gpu in gpus:
        if target.platform not in gpu.platforms:
            return f"the xpu build supports {gpu.family} only on {', '.join(gpu.platforms)}, not {target.platform}"
        first = gpu.since.get(target.platform)
        if first is not None and build.version < Version(first):
            return (f"{gpu.name} is {gpu.family}, which PyTorch validates its XPU builds on from torch {first} on "
                    f"{target.platform}, not in {build.version}")
        reasons.append(f"{gpu.name} is {gpu.family}, which PyTorch's XPU builds are validated on")
    return None


# ---------------------------------------------------------------- Apple silicon


def check_macos_wheel(target: Target, build: Build, reasons: list[str], unverified: list[str]) -> str | None:
    """A macOS arm64 wheel tagged for a newer macOS than the Mac's does not install (pip skips it)."""
    if target.platform != MACOS_ARM64 or build.framework != "torch" or build.channel != "pip":
        return None
    release, _ = build.torch_record
    support = release.macos
    if support is None:
        unverified.append(f"the macOS tag of torch {build.version}'s arm64 wheels is not in the database")
        return None
    needed = support.wheel_macos_for(target.python)
    if target.macos is None:
        reasons.append(f"torch {build.version}'s arm64 wheel for Python {target.python} needs macOS ≥ {needed} "
                       "(macOS not given: --macos)")
        return None
    if _numbers(target.macos) < _numbers(needed):
        return (f"torch {build.version}'s macOS arm64 wheel for Python {target.python} is tagged macosx_"
                f"{needed.replace('.', '_')}: it needs macOS ≥ {needed}, and this Mac has {target.macos}")
    return None


def mps_runs(release: TorchRelease, target: Target) -> bool | None:
    """Whether torch's MPS backend runs on this Mac (None: the database or the macOS version does not say)."""
    if release.macos is None or target.macos is None:
        return None
    return _numbers(target.macos) >= _numbers(release.macos.mps_macos)


def mps_reasons(database: Database, build: Build, target: Target) -> tuple[list[str], list[str]]:
    """(reasons, warnings) about MPS for a torch build on Apple silicon."""
    release, _ = build.torch_record
    runs = mps_runs(release, target)
    chip = target.apple_gpus[0] if target.apple_gpus else "Apple silicon"
    if release.macos is None:
        return [f"macOS has no CUDA: torch's macOS arm64 wheel has the Metal (MPS) backend for {chip}"], [
            f"unverified: the macOS that torch {build.version}'s MPS backend needs is not in the database"]
    minimum = release.macos.mps_macos
    if runs is None:
        return [f"torch {build.version}'s macOS arm64 wheel has the Metal (MPS) backend for {chip}, which needs "
                f"macOS ≥ {minimum} (macOS not given: --macos)"], []
    # the answer (MPS or the CPU) rests on the minimum: where mps.yaml has not read it, the plan says so
    doubt = [f"unverified: {release.macos.provenance.unverified}"] if release.macos.provenance.unverified else []
    if runs:
        return [f"macOS {target.macos} ≥ {minimum}: torch {build.version}'s MPS backend runs on {chip}"], doubt
    macos = target.macos or ""  # known here: mps_runs said False
    older = next((r for r in database.torch_releases if mps_runs(r, target) and r.macos is not None
                  and _numbers(macos) >= _numbers(r.macos.wheel_macos_for(target.python))
                  and target.python in r.python.get(MACOS_ARM64, ())), None)
    instead = f", or pin torch=={older.version}, the newest release whose MPS runs on macOS {target.macos}" if older else ""
    return [f"torch {build.version} installs on macOS {target.macos}, but its MPS backend needs macOS ≥ {minimum}: "
            "it runs on the CPU"], [f"MPS is unavailable: torch {build.version} needs macOS ≥ {minimum} for the MPS "
                                    f"backend (this Mac has {target.macos}); update macOS to use the GPU{instead}",
                                    *doubt]


def metal_route(database: Database, target: Target, build: Build) -> str | None:
    """TensorFlow on Apple silicon: Apple's tensorflow-metal plugin, the route to the GPU that PyPI's TensorFlow
    wheels (CPU builds) do not take. Named with its facts (tensorflow.yaml `metal:`), never planned: the plugin's
    pairing is Apple's table, which no metadata carries (docs/gpu-first.md)."""
    if target.platform != MACOS_ARM64 or build.framework != "tensorflow" or not database.tensorflow_metal:
        return None
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - only a TensorFlow answer on a Mac asks

    pairing = next((m for m in database.tensorflow_metal if SpecifierSet(m.tensorflow).contains(build.version)), None)
    if pairing is not None:
        needs = _metal_needs(pairing, target)
        return (f"Apple's tensorflow-metal {pairing.version} (PyPI) adds the Metal GPU to tensorflow {build.version} "
                f"(Apple's table pairs it with tensorflow{pairing.tensorflow}, on macOS ≥ {pairing.macos}){needs}: "
                f"pip install tensorflow-metal=={pairing.version} beside it; envpin names it and does not pin it")
    newest = database.tensorflow_metal[0]
    return (f"Apple's tensorflow-metal plugin pairs with no tensorflow as new as {build.version}: its newest, "
            f"{newest.version}, goes with tensorflow{newest.tensorflow} on macOS ≥ {newest.macos} (Apple's table on "
            f"PyPI){_metal_needs(newest, target)}; for the GPU, --spec 'tensorflow{newest.tensorflow}' and pip install "
            f"tensorflow-metal=={newest.version}; envpin names it and does not pin it")


def _metal_needs(plugin: MetalPlugin, target: Target) -> str:
    """What of the plugin's own needs this Mac lacks (its macOS, its Python), in words; empty when it has them."""
    lacks = []
    if target.macos is not None and _numbers(target.macos) < _numbers(plugin.macos):
        lacks.append(f"this Mac has macOS {target.macos}")
    if target.python not in plugin.python:
        lacks.append(f"its wheels are for Python {', '.join(plugin.python)}, not {target.python}")
    return f" ({'; '.join(lacks)})" if lacks else ""


# ---------------------------------------------------------------- fixes


def amd_fixes(database: Database, target: Target, builds: Sequence[Build], fits: Callable[[Build, Target], bool]) -> list[str]:
    """For an AMD GPU no build has kernels for: the newest release that has them, the HSA_OVERRIDE_GFX_VERSION
    stand-in (Linux only, risky), and AMD's own indexes."""
    fixes: list[str] = []
    rocm_builds = [b for b in builds if b.kind == ROCM and target.platform in b.platforms]
    for gpu in compute_amd_gpus(target):
        having = [b for b in rocm_builds if b.gfx and gpu.gfx in b.gfx.targets and fits(b, target)]
        if having:
            newest = max(having, key=lambda b: b.version)
            if newest.rocm_build is not None:
                fixes.append(f"{newest.label} is the newest release built for {gpu.gfx}: "
                             f"--spec '{newest.framework}=={newest.version}'")
            else:
                fixes.append(f"torch {newest.version}+{newest.flavor} is the newest release built for {gpu.gfx}: "
                             f"--spec 'torch=={newest.version}+{newest.flavor}'")
        if any(b.framework != "torch" for b in rocm_builds):
            continue  # the override and AMD's own indexes are about torch's wheels
        override = database.accelerators.gfx_overrides.get(gpu.gfx)
        if override is not None and target.os == "linux":
            stand_in = replace_gfx(target, gpu, override.stand_in)
            usable = [b for b in rocm_builds if fits(b, stand_in)]
            if usable:
                best = max(usable, key=lambda b: b.version)
                failures = f"; known failures: {override.known_failures}" if override.known_failures else ""
                fixes.append(f"RISKY, unsupported by AMD and PyTorch: export HSA_OVERRIDE_GFX_VERSION={override.value} "
                             f"runs {gpu.gfx} on {override.stand_in}'s kernels (Linux only); then torch "
                             f"{best.version}+{best.flavor} would load{failures}")
        for index in database.accelerators.vendor_indexes:
            if target.platform in index.platforms:
                fixes.append(f"{index.name}, {index.url}, is AMD's own index, which PyTorch's does not mirror "
                             "(envpin does not plan from it)")
    return fixes


def replace_gfx(target: Target, gpu: TargetAmdGpu, gfx: str) -> Target:

    gpus = tuple(replace(g, gfx=gfx) if g == gpu else g for g in target.amd_gpus)
    return replace(target, amd_gpus=gpus)


def _x_y(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())
