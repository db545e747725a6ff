"""The machine a solve is for: HostFacts, overridden by target flags, completed from the database."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import printable, shown
from envpin.base.record import NEW_DICT, Record, record, replace
from envpin.compat.drivers import driver_max_cuda, parse_driver_version
from envpin.compat.gpus import (
    amd_name_key,
    gpu_name_key,
    intel_family,
    lookup_amd_gpu,
    lookup_gpu,
    models_starting_with,
    truncated_prefix,
)
from envpin.compat.model import AmdgpuModule, ComputeCapability, Database, JetpackRelease, glibc_key
from envpin.facts.checks import (
    amdgpu_dkms_release,
    amdgpu_module_of,
    is_amd_driver,
    is_generic_amd_gpu_name,
    is_glibc_version,
    is_jetpack_version,
    is_l4t_release,
)
from envpin.facts.host import (
    ARCHITECTURES,
    OPERATING_SYSTEMS,
    Driver,
    Gpu,
    HostFacts,
    Libc,
    gpu_vendor,
    is_amd_release,
    is_compute_capability,
    is_gfx_target,
    is_macos_version,
    is_python_version,
    normalize_arch,
)
from envpin.vocabulary.platforms import platform_key


@record
class TargetGpu(Record):
    """A GPU of the target with its compute capability, and where that came from."""

    name: str
    compute_capability: ComputeCapability
    capability_source: str  # "probe" (NVML / nvidia-smi / the user) or "database"


@record
class TargetAmdGpu(Record):
    """An AMD GPU of the target with its LLVM target (gfx), whether it is an APU's, and where the gfx came from."""

    name: str
    gfx: str  # "" when not known (an APU whose generic name Windows prints): `--gfx` says it
    integrated: bool
    gfx_source: str  # "probe" (amd-smi, rocminfo, sysfs or the user), "database" or "unknown"


@record
class TargetIntelGpu(Record):
    """An Intel GPU of the target, and the family of xpu.yaml it belongs to (None: not one the xpu builds are for)."""

    name: str
    family: str | None
    platforms: tuple[str, ...] = ()  # where that family is supported
    discrete: bool = False
    since: Mapping[str, str] = NEW_DICT  # platform -> the first torch release validated on the family there


@record
class Target(Record):
    """The machine a solve is for, complete: platform, Python, driver and its CUDA, GPUs of every vendor."""

    os: str
    arch: str
    python: str  # "3.11"
    driver: str | None
    driver_cuda: str | None
    gpus: tuple[TargetGpu, ...]  # NVIDIA's
    wsl: bool = False
    amd_gpus: tuple[TargetAmdGpu, ...] = ()
    amdgpu_driver: str | None = None  # the AMD GPU driver release (6.4, 30.10)
    rocm: str | None = None  # the installed ROCm user space
    amdgpu_module: str | None = None  # the loaded amdgpu kernel module as detected (6.12.12, "in-tree 6.8.0-45-generic")
    amdgpu_driver_module: str | None = None  # the amdgpu-dkms module amdgpu_driver was read from (rocm.yaml)
    amdgpu_driver_package: str | None = None  # the amdgpu-dkms package version given whose release field it is
    intel_gpus: tuple[TargetIntelGpu, ...] = ()
    apple_gpus: tuple[str, ...] = ()  # Apple silicon's GPU, by its chip's name
    macos: str | None = None  # the macOS version
    glibc: str | None = None  # Linux: the glibc version (None: not known, or not a glibc)
    musl: bool = False  # Linux with musl as its C library (Alpine): no manylinux wheel installs there
    free_threaded: bool = False  # the free-threaded CPython build (`--python 3.13t`): only cp3XXt wheels load
    glibc_decides: bool = False  # some recorded release's wheels need a newer glibc here: the glibc is said again
    jetson: JetpackRelease | None = None  # a Jetson's L4T release and its JetPack (gpus.yaml `jetpack:`), the driver fact
    l4t: str | None = None  # the L4T release as detected or given, where the database does not know it
    jetpack: str | None = None  # the JetPack as given, where the database does not know it

    @cached_property  # asked for every build judged; kept in the record's __dict__, outside its fields
    def platform(self) -> str:
        return platform_key(self.os, self.arch)

    @property
    def driver_os(self) -> str:
        """Whose driver minimums apply: WSL2 runs Linux programs on the Windows driver (nvidia-smi there prints the
        Windows driver's version), so NVIDIA's Windows column decides, not the Linux one."""
        return "windows" if self.wsl else self.os

    @property
    def has_nvidia(self) -> bool:
        return self.driver is not None

    def describe(self) -> str:
        driver = f"driver {self.driver} (CUDA {self.driver_cuda or '?'})" if self.driver else "no NVIDIA driver"
        gpus = ", ".join(f"{g.name} ({g.compute_capability.sm})" for g in self.gpus) or "no NVIDIA GPU"
        others = [f"{g.name} ({g.gfx}{', APU' if g.integrated else ''})" for g in self.amd_gpus]
        others += [g.name for g in self.intel_gpus] + list(self.apple_gpus)
        if self.amd_gpus:
            module = (f" (amdgpu module {self.amdgpu_driver_module})" if self.amdgpu_driver_module else
                      f" (amdgpu-dkms {self.amdgpu_driver_package})" if self.amdgpu_driver_package else "")
            others.append(f"AMD GPU driver {self.amdgpu_driver}{module}" if self.amdgpu_driver
                          else "AMD GPU driver not given")
        if self.rocm:
            others.append(f"ROCm {self.rocm} installed")
        if self.macos:
            others.append(f"macOS {self.macos}")
        if self.musl and self.os == "linux":
            others.append("musl libc")  # the glibc version is said where a wheel's tag makes it matter (wheel_fit)
        if self.jetson is not None:
            others.append(f"JetPack {self.jetson.jetpack} (L4T {self.jetson.l4t})")
        elif self.l4t or self.jetpack:
            others.append(f"L4T {self.l4t}" if self.l4t else f"JetPack {self.jetpack}")
        more = "".join(f", {text}" for text in others)
        # one line: the GPU names are a facts file's or a tool's, and may hold a line break or an escape sequence
        return printable(f"{self.platform}{' (WSL2)' if self.wsl else ''}, Python {self.python}{'t' if self.free_threaded else ''}, "
                         f"{driver}, {gpus}{more}")


