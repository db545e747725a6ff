"""Host probes: turn the real machine into HostFacts.

Sources for the NVIDIA driver and GPUs, in order, each independent and each with a pure parser:
NVML (pynvml) -> nvidia-smi (query CSV, XML, table header) -> /proc/driver/nvidia/version ->
/sys/module/nvidia/version. AMD, Intel and Apple GPUs come from envpin.host.other_gpus, after NVIDIA's, so a
mixed-vendor machine reports all of them. A probe that fails adds a note; `detect_host` itself never raises for a
probe failure, and every subprocess runs under `timeout`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from envpin.base.record import replace
from envpin.facts.host import Driver, Gpu, HostFacts
from envpin.host import gpu_presence, locate, platform_info, procfs
from envpin.host.jetson import parse_nv_tegra_release

if TYPE_CHECKING:
    from envpin.host.runner import Runner

__all__ = ["detect_host"]

WSL_LIB_DIR = "usr/lib/wsl/lib"
ABSENT_DRIVER_NOTE = "no NVIDIA driver found"  # every source simply absent: a machine without NVIDIA, not trouble
ENV_KEYS = ("CUDA_PATH", "CUDA_HOME", "CONDA_PREFIX", "CUDA_VISIBLE_DEVICES")


def detect_host(
    *,
    runner: Runner | None = None,
    environ: Mapping[str, str] | None = None,
    fs_root: str = "/",
    timeout: float = 10.0,
    nvml_module=None,
    probe_environment: bool = True,
) -> HostFacts:
    """Detect this machine. `environ` and `fs_root` redirect what is read (tests); `runner` what is run.

    `nvml_module` replaces pynvml (tests); pass False to skip NVML entirely. `probe_environment=False`
    skips the CUDA toolkits and the library scan, which a solve does not need (and should not wait for).
    """
    environ = dict(os.environ if environ is None else environ)
    os_label = platform_info.os_name()
    wsl = os_label == "linux" and platform_info.is_wsl(procfs.read_text(fs_root, "proc/version"))
    notes: list[str] = []

    driver, gpus, failures = _detect_driver(runner, environ, fs_root, timeout, os_label, wsl, nvml_module, notes)

    marker = platform_info.container_marker(fs_root) if os_label == "linux" and driver is None else None
    trouble = None
    answered = driver is not None and driver.source in ("nvml", "nvidia-smi")
    if os_label in ("linux", "windows") and not answered:
        # A driver that does not answer is not "no GPU": look for the GPU without asking the driver.
        trouble = gpu_presence.driver_trouble(failures, gpu_presence.signs(fs_root, os_label, wsl, environ),
                                              driver_found=driver is not None, container=marker, wsl=wsl)
    if driver is None:
        if marker:
            notes.append(
                f"running in a container ({marker}) without the NVIDIA driver mounted: "
                "start it with --gpus all (Docker) or the NVIDIA Container Toolkit to see the GPU"
            )

    # Windows asks PowerShell (a second or so): only `envpin detect`, or a machine without an NVIDIA driver, whose
    # answer an Intel or AMD adapter can change
    windows_too = probe_environment or driver is None
    others = _detect_other_gpus(runner, os_label, fs_root, timeout, notes) if os_label != "windows" or windows_too else None
    gpus = list(gpus) + [replace(gpu, index=len(gpus) + i) for i, gpu in enumerate(others.gpus if others else [])]
    facts = HostFacts(
        os=os_label,
        arch=platform_info.arch_name(),
        python=platform_info.python_info(environ),
        driver=driver,
        gpus=tuple(gpus),
        wsl=wsl,
        driver_trouble=trouble,
        rocm=others.rocm if others else None,
        amdgpu_module=others.amdgpu_module if others else None,
        amdgpu_dkms=others.amdgpu_dkms if others else None,
        macos=others.macos if others else None,
        l4t=_l4t_release(fs_root) if os_label == "linux" else None,
    )
    if not probe_environment:
        return replace(facts, notes=tuple(notes))
    # Only the environment probe (envpin detect, doctor) needs these: with the runner, ~4 ms of imports
    # (python -X importtime) that a solve, which skips the probe, does not pay.
    from envpin.host import libraries, toolkits  # noqa: PLC0415 - see above

    runner = runner or _default_runner()

    toolkit_report = _safe(lambda: toolkits.detect(runner, os_label, environ, fs_root, timeout), notes, "toolkit detection")
    found_toolkits = toolkit_report.toolkits if toolkit_report else []
    if toolkit_report:
        notes.extend(toolkit_report.notes)

    path_dirs = _split(environ, "PATH", os_label)
    ld_dirs = _split(environ, "LD_LIBRARY_PATH", os_label)
    env: dict[str, list[str] | str | None] = {"PATH": path_dirs, "LD_LIBRARY_PATH": ld_dirs}
    env.update({key: _get(environ, key) for key in ENV_KEYS})

    wsl_lib = os.path.join(fs_root, WSL_LIB_DIR) if wsl else None
    directories = libraries.search_dirs(
        os_label, path_dirs, ld_dirs, toolkits.library_dirs(found_toolkits, os_label), wsl_lib
    )
    files = _safe(lambda: libraries.scan(directories, os_label), notes, "library scan") or {}
    return replace(
        facts,
        libc=platform_info.libc(os_label),
        toolkits=tuple(found_toolkits),
        env=env,
        files=files,
        notes=tuple(notes),
    )


def _detect_driver(runner, environ, fs_root, timeout, os_label, wsl, nvml_module, notes) -> tuple[Driver | None, list[Gpu], list[str]]:
    """Walk the sources in order; stop at the first that gives the driver and the GPUs. Also returns what failed
    on the way (NVML's and each nvidia-smi's failure, not the normal "absent"), for `gpu_presence`."""
    failures: list[str] = []  # what failed on the way, reported only if it was not the normal "absent"
    tool_failures: list[str] = []  # the same, without the "used /proc/..." words added below
    absent: list[str] = []
    driver: Driver | None = None
    gpus: list[Gpu] = []

    if nvml_module is None and not locate.worth_trying(os_label, fs_root):
        absent.append("NVML not tried (no NVIDIA device nodes or /proc/driver/nvidia)")
        nvml_module = False
    nvml_hung = False
    if nvml_module is not False:
        from envpin.host import nvml  # noqa: PLC0415 - only where NVML can answer

        report = nvml.probe_within(nvml_module, timeout)
        nvml_hung = report.timed_out
        notes.extend(report.notes)
        if report.driver:
            driver = Driver(version=report.driver, cuda=report.cuda, source="nvml")
            gpus = report.gpus
        elif report.failure:
            (absent if report.absent else failures).append(report.failure)
            if not report.absent:
                tool_failures.append(report.failure)
        if driver and report.failure:
            notes.append(report.failure)

    if (driver is None or not gpus) and not nvml_hung:  # nvidia-smi calls the same hung NVML
        executables = locate.candidate_paths(os_label, environ, wsl=wsl, fs_root=fs_root)
        if not executables:
            absent.append("nvidia-smi not found" + (" (also looked in /usr/lib/wsl/lib)" if wsl else ""))
        if executables:
            # the parsers (~6 ms of imports with csv and the runner), only where there is an nvidia-smi to run
            from envpin.host import nvidia_smi  # noqa: PLC0415 - see above

            runner = runner or _default_runner()
        for executable in executables[:2]:  # the one on PATH, then one fallback location; never a long crawl
            smi = nvidia_smi.probe(runner, executable, timeout)
            notes.extend(smi.notes)
            if smi.driver:
                if driver is None:
                    driver = Driver(version=smi.driver, cuda=smi.cuda, source="nvidia-smi")
                elif driver.cuda is None and smi.cuda:
                    driver = Driver(version=driver.version, cuda=smi.cuda, source=driver.source)
                gpus = gpus or smi.gpus
                break
            failures.append(_name_executable(smi.failure or "nvidia-smi failed", executable, executables))
            tool_failures.append(failures[-1])
            if smi.timed_out:
                break  # a hung driver will hang the next nvidia-smi too

    if driver is None and os_label == "linux":
        for relative, parser, source in (
            (procfs.PROC_DRIVER_VERSION, procfs.parse_proc_driver_version, "procfs"),
            (procfs.SYS_MODULE_VERSION, procfs.parse_sys_module_version, "sysfs"),
        ):
            text = procfs.read_text(fs_root, relative)
            if text is None:
                absent.append(f"no /{relative}")
                continue
            version = parser(text)
            if version:
                driver = Driver(version=version, cuda=None, source=source)
                if failures:
                    failures[-1] += f"; used /{relative}"
                break
            failures.append(f"/{relative} has an unexpected format")

    notes.extend(failures)
    if driver is None and not failures:
        notes.append(f"{ABSENT_DRIVER_NOTE} (" + "; ".join(absent) + ")")
    elif driver is None:
        notes.append("no NVIDIA driver found")
    return driver, gpus, tool_failures


def _detect_other_gpus(runner, os_label: str, fs_root: str, timeout: float, notes: list[str]):
    """AMD, Intel and Apple GPUs (envpin.host.other_gpus), probed only where such a device can be: on Linux an AMD
    compute device (/dev/kfd, the KFD topology) or an Intel DRM card; on macOS the chip and its macOS."""
    if not _other_gpus_worth_trying(os_label, fs_root):
        return None
    from envpin.host import other_gpus  # noqa: PLC0415 - ~2 ms of imports (json, glob, the runner), only where it can answer

    report = _safe(lambda: other_gpus.detect_other_gpus(runner or _default_runner(), os_label, fs_root, timeout),
                   notes, "AMD/Intel/Apple GPU detection")
    if report is not None:
        notes.extend(report.notes)
    return report


def _other_gpus_worth_trying(os_label: str, fs_root: str) -> bool:
    if os_label in ("macos", "windows"):
        return True
    if os_label != "linux":
        return False
    if os.path.exists(os.path.join(fs_root, "dev", "kfd")) or os.path.isdir(os.path.join(fs_root, "sys/class/kfd")):
        return True
    drm = os.path.join(fs_root, "sys", "class", "drm")
    try:
        cards = [name for name in os.listdir(drm) if name.startswith("card") and name[4:].isdigit()]
    except OSError:
        return False
    return any((procfs.read_text(drm, f"{card}/device/vendor") or "").strip() == "0x8086" for card in cards)


def _default_runner() -> Runner:
    from envpin.host.runner import SubprocessRunner  # noqa: PLC0415 - ~1.4 ms of imports (queue), only when something runs

    return SubprocessRunner()


def _name_executable(failure: str, executable: str, executables: list[str]) -> str:
    # With several candidates, say which one failed; with one, the plain message reads better.
    return failure if len(executables) == 1 else f"{failure} ({executable})"


def _safe(action, notes: list[str], what: str):
    """Run a probe step; an unexpected bug in it becomes a note instead of a failed `envpin detect`."""
    try:
        return action()
    except Exception as error:  # noqa: BLE001 - detection must survive any single probe
        notes.append(f"{what} failed: {type(error).__name__}: {error}")
        return None


def _get(environ: Mapping[str, str], key: str) -> str | None:
    if key in environ:
        return environ[key] or None
    lowered = key.lower()
    return next((value or None for name, value in environ.items() if name.lower() == lowered), None)


def _split(environ: Mapping[str, str], key: str, os_label: str) -> list[str]:
    value = _get(environ, key) or ""
    separator = ";" if os_label == "windows" else ":"
    return [part for part in value.split(separator) if part]


def _l4t_release(fs_root: str) -> str | None:
    """A Jetson's L4T release, from /etc/nv_tegra_release (a file only Jetson Linux has)."""
    text = procfs.read_text(fs_root, "etc/nv_tegra_release")
    return parse_nv_tegra_release(text) if text else None
