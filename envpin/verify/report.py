"""Does an environment's build match the machine? Pure: EnvFacts + HostFacts (+ the database) -> a report.

For each framework present: did it import; is it a CPU build on a machine with an NVIDIA GPU; was it built
with a CUDA newer than the driver can run (NVIDIA's minor-version compatibility, the database's
Table 2/3); does its arch list hold code for every GPU (envpin.compat.archs.coverage); did CUDA initialise
and did the smoke computations give the right answer. A problem means the environment cannot use what
the machine has (exit 1); a warning is worth knowing; ok says what was confirmed.
"""

from __future__ import annotations

from packaging.version import Version

from envpin.base.record import Record, record
from envpin.compat.archs import coverage, parse_arch_names
from envpin.compat.drivers import driver_at_least, minimum_driver
from envpin.compat.gpus import lookup_gpu
from envpin.compat.model import ComputeCapability, Database
from envpin.facts.host import FRAMEWORK_KEYS, Driver, EnvFacts, FrameworkFacts, HostFacts, is_compute_capability

STATUSES = ("problem", "warning", "ok", "info")


@record
class Check(Record):
    framework: str | None
    status: str  # one of STATUSES
    message: str


@record
class VerifyReport(Record):
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return not any(check.status == "problem" for check in self.checks)

    @property
    def verdict(self) -> str:
        problems = [c for c in self.checks if c.status == "problem"]
        if not problems:
            return "OK: the environment can use what this machine has"
        return f"NOT OK: {problems[0].message}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")


@record
class MachineGpu(Record):
    name: str
    capability: ComputeCapability | None
    source: str  # "probe", "database" or the framework that reported it


def machine_gpus(host: HostFacts, env: EnvFacts | None, database: Database) -> list[MachineGpu]:
    """Every NVIDIA GPU with its compute capability: as probed, else from the database by name, else as a
    framework in the environment reported it. A GPU none of them knows keeps capability None."""
    gpus = []
    for gpu in host.gpus:
        if gpu.compute_capability and is_compute_capability(gpu.compute_capability):
            gpus.append(MachineGpu(gpu.name, ComputeCapability.parse(gpu.compute_capability), "probe"))
            continue
        model = lookup_gpu(database, gpu.name)
        gpus.append(MachineGpu(gpu.name, model.compute_capability if model else None, "database" if model else "unknown"))
    if gpus or env is None:
        return gpus
    for framework in FRAMEWORK_KEYS:
        facts = env.framework(framework)
        for device in facts.devices if facts else ():
            capability = ComputeCapability.parse(device.compute_capability) if device.compute_capability else None
            gpus.append(MachineGpu(device.name, capability, framework))
        if gpus:
            break
    return gpus


def build_cuda(framework: str, facts: FrameworkFacts, env: EnvFacts) -> str | None:
    """The CUDA a framework build was made with: torch and TensorFlow say so; JAX's is its CUDA plugin's major."""
    if facts.cuda:
        return facts.cuda
    if framework == "jax":
        for major in ("13", "12", "11"):
            if env.packages.version(f"jax-cuda{major}-plugin") or env.packages.version(f"jax-cuda{major}-pjrt"):
                return major
        jaxlib = env.packages.version("jaxlib") or ""
        if "+cuda" in jaxlib:  # the old jaxlib==0.4.x+cuda12.cudnn89 wheels from Google's index
            return jaxlib.split("+cuda")[1].split(".")[0]
    return None


def verify(env: EnvFacts, host: HostFacts, database: Database) -> VerifyReport:
    checks: list[Check] = []
    gpus = machine_gpus(host, env, database)
    present = {name: facts for name in FRAMEWORK_KEYS if (facts := env.framework(name)) is not None}
    if not present:
        where = env.python.executable or "this interpreter"
        checks.append(Check(None, "problem", f"no torch, tensorflow or jax is installed for {where}"))
    for framework, facts in present.items():
        checks += _framework_checks(framework, facts, env, host, gpus, database)
    return VerifyReport(tuple(checks))