@record
class TargetOverrides(Record):
    """The target flags as given (None or empty: not given)."""

    os: str | None = None
    arch: str | None = None
    driver: str | None = None  # a version, or "none"
    gpus: tuple[str, ...] = ()
    compute_capabilities: tuple[str, ...] = ()
    python: str | None = None
    gfx: tuple[str, ...] = ()  # AMD targets, the counterpart of compute_capabilities
    amdgpu_driver: str | None = None
    rocm: str | None = None
    macos: str | None = None
    wsl: bool | None = None  # True: Linux under WSL2 (the Windows driver); None: as the facts say
    glibc: str | None = None  # Linux: the glibc version (also `__glibc` of a conda target)
    jetpack: str | None = None  # a Jetson's JetPack (6.1) or its L4T release (r36.4.0)

    def to_argv(self) -> tuple[str, ...]:
        """The flags as a command line spells them (`--os linux --arch x86_64 --python 3.11 --driver 535.104.05
        --gpu 'NVIDIA A100 …'`): the one spelling of a target for a fix, a regenerate line and a fleet's class."""
        words: list[str] = []
        for option, value in (("--os", self.os), ("--arch", self.arch), ("--python", self.python),
                              ("--driver", self.driver)):
            if value:
                words += [option, value]
        if self.wsl:
            words.append("--wsl")
        for gpu in self.gpus:
            words += ["--gpu", gpu]
        for capability in self.compute_capabilities:
            words += ["--compute-capability", capability]
        for target in self.gfx:
            words += ["--gfx", target]
        for option, value in (("--amdgpu-driver", self.amdgpu_driver), ("--rocm", self.rocm), ("--macos", self.macos),
                              ("--glibc", self.glibc), ("--jetpack", self.jetpack)):
            if value:
                words += [option, value]
        return tuple(words)


