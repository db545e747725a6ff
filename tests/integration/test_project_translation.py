"""`envpin solve --project` keeps what a project asks for and says what it changes: `conda env export` files
translated for another Python or platform, CPU packages kept CPU, pins tied to one torch release, and the
requirement lines pip accepts. The inputs are the corpus's real files (tests/fixtures/repos/SOURCES.toml)."""

from __future__ import annotations

import shutil
from pathlib import Path

from envpin.check import check_text
from envpin.check.targets import configured_target
from envpin.cli import main
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.project.collect import collect_project
from envpin.readers.project_files import read_environment_yml, read_requirements_txt

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
WINDOWS_EXPORT = REPOS / "c17hawke--AIOps-mlflow-pytorch-multistep-workflow" / "conda.yaml"
RTX_5090 = ["--os", "linux", "--arch", "x86_64", "--driver", "570.86.10", "--gpu", "NVIDIA GeForce RTX 5090"]
GTX_1080_TI = ["--os", "windows", "--arch", "x86_64", "--driver", "560.94", "--gpu", "NVIDIA GeForce GTX 1080 Ti"]


def no_include(target: str, is_constraint: bool):
    raise AssertionError(f"unexpected include {target}")


def test_a_windows_export_drops_its_builds_and_windows_only_packages_and_says_each():
    text = WINDOWS_EXPORT.read_text(encoding="utf-8")
    entries = read_environment_yml(text, "conda.yaml", no_include)
    conda_lines = [line.strip()[2:] for line in text.splitlines()
                   if line.startswith("  - ") and "=" in line and not line.startswith("  - pip")]
    names = {spec.split("=")[0] for spec in conda_lines}
    kept = {spec.split("=")[0] for spec in entries.conda_packages}
    notes = " ".join(entries.notes)
    dropped = names - kept - {"python", "pip", "pytorch", "torchvision", "torchaudio"}
    # every package not kept is named in a note: nothing vanishes silently
    assert dropped and all(name in notes for name in dropped), dropped
    assert {"vc", "vs2015_runtime", "wincertstore"} <= dropped and "windows-only" in notes
    assert "pywin32==227" in notes  # the pip section's Windows-only package too
    assert "build strings" in notes and all("=" not in spec.split("=", 1)[1] for spec in entries.conda_packages)
    assert "numpy=1.21.5" in entries.python_tied and entries.python == "3.7"


def test_the_export_solved_for_another_python_unpins_the_packages_built_for_its_python(tmp_path):
    project_dir = tmp_path / "export"
    project_dir.mkdir()
    shutil.copy(WINDOWS_EXPORT, project_dir / "environment.yml")
    project = collect_project(project_dir).for_target("3.12", "linux")
    assert "numpy" in project.conda_packages and "numpy=1.21.5" not in project.conda_packages
    assert "zlib=1.2.11" in project.conda_packages  # a package not built for one Python keeps its version
    assert any("left unpinned for Python 3.12" in note for note in project.notes)
    assert "pytorch" not in project.channels and any("`pytorch` dropped" in note for note in project.notes)


