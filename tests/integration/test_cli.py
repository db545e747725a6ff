"""The envpin command as users run it: a real process, its stdout, stderr, exit code and files."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import DB_DIR

REPO = Path(__file__).resolve().parents[2]
TARGET_3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090",
               "--python", "3.11"]


def envpin(*args, env=None, stdin=None):
    environment = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, env=environment,
                          input=stdin, timeout=60)


def test_json_contract_for_the_documented_example():
    result = envpin("solve", "--framework", "torch", "--format", "json", *TARGET_3090)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "ok"
    assert document["db_version"] == (DB_DIR / "VERSION").read_text().strip()
    assert document["target"] == {"os": "linux", "arch": "x86_64", "driver": "535.104.05", "driver_cuda": "12.2",
                                  "gpus": [{"name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}],
                                  "python": "3.11"}
    assert document["accelerator"].startswith("cu12")
    torch = document["packages"][0]
    assert torch["name"] == "torch" and torch["version"].endswith("+" + document["accelerator"])
    assert torch["index_url"] == document["index_url"] == f"https://download.pytorch.org/whl/{document['accelerator']}"
    assert [p["name"] for p in document["packages"]] == ["torch", "torchvision", "torchaudio"]
    assert document["reasons"]


def test_environment_yml_is_a_conda_environment(tmp_path):
    output = tmp_path / "environment.yml"
    result = envpin("solve", "--framework", "torch", *TARGET_3090, "-o", str(output))
    assert result.returncode == 0, result.stderr
    text = output.read_text()
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert "envpin 0.1.0" in header[0] and f"database {(DB_DIR / 'VERSION').read_text().strip()}" in header[0]
    assert "NVIDIA GeForce RTX 3090" in header[1]
    assert header[2].startswith("# Regenerate: envpin solve --framework torch --os linux")
    document = yaml.safe_load(text)
    assert set(document) == {"name", "channels", "dependencies"}
    assert "python=3.11" in document["dependencies"] and "pip" in document["dependencies"]
    pip_section = next(d for d in document["dependencies"] if isinstance(d, dict))["pip"]
    assert pip_section[0].startswith("--extra-index-url https://download.pytorch.org/whl/cu12")
    assert any(line.startswith("torch==2.") and "+cu12" in line for line in pip_section)


def test_a_conda_source_is_solved_on_its_own_builds(tmp_path):
    # --conda-source is where the builds come from: the channel's builds are solved, not the pip answer translated
    output = tmp_path / "environment.yml"
    result = envpin("solve", "--spec", "torch==2.6.0", "--conda-source", "pytorch-channel", *TARGET_3090, "-o", str(output))
    assert result.returncode == 1 and not output.exists()
    assert ("no solution (no-matching-release): the pytorch channel ended with pytorch 2.5.1 (pytorch/pytorch#138506); "
            "pytorch 2.6.0 is not on it") in result.stdout
    assert "  - --spec 'torch<=2.5.1'\n" in result.stdout
    assert "  - --conda-source conda-forge: conda-forge's pytorch 2.6.0 cuda126\n" in result.stdout
    shown = envpin("solve", "--framework", "torch", "--conda-source", "pytorch-channel", *TARGET_3090)
    assert shown.returncode == 0, shown.stderr
    # the channel's newest release, its newest CUDA build that driver 535 runs (CUDA 12.x by minor-version compat)
    assert "  pytorch=2.5.1=*cuda12.4*\n  pytorch-cuda=12.4\n  torchvision=0.20.1\n  torchaudio=2.5.1\n" in shown.stdout
    assert "conda create -n envpin --override-channels -c pytorch -c nvidia -c conda-forge" in shown.stdout
    refused = envpin("solve", "--framework", "torch", "--conda-source", "conda-forge", "--format", "uv", *TARGET_3090)
    assert refused.returncode == 2 and "--conda-source is for environment.yml or JSON output" in refused.stderr
    # the JSON answer of a conda plan carries the environment it makes, as the environment.yml says it
    document = json.loads(envpin("solve", "--framework", "torch", "--conda-source", "pytorch-channel",
                                 "--format", "json", *TARGET_3090).stdout)
    assert document["status"] == "ok"
    conda = document["conda"]
    assert conda["strategy"] == "pytorch-channel" and conda["channels"] == ["pytorch", "nvidia", "conda-forge"]
    assert conda["dependencies"][1:5] == ["pytorch=2.5.1=*cuda12.4*", "pytorch-cuda=12.4", "torchvision=0.20.1",
                                          "torchaudio=2.5.1"]
    assert not set(conda["warnings"]) & set(document["warnings"])
    pip_answer = json.loads(envpin("solve", "--framework", "torch", "--format", "json", *TARGET_3090).stdout)
    assert "conda" not in pip_answer


def test_regenerate_command_in_the_header_reproduces_the_file(tmp_path):
    output = tmp_path / "env.yml"
    envpin("solve", "--framework", "torch", *TARGET_3090, "-o", str(output))
    original = output.read_text()
    output.unlink()
    words = shlex.split(original.splitlines()[2].removeprefix("# Regenerate: "))
    assert words[:2] == ["envpin", "solve"]
    result = envpin(*words[1:])
    assert result.returncode == 0, result.stderr
    assert output.read_text() == original


@pytest.mark.parametrize("options", [["--format", "requirements.txt"], ["--format", "environment.yml", "--name", "gpu"],
                                     ["--name", "gpu", "-o", "pins", "--format", "environment.yml"],
                                     ["--conda-source", "conda-forge", "--format", "environment.yml", "--name", "gpu"]])
def test_the_regenerate_command_of_a_printed_or_named_file_makes_the_same_file(options, tmp_path):
    # a file printed on stdout (`> requirements.txt`), or written under a name that implies no format, and an
    # environment name other than the default: the command in the header gives the same text again
    options = [str(tmp_path / "pins") if option == "pins" else option for option in options]
    first = envpin("solve", "--framework", "torch", *TARGET_3090, *options, env={"ENVPIN_CACHE_DIR": str(tmp_path)})
    assert first.returncode == 0, first.stderr
    output = tmp_path / "pins"
    original = output.read_text() if "-o" in options else first.stdout
    words = shlex.split(original.splitlines()[2].removeprefix("# Regenerate: "))
    if "-o" in options:
        output.unlink()
    again = envpin(*words[1:], env={"ENVPIN_CACHE_DIR": str(tmp_path)})
    assert again.returncode == 0, again.stderr
    assert (output.read_text() if "-o" in options else again.stdout) == original


def test_requirements_txt_and_commands():
    requirements = envpin("solve", "--framework", "torch", *TARGET_3090, "--format", "requirements.txt").stdout
    lines = [line for line in requirements.splitlines() if not line.startswith("#")]
    assert lines[0].startswith("--extra-index-url https://download.pytorch.org/whl/cu12")
    assert all("==" in line for line in lines[1:])
    pip = envpin("solve", "--framework", "torch", *TARGET_3090, "--format", "pip").stdout
    assert pip.startswith("pip install torch==") and "--index-url https://download.pytorch.org/whl/cu12" in pip
    uv = envpin("solve", "--framework", "torch", *TARGET_3090, "--format", "uv").stdout
    assert uv.startswith("uv pip install torch==")
    url = envpin("solve", "--framework", "torch", *TARGET_3090, "--format", "index-url").stdout.strip()
    assert url.startswith("https://download.pytorch.org/whl/cu12")


def test_mirror_index_from_option_and_environment():
    by_option = envpin("solve", *TARGET_3090, "--format", "index-url", "--torch-index-url", "http://127.0.0.1:9/whl/")
    assert by_option.stdout.startswith("http://127.0.0.1:9/whl/cu12")
    by_env = envpin("solve", *TARGET_3090, "--format", "index-url", env={"ENVPIN_TORCH_INDEX_URL": "https://m.example/t"})
    assert by_env.stdout.startswith("https://m.example/t/cu12")


@pytest.mark.parametrize(
    "args, words",
    [
        (["solve", "--framework", "caffe"], "unknown framework"),
        (["solve", "--spec", "torch=>2"], "not a PEP 508"),
        (["solve", "--spec", "numpy>=2"], "numpy"),
        (["solve", *TARGET_3090[:-2], "--python", "3.11", "--gpu", "Imaginary GPU 9000"], "unknown GPU"),
        (["solve", "--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "banana"], "driver version"),
        (["solve", "--os", "beos"], "--os"),
        (["solve", "--facts", "/nonexistent/facts.json"], "cannot be read"),
        (["solve", "--format", "yaml"], "invalid choice"),
        (["solve", "-o", "out.toml", *TARGET_3090], "cannot tell the format"),
        (["solve", "--driver-policy", "loose", *TARGET_3090], "--driver-policy"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, words):
    result = envpin(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert words in result.stderr


@pytest.mark.parametrize("content", ["{not json", "[]", '{"os": "linux"}', '{"schema": 1, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"}, "gpus": [{"name": "X", "compute_capability": "high"}]}'])
def test_malformed_facts_file(tmp_path, content):
    facts = tmp_path / "facts.json"
    facts.write_text(content)
    result = envpin("solve", "--facts", str(facts))
    assert result.returncode == 2 and "Traceback" not in result.stderr and str(facts) in result.stderr


def test_unsatisfiable_exit_1_and_existing_file_untouched(tmp_path):
    output = tmp_path / "environment.yml"
    output.write_text("precious\n")
    result = envpin("solve", "--spec", "torch==2.6.*", "--os", "linux", "--arch", "x86_64", "--python", "3.11",
                    "--driver", "570.124.06", "--gpu", "NVIDIA GeForce RTX 5090", "-o", str(output))
    assert result.returncode == 1
    assert "sm_120" in result.stdout
    assert output.read_text() == "precious\n"
    assert list(tmp_path.iterdir()) == [output]


def test_unsatisfiable_json():
    result = envpin("solve", "--spec", "torch==2.6.*", "--os", "linux", "--arch", "x86_64", "--python", "3.11",
                    "--driver", "570.124.06", "--gpu", "NVIDIA GeForce RTX 5090", "--format", "json")
    document = json.loads(result.stdout)
    assert result.returncode == 1
    assert document["status"] == "unsatisfiable"
    assert document["error"]["code"] == "gpu-unsupported" and document["error"]["fixes"]


def test_this_machine_without_gpu_gets_the_cpu_build():
    detected = json.loads(envpin("detect", "--format", "json").stdout)
    if detected["driver"] is not None:
        pytest.skip("this machine has an NVIDIA driver")
    result = envpin("solve", "--framework", "torch", "--format", "json")
    document = json.loads(result.stdout)
    assert result.returncode == 0
    assert document["accelerator"] in ("cpu", "mps")
    assert any("no NVIDIA driver" in reason or "macOS" in reason for reason in document["reasons"])


def test_facts_file_from_detect_drives_a_solve(tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text(envpin("detect", "--format", "json").stdout)
    result = envpin("solve", "--facts", str(facts), "--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090",
                    "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["target"]["driver"] == "535.104.05"


def test_db_info_lists_unverified_records():
    result = envpin("db", "info", "--format", "json")
    info = json.loads(result.stdout)
    assert info["counts"]["torch_releases"] >= 30 and info["unverified"]


def test_wsl_flag_judges_the_windows_driver_and_is_regenerated(tmp_path):
    """Under WSL2 nvidia-smi prints the Windows driver: 527.41 is below CUDA 12's Windows minimum (528.33), though
    above its Linux one. `--wsl` says so for another machine, and the regenerate line keeps it."""
    target = ["--os", "linux", "--arch", "x86_64", "--driver", "527.41", "--gpu", "NVIDIA GeForce RTX 3090",
              "--python", "3.11"]
    wsl = envpin("solve", "--framework", "torch", "--format", "json", *target, "--wsl")
    native = envpin("solve", "--framework", "torch", "--format", "json", *target)
    assert wsl.returncode == native.returncode == 0, (wsl.stderr, native.stderr)
    assert json.loads(wsl.stdout)["accelerator"] == "cu118"
    assert json.loads(native.stdout)["accelerator"].startswith("cu12")
    output = tmp_path / "requirements.txt"
    assert envpin("solve", "--framework", "torch", *target, "--wsl", "-o", str(output)).returncode == 0
    regenerate = next(line for line in output.read_text().splitlines() if line.startswith("# Regenerate:"))
    assert "--driver 527.41 --wsl" in regenerate and "(WSL2)" in output.read_text()
    refused = envpin("solve", "--framework", "torch", "--os", "windows", "--wsl", "--driver", "560.94",
                     "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.11", "--arch", "x86_64")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--wsl" in refused.stderr
