"""Detection trouble reaches the answer (issue 16): when nvidia-smi is there but fails, `envpin solve` on this
machine says so in its warnings instead of passing a CPU build off silently. A real fake nvidia-smi on PATH."""

from __future__ import annotations

import json
import os

from tests.faults.support import envpin, fake_executable

MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n"


def test_a_failing_nvidia_smi_is_a_warning_of_the_solve(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_executable(bin_dir, "nvidia-smi", f"printf '{MISMATCH}'\nexit 18\n")
    result = envpin("solve", "--python", "3.11", "--format", "json",
                    env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    warnings = json.loads(result.stdout)["warnings"]
    trouble = [w for w in warnings if w.startswith("detection: ")]
    assert any("nvidia-smi failed (exit status 18)" in w and "version mismatch" in w for w in trouble), warnings


def test_a_solve_for_another_machine_carries_no_notes_of_this_one(tmp_path):
    bin_dir = tmp_path / "bin"
    fake_executable(bin_dir, "nvidia-smi", f"printf '{MISMATCH}'\nexit 18\n")
    result = envpin("solve", "--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "none",
                    "--format", "json", env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    assert not [w for w in json.loads(result.stdout)["warnings"] if w.startswith("detection: ")]
