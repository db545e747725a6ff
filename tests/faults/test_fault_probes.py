"""Probes on a broken machine: nvidia-smi that hangs or floods, NVML that is present but fails or hangs.

Each fault must cost bounded time and memory, end as a note in HostFacts, and leave detection working
(the next source answers). nvidia-smi faults run `envpin detect` as a real process with a real fake
executable first on PATH; NVML faults inject a stand-in for pynvml through `detect_host(nvml_module=...)`,
raising pynvml's own exception classes (the installed nvidia-ml-py), since no NVML library that fails on
demand exists on a test machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pynvml
import pytest

from envpin.facts.host import Driver, Gpu
from envpin.host import detect_host
from envpin.host.runner import MAX_OUTPUT_BYTES
from tests.faults.support import REPO, envpin, envpin_command, fake_executable

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fake executables are POSIX shell scripts")

CSV_ROW = "0, NVIDIA GeForce RTX 3090, 535.104.05, 8.6, 24576"
PROC_VERSION = (REPO / "tests/fixtures/host/proc_driver_nvidia_version_565.57.01_open.txt").read_text()


def detect_json(bin_dir: Path, *extra: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    result = envpin("detect", "--format", "json", *extra, env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
                    timeout=timeout)
    return result, time.monotonic() - started


# ---------------------------------------------------------------- nvidia-smi


def test_hung_nvidia_smi_is_a_note_and_detect_returns_promptly(tmp_path):
    fake_executable(tmp_path / "bin", "nvidia-smi", "exec sleep 300")
    result, elapsed = detect_json(tmp_path / "bin", "--timeout", "1")
    assert result.returncode == 0, result.stderr
    assert elapsed < 8, f"envpin detect took {elapsed:.1f} s with a 1 s probe timeout"
    facts = json.loads(result.stdout)
    assert facts["driver"] is None
    assert "nvidia-smi timed out after 1 s" in facts["notes"]


def run_measured(argv: list[str], env: dict[str, str], tmp_path: Path) -> tuple[int, str, float, int]:
    """Run argv; return exit status, stdout, seconds and the peak resident memory (KiB) of that process."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    started = time.monotonic()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        process = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, out.read_text(), time.monotonic() - started, usage.ru_maxrss


@pytest.mark.parametrize("script", [
    f'exec yes "{CSV_ROW}"',  # never stops: before the limit, 3 s of this held 2.8 GB
    f'yes "{CSV_ROW}" | head -c 30000000',  # 30 MB of well-formed rows, then a normal exit
], ids=["endless", "30MB"])
def test_nvidia_smi_printing_megabytes_is_cut_off(tmp_path, script):
    fake_executable(tmp_path / "bin", "nvidia-smi", script)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    status, stdout, elapsed, peak_kib = run_measured(envpin_command("detect", "--format", "json", "--timeout", "5"),
                                                      env, tmp_path)
    assert status == 0
    facts = json.loads(stdout)
    assert f"nvidia-smi printed more than {MAX_OUTPUT_BYTES // 2**20} MiB; stopped it" in facts["notes"]
    assert facts["gpus"] == [], "a flood is not a list of GPUs"
    assert elapsed < 4.5, f"{elapsed:.1f} s: the flood was read until the timeout instead of the limit"
    assert peak_kib < 200 * 1024, f"peak memory {peak_kib // 1024} MiB"


# ---------------------------------------------------------------- NVML present but failing


def nvml_error(code: int) -> pynvml.NVMLError:
    """pynvml's own exception for an NVML return code (NVMLError maps each code to its subclass)."""
    return pynvml.NVMLError(code)


class FailingNvml(types.SimpleNamespace):
    """Stands in for pynvml: answers like a machine with two RTX 3090s, except where told to fail."""

    def __init__(self, fail: dict[str, BaseException | float | Callable[..., Any]] | None = None):
        super().__init__()
        self.fail = fail or {}
        self.calls: list[str] = []

    def _call(self, name, value, *args):
        self.calls.append(name)
        failure = self.fail.get(name)
        if isinstance(failure, float):
            time.sleep(failure)  # a wedged GPU: the call does not return
        elif isinstance(failure, BaseException):
            raise failure
        elif callable(failure):
            failure(*args)
        return value

    def nvmlInit(self):
        return self._call("nvmlInit", None)

    def nvmlShutdown(self):
        return self._call("nvmlShutdown", None)

    def nvmlSystemGetDriverVersion(self):
        return self._call("nvmlSystemGetDriverVersion", "535.104.05")

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return self._call("nvmlSystemGetCudaDriverVersion_v2", 12020)

    def nvmlDeviceGetCount(self):
        return self._call("nvmlDeviceGetCount", 2)

    def nvmlDeviceGetHandleByIndex(self, index):
        return self._call("nvmlDeviceGetHandleByIndex", index, index)

    def nvmlDeviceGetName(self, handle):
        return self._call("nvmlDeviceGetName", "NVIDIA GeForce RTX 3090")

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        return self._call("nvmlDeviceGetCudaComputeCapability", (8, 6))

    def nvmlDeviceGetMemoryInfo(self, handle):
        return self._call("nvmlDeviceGetMemoryInfo", types.SimpleNamespace(total=24 * 1024**3))


