"""`check` judges what a file installs on a target whatever way it pins it: conda pins (the solver's own conda
builds), version ranges (the build the installer would take from the file's indexes), plain TensorFlow and JAX
pins, and reports every fact that fails for a pin, each with its fix."""

from __future__ import annotations

from envpin.check import check_text
from envpin.check.targets import CheckTarget, configured_target
from envpin.machine.spec import NamedTarget, TargetSpec

RTX_5090: dict = dict(os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",),
                      python="3.12")
GTX_1080_TI_WINDOWS: dict = dict(os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",),
                                 python="3.9")


def machine(database, **fields) -> CheckTarget:
    return configured_target(NamedTarget("target", TargetSpec(detect=False, **fields)), database)


def problems(database, text: str, path: str, **fields):
    report = check_text(path, text, load_database=lambda: database, targets=[machine(database, **fields)])
    return report.problems


def found(database, text: str, path: str = "requirements.txt", **fields) -> list[tuple[str, str, str]]:
    return sorted((p.id, p.severity, p.where) for p in problems(database, text, path, **fields))


# ---------------------------------------------------------------- conda pins


def test_a_pytorch_channel_build_for_cuda_12_1_has_no_code_for_an_rtx_5090(database):
    text = ("channels: [pytorch, nvidia, conda-forge]\ndependencies:\n  - python=3.11\n  - pytorch=2.1.0\n"
            "  - pytorch-cuda=12.1\n")
    [gpu] = problems(database, text, "environment.yml", **RTX_5090)
    assert (gpu.id, gpu.where) == ("CHK-TARGET-GPU", "dependencies[1]")
    assert "pytorch-cuda=12.1 beside it" in gpu.message and "sm_120" in gpu.message


