"""NVML, the driver's own API, through pynvml (package nvidia-ml-py).

Preferred over nvidia-smi because it is what nvidia-smi itself calls, is fast, and has a stable
API across driver generations. It is imported lazily: a missing or broken pynvml, a missing
libnvidia-ml, or any NVML error only produces a note, never a failed detection.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from envpin.facts.host import Gpu, is_driver_version
from envpin.host.locate import LINUX_DRIVER_MARKERS, worth_trying  # noqa: F401 - NVML's own question, asked from here too

BYTES_PER_MIB = 1024 * 1024


@dataclass
class NvmlReport:
    driver: str | None = None
    cuda: str | None = None
    gpus: list[Gpu] = field(default_factory=list)
    failure: str | None = None
    absent: bool = False  # pynvml or libnvidia-ml missing: the normal state of a machine without NVIDIA
    notes: list[str] = field(default_factory=list)
    timed_out: bool = False  # NVML did not answer in time (a wedged GPU or driver)


def cuda_version_from_int(value: int) -> str | None:
    """NVML encodes CUDA 12.4 as 12040 (1000 * major + 10 * minor)."""
    if not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def as_text(value: Any) -> str:
    """Old pynvml returns bytes, new returns str."""
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def compute_capability(major: Any, minor: Any) -> str | None:
    if isinstance(major, int) and isinstance(minor, int) and major > 0 and minor >= 0:
        return f"{major}.{minor}"
    return None


def probe_within(module: ModuleType | None, timeout: float) -> NvmlReport:
    """`probe` with a time limit. A wedged GPU or driver can hang NVML calls (the reason nvidia-smi hangs too),
    and a thread stuck in a ctypes call cannot be interrupted: after `timeout` it is left behind (a daemon,
    so it does not keep envpin from exiting) and the report says NVML did not answer."""
    answers: list[NvmlReport] = []
    thread = threading.Thread(target=lambda: answers.append(probe(module)), name="envpin-nvml", daemon=True)
    thread.start()
    thread.join(timeout)
    if answers:
        return answers[0]
    return NvmlReport(failure=f"NVML did not answer within {timeout:g} s", timed_out=True)


def probe(module: ModuleType | None = None) -> NvmlReport:
    """Driver, CUDA and every GPU from NVML; `module` stands in for pynvml in tests."""
    report = NvmlReport()
    if module is None:
        try:
            import pynvml  # noqa: PLC0415 - lazy on purpose, see module docstring
        except Exception as error:  # ImportError, or a broken install raising anything at import
            report.absent = True
            report.failure = f"NVML unavailable (pynvml cannot be imported: {error})"
            return report
        module = pynvml
    try:
        module.nvmlInit()
    except Exception as error:
        report.absent = "NotFound" in type(error).__name__ or "Not Found" in str(error)
        report.failure = f"NVML unavailable ({as_text(error) or type(error).__name__})"
        return report
    try:
        _read(module, report)
    except Exception as error:
        report.failure = f"NVML query failed ({as_text(error) or type(error).__name__})"
    finally:
        try:
            module.nvmlShutdown()
        except Exception:
            pass
    return report


def _read(module: Any, report: NvmlReport) -> None:
    driver = as_text(module.nvmlSystemGetDriverVersion()).strip()
    report.driver = driver if is_driver_version(driver) else None
    try:
        report.cuda = cuda_version_from_int(module.nvmlSystemGetCudaDriverVersion_v2())
    except Exception as error:
        report.notes.append(f"NVML did not report the CUDA version ({as_text(error)})")
    for index in range(module.nvmlDeviceGetCount()):
        try:
            report.gpus.append(_read_gpu(module, index))
        except Exception as error:
            report.notes.append(f"NVML could not read GPU {index} ({as_text(error)})")


def _read_gpu(module: Any, index: int) -> Gpu:
    handle = module.nvmlDeviceGetHandleByIndex(index)
    name = as_text(module.nvmlDeviceGetName(handle)).strip()
    try:
        capability = compute_capability(*module.nvmlDeviceGetCudaComputeCapability(handle))
    except Exception:
        capability = None  # very old drivers; the compatibility database can still fill it in by name
    try:
        memory = int(module.nvmlDeviceGetMemoryInfo(handle).total) // BYTES_PER_MIB
    except Exception:
        memory = None
    return Gpu(index=index, name=name, compute_capability=capability, memory_mib=memory)
