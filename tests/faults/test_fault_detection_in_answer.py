"""Detection trouble reaches the answer (issue 16): when nvidia-smi is there but fails, `envpin solve` on this
machine says so instead of passing a CPU build off silently; since issue 19 it gives no CPU answer at all and
exits 3 (tests/integration/test_broken_driver.py has each failure state). A real fake nvidia-smi on PATH."""

from __future__ import annotations

import json
import os

from tests.faults.support import envpin, fake_executable

MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n"


def test_a_failing_nvidia_smi_is_said_in_the_answer(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_executable(bin_dir, "nvidia-smi", f"printf '{MISMATCH}'\nexit 18\n")
    result = envpin("solve", "--python", "3.11", "--format", "json",
                    env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 3, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "driver-broken"
    assert "nvidia-smi failed (exit status 18)" in error["message"] and "version mismatch" in error["message"]


def test_a_solve_for_another_machine_carries_no_notes_of_this_one(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_executable(bin_dir, "nvidia-smi", f"printf '{MISMATCH}'\nexit 18\n")
    result = envpin("solve", "--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "none",
                    "--format", "json", env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    assert not [w for w in json.loads(result.stdout)["warnings"] if w.startswith("detection: ")]


def test_a_machine_whose_gpus_the_flags_name_takes_no_trouble_from_this_one(tmp_path):
    """An AMD (or Intel) target given by flags uses nothing of this machine's NVIDIA probes: the failing nvidia-smi
    here is neither a refusal nor a warning of its answer (issue 28). An NVIDIA GPU named by a flag still takes this
    machine's driver, and so its trouble."""
    bin_dir = tmp_path / "bin"
    fake_executable(bin_dir, "nvidia-smi", f"printf '{MISMATCH}'\nexit 18\n")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for flags in (["--gfx", "gfx1100"], ["--gpu", "Intel Arc B580"]):
        result = envpin("solve", "--os", "linux", "--arch", "x86_64", "--python", "3.11", *flags, "--format", "json",
                        env=env)
        assert result.returncode == 0, (flags, result.stdout, result.stderr)
        answer = json.loads(result.stdout)
        assert not [w for w in answer["warnings"] if w.startswith("detection: ")], (flags, answer["warnings"])
    nvidia = envpin("solve", "--os", "linux", "--arch", "x86_64", "--python", "3.11", "--gpu",
                    "NVIDIA GeForce RTX 4090", "--format", "json", env=env)
    assert nvidia.returncode == 3 and json.loads(nvidia.stdout)["error"]["code"] == "driver-broken", nvidia.stdout
