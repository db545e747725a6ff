"""`envpin check --fix`: each class of file rewritten to the solve's answer for the targets and checked clean
again, comments and order kept; what cannot be fixed left as it was, said, and still failing (exit 1)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DB = REPO / "tests" / "fixtures" / "compat_db" / "2026.12.01"
GTX_1080_TI = ("--os", "linux", "--arch", "x86_64", "--driver", "470.82.01", "--gpu", "NVIDIA GeForce GTX 1080 Ti",
               "--python", "3.11")
LOCKS = REPO / "tests" / "fixtures" / "locks"


def envpin(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envpin", "check", "--no-config", "--db", str(DB), *args],
                          capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=180)


REQUIREMENTS = """\
# GPU training stack
--extra-index-url https://download.pytorch.org/whl/cu124
numpy<2  # keep 1.x
torch==2.5.1+cu124  # the framework
torchvision==0.20.1+cu124 ; sys_platform == "linux"
requests==2.32.3
"""


def test_a_requirements_file_is_rewritten_to_the_build_the_target_runs_and_rechecks_clean(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text(REQUIREMENTS, encoding="utf-8")
    assert envpin(*GTX_1080_TI, "requirements.txt", cwd=tmp_path).returncode == 1
    done = envpin(*GTX_1080_TI, "--fix", "requirements.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == REQUIREMENTS.replace("cu124", "cu118")  # comments, order, markers kept
    assert "envpin: fixed requirements.txt:line 4: torch==2.5.1+cu124" in done.stderr
    assert envpin(*GTX_1080_TI, "requirements.txt", cwd=tmp_path).returncode == 0
    assert not [p for p in tmp_path.iterdir() if p.name != "requirements.txt"]  # no temporary file left


# torch 1.11.0's PyPI wheel is its CUDA 10.2 build (torch/version.py, tests/fixtures/pypi-metadata/torch-history.json),
# with code for sm_37-sm_70 only; its cu113 and cu115 builds on the PyTorch index carry sm_86, which an sm_89 GPU runs
RTX_4090 = ("--os", "linux", "--arch", "x86_64", "--driver", "550.54.14", "--gpu", "NVIDIA GeForce RTX 4090",
            "--python", "3.9")


def test_an_old_pypi_pin_moves_to_its_own_releases_cuda_build(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("torch==1.11.0\ntorchvision==0.12.0\nnumpy<2\n", encoding="utf-8")
    failing = envpin(*RTX_4090, "requirements.txt", cwd=tmp_path)
    assert failing.returncode == 1 and "CHK-TARGET-GPU" in failing.stdout, failing.stdout
    assert "cu102 has no code for NVIDIA GeForce RTX 4090 (sm_89)" in failing.stdout, failing.stdout
    done = envpin(*RTX_4090, "--fix", "requirements.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = path.read_text(encoding="utf-8")
    assert fixed == ("--extra-index-url https://download.pytorch.org/whl/cu115\ntorch==1.11.0+cu115\n"
                     "torchvision==0.12.0+cu115\nnumpy<2\n"), fixed  # the same release: its newest CUDA build
    assert envpin(*RTX_4090, "requirements.txt", cwd=tmp_path).returncode == 0


def test_an_old_pin_with_no_build_for_the_gpu_moves_to_the_nearest_release_that_has_one(tmp_path):
    # torch 1.6.0's builds (cu92, cu101, cu102) stop at sm_75; 1.7.0's cu110 build is the first with sm_80
    path = tmp_path / "requirements.txt"
    path.write_text("torch==1.6.0\ntorchvision==0.7.0\nnumpy<2\n", encoding="utf-8")
    done = envpin(*RTX_4090, "--python", "3.8", "--fix", "requirements.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == ("--extra-index-url https://download.pytorch.org/whl/cu110\n"
                                                "torch==1.7.0+cu110\ntorchvision==0.8.0+cu110\nnumpy<2\n")


def test_a_missing_pytorch_index_is_added_before_the_first_torch_line(tmp_path):
    path = tmp_path / "requirements-gpu.txt"
    path.write_text("numpy<2\ntorch==2.5.1+cu124\n", encoding="utf-8")
    done = envpin(*GTX_1080_TI, "--fix", path.name, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == \
        "numpy<2\n--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.5.1+cu118\n"


def test_an_environment_yml_pip_section_is_rewritten_and_its_conda_lines_kept(tmp_path):
    text = ("name: train\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
            "      - --extra-index-url https://download.pytorch.org/whl/cu124\n"
            "      - torch==2.5.1+cu124   # pinned for the cluster\n      - torchaudio==2.5.1+cu124\n  - numpy<2\n")
    path = tmp_path / "environment.yml"
    path.write_text(text, encoding="utf-8")
    done = envpin(*GTX_1080_TI, "--fix", "environment.yml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == text.replace("cu124", "cu118")


def test_a_pyprojects_pytorch_index_url_is_rewritten(tmp_path):
    text = ('[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = ["torch>=2.5"]\n\n'
            '[tool.uv.sources]\ntorch = { index = "pytorch" }\n\n[[tool.uv.index]]\nname = "pytorch"\n'
            'url = "https://download.pytorch.org/whl/cu128"  # the CUDA build\nexplicit = true\n')
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    done = envpin(*GTX_1080_TI, "--fix", "pyproject.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == text.replace("whl/cu128", "whl/cu118")


def test_a_lock_is_not_edited_the_manifest_edit_and_lock_command_are_said(tmp_path):
    lock = tmp_path / "pdm.lock"
    shutil.copy(LOCKS / "pdm" / "fsrcnn-cu129" / "pdm.lock", lock)  # torch 2.8.0 (+cu129), for Python 3.13
    before = lock.read_text(encoding="utf-8")
    done = envpin(*GTX_1080_TI[:-1], "3.13", "--fix", "pdm.lock", cwd=tmp_path)
    assert done.returncode == 1
    assert lock.read_text(encoding="utf-8") == before
    assert ("point its torch index or source at https://download.pytorch.org/whl/cu118 and pin torch==2.7.1+cu118"
            in done.stderr)
    assert "run `pdm lock`" in done.stderr


def test_what_cannot_be_fixed_is_left_said_and_still_fails(tmp_path):
    hashed = ("--extra-index-url https://download.pytorch.org/whl/cu124\n"
              "torch==2.5.1+cu124 --hash=sha256:6b2966ede9affe2fd69e0765691ca723ec870e0c34c7761f4d5b8e318383fdaf\n")
    path = tmp_path / "requirements.txt"
    path.write_text(hashed, encoding="utf-8")
    done = envpin(*GTX_1080_TI, "--fix", "requirements.txt", cwd=tmp_path)
    assert done.returncode == 1
    assert path.read_text(encoding="utf-8") == hashed
    assert "envpin: not fixed: requirements.txt: line 2: torch is hashed or continued" in done.stderr


def test_targets_that_need_different_builds_are_not_fixed(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.envpin.targets]]\nname = "old"\nos = "linux"\narch = "x86_64"\ndriver = "470.82.01"\n'
        'gpu = "NVIDIA GeForce GTX 1080 Ti"\npython = "3.11"\n\n[[tool.envpin.targets]]\nname = "new"\nos = "linux"\n'
        'arch = "x86_64"\ndriver = "570.86.10"\ngpu = "NVIDIA GeForce RTX 5090"\npython = "3.11"\n', encoding="utf-8")
    path = tmp_path / "requirements.txt"
    path.write_text("--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envpin", "check", "--db", str(DB), "--fix", "requirements.txt"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=180)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the targets need different torch builds (on old: torch==2.5.1+cu118" in done.stderr
    assert path.read_text(encoding="utf-8").endswith("torch==2.5.1+cu124\n")


def test_targets_whose_answers_differ_take_the_one_they_all_run(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.envpin.targets]]\nname = "old"\nos = "linux"\narch = "x86_64"\ndriver = "470.82.01"\n'
        'gpu = "NVIDIA GeForce GTX 1080 Ti"\npython = "3.11"\n\n[[tool.envpin.targets]]\nname = "new"\nos = "linux"\n'
        'arch = "x86_64"\ndriver = "550.54.14"\ngpu = "NVIDIA GeForce RTX 4090"\npython = "3.11"\n', encoding="utf-8")
    path = tmp_path / "requirements.txt"
    path.write_text("--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "envpin", "check", "--db", str(DB), "--fix", "requirements.txt"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.5.1+cu118\n"


def test_a_pixi_lock_gets_the_conda_specs_each_environments_channel_needs(tmp_path):
    lock = tmp_path / "pixi.lock"
    shutil.copy(REPO / "tests" / "fixtures" / "conda" / "pixi-pytorch-example" / "pixi.lock", lock)
    before = lock.read_bytes()
    done = envpin(*GTX_1080_TI[:-1], "3.12", "--fix", "pixi.lock", cwd=tmp_path)
    assert done.returncode == 1 and lock.read_bytes() == before
    advice = [line for line in done.stderr.splitlines() if line.startswith("envpin: pixi.lock: the lock is not edited")]
    assert len(advice) == 2, done.stderr
    # conda-forge's CUDA 11.8 build for cf-channel, the pytorch channel's pytorch-cuda=11.8 for the other two
    assert "for environments.cf-channel," in advice[0] and "'pytorch=2.5.1=cuda118*'" in advice[0]
    assert "environments.nvidia-channel, environments.pytorch-channel" in advice[1] and "'pytorch-cuda=11.8'" in advice[1]
    assert all("`pixi lock`" in line for line in advice)


def test_a_pyprojects_exact_torch_pins_follow_the_answer(tmp_path):
    text = ('[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
            'dependencies = [\n    "torch==2.5.1+cu124",  # the CUDA build\n    "requests",\n]\n\n'
            '[tool.uv.sources]\ntorch = { index = "pytorch" }\n\n[[tool.uv.index]]\nname = "pytorch"\n'
            'url = "https://download.pytorch.org/whl/cu124"\nexplicit = true\n')
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    done = envpin(*GTX_1080_TI, "--fix", "pyproject.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text(encoding="utf-8") == text.replace("cu124", "cu118")