def _framework_checks(
    framework: str, facts: FrameworkFacts, env: EnvFacts, host: HostFacts, gpus: list[MachineGpu], database: Database
) -> list[Check]:
    label = f"{framework} {facts.version}" if facts.version else framework

    def check(status: str, message: str) -> Check:
        return Check(framework, status, message)

    if not facts.import_ok:
        return [check("problem", f"import {framework} failed: {last_line(facts.import_error or 'no error text')}")]
    checks = [check("ok", f"{label} imports")]
    cuda = build_cuda(framework, facts, env)
    driver = host.driver
    if facts.hip or facts.xpu_available is not None and (facts.version or "").endswith("+xpu") or (
            host.os == "macos" and facts.mps_available is not None):
        return checks + _other_accelerator_checks(framework, label, facts, host)
    if cuda is None:
        if driver is not None and gpus:
            names = ", ".join(g.name for g in gpus)
            checks.append(check("problem", f"{label} is a CPU build, but this machine has an NVIDIA GPU ({names}) "
                                           f"and driver {driver.version}: it cannot use the GPU"))
        elif driver is not None:
            checks.append(check("warning", f"{label} is a CPU build; an NVIDIA driver ({driver.version}) is present"))
        else:
            checks.append(check("ok", f"{label} is a CPU build, and this machine has no NVIDIA driver: "
                                      "the CPU is what it can use here"))
        return checks
    if driver is None:
        return checks + [check("warning", f"{label} is built with CUDA {cuda}, but this machine has no NVIDIA driver: "
                                          "it runs on the CPU only")]
    checks += _driver_checks(framework, label, cuda, "windows" if host.wsl else host.os, driver, database)
    checks += _arch_checks(framework, label, facts, gpus)
    checks += _runtime_checks(framework, label, facts, gpus)
    return checks


def _other_accelerator_checks(framework: str, label: str, facts: FrameworkFacts, host: HostFacts) -> list[Check]:
    """A ROCm build (torch.cuda is HIP there), an XPU build or Apple's MPS: the device is usable, the build has the
    AMD GPU's target, and the small computations on it give the right answers."""
    checks = []
    if facts.hip:
        amd = [g for g in host.gpus if g.vendor == "amd"]
        if facts.is_available is False:
            said = next((w for w in facts.warnings if "HIP" in w or "hip" in w), None)
            checks.append(Check(framework, "problem", f"{label} (ROCm {facts.hip}) cannot use the GPU: torch.cuda (HIP) "
                                                      f"is not available{': ' + last_line(said) if said else ''}"))
        else:
            checks.append(Check(framework, "ok", f"{label} is a ROCm {facts.hip} build and sees "
                                                 f"{facts.device_count or 0} GPU(s) through torch.cuda (HIP)"))
        targets = {t.split(":")[0] for t in facts.arch_list}
        for gfx, name in [(d.gfx, d.name) for d in facts.devices if d.gfx] or [(g.gfx, g.name) for g in amd if g.gfx]:
            if targets and gfx not in targets:
                checks.append(Check(framework, "problem", f"{label} has no kernels for {name} ({gfx}): it was built for "
                                                          f"{' '.join(sorted(targets))}"))
            elif targets:
                checks.append(Check(framework, "ok", f"{name} ({gfx}) is among the build's targets"))
    elif facts.xpu_available is not None and (facts.version or "").endswith("+xpu"):
        if facts.xpu_available:
            checks.append(Check(framework, "ok", f"{label} sees an Intel GPU (torch.xpu.is_available())"))
        else:
            checks.append(Check(framework, "problem", f"{label} is an XPU build, but torch.xpu.is_available() is False"))
    elif facts.mps_available:
        checks.append(Check(framework, "ok", f"{label} can use Apple's GPU (torch.backends.mps.is_available())"))
    else:
        macos = f" on macOS {host.macos}" if host.macos else ""
        checks.append(Check(framework, "warning", f"{label}: the MPS backend is not available{macos}; it runs on the CPU"))
    for test, result in sorted(facts.smoke.items()):
        status, said = ("ok", "gave the right answer") if result == "ok" else ("problem", f"failed: {last_line(result)}")
        checks.append(Check(framework, status, f"{test} on the GPU {said}"))
    return checks


def _driver_checks(framework: str, label: str, cuda: str, host_os: str, driver: Driver, database: Database) -> list[Check]:
    requirement = minimum_driver(database, cuda, host_os, "minor")  # "12": a CUDA 12 build of unknown minor
    if requirement is None:
        return [Check(framework, "info", f"the database has no driver minimum for CUDA {cuda}")]
    if driver_at_least(driver.version, requirement.minimum):
        return [Check(framework, "ok", f"driver {driver.version} runs CUDA {cuda} builds "
                                       f"(needs ≥ {requirement.minimum}, {requirement.rule})")]
    supports = f" (it supports CUDA {driver.cuda})" if driver.cuda else ""
    return [Check(framework, "problem", f"{label} is built with CUDA {cuda}, which needs driver ≥ {requirement.minimum} "
                                        f"({requirement.rule}); this driver is {driver.version}{supports}")]