def overrides_of(target: Target) -> TargetOverrides:
    """The flags that describe `target` again on any machine: every fact spelled out, the driver as 'none' where
    there is none. A compute capability or gfx target is given only where a probe found it, because then the
    GPU's name alone would not give it back."""
    nvidia_probed = any(g.capability_source == "probe" for g in target.gpus)
    amd_probed = any(g.gfx_source == "probe" for g in target.amd_gpus)
    return TargetOverrides(
        os=target.os, arch=target.arch, python=f"{target.python}{'t' if target.free_threaded else ''}",
        driver=target.driver or "none",
        wsl=target.wsl or None,
        gpus=(*(g.name for g in target.gpus), *(g.name for g in target.amd_gpus), *(g.name for g in target.intel_gpus),
              *target.apple_gpus),
        compute_capabilities=tuple(str(g.compute_capability) for g in target.gpus) if nvidia_probed else (),
        gfx=tuple(g.gfx for g in target.amd_gpus) if amd_probed else (),
        amdgpu_driver=target.amdgpu_driver, rocm=target.rocm, macos=target.macos,
        glibc=target.glibc if target.glibc_decides else None,  # a glibc every wheel installs on decides nothing
        jetpack=f"r{target.jetson.l4t}" if target.jetson else f"r{target.l4t}" if target.l4t else target.jetpack,
    )


def apply_overrides(facts: HostFacts, overrides: TargetOverrides) -> HostFacts:
    """Target flags win over the facts file, which wins over detection."""
    updated = facts
    if overrides.os is not None:
        if overrides.os not in OPERATING_SYSTEMS:
            raise EnvpinInputError(f"--os {overrides.os!r}: expected one of {', '.join(OPERATING_SYSTEMS)}")
        if overrides.os != updated.os:
            updated = _on_another_os(updated)
        updated = replace(updated, os=overrides.os, wsl=False)
    if overrides.wsl:
        if updated.os != "linux":
            raise EnvpinInputError(f"--wsl: WSL2 runs Linux, but the target's OS is {updated.os}")
        updated = replace(updated, wsl=True)
    if overrides.arch is not None:
        arch = normalize_arch(overrides.arch)
        if arch not in ARCHITECTURES:
            raise EnvpinInputError(f"--arch {overrides.arch!r}: expected one of {', '.join(ARCHITECTURES)}")
        updated = replace(updated, arch=arch)
    if overrides.python is not None:
        if not is_python_version(overrides.python):
            raise EnvpinInputError(f"--python {shown(overrides.python, 80)!r}: expected a Python version such as 3.11")
        updated = replace(updated, python=replace(updated.python, version=overrides.python))
    if overrides.driver is not None:
        updated = replace(updated, driver=_driver_override(overrides.driver))
    if overrides.gpus or overrides.compute_capabilities or overrides.gfx:
        updated = replace(updated, gpus=_gpu_overrides(overrides.gpus, overrides.compute_capabilities, overrides.gfx))
    for flag, value, check, what in (
        ("--amdgpu-driver", overrides.amdgpu_driver, is_amd_driver,
         "an AMD GPU driver release such as 6.4 or 30.10, or an amdgpu-dkms version such as 1:6.12.12.60401-2164967.24.04"),
        ("--rocm", overrides.rocm, is_amd_release, "a ROCm version such as 6.2.4"),
        ("--macos", overrides.macos, is_macos_version, "a macOS version such as 14.5"),
        ("--glibc", overrides.glibc, is_glibc_version, "a glibc version such as 2.28 (`ldd --version` prints it)"),
    ):
        if value is not None and not check(value.strip()):
            raise EnvpinInputError(f"{flag} {value!r}: expected {what}")
    if overrides.amdgpu_driver is not None:
        updated = replace(updated, amdgpu_driver=overrides.amdgpu_driver.strip())
    if overrides.rocm is not None:
        updated = replace(updated, rocm=overrides.rocm.strip())
    if overrides.macos is not None:
        updated = replace(updated, macos=overrides.macos.strip())
    if overrides.glibc is not None:
        updated = replace(updated, libc=Libc("glibc", overrides.glibc.strip()))
    if overrides.jetpack is not None:
        updated = _jetpack_override(updated, overrides.jetpack.strip())
    return updated


def _jetpack_override(facts: HostFacts, text: str) -> HostFacts:
    """`--jetpack 6.1` (a JetPack) or `--jetpack r36.4.0` (the L4T release /etc/nv_tegra_release gives)."""
    l4t = text[1:] if text[:1] in ("r", "R") else None
    if l4t is not None and is_l4t_release(l4t):
        return replace(facts, l4t=l4t, jetpack=None)
    if l4t is None and is_jetpack_version(text):
        return replace(facts, jetpack=text, l4t=None)
    raise EnvpinInputError(f"--jetpack {text!r}: expected a JetPack version such as 6.1, or an L4T release such as "
                           "r36.4.0 (/etc/nv_tegra_release)")


