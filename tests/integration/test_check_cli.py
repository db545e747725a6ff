"""`envpin check` as users and pre-commit run it: a real process, real files, the exit codes and JSON contract
of docs/contracts.md, `[tool.envpin]` from a real pyproject.toml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fixtures" / "check"
GOOD = CORPUS / "requirements" / "requirements-good-cu124.txt"
COMPANION = CORPUS / "requirements" / "requirements-companion-mismatch.txt"


def envpin(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envpin", "check", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)


def test_good_files_pass_with_exit_0():
    result = envpin(str(GOOD), str(CORPUS / "uv-lock" / "good-cu124" / "uv.lock"), "--no-config")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("no problems in 2 files")


def test_a_problem_is_exit_1_with_the_file_the_field_the_id_and_the_fix():
    result = envpin(str(COMPANION), "--no-config")
    assert result.returncode == 1
    first, fix = result.stdout.splitlines()[:2]
    assert first.startswith(f"{COMPANION}:line 4: error CHK-TORCH-COMPANION-MISMATCH: torchvision==0.15.2+cu118")
    assert fix.strip() == ("fix: pin torchvision==0.16.0+cu118 (the torchvision of torch 2.1.0), or torch 2.0.1 to go "
                           "with torchvision 0.15.2")


def test_json_is_one_document_in_the_design_shape():
    result = envpin(str(GOOD), str(COMPANION), "--format", "json", "--no-config")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert [f["path"] for f in document["files"]] == [str(GOOD), str(COMPANION)]
    assert document["files"][0]["problems"] == []
    # torch 2.1.0 there also gets CHK-NUMPY-ABI (a warning: compiled against NumPy 1.x, numpy left open)
    [problem] = [p for p in document["files"][1]["problems"] if p["id"] != "CHK-NUMPY-ABI"]
    assert set(problem) == {"id", "severity", "message", "where"}
    assert (problem["id"], problem["severity"], problem["where"]) == ("CHK-TORCH-COMPANION-MISMATCH", "error", "line 4")
    assert ". Fix: pin torchvision==0.16.0+cu118" in problem["message"]


def test_an_unreadable_file_is_exit_2_with_one_line_and_the_other_files_still_checked(tmp_path):
    binary = tmp_path / "requirements.txt"
    binary.write_bytes(b"\x80\x81\x00torch")  # not UTF-8, and no byte-order mark
    result = envpin(str(tmp_path / "missing.txt"), str(binary), str(COMPANION), "--format", "json", "--no-config")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"envpin: error: {tmp_path / 'missing.txt'}: cannot be read (No such file or directory)",
        f"envpin: error: {binary}: cannot be read (not UTF-8 text)",
    ]
    files = json.loads(result.stdout)["files"]
    assert [[p["id"] for p in f["problems"] if p["id"] != "CHK-NUMPY-ABI"][0] for f in files] == [
        "CHK-FILE-UNREADABLE", "CHK-FILE-UNREADABLE", "CHK-TORCH-COMPANION-MISMATCH"]


@pytest.mark.parametrize("name, content", [("environment.yml", "name: x\ndependencies:\n\t- python\n"),
                                           ("pylock.toml", "lock-version = \n"),
                                           ("uv.lock", "[[package]\n"),
                                           ("notes.md", "# hello\n")])
def test_malformed_or_unknown_files_are_exit_2_and_never_a_traceback(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    result = envpin(str(path), "--no-config")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"envpin: error: {path}: ")


def test_bad_options_are_exit_2():
    assert envpin(str(GOOD), "--ignore", "CHK-NOPE").returncode == 2
    assert envpin(str(GOOD), "--kind", "poetry").returncode == 2


def test_ignore_drops_an_id():
    assert envpin(str(COMPANION), "--ignore", "CHK-TORCH-COMPANION-MISMATCH", "--no-config").returncode == 0


def test_kind_reads_an_oddly_named_file(tmp_path):
    odd = tmp_path / "deps.cfg"
    odd.write_text(COMPANION.read_text())
    assert envpin(str(odd), "--no-config").returncode == 2  # cannot tell the kind from the name
    assert envpin(str(odd), "--kind", "requirements", "--no-config").returncode == 1


def test_target_options_check_the_lock_against_that_machine():
    result = envpin(str(GOOD), "--format", "json", "--no-config", "--os", "linux", "--arch", "x86_64",
                    "--driver", "470.82.01", "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.11")
    assert result.returncode == 1, result.stderr
    problems = json.loads(result.stdout)["files"][0]["problems"]
    assert {(p["id"], p["where"]) for p in problems} == {("CHK-TARGET-DRIVER", "line 4")}


def test_facts_file_is_a_target(tmp_path):
    facts = {"schema": 1, "os": "linux", "arch": "x86_64", "wsl": False, "python": {"version": "3.11.7"},
             "driver": {"version": "535.104.05", "cuda": "12.2", "source": "nvml"},
             "gpus": [{"index": 0, "name": "NVIDIA GeForce GTX 1080", "compute_capability": "6.1"}]}
    (tmp_path / "node.json").write_text(json.dumps(facts))
    lock = tmp_path / "requirements.txt"
    lock.write_text("--extra-index-url https://download.pytorch.org/whl/cu128\ntorch==2.8.0+cu128\n")
    result = envpin(str(lock), "--facts", str(tmp_path / "node.json"), "--no-config")
    assert result.returncode == 1
    assert "CHK-TARGET-GPU" in result.stdout and "sm_61" in result.stdout


def write_project(root: Path, table: str) -> None:
    (root / ".git").mkdir()  # the repository root: the config search stops here
    (root / "pyproject.toml").write_text(f"[project]\nname = 'demo'\nversion = '0'\n\n{table}\n")


def test_pyproject_config_ignores_and_targets(tmp_path):
    write_project(tmp_path, """
[tool.envpin]
ignore = ["CHK-TORCH-COMPANION-MISMATCH"]

[tool.envpin.per-file-ignores]
"legacy/*.txt" = ["CHK-INDEX-MISSING"]

[[tool.envpin.targets]]
name = "old workstation"
os = "linux"
arch = "x86_64"
driver = "470.82.01"
gpu = "NVIDIA GeForce RTX 3090"
python = "3.11"
""")
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "requirements.txt").write_text("torch==2.5.1+cu121\n")
    (tmp_path / "requirements.txt").write_text(
        "--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\ntorchvision==0.19.0+cu124\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    result = envpin("../requirements.txt", "../legacy/requirements.txt", "--format", "json", cwd=sub)
    files = json.loads(result.stdout)["files"]
    found = {f["path"]: sorted(p["id"] for p in f["problems"]) for f in files}
    assert found == {
        "../requirements.txt": ["CHK-TARGET-DRIVER"],  # the companion mismatch is ignored; the old driver is not
        "../legacy/requirements.txt": ["CHK-TARGET-DRIVER"],
    }
    assert all("on old workstation: " in p["message"] for f in files for p in f["problems"])


def test_a_broken_config_is_exit_2_naming_every_bad_field(tmp_path):
    write_project(tmp_path, '[tool.envpin]\nignore = "CHK-HASH-MISSING"\ntargets = [{os = "linux"}]\n')
    (tmp_path / "requirements.txt").write_text("numpy\n")
    result = envpin("requirements.txt", cwd=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "[tool.envpin].ignore: must be a list of problem ids" in line
    assert "[tool.envpin].targets[0].arch: required" in line and "targets[0].driver: required" in line
