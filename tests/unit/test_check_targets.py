"""Can the pinned builds run on a given machine? The target checks reuse the resolver's fitness checks
(driver, compute capability, OS, Python) on the builds a file pins; each case is a real trap."""

from __future__ import annotations

from pathlib import Path

import pytest

from envpin.check import check_text
from envpin.check.config import CheckConfig, parse_config
from envpin.check.targets import CheckTarget, configured_target
from envpin.machine.spec import NamedTarget, TargetSpec

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "check"


def machine(database, name="target", **fields) -> CheckTarget:
    return configured_target(NamedTarget(name, TargetSpec(detect=False, **fields)), database)


def ids(database, text: str, target: CheckTarget, path: str = "requirements.txt") -> list[tuple[str, str, str]]:
    report = check_text(path, text, load_database=lambda: database, targets=[target])
    return sorted((p.id, p.severity, p.where) for p in report.problems)


def test_a_cu128_build_has_no_code_for_a_pascal_gpu(database):
    # torch 2.8 dropped Maxwell/Pascal from its CUDA 12.8 wheels (failure catalogue A2): a GTX 1080 is sm_61.
    text = "--extra-index-url https://download.pytorch.org/whl/cu128\ntorch==2.8.0+cu128\n"
    target = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce GTX 1080",),
                     python="3.11")
    report = check_text("requirements.txt", text, load_database=lambda: database, targets=[target])
    [problem] = report.problems
    assert problem.id == "CHK-TARGET-GPU" and problem.where == "line 2"
    assert "sm_61" in problem.message and "envpin solve --framework torch" in problem.fix
    assert "--gpu 'NVIDIA GeForce GTX 1080'" in problem.fix


