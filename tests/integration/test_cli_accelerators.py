"""The AMD, Intel and Apple target options as users type them: a real envpin process, its output and exit code."""

import json
import os
import subprocess
import sys

LINUX = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "none"]


def envpin(*args):
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)


def test_an_amd_card_with_its_driver_in_every_format():
    flags = [*LINUX, "--gpu", "AMD Radeon RX 7900 XTX", "--amdgpu-driver", "6.4"]
    result = envpin("solve", "--framework", "torch", "--format", "json", *flags)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    # driver 6.4 supports ROCm 7.1 (the ROCm 7.1.0 compatibility matrix), not 7.2
    assert document["accelerator"] == "rocm7.1" and document["index_url"] == "https://download.pytorch.org/whl/rocm7.1"
    assert document["target"]["gpus"] == [{"name": "AMD Radeon RX 7900 XTX", "vendor": "amd", "gfx": "gfx1100",
                                           "integrated": False}]
    assert document["target"]["amdgpu_driver"] == "6.4"
    assert document["packages"][0]["requirement"] == "torch==2.13.0+rocm7.1"
    requirements = envpin("solve", "--framework", "torch", "--format", "requirements.txt", *flags).stdout
    assert "--extra-index-url https://download.pytorch.org/whl/rocm7.1" in requirements
    assert "--gpu 'AMD Radeon RX 7900 XTX' --amdgpu-driver 6.4" in requirements  # the regenerate line
    pip = envpin("solve", "--framework", "torch", "--format", "pip", *flags).stdout
    assert pip.strip().endswith("--index-url https://download.pytorch.org/whl/rocm7.1")


def test_gfx_alone_and_intel_and_apple():
    gfx = json.loads(envpin("solve", "--framework", "torch", "--format", "json", *LINUX, "--gfx", "gfx1151").stdout)
    assert gfx["accelerator"] == "rocm7.14"  # 2.15.0's rocm7.14 list has gfx1151 (rocm.yaml's stated rule)
    arc = json.loads(envpin("solve", "--framework", "torch", "--format", "json", *LINUX,
                            "--gpu", "Intel(R) Arc(TM) A770 Graphics").stdout)
    assert arc["accelerator"] == "xpu" and arc["index_url"] == "https://download.pytorch.org/whl/xpu"
    mac = json.loads(envpin("solve", "--framework", "torch", "--format", "json", "--os", "macos", "--arch", "arm64",
                            "--python", "3.12", "--driver", "none", "--gpu", "Apple M3 Max", "--macos", "15.1").stdout)
    assert mac["accelerator"] == "mps" and mac["index_url"] is None and mac["target"]["macos"] == "15.1"


def test_an_unsupported_card_gets_the_risky_override_as_a_fix():
    result = envpin("solve", "--framework", "torch", "--format", "json", *LINUX, "--gpu", "AMD Radeon RX 6700 XT")
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "gpu-unsupported" and "gfx1031" in error["message"]
    assert any(fix.startswith("RISKY") and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in fix for fix in error["fixes"])


def test_a_facts_file_with_an_amd_gpu_and_no_vendor(tmp_path):
    facts = tmp_path / "amd.json"
    facts.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": {"version": "3.11.9"},
                                 "gpus": [{"name": "AMD Instinct MI300X"}], "amdgpu_driver": "30.10"}),
                     encoding="utf-8")
    document = json.loads(envpin("solve", "--framework", "torch", "--format", "json", "--facts", str(facts)).stdout)
    assert document["accelerator"] == "rocm7.2"  # driver 30.10 supports ROCm 6.2-7.2
    assert "amdgpu_module" not in document["target"]  # present only when detected
    # the loaded amdgpu-dkms module a detection recorded (6.16.6 on ROCm 7.1.1, ROCm/legacy-rocm-build#5624)
    facts.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": {"version": "3.11.9"},
                                 "gpus": [{"name": "AMD Instinct MI300X"}], "amdgpu_module": "6.16.6"}),
                     encoding="utf-8")
    document = json.loads(envpin("solve", "--framework", "torch", "--format", "json", "--facts", str(facts)).stdout)
    assert document["target"]["amdgpu_module"] == "6.16.6"
    assert document["target"]["amdgpu_driver"] == "30.20"  # the release that ships amdgpu-dkms 6.16.6 (rocm.yaml)


def test_bad_values_are_one_line_errors():
    for flag, value in (("--gfx", "gfx99"), ("--amdgpu-driver", "abc"), ("--rocm", "six"), ("--macos", "x")):
        result = envpin("solve", "--framework", "torch", "--format", "json", *LINUX, flag, value)
        assert result.returncode == 2, (flag, result.stderr)
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "input" and flag in error["message"]
        assert "Traceback" not in result.stderr