def test_requirements_txt_carries_the_conda_packages_as_comments_and_says_so(tmp_path, capsys):
    project_dir = tmp_path / "controlnet"
    project_dir.mkdir()
    shutil.copy(REPOS / "lllyasviel--ControlNet" / "environment.yaml", project_dir / "environment.yaml")
    code = main(["solve", "--project", str(project_dir), *GTX_1080_TI, "--python", "3.8", "--format", "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    head = [line for line in captured.out.splitlines() if line.startswith("#")]
    assert any("conda install" in line and "'numpy=1.23.1'" in line for line in head)
    assert "requirements.txt cannot hold" in captured.err and "numpy=1.23.1" in captured.err


def test_tensorflow_cpu_on_windows_stays_cpu_and_is_no_missing_gpu_build(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("tensorflow-cpu==2.16.1\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *GTX_1080_TI, "--python", "3.11", "--format", "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert "tensorflow-cpu==2.16.1" in captured.out.splitlines()
    assert "stays the CPU build" in captured.err


def test_pins_tied_to_one_torch_release_are_part_of_the_solve(capsys):
    code = main(["solve", "-r", str(REPOS / "Stability-AI--generative-models" / "requirements" / "pt2.txt"), *RTX_5090,
                 "--python", "3.10"])
    out = capsys.readouterr().out
    assert code == 1
    assert "torchdata==0.6.1 (" in out and "triton==2.0.0 (" in out  # the lines that hold torch at 2.0.x
    assert "sm_120" in out


PT2 = REPOS / "Stability-AI--generative-models" / "requirements" / "pt2.txt"
GTX_1080_TI_472 = ["--os", "windows", "--arch", "x86_64", "--driver", "472.12", "--gpu", "NVIDIA GeForce GTX 1080 Ti"]


def test_a_refusal_caused_by_tied_pins_says_which_release_of_each_to_take(capsys):
    # torchdata==0.6.1 and triton==2.0.0 hold torch at 2.0.1, which a 5090 cannot run; xformers>=0.0.20 does not block
    code = main(["solve", "-r", str(PT2), *RTX_5090, "--python", "3.12"])
    out = capsys.readouterr().out
    assert code == 1
    fixes = [line for line in out.splitlines() if line.startswith("  - ")]
    assert any("pt2.txt:33: change torchdata==0.6.1 to torchdata==0.11.0 (torch>=2)" in f for f in fixes), fixes
    assert any("pt2.txt:38: change triton==2.0.0 to triton==3.7.1" in f for f in fixes), fixes
    assert not any("change xformers" in f for f in fixes) and "torch 2.13.0+cu129" in fixes[0]


def test_a_range_of_a_tied_package_is_written_as_the_release_made_for_the_solved_torch(capsys):
    # on Windows torch stays 2.0.1 (torchdata 0.6.1's); xformers 0.0.22 is the newest whose Requires-Dist is torch==2.0.1
    code = main(["solve", "-r", str(PT2), *GTX_1080_TI_472, "--python", "3.9", "--format", "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    lines = captured.out.splitlines()
    assert "torch==2.0.1+cu118" in lines and "xformers==0.0.22" in lines and "xformers>=0.0.20" not in lines
    assert "xformers>=0.0.20 is written xformers==0.0.22, the release made for torch 2.0.1" in captured.err
    # numpy==2.1 beside torch 2.0.1, compiled against NumPy 1.x: the bound is written and the line is said
    assert "numpy<2" in lines and "envpin: warning: " in captured.err
    assert "pt2.txt:15: numpy==2.1 asks for NumPy 2, but torch 2.0.1+cu118 was compiled against NumPy 1.x" in captured.err


def test_a_range_of_a_tied_package_moves_with_torch(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("torch>=2.0\nxformers>=0.0.20,<=0.0.30\nflash-attn\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *RTX_5090, "--python", "3.12", "--format", "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    lines = captured.out.splitlines()
    # no xformers up to 0.0.30 is made for a torch newer than 2.7.0, the first with sm_120 code
    assert "torch==2.7.0+cu128" in lines and "xformers==0.0.30" in lines, lines
    assert "flash-attn has no wheel on PyPI" in captured.err
    (tmp_path / "requirements.txt").write_text("torch>=2.0\nxformers>=0.0.28,<0.0.29.post2\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *GTX_1080_TI_472, "--python", "3.10"])
    captured = capsys.readouterr()
    # 0.0.28-0.0.29.post1 are for torch 2.4.1-2.5.1 and have Linux wheels only
    assert code == 0 and "has no wheel for windows-x86_64 on PyPI: pip builds it from source" in captured.err


RTX_3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "560.35", "--gpu", "NVIDIA GeForce RTX 3090"]


def test_a_tensorflow_companion_bounds_the_tensorflow_solved(tmp_path, capsys):
    # tensorflow-text 2.20.1's wheel requires tensorflow<2.21,>=2.20.0 (tied.yaml): TensorFlow 2.21.0, the newest that
    # runs here, cannot install beside it
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.16\ntensorflow-text>=2.20.1,<2.21\nkeras\n",
                                               encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *RTX_3090, "--python", "3.11", "--format", "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    lines = captured.out.splitlines()
    assert "tensorflow[and-cuda]==2.20.0" in lines and "tensorflow-text==2.20.1" in lines, lines
    assert "tensorflow is solved within that" in captured.err
    # the companion alone asks for TensorFlow: tf-keras 2.15.1 requires tensorflow<2.16,>=2.15
    (tmp_path / "requirements.txt").write_text("tf-keras==2.15.1\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *RTX_3090, "--python", "3.11", "--format", "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert any(line.startswith("tensorflow[and-cuda]==2.15.") for line in captured.out.splitlines()), captured.out


def test_a_tensorflow_companion_without_a_windows_wheel_is_named_on_windows(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("tensorflow-text==2.20.1\n", encoding="utf-8")
    code = main(["check", str(tmp_path / "requirements.txt"), *GTX_1080_TI_472, "--python", "3.10"])
    out = capsys.readouterr().out
    assert code == 1 and "CHK-TARGET-PLATFORM" in out
    assert "tensorflow-text==2.20.1 has no wheel for windows-x86_64 on PyPI and no sdist" in out


def test_an_index_option_on_a_requirement_line_is_ignored_as_pip_ignores_it():
    entries = read_requirements_txt("torch==2.4.0+cu118 --index-url https://download.pytorch.org/whl/cu118\n",
                                    "requirements.txt", no_include)
    assert [r.text for r in entries.requirements] == ["torch==2.4.0+cu118"]
    assert any("pip ignores --index-url" in note for note in entries.notes)


def test_a_direct_wheel_url_of_torch_is_solved_as_torch():
    url = "https://download.pytorch.org/whl/cpu/torch-1.8.1%2Bcpu-cp37-cp37m-linux_x86_64.whl"
    entries = read_requirements_txt(f"{url}\nnumpy\n", "requirements.txt", no_include)
    assert [r.text for r in entries.requirements] == ["torch==1.8.1+cpu", "numpy"]
    assert entries.other_lines == [] and any("torch==1.8.1+cpu" in note for note in entries.notes)


def test_environment_dash_files_are_found(tmp_path):
    shutil.copy(REPOS / "lllyasviel--ControlNet" / "environment.yaml", tmp_path / "environment-wsl2.yaml")
    project = collect_project(tmp_path)
    assert project.files == ("environment-wsl2.yaml",)
    assert any(r.name == "pytorch" for r in project.gpu_requirements)  # conda's pytorch, solved as torch


def test_a_chosen_release_is_not_also_said_to_be_passed_over(capsys):
    code = main(["solve", "--spec", "tensorflow==2.10.1", *GTX_1080_TI, "--python", "3.10"])
    out = capsys.readouterr().out
    assert code == 0 and "tensorflow 2.10.1 was passed over" not in out


def test_a_conda_companion_keeps_its_version_where_pip_pairs_it_too(capsys):
    # dinov2's conda.yaml: pytorch=2.0.0 with torchvision=0.15.0. PyPI's torchvision 0.15.0 wheels require torch 2.0.0
    # (on Linux x86_64 2.0.0+cu117) as 0.15.1's do: the translation keeps the version the file asks for
    text = (REPOS / "facebookresearch--dinov2" / "conda.yaml").read_text(encoding="utf-8")
    entries = read_environment_yml(text, "conda.yaml", no_include)
    assert {r.name: r.specifier for r in entries.requirements if r.name in ("pytorch", "torchvision")} == {
        "pytorch": "==2.0.0.*", "torchvision": "==0.15.0.*"}
    code = main(["solve", "--spec", "torch==2.0.0", "--spec", "torchvision==0.15.0", *GTX_1080_TI, "--python", "3.9"])
    out = capsys.readouterr().out
    assert code == 0 and "torchvision  0.15.0+cu118" in out


MAGIC_ANIMATE = REPOS / "magic-research--magic-animate" / "environment.yaml"


def test_a_linux_export_drops_the_pip_pins_its_framework_build_brought_and_says_the_rest_are_kept(tmp_path, capsys):
    # magic-animate's `conda env export` (Linux, Python 3.8): its pip section pins torch 2.0.1's CUDA 11.7 wheels and
    # triton 2.0.0; solved for Windows and Python 3.9, torch is 2.0.1+cu118, which brings its own CUDA
    project_dir = tmp_path / "magic-animate"
    project_dir.mkdir()
    shutil.copy(MAGIC_ANIMATE, project_dir / "environment.yaml")
    code = main(["solve", "--project", str(project_dir), *GTX_1080_TI_472, "--python", "3.9", "--format",
                 "requirements.txt"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    lines = [line for line in captured.out.splitlines() if not line.startswith("#")]
    assert "torch==2.0.1+cu118" in lines and "xformers==0.0.22" in lines
    assert not [line for line in lines if line.startswith(("nvidia-", "triton"))], lines
    assert "dropped the CUDA libraries and triton the exported framework builds brought" in captured.err
    assert "nvidia-cublas-cu11==11.10.3.66" in captured.err and "triton==2.0.0" in captured.err
    assert "exact pins were resolved for Python 3.8 and are kept" in captured.err  # reported, not silently kept


def test_an_export_checked_for_another_os_is_said_to_be_uncreatable_there(database):
    windows = configured_target(NamedTarget("windows", TargetSpec(
        detect=False, os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",),
        python="3.9")), database)
    report = check_text("environment.yaml", MAGIC_ANIMATE.read_text(encoding="utf-8"), load_database=lambda: database,
                        targets=[windows])
    platform = [p for p in report.problems if p.id == "CHK-TARGET-PLATFORM"]
    assert [p.where for p in platform] == ["dependencies", "dependencies[55].pip[104]"]
    assert "made on Linux" in platform[0].message and "ld_impl_linux-64=2.38=h1181459_1" in platform[0].message
    assert "triton==2.0.0 has no wheel for windows-x86_64" in platform[1].message


def test_an_export_solved_for_another_python_drops_the_old_pythons_abi_and_unpins_its_builds(tmp_path, capsys):
    # magic-animate's `conda env export` has python=3.8.5 beside python_abi=3.8=2_cp38 (and py38 builds): for
    # Python 3.10, python_abi=3.8 beside python=3.10 is a spec conda cannot solve
    project_dir = tmp_path / "magic-animate"
    project_dir.mkdir()
    shutil.copy(MAGIC_ANIMATE, project_dir / "environment.yml")
    rtx_3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "560.35.03", "--gpu", "NVIDIA GeForce RTX 3090"]
    code = main(["solve", "--project", str(project_dir), *rtx_3090, "--python", "3.10", "--format", "environment.yml"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    conda = [line.strip()[2:] for line in captured.out.split("  - pip:")[0].splitlines() if line.startswith("  - ")]
    assert "python=3.10" in conda
    assert not [spec for spec in conda if spec.startswith("python_abi")], conda
    assert "pyzmq" in conda and "tornado" in conda  # py38 builds: kept, without their version
    assert not [spec for spec in conda if spec.startswith("python=3.8")]
    assert "dropped python_abi=3.8: it is Python 3.8's ABI" in captured.err


def test_a_file_with_python_bound_builds_moved_to_another_python_drops_them(tmp_path, capsys):
    # an export whose `prefix:` line was removed before committing: not every line a build, fewer than ten, yet its
    # py39 builds and python_abi=3.9 hold only beside Python 3.9, which conda cannot solve beside python=3.10
    (tmp_path / "environment.yml").write_text(
        "name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.9.18=h0755675_0_cpython\n"
        "  - python_abi=3.9=4_cp39\n  - numpy=1.26.4=py39h474f0d3_0\n  - libgcc-ng=13.2.0=h807b86a_5\n  - pip\n"
        "  - pip:\n    - torch==2.1.2\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), "--os", "linux", "--arch", "x86_64", "--driver", "560.35",
                 "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.10", "--format", "environment.yml"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    dependencies = [line.strip() for line in captured.out.splitlines() if line.startswith("  - ")]
    assert "- python=3.10" in dependencies and "- numpy" in dependencies, dependencies
    assert not any("python_abi" in line or "py39" in line for line in dependencies), dependencies
    assert "- libgcc-ng=13.2.0=h807b86a_5" in dependencies  # a platform build, not the Python's: kept
    assert "dropped python_abi=3.9=4_cp39: it is Python 3.9's ABI" in captured.err


def test_a_line_with_no_wheel_for_the_pythons_target_and_no_sdist_is_refused(tmp_path, capsys):
    # tensorflow-addons 0.18.0-0.23.0 have CPython 3.8/3.9-3.11 wheels only and no sdist (tied.yaml release_files)
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.10\ntensorflow-addons>=0.18.0\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *RTX_3090, "--python", "3.12"])
    out = capsys.readouterr().out
    assert code == 1 and "no solution (python-unsupported)" in out and "--python 3.11" in out, out
    code = main(["check", str(tmp_path / "requirements.txt"), *RTX_3090, "--python", "3.12"])
    out = capsys.readouterr().out
    assert "line 2: error CHK-TARGET-PYTHON" in out and "has a wheel for Python 3.12 on linux-x86_64 or an sdist" in out
    assert main(["solve", "--project", str(tmp_path), *RTX_3090, "--python", "3.11"]) == 0