@pytest.fixture
def machine(tmp_path):
    """A fake /proc with the driver's version file and a fake nvidia-smi that answers the CSV query."""
    root = tmp_path / "root"
    (root / "proc/driver/nvidia").mkdir(parents=True)
    (root / "proc/driver/nvidia/version").write_text(PROC_VERSION)
    (root / "proc/version").write_text("Linux version 6.1.0 (gcc) #1 SMP\n")
    calls = tmp_path / "smi-calls"
    fake_executable(tmp_path / "bin", "nvidia-smi", f'echo "$@" >> {calls}\necho "{CSV_ROW}"')
    return {"environ": {"PATH": str(tmp_path / "bin")}, "fs_root": str(root), "smi_calls": calls}


def detect_with(machine, nvml, timeout=5.0):
    return detect_host(environ=machine["environ"], fs_root=machine["fs_root"], timeout=timeout, nvml_module=nvml,
                       probe_environment=False)


def test_nvml_init_failing_falls_back_to_nvidia_smi(machine):
    nvml = FailingNvml({"nvmlInit": nvml_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)})
    facts = detect_with(machine, nvml)
    assert facts.driver == Driver("535.104.05", None, "nvidia-smi")
    assert facts.gpus == (Gpu(0, "NVIDIA GeForce RTX 3090", "8.6", 24576),)
    assert "NVML unavailable (Driver Not Loaded)" in facts.notes


def test_nvml_library_missing_is_the_quiet_normal_case(machine):
    # The real pynvml on this machine: no libnvidia-ml, so nvmlInit raises NVMLError_LibraryNotFound for real.
    facts = detect_with(machine, pynvml)
    assert facts.driver == Driver("535.104.05", None, "nvidia-smi")
    assert not any("NVML" in note for note in facts.notes), facts.notes


def test_nvml_query_failing_falls_back_to_nvidia_smi(machine):
    nvml = FailingNvml({"nvmlSystemGetDriverVersion": nvml_error(pynvml.NVML_ERROR_UNKNOWN)})
    facts = detect_with(machine, nvml)
    assert facts.driver.source == "nvidia-smi"
    assert "NVML query failed (Unknown Error)" in facts.notes
    assert "nvmlShutdown" in nvml.calls, "NVML is shut down after a failed query"


def test_a_lost_gpu_is_a_note_and_the_other_gpu_is_kept(machine):
    def lose_second_gpu(index):
        if index == 1:
            raise nvml_error(pynvml.NVML_ERROR_GPU_IS_LOST)

    nvml = FailingNvml({"nvmlDeviceGetHandleByIndex": lose_second_gpu,
                        "nvmlShutdown": nvml_error(pynvml.NVML_ERROR_UNINITIALIZED)})
    facts = detect_with(machine, nvml)
    assert facts.driver == Driver("535.104.05", "12.2", "nvml")
    assert facts.gpus == (Gpu(0, "NVIDIA GeForce RTX 3090", "8.6", 24576),)
    assert "NVML could not read GPU 1 (GPU is lost)" in facts.notes


def test_unsupported_capability_and_memory_queries_leave_those_fields_empty(machine):
    nvml = FailingNvml({"nvmlDeviceGetCudaComputeCapability": nvml_error(pynvml.NVML_ERROR_NOT_SUPPORTED),
                        "nvmlDeviceGetMemoryInfo": nvml_error(pynvml.NVML_ERROR_NO_PERMISSION)})
    facts = detect_with(machine, nvml)
    assert facts.gpus == (Gpu(0, "NVIDIA GeForce RTX 3090", None, None), Gpu(1, "NVIDIA GeForce RTX 3090", None, None))


def test_hung_nvml_is_abandoned_after_the_timeout(machine):
    # A wedged GPU hangs NVML calls, which no signal can interrupt; nvidia-smi would hang on the same call.
    nvml = FailingNvml({"nvmlDeviceGetCount": 60.0})
    started = time.monotonic()
    facts = detect_with(machine, nvml, timeout=1.0)
    assert time.monotonic() - started < 3
    assert facts.driver == Driver("565.57.01", None, "procfs")
    assert "NVML did not answer within 1 s; used /proc/driver/nvidia/version" in facts.notes
    assert not machine["smi_calls"].exists(), "nvidia-smi was run after NVML hung"