def test_a_driver_too_old_for_the_cuda_of_the_pin_names_the_driver_to_install(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\n"
    target = machine(database, os="linux", arch="x86_64", driver="470.82.01", gpus=("NVIDIA GeForce RTX 3090",),
                     python="3.11")
    report = check_text("requirements.txt", text, load_database=lambda: database, targets=[target])
    [problem] = report.problems
    assert problem.id == "CHK-TARGET-DRIVER"
    assert "470.82.01" in problem.message and "525.60.13" in problem.fix  # NVIDIA's CUDA 12.x minimum on Linux


def test_the_same_pin_fits_a_machine_that_can_run_it(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\ntorchvision==0.20.1+cu124\n"
    target = machine(database, os="linux", arch="x86_64", driver="550.54.14", gpus=("NVIDIA GeForce RTX 3090",),
                     python="3.11")
    assert ids(database, text, target) == []


def test_a_plain_pin_installs_pypis_cpu_build_on_windows_with_a_gpu(database):
    # Windows PyPI wheels are CPU builds (the database's `pypi` map): `torch==2.5.1` gives no CUDA there.
    target = machine(database, os="windows", arch="x86_64", driver="551.61", gpus=("NVIDIA GeForce RTX 3090",),
                     python="3.11")
    assert ids(database, "torch==2.5.1\n", target) == [("CHK-TARGET-CPU-BUILD", "warning", "line 1")]


def test_the_windows_regression_of_2_4_0_is_an_error_for_a_windows_target(database):
    target = machine(database, os="windows", arch="x86_64", driver="none", python="3.11")
    assert ids(database, "torch==2.4.0\n", target) == [("CHK-KNOWN-ISSUE", "error", "line 1")]
    linux = machine(database, os="linux", arch="x86_64", driver="none", python="3.11")
    # on Linux, PyPI's 2.4.0 is the cu121 build: without a driver it runs, on the CPU only
    assert ids(database, "torch==2.4.0\n", linux) == [("CHK-TARGET-DRIVER", "warning", "line 1")]


def test_the_targets_python_must_have_wheels(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.4.1+cu121\n"
    target = machine(database, os="linux", arch="x86_64", driver="550.54.14", python="3.13")
    assert ids(database, text, target) == [("CHK-TARGET-PYTHON", "error", "line 2")]


def test_without_a_python_the_target_leaves_python_to_the_file(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.4.1+cu121\n"
    target = machine(database, os="linux", arch="x86_64", driver="550.54.14")
    assert ids(database, text, target) == []


def test_a_cuda_build_is_not_built_for_macos(database):
    text = "--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1+cu124\n"
    target = machine(database, os="macos", arch="arm64", driver="none", python="3.11")
    assert ids(database, text, target) == [("CHK-TARGET-PLATFORM", "error", "line 2")]


def test_jax_cuda12_needs_jaxs_own_driver_minimum(database):
    target = machine(database, os="linux", arch="x86_64", driver="470.82.01", gpus=("NVIDIA A100-SXM4-80GB",),
                     python="3.11")
    assert ids(database, "jax[cuda12]==0.4.30\n", target) == [("CHK-TARGET-DRIVER", "error", "line 1")]


def test_a_lock_with_no_torch_for_the_targets_platform(database):
    lock = (CORPUS / "uv-lock" / "good-cu124" / "uv.lock").read_text(encoding="utf-8")
    target = machine(database, os="windows", arch="x86_64", driver="551.61", python="3.11")
    found = ids(database, lock, target, path="uv.lock")
    assert found == [("CHK-TARGET-PLATFORM", "error", "package[1]")]


def test_each_world_of_a_lock_with_conflicting_extras_is_judged_on_its_own(database):
    # uv's PyTorch guide layout (astral-sh/uv#9307): cpu / cu118 / cu124 extras. On a Pascal GPU with a new
    # driver every build that claims that GPU must cover sm_61; cu118 and cu124 2.5.1 both do.
    lock = (CORPUS / "uv-lock" / "conflicting-extras" / "uv.lock").read_text(encoding="utf-8")
    target = machine(database, os="linux", arch="x86_64", driver="550.54.14", gpus=("NVIDIA GeForce GTX 1080",),
                     python="3.11")
    # the cpu extra's torch comes from PyTorch's cpu index: a CPU build asked for by name, not a missed GPU
    assert ids(database, lock, target, path="uv.lock") == []


def test_config_problems_are_collected_with_the_path_of_each_field():
    table = {
        "ignore": ["CHK-NOT-A-THING"],
        "colour": "blue",
        "targets": [{"name": "a", "os": "plan9", "arch": "x86_64", "driver": "535.104.05"},
                    {"name": "b", "os": "linux", "arch": "x86_64"},
                    {"name": "c", "os": "linux", "arch": "x86_64", "driver": "banana", "gpu": 3}],
    }
    config, problems = parse_config(table, Path("."))
    assert config.targets == ()
    assert problems == [
        "[tool.envpin].colour: unknown key (expected ignore, per-file-ignores, targets, driver-policy)",
        "[tool.envpin].ignore: 'CHK-NOT-A-THING' is not an envpin check id (see docs/check.md)",
        "[tool.envpin].targets[0].os: 'plan9' is not one of linux, windows, macos",
        '[tool.envpin].targets[1].driver: required (or give facts = "FILE" from `envpin detect --format json`)',
        "[tool.envpin].targets[2].gpu: must be a string or a list of strings",
    ]


def test_per_file_ignores_match_globs_relative_to_the_pyproject(tmp_path):
    config = CheckConfig(path=tmp_path / "pyproject.toml", ignore=frozenset({"CHK-LOCAL-VERSION-MISSING"}),
                         per_file_ignores={"legacy/requirements-*.txt": frozenset({"CHK-HASH-MISSING"})})
    (tmp_path / "legacy").mkdir()
    assert config.ignored_for(str(tmp_path / "legacy" / "requirements-old.txt")) == {
        "CHK-LOCAL-VERSION-MISSING", "CHK-HASH-MISSING"}
    assert config.ignored_for(str(tmp_path / "requirements.txt")) == {"CHK-LOCAL-VERSION-MISSING"}


@pytest.mark.parametrize("driver", ["535.104.05", "none"])
def test_a_config_target_describes_another_machine_without_probing_this_one(database, driver):
    spec = TargetSpec(os="linux", arch="aarch64", driver=driver, gpus=("NVIDIA GH200 480GB",),
                      compute_capabilities=("9.0",), python="3.12", detect=False)
    facts = spec.facts()
    assert (facts.os, facts.arch, facts.python.version) == ("linux", "aarch64", "3.12")
    assert (facts.driver is None) == (driver == "none")
    assert spec.flags.startswith("--os linux --arch aarch64 --python 3.12 --driver")


# ---------------------------------------------------------------- the file's own Python against the target's


def _target_python_problems(database, path: Path, python: str | None, driver="550.54.14") -> list[tuple[str, str]]:
    target = machine(database, os="linux", arch="x86_64", driver=driver, gpus=("NVIDIA GeForce RTX 3090",), python=python)
    report = check_text(path.name, path.read_text(), load_database=lambda: database, targets=[target])
    return sorted((p.where, p.message) for p in report.problems if p.id == "CHK-TARGET-PYTHON")


def test_a_lock_for_python_3_11_does_not_pass_for_3_12(database):
    # pylock.toml says requires-python ==3.11.* and has only cp311 torch wheels
    lock = CORPUS / "pylock" / "pylock.toml"
    [(where, message)] = _target_python_problems(database, lock, "3.12")
    assert where == "requires-python" and "==3.11.*" in message and "3.12" in message
    assert _target_python_problems(database, lock, "3.11") == []
    assert _target_python_problems(database, lock, None) == []  # no Python given: not checked


def test_cp311_only_wheels_do_not_install_on_3_12_whatever_requires_python_allows(database):
    # uv.lock: requires-python >=3.11 admits 3.12, but its torch and torchvision wheels are cp311 only
    lock = CORPUS / "uv-lock" / "good-cu124" / "uv.lock"
    found = _target_python_problems(database, lock, "3.12")
    assert [message.split(": ", 1)[1] for _, message in found] == [
        "torch 2.5.1+cu124 has wheels for CPython 3.11 only, not 3.12",
        "torchvision 0.20.1+cu124 has wheels for CPython 3.11 only, not 3.12"]
    assert _target_python_problems(database, lock, "3.11") == []


def test_a_direct_wheel_url_for_another_python(database, tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("torch @ https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl\n")
    [(where, message)] = _target_python_problems(database, requirements, "3.12")
    assert where == "line 1" and "CPython 3.11 only" in message
    abi3 = tmp_path / "requirements-abi3.txt"  # a wheel any Python 3 takes is no mismatch
    abi3.write_text("jax @ https://files.pythonhosted.org/packages/jax-0.4.30-py3-none-any.whl\n")
    assert _target_python_problems(database, abi3, "3.12") == []


def test_a_torch_range_is_judged_within_what_a_tied_range_beside_it_allows(database):
    # every xformers up to 0.0.30 requires one torch, 2.7.0 the newest: pip takes torch 2.7.0 from PyPI (cu126, no
    # sm_120 code), and the fix stays within what the xformers line allows
    target = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",),
                     python="3.12")
    report = check_text("requirements.txt", "torch>=2.0\nxformers>=0.0.20,<=0.0.30\n", load_database=lambda: database,
                        targets=[target])
    [problem] = report.problems
    assert problem.id == "CHK-TARGET-GPU" and "torch 2.7.0+cu126" in problem.message
    assert "within what xformers>=0.0.20,<=0.0.30 require" in problem.message
    assert "torch 2.7.0+cu128 does" in problem.fix


def test_a_public_pin_beside_an_extra_pytorch_index_is_judged_as_the_build_pip_takes(database):
    # pip takes the highest build across the indexes: 2.0.0+cu117 from the extra index sorts above PyPI's 2.0.0 (CPU
    # on Windows), so the 1080 Ti gets a CUDA build; where that index has no such release, PyPI's CPU build it is
    windows = machine(database, os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",),
                      python="3.9")
    found = ids(database, "--extra-index-url https://download.pytorch.org/whl/cu117\ntorch==2.0.0\n", windows)
    assert not [f for f in found if f[0].startswith("CHK-TARGET")], found
    found = ids(database, "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.8.0\n", windows)
    assert ("CHK-TARGET-CPU-BUILD", "warning", "line 2") in found, found


def test_a_range_held_at_a_numpy_1_build_beside_numpy_2_is_an_error(database):
    # torchdata==0.6.1 holds torch>=2.0.1 at 2.0.1, compiled against NumPy 1.x; numpy==2.1 makes its import fail
    target = machine(database, os="linux", arch="x86_64", driver="535.104.05", gpus=("NVIDIA GeForce RTX 3090",),
                     python="3.10")
    found = ids(database, "torch>=2.0.1\ntorchdata==0.6.1\nnumpy==2.1\n", target)
    assert ("CHK-NUMPY-ABI", "error", "line 1") in found, found
    assert not [f for f in ids(database, "torch>=2.0.1\ntorchdata==0.6.1\nnumpy<2\n", target) if f[0] == "CHK-NUMPY-ABI"]


# one torch line per Python, as repositories write them beside PyTorch's find-links page: pip takes only the
# line whose marker holds on the machine, so only that line is judged there
PER_PYTHON = ('--find-links https://download.pytorch.org/whl/torch_stable.html\n'
              'torch==2.1.2+cu121; python_version >= "3.11"\n'
              'torch==2.0.1+cu118; python_version < "3.10"\n'
              'torch==2.5.1; platform_machine == "aarch64"\n')


def test_only_the_line_whose_marker_holds_on_the_target_is_judged(database):
    new = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",),
                  python="3.12")
    assert [(i, w) for i, _, w in ids(database, PER_PYTHON, new) if i.startswith("CHK-TARGET")] == [
        ("CHK-TARGET-GPU", "line 2"), ("CHK-TARGET-PYTHON", "line 2")]
    old = machine(database, os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",),
                  python="3.9")
    assert [i for i, _, _ in ids(database, PER_PYTHON, old) if i.startswith("CHK-TARGET")] == []  # 2.0.1+cu118 runs
    # a target without a known Python: markers on the Python are not evaluated, the aarch64 one still is
    unknown = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",))
    assert sorted({w for i, _, w in ids(database, PER_PYTHON, unknown) if i.startswith("CHK-TARGET")}) == [
        "line 2", "line 3"]


def test_solve_takes_the_framework_line_whose_marker_holds_there(tmp_path, capsys):
    from envpin.cli import main  # noqa: PLC0415 - the command, as users run it

    requirements = tmp_path / "requirements.txt"
    requirements.write_text(PER_PYTHON, encoding="utf-8")
    code = main(["solve", "-r", str(requirements), "--os", "windows", "--arch", "x86_64", "--driver", "472.12",
                 "--gpu", "NVIDIA GeForce GTX 1080 Ti", "--python", "3.9", "--format", "requirements.txt"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert [line for line in out.splitlines() if line.startswith("torch")] == ["torch==2.0.1+cu118"]
    assert 'torch==2.1.2+cu121; python_version >= "3.11" is not for this machine' in err


# JAX's old install: its find-links page serves CUDA jaxlib wheels named by a local version (Linux only)
CUDA_JAXLIB = ("-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\n"
               "jax==0.4.23\njaxlib==0.4.23+cuda12.cudnn89\n")


def test_a_cuda_jaxlib_of_jax_s_find_links_page_makes_the_jax_line_a_cuda_build(database):
    windows = machine(database, os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",),
                      python="3.9")
    assert [(i, w) for i, _, w in ids(database, CUDA_JAXLIB, windows) if i.startswith("CHK-TARGET")] == [
        ("CHK-TARGET-PLATFORM", "line 2")]  # was a CPU-build warning: the CUDA jaxlib has no Windows wheel
    linux = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 3090",),
                    python="3.11")
    assert [i for i, _, _ in ids(database, CUDA_JAXLIB, linux) if i.startswith("CHK-TARGET")] == [
        "CHK-TARGET-SYSTEM-CUDA"]  # it runs there, given the system CUDA and cuDNN it loads


def test_a_cuda_jaxlib_without_nvidia_wheels_needs_a_system_cuda(database):
    linux = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 3090",),
                    python="3.11")
    report = check_text("requirements.txt", CUDA_JAXLIB, load_database=lambda: database, targets=[linux])
    [found] = [p for p in report.problems if p.id == "CHK-TARGET-SYSTEM-CUDA"]
    assert (found.severity, found.where) == ("warning", "line 3")
    assert "CUDA 12 and cuDNN 8.9" in found.message and "jax[cuda12_pip]" in found.fix
    local = "-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\njax[cuda12_local]==0.4.23\n"
    assert ("CHK-TARGET-SYSTEM-CUDA", "warning", "line 2") in ids(database, local, linux)
    # NVIDIA's wheels beside it (what jax[cuda12_pip] adds, or written out) supply CUDA and cuDNN
    for supplied in (CUDA_JAXLIB + "nvidia-cudnn-cu12==8.9.7.29\nnvidia-cuda-runtime-cu12==12.3.101\n",
                     CUDA_JAXLIB.replace("jax==0.4.23", "jax[cuda12_pip]==0.4.23")):
        assert "CHK-TARGET-SYSTEM-CUDA" not in [i for i, _, _ in ids(database, supplied, linux)]
    # the same file on a machine without an NVIDIA GPU is not told to install CUDA
    cpu = machine(database, os="linux", arch="x86_64", driver="none", python="3.11")
    assert "CHK-TARGET-SYSTEM-CUDA" not in [i for i, _, _ in ids(database, CUDA_JAXLIB, cpu)]


# jaxlib 0.1.x's find-links builds, `+cuda111` for CUDA 11.1 (jax.yaml `find_links:`, from JAX's CHANGELOG.md and
# build_jaxlib_wheels.sh at the tags), as AlphaFold 2.0's Dockerfile installs them
OLD_CUDA_JAXLIB = ("jax==0.2.17\njaxlib==0.1.69+cuda111\n"
                   "-f https://storage.googleapis.com/jax-releases/jax_releases.html\n")


def test_a_jaxlib_0_1_find_links_pin_is_judged_as_its_cuda_build(database):
    cuda_10_driver = machine(database, os="linux", arch="x86_64", driver="418.87", gpus=("Tesla V100-SXM2-16GB",),
                             python="3.8")
    found = ids(database, OLD_CUDA_JAXLIB, cuda_10_driver)
    assert ("CHK-TARGET-DRIVER", "error", "line 2") in found  # CUDA 11.1 needs 450.80.02
    assert ("CHK-TARGET-SYSTEM-CUDA", "warning", "line 2") in found  # it loads CUDA 11.1 and cuDNN from the system
    report = check_text("requirements.txt", OLD_CUDA_JAXLIB, load_database=lambda: database, targets=[cuda_10_driver])
    [driver] = [p for p in report.problems if p.id == "CHK-TARGET-DRIVER"]
    assert "jaxlib 0.1.69+cuda111" in driver.message and "450.80.02" in driver.fix
    newer = machine(database, os="linux", arch="x86_64", driver="460.32.03", gpus=("Tesla V100-SXM2-16GB",),
                    python="3.10")
    assert ("CHK-TARGET-PYTHON", "error", "line 2") in ids(database, OLD_CUDA_JAXLIB, newer)  # built for 3.6-3.9
    fits = machine(database, os="linux", arch="x86_64", driver="460.32.03", gpus=("Tesla V100-SXM2-16GB",),
                   python="3.8")
    assert [i for i, _, w in ids(database, OLD_CUDA_JAXLIB, fits) if w == "line 2"] == ["CHK-TARGET-SYSTEM-CUDA"]


def test_a_find_links_jaxlib_build_the_page_never_had_is_unknown(database):
    # 0.1.66 on: "There is no longer a separate jaxlib release for CUDA 11.2 (or higher); use ... cuda111"
    linux = machine(database, os="linux", arch="x86_64", driver="460.32.03", gpus=("Tesla V100-SXM2-16GB",),
                    python="3.8")
    report = check_text("requirements.txt", OLD_CUDA_JAXLIB.replace("cuda111", "cuda112"),
                        load_database=lambda: database, targets=[linux])
    [unknown] = [p for p in report.problems if p.where == "line 2" and p.severity == "error"]
    assert unknown.id == "CHK-BUILD-UNKNOWN" and "+cuda101, +cuda102, +cuda110, +cuda111" in unknown.message
    older = OLD_CUDA_JAXLIB.replace("0.1.69+cuda111", "0.1.61+cuda112")  # 0.1.61-0.1.65 did build CUDA 11.2
    assert "CHK-BUILD-UNKNOWN" not in [i for i, _, _ in ids(database, older, linux)]


def test_solve_reads_a_cuda_jaxlib_pin_as_that_release_s_cuda_build(tmp_path, capsys):
    from envpin.cli import main  # noqa: PLC0415 - the command, as users run it

    requirements = tmp_path / "requirements.txt"
    requirements.write_text(CUDA_JAXLIB, encoding="utf-8")
    code = main(["solve", "-r", str(requirements), "--os", "linux", "--arch", "x86_64", "--driver", "570.86.10",
                 "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.11", "--format", "requirements.txt"])
    out, err = capsys.readouterr()
    assert code == 0, out + err  # was no-matching-release: ==0.4.23 and ==0.4.23+cuda12.cudnn89 intersected
    assert [line for line in out.splitlines() if line.startswith("jax")] == ["jax[cuda12]==0.4.23"]


@pytest.mark.parametrize(("os_name", "arch", "marker", "holds"), [
    ("windows", "arm64", "platform_machine == 'ARM64'", True),   # CPython on Windows on ARM says ARM64
    ("linux", "arm64", "platform_machine == 'aarch64'", True),   # either spelling of 64-bit ARM: Linux says aarch64
    ("macos", "aarch64", "platform_machine == 'arm64'", True),
    ("windows", "x86_64", "sys_platform == 'win32' and platform_machine == 'AMD64'", True),
    ("linux", "x86_64", "os_name == 'nt'", False),
])
def test_markers_take_the_values_cpython_reports_on_the_platform(os_name, arch, marker, holds):
    from envpin.vocabulary.markers import marker_holds  # noqa: PLC0415 - as check and solve --project import it

    assert marker_holds(marker, os_name=os_name, arch=arch, python="3.12") is holds


def test_a_negated_marker_holds_exactly_where_the_marker_does_not():
    from envpin.vocabulary.markers import marker_holds, negated  # noqa: PLC0415 - as check and solve --project import them

    machines = [("linux", "x86_64", "3.12"), ("linux", "aarch64", "3.9"), ("windows", "x86_64", "3.11"),
                ("macos", "arm64", "3.10")]
    for marker in ("sys_platform == 'linux'", "sys_platform == 'linux' and platform_machine == 'x86_64'",
                   "sys_platform == 'win32' or python_version < '3.10'", "platform_system != 'Darwin'",
                   "'linux' in sys_platform"):
        opposite = negated(marker)
        assert opposite is not None
        for os_name, arch, python in machines:
            assert marker_holds(marker, os_name=os_name, arch=arch, python=python) != \
                marker_holds(opposite, os_name=os_name, arch=arch, python=python), (marker, os_name, arch, python)
    assert negated("python_version ~= '3.10'") is None  # no complement operator: not written



def test_two_markers_meet_where_one_known_machine_satisfies_both():
    from envpin.vocabulary.markers import markers_meet  # noqa: PLC0415 - as the manifest reader imports it

    assert not markers_meet("platform_machine == 'x86_64'", "platform_machine == 'aarch64'")
    assert not markers_meet("sys_platform == 'win32'", "sys_platform == 'linux' and python_version >= '3.10'")
    assert not markers_meet("platform_machine == 'x86_64'",
                            "platform_machine != 'x86_64' and platform_machine != 'aarch64'")
    assert markers_meet("platform_machine == 'x86_64'", "sys_platform == 'darwin'")  # an Intel Mac
    assert markers_meet("python_version < '3.10'", "sys_platform == 'linux'")
    assert markers_meet("", "sys_platform == 'linux'")  # a line without a marker is installed everywhere
    assert markers_meet("extra == 'gpu'", "sys_platform == 'linux'")  # extras are not judged
    assert markers_meet("python_version ~= 'x'", "sys_platform == 'linux'")  # unreadable: not judged

def test_a_package_with_no_wheel_and_no_sdist_for_the_platform_names_where_it_has_them(database):
    # torch-xla publishes manylinux x86_64 wheels only and no sdist (PyPI's file lists, recorded per release)
    windows = machine(database, os="windows", arch="x86_64", driver="551.61", gpus=("NVIDIA GeForce RTX 3090",),
                      python="3.11")
    mac = machine(database, os="macos", arch="arm64", driver="none", python="3.11")
    linux = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 3090",),
                    python="3.11")
    for text, where in (("torch-xla==2.5.0\n", "line 1"), ("torch-xla>=2.1\n", "line 1"), ("torch_xla\n", "line 1")):
        for target in (windows, mac):
            report = check_text("requirements.txt", text, load_database=lambda: database, targets=[target])
            [found] = [p for p in report.problems if p.id == "CHK-TARGET-PLATFORM"]
            assert found.where == where and "linux-x86_64" in found.message
            assert "no sdist" in found.message or "or an sdist" in found.message
            assert "https://pypi.org/project/torch-xla/" in found.message and "sys_platform" in found.fix
        assert "CHK-TARGET-PLATFORM" not in [i for i, _, _ in ids(database, text, linux)]
    # a marker that leaves the platform out is the fix
    assert ids(database, "torch-xla; sys_platform == 'linux'\n", windows) == []
    # triton's missing Windows wheel is the same fact, from the same records
    assert ("CHK-TARGET-PLATFORM", "error", "line 1") in ids(database, "triton==2.0.0\n", windows)


def test_the_linux_only_packages_the_solve_leaves_out_elsewhere_come_from_the_recorded_file_lists(database):
    from envpin.readers.tied import linux_only_packages, release_files  # noqa: PLC0415 - the facts under test

    assert {"triton", "torch-xla"} <= linux_only_packages(database)
    assert linux_only_packages(database, ["numpy"]) == frozenset()  # no such name: tied.yaml is not read
    assert all(r.platforms == ("linux-x86_64",) and not r.sdist for r in release_files(database, "torch-xla", ""))


def test_a_wheel_urls_python_and_its_releases_pythons_are_one_finding(database):
    # grenlayk/deep-text-edit's requirements.txt line 70: the URL's cp37 tag and torch 1.11.0's Pythons (3.7-3.10)
    # both say Python 3.12 has no wheel
    text = ("torch @ https://download.pytorch.org/whl/cu113/torch-1.11.0%2Bcu113-cp37-cp37m-linux_x86_64.whl\n")
    target = machine(database, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",),
                     python="3.12")
    found = [(i, w) for i, _, w in ids(database, text, target)]
    assert found.count(("CHK-TARGET-PYTHON", "line 1")) == 1


# jaxlib 0.1.73-0.4.19's find-links builds are named by CUDA major and cuDNN (`+cuda11.cudnn82`); the CUDA each
# needs is JAX's README at the tag (11.1 to 0.3.25), the builds jax's setup.py extras at the jax tags that pin it
CUDNN_JAXLIB = ("-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\n"
                "jaxlib==0.3.25+cuda11.cudnn82\n")


def test_a_jaxlib_cuda11_cudnn82_find_links_pin_is_judged_as_its_cuda_build(database):
    old_driver = machine(database, os="linux", arch="x86_64", driver="418.87", gpus=("Tesla V100-SXM2-16GB",),
                         python="3.10")
    report = check_text("requirements.txt", CUDNN_JAXLIB, load_database=lambda: database, targets=[old_driver])
    [driver] = [p for p in report.problems if p.id == "CHK-TARGET-DRIVER"]
    assert driver.where == "line 2" and "jaxlib 0.3.25+cuda11.cudnn82" in driver.message
    assert "450.80.02" in driver.fix  # CUDA 11.1 (cuda.yaml): what the README's "CUDA 11.1 or newer" needs
    fits = machine(database, os="linux", arch="x86_64", driver="470.82.01", gpus=("Tesla V100-SXM2-16GB",),
                   python="3.10")
    assert [i for i, _, w in ids(database, CUDNN_JAXLIB, fits) if w == "line 2"] == ["CHK-TARGET-SYSTEM-CUDA"]
    python_3_12 = machine(database, os="linux", arch="x86_64", driver="470.82.01", gpus=("Tesla V100-SXM2-16GB",),
                          python="3.12")
    assert ("CHK-TARGET-PYTHON", "error", "line 2") in ids(database, CUDNN_JAXLIB, python_3_12)  # built for 3.7-3.11
    windows = machine(database, os="windows", arch="x86_64", driver="531.14", gpus=("NVIDIA GeForce RTX 3090",),
                      python="3.10")
    assert ("CHK-TARGET-PLATFORM", "error", "line 2") in ids(database, CUDNN_JAXLIB, windows)  # Linux x86_64 only
    # 0.3.25's cuDNN builds are 8.2 and 8.0.5; 8.6 came with 0.4.0
    unknown = ids(database, CUDNN_JAXLIB.replace("cudnn82", "cudnn86"), fits)
    assert ("CHK-BUILD-UNKNOWN", "error", "line 2") in unknown


def test_a_jax_cuda11_cudnn82_extra_older_than_the_jax_records_is_its_find_links_jaxlib(database):
    text = ('-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\n'
            'jax[cuda11_cudnn82]==0.4.7\n')
    cuda_10_driver = machine(database, os="linux", arch="x86_64", driver="440.33.01", gpus=("NVIDIA A100-SXM4-40GB",),
                             python="3.10")
    report = check_text("requirements.txt", text, load_database=lambda: database, targets=[cuda_10_driver])
    [driver] = [p for p in report.problems if p.id == "CHK-TARGET-DRIVER"]
    assert "jaxlib 0.4.7+cuda11.cudnn82" in driver.message  # 0.4.7's cuda11 wheels: "CUDA 11.4 or newer"
    assert "CHK-RELEASE-UNKNOWN" not in [p.id for p in report.problems]
    fits = machine(database, os="linux", arch="x86_64", driver="470.82.01", gpus=("NVIDIA A100-SXM4-40GB",),
                   python="3.10")
    assert [i for i, _, w in ids(database, text, fits) if w == "line 2"] == ["CHK-TARGET-SYSTEM-CUDA"]
    assert ("CHK-TARGET-PYTHON", "error", "line 2") in ids(
        database, text, machine(database, os="linux", arch="x86_64", driver="470.82.01",
                                gpus=("NVIDIA A100-SXM4-40GB",), python="3.7"))  # 0.4.x: 3.8-3.11