def _on_another_os(facts: HostFacts) -> HostFacts:
    """The facts that still hold when `--os` names another OS than the one detected or in the facts file: the
    GPUs (a dual-boot machine keeps its cards) and the Python asked for. What the other OS had installed (its
    driver, C library, toolkits, ROCm, what its detection noted) is not this OS's: a Linux driver is no answer
    for Windows, so the driver is what `--driver` says, or none."""
    return HostFacts(os=facts.os, arch=facts.arch, python=facts.python, gpus=facts.gpus)


def _driver_override(text: str) -> Driver | None:
    if text.strip().lower() in ("none", "no"):
        return None
    if not text.strip():
        raise EnvpinInputError("--driver '': expected an NVIDIA driver version such as 535.104.05, or 'none'")
    try:
        parse_driver_version(text)  # raises a one-line error for nonsense
    except EnvpinInputError as error:
        if is_l4t_release(text.strip().lstrip("rR")):  # a Jetson's L4T release (32.7.1) given as its driver
            raise EnvpinInputError(f"{error}; a Jetson's driver is its JetPack or L4T release: --jetpack "
                                   f"r{text.strip().lstrip('rR')}") from None
        raise
    return Driver(version=text.strip(), cuda=None, source="override")


def _gpu_overrides(names: tuple[str, ...], capabilities: tuple[str, ...], gfx: tuple[str, ...] = ()) -> tuple[Gpu, ...]:
    """`--gpu` names of any vendor; `--compute-capability` pairs with the NVIDIA ones, `--gfx` with the AMD ones
    (one value for all of them, or one each); either alone stands for GPUs of that vendor."""
    for capability in capabilities:
        if not is_compute_capability(capability):
            raise EnvpinInputError(f"--compute-capability {capability!r}: expected X.Y such as 8.6")
    for target in gfx:
        if not is_gfx_target(target):
            raise EnvpinInputError(f"--gfx {target!r}: expected an AMD target such as gfx1100 (rocminfo prints it)")
    vendors = [gpu_vendor(name) for name in names]
    if gfx and names and not capabilities and "amd" not in vendors:
        vendors = ["amd" if v == "nvidia" else v for v in vendors]  # `--gpu 'MI300X' --gfx gfx942`: the name is AMD's
    nvidia = [i for i, v in enumerate(vendors) if v == "nvidia"]
    amd = [i for i, v in enumerate(vendors) if v == "amd"]
    if nvidia and capabilities and len(capabilities) not in (1, len(nvidia)):
        raise EnvpinInputError("give one --compute-capability for all NVIDIA --gpu names, or one for each")
    if amd and gfx and len(gfx) not in (1, len(amd)):
        raise EnvpinInputError("give one --gfx for all AMD --gpu names, or one for each")
    gpus: list[Gpu] = []
    for position, (name, vendor) in enumerate(zip(names, vendors, strict=True)):
        paired_cc = _paired(capabilities, nvidia, position) if vendor == "nvidia" else None
        amd_target = _paired(gfx, amd, position) if vendor == "amd" else None
        gpus.append(Gpu(position, name, paired_cc, vendor=vendor, gfx=amd_target))
    if not nvidia:
        gpus += [Gpu(len(gpus) + i, f"GPU {len(gpus) + i} (compute capability {cc})", cc)
                 for i, cc in enumerate(capabilities)]
    if not amd:
        gpus += [Gpu(len(gpus) + i, f"AMD GPU {len(gpus) + i}", None, vendor="amd", gfx=each)
                 for i, each in enumerate(gfx)]
    return tuple(gpus)


def _paired(values: tuple[str, ...], positions: list[int], position: int) -> str | None:
    if not values:
        return None
    return values[0] if len(values) == 1 else values[positions.index(position)]