def test_a_pytorch_channel_build_string_decides_the_cuda(database):
    text = "channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.4.1=py3.11_cuda12.4_cudnn9.1.0_0\n"
    [gpu] = problems(database, text, "environment.yml", **RTX_5090)
    assert gpu.id == "CHK-TARGET-GPU" and "its build string" in gpu.message
    # the same build runs on a GTX 1080 Ti under Linux with a CUDA 12 driver
    assert found(database, text, "environment.yml", os="linux", arch="x86_64", driver="550.54.14",
                 gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.11") == []


def test_a_conda_release_older_than_the_database_is_a_warning_where_the_records_carry_ptx(database):
    # the pytorch channel's releases are recorded back to 1.0.1: 1.0.0 (previous-versions.md: `pytorch==1.0.0
    # torchvision==0.2.1 cuda100 -c pytorch`) is older. Even an RTX 5090 gets no GPU error: 1.0.1's builds carry
    # 5.0+PTX (torch.yaml), so the records never show a release from 1.0.0 on without code for it
    text = ("channels: [pytorch, conda-forge]\ndependencies:\n  - python=3.7\n  - pytorch=1.0.0\n"
            "  - cuda100\n  - torchvision=0.2.1\n")
    gtx_1080_ti = dict(os="linux", arch="x86_64", driver="430.50", gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.7")
    for machine in (RTX_5090, gtx_1080_ti):
        [old] = problems(database, text, "environment.yml", **machine)
        assert (old.id, old.severity) == ("CHK-RELEASE-UNKNOWN", "warning")
        assert "older than every release" in old.message and "(oldest 1.0.1)" in old.message


def test_an_unversioned_conda_pytorch_is_judged_as_the_newest_release_its_cuda_pin_allows(database):
    # the pytorch channel's last pytorch-cuda=12.1 builds are 2.5.1's (neural-amp-modeler's environment_gpu.yml)
    text = ("channels: [conda-forge, pytorch, nvidia]\ndependencies:\n  - python>=3.9\n  - pytorch::pytorch\n"
            "  - pytorch::pytorch-cuda=12.1\n")
    [gpu] = problems(database, text, "environment.yml", **RTX_5090)
    assert (gpu.id, gpu.where) == ("CHK-TARGET-GPU", "dependencies[1]")
    assert "conda takes torch 2.5.1" in gpu.message and "sm_120" in gpu.message


def test_conda_forge_pytorch_gpu_in_an_environment_file_is_its_cuda_pytorch(database):
    # conda-forge's metapackage (`pytorch-gpu=1.9.0=cuda112py38h0bbbad9_1` in an export) chooses pytorch's build
    text = "channels: [conda-forge]\ndependencies:\n  - python=3.8\n  - pytorch-gpu=1.9.0\n"
    [gpu] = problems(database, text, "environment.yml", **RTX_5090)
    assert gpu.id == "CHK-TARGET-GPU" and "torch 1.9.0" in gpu.message and "older than every release" in gpu.message


def test_a_linux_export_with_anacondas_intel_openmp_is_still_a_linux_export(database):
    # anaconda's defaults build intel-openmp for linux-64 too (h06a4308 is a linux-64 build hash)
    packages = ["_libgcc_mutex=0.1=main", "intel-openmp=2021.4.0=h06a4308_3561", "ld_impl_linux-64=2.38=h1181459_1",
                "libgcc-ng=11.2.0=h1234567_1", "python=3.9.0=hdb3f193_2", "pytorch=1.13.0=py3.9_cuda11.6_cudnn8.3.2_0",
                "pytorch-cuda=11.6=h867d48c_0", "pytorch-mutex=1.0=cuda", "xz=5.2.6=h5eee18b_0", "zlib=1.2.13=h5eee18b_0"]
    text = "channels: [pytorch, nvidia, defaults]\ndependencies:\n" + "".join(f"  - {p}\n" for p in packages) + \
        "prefix: /home/user/anaconda3/envs/demo\n"
    assert ("CHK-TARGET-PLATFORM", "error", "dependencies") in found(database, text, "environment.yml",
                                                                     **GTX_1080_TI_WINDOWS)


def test_a_legacy_cudatoolkit_needs_a_driver_that_runs_it(database):
    text = "channels: [pytorch]\ndependencies:\n  - pytorch=1.12.1\n  - cudatoolkit=11.6\n"
    result = found(database, text, "environment.yml", os="linux", arch="x86_64", driver="418.40.04",
                   gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.10")
    assert ("CHK-TARGET-DRIVER", "error", "dependencies[0]") in result  # the pytorch build's CUDA 11.6
    assert ("CHK-TARGET-DRIVER", "error", "dependencies[1]") in result  # and cudatoolkit itself


def test_a_conda_forge_cuda_build_on_windows_before_2_5_does_not_exist(database):
    text = "channels: [conda-forge]\ndependencies:\n  - pytorch=2.4.1=cuda120*\n"
    [missing] = problems(database, text, "environment.yml", **GTX_1080_TI_WINDOWS)
    assert missing.id == "CHK-TARGET-PLATFORM" and "windows-x86_64" in missing.message


def test_a_conda_forge_pin_without_a_build_string_is_fine_when_one_of_its_builds_runs(database):
    text = "channels: [conda-forge]\ndependencies:\n  - pytorch=2.7.1\n"
    assert found(database, text, "environment.yml", **RTX_5090) == []


def test_a_cpuonly_conda_environment_is_not_a_missed_gpu(database):
    text = "channels: [pytorch]\ndependencies:\n  - pytorch=2.3.1\n  - cpuonly\n"
    assert found(database, text, "environment.yml", **RTX_5090) == []


# ---------------------------------------------------------------- version ranges


def test_a_range_is_judged_by_the_build_pip_would_take_from_the_files_indexes(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu126\ntorch>=2.7,<2.13\n"
    [gpu] = problems(database, text, "requirements.txt", **RTX_5090)
    assert gpu.id == "CHK-TARGET-GPU"
    assert "the installer takes torch 2.12.1+cu126" in gpu.message
    assert "https://download.pytorch.org/whl/cu12" in gpu.fix  # an index whose builds run there


def test_a_range_whose_newest_build_runs_is_fine(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu128\ntorch>=2.7,<2.9\n"
    assert found(database, text, **RTX_5090) == []


def test_a_range_with_no_wheel_for_the_python_is_an_error(database):
    text = "torch>=2.7,<2.13\n"
    [python] = problems(database, text, "requirements.txt", **GTX_1080_TI_WINDOWS | {"python": "3.8"})
    assert python.id == "CHK-TARGET-PYTHON" and "Python 3.8" in python.message


def test_a_range_fix_names_the_narrower_range_that_runs(database):
    # PyPI's Linux torch is a CUDA build: 2.7 is cu126 (no sm_120), 2.8–2.10 are cu128, the newer ones need a
    # CUDA 13 driver (580 on), which a 570 driver is not
    result = problems(database, "torch>=2.7\n", "requirements.txt", **RTX_5090)
    assert [p.id for p in result] == ["CHK-TARGET-DRIVER"]
    assert "(from PyPI)" in result[0].message
    assert "torch>=2.8.0,<=2.10.0" in result[0].fix and "install NVIDIA driver ≥ 580" in result[0].fix


# ---------------------------------------------------------------- TensorFlow and JAX


def test_a_plain_tensorflow_pin_is_checked_against_the_python(database):
    numpy, python = problems(database, "tensorflow==2.7.0\n", "requirements.txt", **RTX_5090)
    assert python.id == "CHK-TARGET-PYTHON" and "3.12" in python.message
    assert numpy.id == "CHK-NUMPY-ABI"  # 2.7.0 was compiled against NumPy 1.x and asks for numpy>=1.14.5 only


def test_no_numpy_abi_warning_where_the_python_cannot_have_numpy_2(database):
    """NumPy 2.0.0 and later require Python >= 3.9 (their Requires-Python on PyPI): on a Python 3.8 target, or in an
    environment whose own Python is 3.8, pip only finds NumPy 1.x, so torch 2.2.2 (compiled against NumPy 1.x,
    metadata uncapped) imports; on 3.9 the same line warns."""
    machine38 = GTX_1080_TI_WINDOWS | {"python": "3.8"}
    assert "CHK-NUMPY-ABI" not in [p.id for p in problems(database, "torch==2.2.2\n", "requirements.txt", **machine38)]
    assert "CHK-NUMPY-ABI" in [p.id for p in problems(database, "torch==2.2.2\n", "requirements.txt",
                                                      **GTX_1080_TI_WINDOWS)]
    own38 = "dependencies:\n  - python=3.8.5\n  - pip\n  - pip:\n    - torch==2.2.2\n"
    assert "CHK-NUMPY-ABI" not in [p.id for p in check_text("environment.yml", own38, load_database=lambda: database).problems]
    ranged = "torch>=2.0.1\ntorchdata==0.6.1\n"  # held at torch 2.0.1 (the target check's own NumPy-ABI reading)
    assert "CHK-NUMPY-ABI" not in [p.id for p in problems(database, ranged, "requirements.txt",
                                                          **GTX_1080_TI_WINDOWS | {"os": "linux", "python": "3.8"})]


def test_a_tensorflow_patch_release_without_a_record_of_its_own_is_judged(database):
    """tensorflow==2.6.2 is one of 2.6.0's `patches` (the same wheels' Pythons, cp36-cp39): an error on Python 3.12,
    where it once was silent (no release matched); on the 1080 Ti's Windows and Python 3.9 it is 2.6.0's CUDA 11.2."""
    assert [p.id for p in problems(database, "tensorflow==2.6.2\nnumpy<1.24\n", "requirements.txt", **RTX_5090)] == [
        "CHK-TARGET-PYTHON"]
    assert [p.id for p in problems(database, "tensorflow==2.6.2\nnumpy<1.24\n", "requirements.txt",
                                   **GTX_1080_TI_WINDOWS)] == ["CHK-TARGET-SYSTEM-CUDA"]


def test_a_pure_python_torchvision_pairs_with_any_torch(database):
    """AliaksandrSiarohin/first-order-model pins torch==1.7.1 beside torchvision==0.2.1: a py2.py3-none-any wheel
    whose Requires-Dist names torch without a version (PyPI), no operators compiled against torch 1.0.0, the release
    the database pairs it with; torchvision 0.4.2 (compiled, ==1.3.1) beside torch 1.7.1 still is a mismatch."""
    def ids(text):
        return [p.id for p in check_text("requirements.txt", text, load_database=lambda: database).problems]

    assert "CHK-TORCH-COMPANION-MISMATCH" not in ids("torch==1.7.1\ntorchvision==0.2.1\n")
    assert "CHK-TORCH-COMPANION-MISMATCH" in ids("torch==1.7.1\ntorchvision==0.4.2\n")


def test_tensorflow_cpu_on_windows_is_no_missing_gpu_build(database):
    assert found(database, "tensorflow-cpu==2.16.1\n", **GTX_1080_TI_WINDOWS | {"python": "3.11"}) == []


def test_tensorflow_after_2_10_on_native_windows_is_a_cpu_build(database):
    assert found(database, "tensorflow==2.16.1\n", **GTX_1080_TI_WINDOWS | {"python": "3.11"}) == [
        ("CHK-TARGET-CPU-BUILD", "warning", "line 1")]


def test_a_jax_cuda_build_is_not_built_for_windows(database):
    [platform] = problems(database, "jax[cuda12]==0.4.30\n", "requirements.txt", **GTX_1080_TI_WINDOWS)
    assert platform.id == "CHK-TARGET-PLATFORM"


# ---------------------------------------------------------------- every failing fact


def test_every_failing_fact_of_a_pin_is_reported_each_with_its_fix(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.0.1+cu118\n"
    result = problems(database, text, "requirements.txt", os="linux", arch="x86_64", driver="418.40.04",
                      gpus=("NVIDIA GeForce RTX 5090",), python="3.12")
    assert [p.id for p in result] == ["CHK-NUMPY-ABI", "CHK-TARGET-PYTHON", "CHK-TARGET-DRIVER", "CHK-TARGET-GPU"]
    assert all(p.fix for p in result)
    assert "install NVIDIA driver" in result[2].fix


def test_jax_tpu_is_no_missed_gpu_build(database):
    # `jax[tpu]` is JAX for TPU machines (libtpu, no CUDA plugin): chosen by name, like jax[cpu]
    assert found(database, "jax[tpu]>=0.6.2\n", **RTX_5090) == []
    assert found(database, "jax>=0.6.2\n", **RTX_5090) == [("CHK-TARGET-CPU-BUILD", "warning", "line 1")]


def test_wheel_urls_with_markers_are_judged_on_the_machines_their_markers_name(database):
    # taggui's requirements.txt: Windows wheels per CPython, split from their marker at "; " as pip splits a URL line
    text = ('torch==2.6.0; platform_system != "Windows"\n'
            'https://download.pytorch.org/whl/cu124/torch-2.6.0%2Bcu124-cp312-cp312-win_amd64.whl; '
            'platform_system == "Windows" and python_version == "3.12"\n'
            'https://download.pytorch.org/whl/cu124/torch-2.6.0%2Bcu124-cp311-cp311-win_amd64.whl; '
            'platform_system == "Windows" and python_version == "3.11"\n')
    [python] = problems(database, text, "requirements.txt", **GTX_1080_TI_WINDOWS)
    assert (python.id, python.where) == ("CHK-TARGET-PYTHON", "line 2")
    assert "with Python 3.9" in python.message and "3.11, 3.12" in python.message
    newer_driver = GTX_1080_TI_WINDOWS | {"driver": "560.94", "python": "3.12"}
    assert found(database, text, "requirements.txt", **newer_driver) == []  # line 2 is judged there, and runs


def test_an_exact_torchvision_holds_a_torch_range_to_the_release_it_pairs_with(database):
    # pozitronik/sinner: torchvision 0.19.1's Requires-Dist pins torch==2.4.1, so pip takes 2.4.1+cu118 here
    text = "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch\ntorchvision==0.19.1\n"
    [gpu] = [p for p in problems(database, text, "requirements.txt", **RTX_5090) if p.where == "line 2"]
    assert gpu.id == "CHK-TARGET-GPU" and "2.4.1+cu118" in gpu.message and "torchvision==0.19.1" in gpu.message
    assert not [p for p in problems(database, text, "requirements.txt", **GTX_1080_TI_WINDOWS) if p.where == "line 2"]


def test_a_package_in_conda_and_pip_is_installed_twice_only_where_pip_is_not_satisfied_by_condas(database):
    def duplicates(pip_line: str) -> list[str]:
        text = f"channels: [conda-forge]\ndependencies:\n  - python=3.10\n  - numpy <2\n  - pip\n  - pip:\n    - {pip_line}\n"
        report = check_text("environment.yml", text, load_database=lambda: database)
        return [p.where for p in report.problems if p.id == "CHK-DUPLICATE-PACKAGE"]

    # orthoseg's environment-win-gpu.yml lists numpy <2 in both: pip finds conda's numpy 1.x and installs nothing
    assert duplicates("numpy <2") == [] and duplicates("numpy") == []
    assert duplicates("numpy==2.1.0") == ["dependencies[3].pip[0]"]  # pip replaces conda's numpy with its own


def test_a_rocm_build_on_an_nvidia_only_machine_is_a_gpu_it_cannot_use(database):
    text = "--index-url https://download.pytorch.org/whl/rocm6.3\ntorch==2.7.1+rocm6.3\n"
    [gpu] = problems(database, text, "requirements.txt", **RTX_5090)
    assert (gpu.id, gpu.severity) == ("CHK-TARGET-GPU", "error") and "ROCm" in gpu.message
    # an extra or group of ROCm builds is a choice for AMD machines, as a cpu extra is for machines without a GPU
    extra = ('[project]\nname = "x"\nversion = "0"\n[project.optional-dependencies]\nrocm = ["torch==2.7.1"]\n'
             '[tool.uv.sources]\ntorch = [{ index = "rocm", extra = "rocm" }]\n'
             '[[tool.uv.index]]\nname = "rocm"\nurl = "https://download.pytorch.org/whl/rocm6.3"\nexplicit = true\n')
    assert found(database, extra, "pyproject.toml", **RTX_5090) == []


# The pytorch channel's wiring (conda.yaml, from the channel's linux-64 repodata copied in conda/rattler's test-data
# and pytorch/builder conda/build_pytorch.sh): a CUDA build depends on cudatoolkit of its X.Y up to 1.12, on
# pytorch-cuda of its X.Y from 1.13; the CPU build on neither.
V100_LINUX: dict = dict(os="linux", arch="x86_64", driver="470.82.01", gpus=("Tesla V100-SXM2-16GB",), python="3.8")
V100_WINDOWS: dict = dict(os="windows", arch="x86_64", driver="472.12", gpus=("Tesla V100-SXM2-16GB",), python="3.8")


def test_a_cudatoolkit_the_release_was_not_built_for_gets_the_cpu_build(database):
    # previous-versions.md's own v1.9.0 command names cudatoolkit=11.3; the channel's 1.9.0 builds are 10.2 and 11.1
    text = ("channels: [pytorch, conda-forge]\ndependencies:\n  - python=3.8\n  - pytorch=1.9.0\n"
            "  - torchvision=0.10.0\n  - cudatoolkit=11.3\n")
    [wiring] = problems(database, text, "environment.yml", **V100_LINUX)
    assert (wiring.id, wiring.severity, wiring.where) == ("CHK-CONDA-WIRING", "error", "dependencies[1]")
    assert "no CUDA 11.3 build" in wiring.message and "CPU one" in wiring.message and "10.2, 11.1" in wiring.message
    assert "cudatoolkit=11.1" in wiring.fix
    # without a target too: it holds on every platform the release was built for
    report = check_text("environment.yml", text, load_database=lambda: database)
    assert [(p.id, p.severity) for p in report.problems] == [("CHK-CONDA-WIRING", "error")]


def test_pytorch_1_11_with_cudatoolkit_11_1_has_a_cuda_build_on_linux_only(database):
    # the channel's linux-64 files have pytorch-1.11.0-py3.X_cuda11.1_cudnn8.0.5_0; previous-versions.md gives Linux
    # and Windows only cudatoolkit 10.2 and 11.3 for 1.11.0, so Windows is where 11.1 falls back to the CPU build
    text = ("channels: [pytorch, conda-forge]\ndependencies:\n  - python=3.8\n  - pytorch=1.11.0\n"
            "  - cudatoolkit=11.1\n")
    assert "CHK-CONDA-WIRING" not in [p.id for p in problems(database, text, "environment.yml", **V100_LINUX)]
    [wiring] = [p for p in problems(database, text, "environment.yml", **V100_WINDOWS) if p.id == "CHK-CONDA-WIRING"]
    assert "windows-x86_64" in wiring.message and "cudatoolkit=11.3" in wiring.fix
    assert wiring.severity == "warning" and "not read" in wiring.message  # the channel's win-64 files were not read
    report = check_text("environment.yml", text, load_database=lambda: database)
    assert [(p.id, p.severity) for p in report.problems] == [("CHK-CONDA-WIRING", "warning")]  # some platforms only


def test_no_wiring_finding_on_a_target_the_manifest_does_not_install_on(database):
    """intMinsu/pixi-sample's linux-64 workspace: pytorch 1.11.0 with cudatoolkit 11.5 has no CUDA build on Windows,
    but pixi installs nothing there (CHK-TARGET-PLATFORM, once): no second finding about Windows builds."""
    text = ('[workspace]\nchannels = ["pytorch", "conda-forge"]\nplatforms = ["linux-64"]\n\n[dependencies]\n'
            'pytorch = {channel = "pytorch", version = "1.11.0"}\ncudatoolkit = {channel = "conda-forge", version = "11.5.*"}\n')
    assert [p.id for p in problems(database, text, "pixi.toml", **V100_WINDOWS)] == ["CHK-TARGET-PLATFORM"]
    windows = text.replace('"linux-64"]', '"linux-64", "win-64"]')
    assert "CHK-CONDA-WIRING" in [p.id for p in problems(database, windows, "pixi.toml", **V100_WINDOWS)]


def test_cudatoolkit_beside_pytorch_1_13_chooses_no_build(database):
    # feilab-hust/LFMNR's README dependency list (cudatoolkit=11.7, pytorch=1.13.1), on the pytorch channel alone
    text = ("channels: [pytorch, conda-forge]\ndependencies:\n  - python=3.8.8\n  - cudatoolkit=11.7\n"
            "  - pytorch=1.13.1\n  - torchvision=0.14.1\n")
    found = problems(database, text, "environment.yml", **V100_LINUX)
    [wiring] = [p for p in found if p.id == "CHK-CONDA-WIRING"]
    assert (wiring.severity, wiring.where) == ("error", "dependencies[2]")
    assert "pytorch-cuda, not cudatoolkit" in wiring.message and "CPU build" in wiring.message
    assert "pytorch-cuda=11.7" in wiring.fix and "-c nvidia" in wiring.fix
    assert "CHK-TARGET-DRIVER" not in [p.id for p in found]  # no longer judged as the cuda11.7 build it never gets
    # its create_environment.yml lists the nvidia channel: conda may then take a CUDA build, or not
    with_nvidia = text.replace("[pytorch, conda-forge]", "[defaults, conda-forge, pytorch, nvidia]")
    [warning] = [p for p in problems(database, with_nvidia, "environment.yml", **V100_LINUX) if p.id == "CHK-CONDA-WIRING"]
    assert warning.severity == "warning"
    # the right wiring is clean
    right = with_nvidia.replace("cudatoolkit=11.7", "pytorch-cuda=11.7")
    assert "CHK-CONDA-WIRING" not in [p.id for p in problems(database, right, "environment.yml", **V100_LINUX)]


def test_pytorch_cuda_without_the_nvidia_channel_does_not_solve(database):
    text = "channels: [pytorch, conda-forge]\ndependencies:\n  - pytorch=1.13.1\n  - pytorch-cuda=11.7\n"
    [wiring] = problems(database, text, "environment.yml", **V100_LINUX)
    assert (wiring.id, wiring.severity) == ("CHK-CONDA-WIRING", "error") and "nvidia channel" in wiring.fix


# TensorFlow before 2.4 (tensorflow.yaml from tensorflow-gpu's PyPI wheels and their build_info.py): 2.3.0 was tested
# with CUDA 10.1 / cuDNN 7.6 and compiled sm_35 sm_37 sm_52 sm_60 sm_61 compute_70
TF_GPU_2_3 = "tensorflow-gpu==2.3.0\n"


def test_tensorflow_gpu_2_3_needs_the_cuda_10_1_driver(database):
    cuda_10_0_driver = dict(os="linux", arch="x86_64", driver="410.48", gpus=("Tesla V100-SXM2-16GB",), python="3.8")
    found = problems(database, TF_GPU_2_3, "requirements.txt", **cuda_10_0_driver)
    [driver] = [p for p in found if p.id == "CHK-TARGET-DRIVER"]
    assert "418.39" in driver.message and "418.39" in driver.fix
    assert "--framework tensorflow " in driver.fix  # solve's framework, not the project's name
    assert "CHK-RELEASE-UNKNOWN" not in [p.id for p in found]


def test_tensorflow_gpu_2_3_reaches_an_rtx_4090_through_its_compute_70_ptx_only(database):
    rtx_4090 = dict(os="linux", arch="x86_64", driver="550.54.14", gpus=("NVIDIA GeForce RTX 4090",), python="3.8")
    # no sm_89 cubin, but PTX a driver for CUDA 12.4 JITs, as for 2.4+ (compute_80): it runs, given the system CUDA
    assert [(p.id, p.severity) for p in problems(database, TF_GPU_2_3, "requirements.txt", **rtx_4090)] == [
        ("CHK-TARGET-SYSTEM-CUDA", "warning")]
    [python] = problems(database, TF_GPU_2_3, "requirements.txt", **dict(rtx_4090, python="3.9"))
    assert python.id == "CHK-TARGET-PYTHON" and "3.5–3.8" in python.message


def test_before_2_1_plain_tensorflow_is_the_cpu_build_and_tensorflow_gpu_the_gpu_one(database):
    v100 = dict(os="linux", arch="x86_64", driver="410.48", gpus=("Tesla V100-SXM2-16GB",), python="3.7")
    [cpu] = problems(database, "tensorflow==2.0.0\n", "requirements.txt", **v100)
    assert cpu.id == "CHK-TARGET-CPU-BUILD"
    [system] = problems(database, "tensorflow-gpu==2.0.0\n", "requirements.txt", **v100)
    assert system.id == "CHK-TARGET-SYSTEM-CUDA" and "CUDA 10.0" in system.message
    # 1.15.0's plain tensorflow wheel was the GPU build (build_info.py is_cuda_build True), 1.15.2's is not
    assert problems(database, "tensorflow==1.15.0\n", "requirements.txt", **v100)[0].id == "CHK-TARGET-SYSTEM-CUDA"
    assert problems(database, "tensorflow==1.15.2\n", "requirements.txt", **v100)[0].id == "CHK-TARGET-CPU-BUILD"


# torch 1.0.1-1.7.1 on the pytorch channel: the CUDA of each release's cudatoolkit builds as previous-versions.md's
# conda commands name them (1.4.0: 9.2 and 10.1; 1.2.0: 9.2 and 10.0), linux-64 of 1.5.1-1.7.1 also in the
# channel's repodata copy
OLD_CONDA = "channels: [pytorch]\ndependencies:\n  - python=3.7\n  - pytorch=1.4.0\n  - torchvision=0.5.0\n" \
            "  - cudatoolkit=10.1\n"


def test_pytorch_1_4_with_cudatoolkit_10_1_is_judged_as_its_cuda_10_1_build(database):
    gtx_1080_ti = dict(os="linux", arch="x86_64", gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.7")
    assert found(database, OLD_CONDA, "environment.yml", driver="430.50", **gtx_1080_ti) == []
    driver = [p for p in problems(database, OLD_CONDA, "environment.yml", driver="410.48", **gtx_1080_ti)
              if p.where == "dependencies[1]"]
    assert [(p.id, p.severity) for p in driver] == [("CHK-TARGET-DRIVER", "error")]
    assert "pytorch 1.4.0 cuda10.1" in driver[0].message and "418.39" in driver[0].message
    # an RTX 4090 (sm_89) runs it by JIT-compiling the build's 3.7+PTX (torch.yaml's 1.4.0 cu101 arch list), as it
    # runs PyPI's torch==1.4.0 (the same CUDA 10.1 build)
    rtx_4090 = dict(os="linux", arch="x86_64", driver="550.54.14", gpus=("NVIDIA GeForce RTX 4090",), python="3.7")
    assert found(database, OLD_CONDA, "environment.yml", **rtx_4090) == []
    assert "CHK-TARGET-GPU" not in [i for i, _, _ in found(database, "torch==1.4.0\n", "requirements.txt", **rtx_4090)]
    # a CUDA 9.2 build is the same release's cu92 wheel; a CUDA the release was not built for is the CPU build
    assert ("CHK-CONDA-WIRING", "warning", "dependencies[1]") in found(
        database, OLD_CONDA.replace("cudatoolkit=10.1", "cudatoolkit=10.0"), "environment.yml", **rtx_4090)


def test_pytorch_1_2_with_cudatoolkit_10_1_gets_the_cpu_build(database):
    text = OLD_CONDA.replace("pytorch=1.4.0", "pytorch=1.2.0").replace("torchvision=0.5.0", "torchvision=0.4.0")
    [wiring] = problems(database, text, "environment.yml", os="linux", arch="x86_64", driver="430.50",
                        gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.7")
    assert (wiring.id, wiring.where) == ("CHK-CONDA-WIRING", "dependencies[1]")
    assert "9.2, 10.0" in wiring.message and "cudatoolkit=10.0" in wiring.fix
    # a warning: the channel's linux-64 files of 1.2.0 were not read, only PyTorch's install commands
    assert wiring.severity == "warning" and "not read" in wiring.message
    assert found(database, text.replace("cudatoolkit=10.1", "cudatoolkit=10.0"), "environment.yml", os="linux",
                 arch="x86_64", driver="430.50", gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.7") == []