def _arch_checks(framework: str, label: str, facts: FrameworkFacts, gpus: list[MachineGpu]) -> list[Check]:
    if not facts.arch_list:
        return []
    archs, _ = parse_arch_names(facts.arch_list)
    checks = []
    for gpu in gpus:
        if gpu.capability is None:
            checks.append(Check(framework, "warning", f"the compute capability of {gpu.name} is unknown; "
                                                      "its arch coverage was not checked"))
            continue
        how = coverage(gpu.capability, archs)
        if how is None:
            listed = " ".join(facts.arch_list)
            checks.append(Check(framework, "problem", f"{label} has no code for {gpu.name} ({gpu.capability.sm}): "
                                                      f"its arch list is {listed}"))
        else:
            checks.append(Check(framework, "ok", f"{gpu.name} ({gpu.capability.sm}) runs {how.describe(gpu.capability)}"))
    return checks


def _runtime_checks(framework: str, label: str, facts: FrameworkFacts, gpus: list[MachineGpu]) -> list[Check]:
    checks = []
    if facts.is_available is False and gpus:
        said = next((w for w in facts.warnings if "CUDA" in w or "cuda" in w), None)
        tail = f": {last_line(said)}" if said else ""
        checks.append(Check(framework, "problem", f"{label} cannot use the GPU (CUDA not available){tail}"))
    for test, result in sorted(facts.smoke.items()):
        if result == "ok":
            checks.append(Check(framework, "ok", f"{test} on the GPU gave the right answer"))
        else:
            checks.append(Check(framework, "problem", f"{test} on the GPU failed: {last_line(result)}"))
    return checks


def last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def report_json(report: VerifyReport) -> dict:
    return {
        "ok": report.ok,
        "verdict": report.verdict,
        "checks": [{"framework": c.framework, "status": c.status, "message": c.message} for c in report.checks],
    }


def render_text(env: EnvFacts, host: HostFacts, report: VerifyReport) -> str:
    python = env.python
    lines = [f"environment: {python.executable or '?'} (Python {python.version}, {python.env_type})"]
    driver = f"driver {host.driver.version}" if host.driver else "no NVIDIA driver"
    gpus = ", ".join(g.name for g in host.gpus) or "no NVIDIA GPU"
    lines.append(f"machine: {host.os}-{host.arch}, {driver}, {gpus}")
    for framework in FRAMEWORK_KEYS:
        facts = env.framework(framework)
        if facts is None:
            lines.append(f"{framework}: not installed")
            continue
        build = facts.cuda and f"CUDA {facts.cuda}" or ("ROCm " + facts.hip if facts.hip else "CPU build")
        state = "imports" if facts.import_ok else "import FAILED"
        lines.append(f"{framework} {facts.version or '?'}: {build}, {state}")
    lines.append("")
    marks = {"problem": "PROBLEM", "warning": "warning", "ok": "ok", "info": "info"}
    for check in report.checks:
        lines.append(f"  {marks[check.status]:<7}  {check.message}")
    lines += ["", report.verdict]
    return "\n".join(lines) + "\n"


def lock_checks(installed: dict[str, str], locked: dict[str, str], lock_name: str) -> list[Check]:
    """What is installed against what the lock pins (names canonical, versions as written): a missing package
    or another version is a problem; a package the lock does not list is only said."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a check against a lock needs it

    def same(first: str, second: str) -> bool:
        try:
            return Version(first) == Version(second)
        except ValueError:  # InvalidVersion, or a number too long for int()
            return first == second

    have = {canonicalize_name(name): version for name, version in installed.items()}
    checks = []
    for name, version in sorted(locked.items()):
        found = have.get(canonicalize_name(name))
        if found is None:
            checks.append(Check(None, "problem", f"{name}=={version} is in {lock_name} but not installed"))
        elif not same(found, version):
            checks.append(Check(None, "problem", f"{name} is {found}, {lock_name} pins {version}"))
    extra = sorted(set(have) - {canonicalize_name(n) for n in locked} - {"pip", "setuptools", "wheel"})
    if extra:
        checks.append(Check(None, "info", f"installed but not in {lock_name}: {', '.join(extra)}"))
    if not any(c.status == "problem" for c in checks):
        checks.append(Check(None, "ok", f"every package of {lock_name} is installed at its locked version"))
    return checks