def make_target(database: Database, facts: HostFacts) -> Target:
    """Resolve every GPU's compute capability and the driver's CUDA; an unknown GPU is an error with the way out."""
    driver = facts.driver.version if facts.driver else None
    if driver is not None:
        parse_driver_version(driver)
    driver_cuda = None
    if facts.driver is not None:
        driver_os = "windows" if facts.wsl else facts.os  # as Target.driver_os
        driver_cuda = facts.driver.cuda or driver_max_cuda(database, facts.driver.version, driver_os)
    # A name with no vendor word that AMD's table knows (`MI300X`) is AMD's, unless NVIDIA's table knows it too
    gpus = [replace(gpu, vendor="amd") if gpu.vendor == "nvidia" and not gpu.compute_capability
            and lookup_gpu(database, gpu.name) is None and lookup_amd_gpu(database, gpu.name) is not None else gpu
            for gpu in facts.gpus]
    # the release an amdgpu-dkms package version carries: given as --amdgpu-driver, else the installed package
    package = facts.amdgpu_driver if facts.amdgpu_driver is not None else facts.amdgpu_dkms
    package_release = amdgpu_dkms_release(package) if package else None
    shipped = None if package_release else _shipping_driver(database, facts)
    glibc = facts.libc.version if facts.os == "linux" and facts.libc and facts.libc.name == "glibc" else None
    return Target(
        os=facts.os,
        arch=facts.arch,
        python=_python_minor(facts.python.version),
        driver=driver,
        driver_cuda=driver_cuda,
        gpus=tuple(_target_gpu(database, gpu) for gpu in gpus if gpu.vendor == "nvidia"),
        wsl=facts.wsl,
        amd_gpus=tuple(_target_amd_gpu(database, gpu) for gpu in gpus if gpu.vendor == "amd"),
        amdgpu_driver=package_release or (shipped.driver if shipped else facts.amdgpu_driver),
        rocm=facts.rocm,
        amdgpu_module=facts.amdgpu_module,
        amdgpu_driver_module=shipped.module if shipped else None,
        amdgpu_driver_package=package if package_release else None,
        intel_gpus=tuple(_target_intel_gpu(database, gpu) for gpu in facts.gpus if gpu.vendor == "intel"),
        apple_gpus=tuple(gpu.name for gpu in facts.gpus if gpu.vendor == "apple"),
        macos=facts.macos,
        glibc=glibc,
        musl=facts.os == "linux" and facts.libc is not None and facts.libc.name == "musl",
        free_threaded=_free_threaded(facts.python.version),
        jetson=(jetson := _jetpack_release(database, facts)),
        l4t=facts.l4t if jetson is None else None,
        jetpack=facts.jetpack if jetson is None and not facts.l4t else None,
        # some recorded release's wheels need a newer glibc here: the glibc is a fact the answer rests on, and a
        # regenerate line or a fix spells it out (`--glibc 2.17`)
        glibc_decides=glibc is not None and glibc_key(glibc) < glibc_key(
            database.newest_glibc_floor(platform_key(facts.os, facts.arch)) or "0"),
    )


def _jetpack_release(database: Database, facts: HostFacts) -> JetpackRelease | None:
    """The database's record of the Jetson's L4T release (or of the JetPack given; a JetPack named by several L4T
    releases is its newest)."""
    if facts.l4t:
        return next((r for r in database.jetpack_releases if r.l4t == facts.l4t), None)
    if facts.jetpack:
        return next((r for r in database.jetpack_releases if r.jetpack == facts.jetpack), None)
    return None


def _shipping_driver(database: Database, facts: HostFacts) -> AmdgpuModule | None:
    """The driver release read off an amdgpu-dkms module (rocm.yaml `amdgpu_modules`): the module given as
    --amdgpu-driver (its package version, `1:6.12.12.60401-...`, or the module's own), or, with no driver given, the
    loaded one. A driver release that is a row of AMD's matrix is taken as it is; an unknown module gives None."""
    given = facts.amdgpu_driver
    if given is None:
        if not facts.amdgpu_module:
            return None  # no AMD driver here: the accelerator tables are not read (an NVIDIA solve never parses them)
        return database.accelerators.amdgpu_modules.get(facts.amdgpu_module)
    if ".".join(given.split(".")[:2]) in {row.driver for row in database.accelerators.amd_drivers}:
        return None
    return database.accelerators.amdgpu_modules.get(amdgpu_module_of(given) or "")


def _target_amd_gpu(database: Database, gpu: Gpu) -> TargetAmdGpu:
    model = lookup_amd_gpu(database, gpu.name)
    # a name the table lacks (rocminfo's "AMD Radeon 8060S Graphics") is still an APU's when its target is only APUs'
    same_target = [m for m in database.accelerators.amd_gpus if gpu.gfx and m.gfx == gpu.gfx] if model is None else []
    if gpu.integrated is not None:  # what the tool said (rocminfo's APU memory, Windows' generic adapter)
        integrated = gpu.integrated
    elif model is not None:
        integrated = model.kind == "APU"
    elif same_target:  # the target decides before a generic name: an MI50 prints "AMD Radeon Graphics" on ROCm 7.2
        integrated = all(m.kind == "APU" for m in same_target)
    else:
        integrated = is_generic_amd_gpu_name(gpu.name)
    if gpu.gfx:
        return TargetAmdGpu(gpu.name, gpu.gfx, integrated, "probe")
    if model is None and integrated and not amd_name_key(gpu.name):
        return TargetAmdGpu(gpu.name, "", True, "unknown")  # an APU's generic name, as Windows prints it
    if model is None:
        raise EnvpinInputError(
            f"unknown AMD GPU {gpu.name!r}: not in the compatibility database {database.version}; pass its target "
            "with --gfx gfxNNNN (`rocminfo | grep gfx` or `amd-smi static` prints it)"
        )
    return TargetAmdGpu(gpu.name, model.gfx, integrated, "database")


def _target_intel_gpu(database: Database, gpu: Gpu) -> TargetIntelGpu:
    """`Intel(R) Arc(TM) A770 Graphics` is a discrete Arc; `Intel(R) Arc(TM) Graphics` (Core Ultra) and
    `Intel(R) UHD Graphics 630` are integrated; only a family of xpu.yaml is an XPU target."""
    name = gpu.name.replace("(R)", " ").replace("(TM)", " ").replace("®", " ").replace("™", " ")
    family = intel_family(database, name)
    discrete = gpu.integrated is False or (gpu.integrated is None and bool(
        re.search(r"\b(arc\W+(\w+\W+)?[ab]\d{2,3}m?|data center gpu|flex)\b", name, re.IGNORECASE)))  # Arc A770, Arc Pro B60
    if family is None:
        return TargetIntelGpu(gpu.name, None, (), discrete)
    return TargetIntelGpu(gpu.name, family.family, family.platforms, discrete, family.since)


def _target_gpu(database: Database, gpu: Gpu) -> TargetGpu:
    if gpu.compute_capability:
        capability = ComputeCapability.parse(gpu.compute_capability)
        newest = max((t for toolkit in database.toolkits.values() for t in toolkit.targets), default=None)
        if newest is not None and capability.major > newest.major + 1:
            # A GPU one generation past the database is real and gets an answer; 99.9 is a typo.
            raise EnvpinInputError(
                f"compute capability {gpu.compute_capability} of {gpu.name!r}: no NVIDIA GPU has it (the newest that "
                f"database {database.version} knows is {newest.major}.{newest.minor}); check the value"
            )
        return TargetGpu(gpu.name, capability, "probe")
    model = lookup_gpu(database, gpu.name)
    prefix = truncated_prefix(gpu.name) if model is None else None
    if prefix is not None:
        return _truncated_gpu(database, gpu.name, prefix)
    if model is None:
        raise EnvpinInputError(
            f"unknown GPU {gpu.name!r}: not in the compatibility database {database.version}; "
            "pass its compute capability with --compute-capability X.Y "
            "(`nvidia-smi --query-gpu=compute_cap --format=csv` prints it)"
        )
    return TargetGpu(gpu.name, model.compute_capability, "database")


def _truncated_gpu(database: Database, name: str, prefix: str) -> TargetGpu:
    """A name nvidia-smi's table cut short: known only if every GPU whose name starts so has one compute capability."""
    capabilities = sorted({m.compute_capability for m in models_starting_with(database, prefix)})
    if len(capabilities) == 1:
        return TargetGpu(name, capabilities[0], "database")
    if not gpu_name_key(prefix):
        known = f"what is left of it ({prefix.strip()!r}) names no model"
    elif capabilities:
        known = f"the GPUs whose names start so have compute capability {', '.join(str(c) for c in capabilities)}"
    else:
        known = "no GPU in the database has a name that starts so"
    raise EnvpinInputError(
        f"GPU name {name!r} was cut short by nvidia-smi's table, and {known}: pass --compute-capability X.Y "
        "(`nvidia-smi --query-gpu=name,compute_cap --format=csv` prints the whole name and the capability)"
    )


def _free_threaded(version: str) -> bool:
    """`3.13t` (or `3.13.1t`, as `--python` and a facts file may say): the free-threaded build (PEP 703)."""
    return version.endswith("t")


def _python_minor(version: str) -> str:
    major, minor = version.split(".")[:2]
    return f"{major}.{''.join(ch for ch in minor if ch.isdigit())}"
