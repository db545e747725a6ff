"""The format readers: what each takes from a file, where it says a field is, and that no input makes one crash."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envpin.check import check_text
from envpin.check.formats import READERS, kind_of, read_contents
from envpin.readers.environment_yml import parse_match_spec
from envpin.readers.model import MalformedFile
from envpin.readers.requirements import logical_lines


def test_requirement_lines_join_continuations_and_drop_comments_as_pip_does():
    text = "# header\ntorch==2.5.1+cu124 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n  # via x\nnumpy  # pinned\n"
    assert logical_lines(text) == [("line 2", "torch==2.5.1+cu124     --hash=sha256:aa     --hash=sha256:bb"),
                                   ("line 6", "numpy")]


@pytest.mark.parametrize("line", ["-ihttps://download.pytorch.org/whl/cu124", "-i https://download.pytorch.org/whl/cu124",
                                  "--index-url=https://download.pytorch.org/whl/cu124",
                                  "--index-url https://download.pytorch.org/whl/cu124"])
def test_index_options_are_read_in_every_spelling_pip_accepts(line, database):
    text = f"{line}\ntorch==2.5.1+cu124\n"
    report = check_text("requirements.txt", text, load_database=lambda: database)
    assert report.problems == ()


def test_markers_keep_per_platform_pins_apart(database):
    text = ("--extra-index-url https://download.pytorch.org/whl/cu124\n"
            "torch==2.5.1+cu124; sys_platform == 'linux'\n"
            "torch==2.5.1; sys_platform == 'darwin'\n"
            "torchvision==0.20.1+cu124; sys_platform == 'linux'\n"
            "torchvision==0.20.1; sys_platform == 'darwin'\n")
    report = check_text("requirements.txt", text, load_database=lambda: database)
    assert report.problems == ()


def test_two_exact_pins_of_one_package_are_a_duplicate(database):
    report = check_text("requirements.txt", "numpy==1.26.4\nrequests\nnumpy==2.1.2\n", load_database=lambda: database)
    assert [(p.id, p.where) for p in report.problems] == [("CHK-DUPLICATE-PACKAGE", "line 3")]


def test_a_plain_requirements_file_never_loads_the_database():
    def refuse():
        raise AssertionError("the database was loaded for a file that pins no GPU package")

    assert check_text("requirements.txt", "requests==2.31.0\nrich\n", load_database=refuse).problems == ()


@pytest.mark.parametrize("spec, parsed", [
    ("pytorch", ("pytorch", None, None)),
    ("pytorch=2.1.0", ("pytorch", "2.1.0", None)),
    ("pytorch==2.1.0", ("pytorch", "2.1.0", None)),
    ("pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0", ("pytorch", "2.1.0", "py3.10_cuda12.1_cudnn8.9.2_0")),
    ("pytorch 2.1.0 py3.10_cuda12.1_cudnn8.9.2_0", ("pytorch", "2.1.0", "py3.10_cuda12.1_cudnn8.9.2_0")),
    ("pytorch::pytorch>=1.13", ("pytorch", None, None)),
    ("nvidia/label/cuda-12.0.1::cuda-toolkit = 11.8", ("cuda-toolkit", "11.8", None)),
    ("pytorch::pytorch-mutex = *=*cuda*", ("pytorch-mutex", None, "*cuda*")),
    ("pytorch[version='2.1.0', build=*cuda*]", ("pytorch", "2.1.0", "*cuda*")),
    ("python=3.10.*", ("python", "3.10", None)),
])
def test_conda_match_specs(spec, parsed):
    assert parse_match_spec(spec) == parsed


@pytest.mark.parametrize("name, text, kind", [
    ("requirements/base.txt", "numpy\n", "requirements"),
    ("environment-gpu.yaml", "dependencies: []\n", "environment.yml"),
    ("conda-lock.yml", "version: 1\n", "conda-lock"),
    ("locks/linux.yml", "version: 1\nmetadata: {}\npackage: []\n", "conda-lock"),
    ("conda-linux-64.lock", "@EXPLICIT\n", "explicit"),
    ("spec-file.txt", "# platform: linux-64\n@EXPLICIT\nhttps://x/y-1-0.conda\n", "explicit"),
    ("pylock.toml", "", "pylock"),
    ("pylock.dev.toml", "", "pylock"),
    ("uv.lock", "", "uv.lock"),
    ("poetry.lock", "", "poetry.lock"),
    ("Pipfile.lock", "", "Pipfile.lock"),
    ("yarn.lock", "", None),
    ("pylock.a.b.toml", "", None),
])
def test_kind_from_name_and_first_lines(name, text, kind):
    assert kind_of(name, text) == kind


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(READERS)), text=st.text(max_size=400))
def test_no_text_makes_a_reader_raise_anything_but_malformed_file(kind, text):
    try:
        read_contents(kind, text)
    except MalformedFile:
        pass


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["pylock", "uv.lock", "conda-lock", "environment.yml"]),
       key=st.sampled_from(["packages", "package", "dependencies", "metadata", "version", "conflicts"]),
       value=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                              st.sampled_from(["name", "version", "wheels", "hashes", "hash", "source", "url", "pip",
                                               "sdist", "marker", "platform", "manager", "registry", "extra"]),
                              inner, max_size=4),
                          max_leaves=16))
def test_documents_of_any_shape_are_problems_not_crashes(kind, key, value):
    """What YAML or TOML can hold, in any arrangement, read as each format: a Contents or MalformedFile."""
    reader = importlib.import_module(READERS[kind])
    try:
        reader.read({key: value, "lock-version": "1.0", "created-by": "x"})
    except MalformedFile:
        pass


def test_a_marker_after_an_option_line_is_the_warning_that_pip_ignores_it(database):
    # pip reads an option line with optparse and drops the words that are no option: the index holds everywhere
    text = '--extra-index-url https://download.pytorch.org/whl/cu121 ; sys_platform == "windows"\nsix\n'
    report = check_text("requirements.txt", text, load_database=lambda: database)
    assert [(p.id, p.severity, p.where) for p in report.problems] == [("CHK-OPTION-MARKER-IGNORED", "warning", "line 1")]
    assert '; sys_platform == "windows"' in report.problems[0].message
    assert read_contents("requirements", text).indexes[0].url == "https://download.pytorch.org/whl/cu121"


def test_setup_py_is_parsed_never_run_and_what_only_running_it_gives_is_said(database, tmp_path):
    literal = ("from setuptools import setup\nsetup(name='x', install_requires=['torch==2.5.1', 'numpy'],\n"
               "      extras_require={'jax': ['jax[cuda12]==0.4.30']})\n")
    assert kind_of("setup.py", literal) == "setup.py"
    contents = read_contents("setup.py", literal)
    assert [(p.name, p.where, sorted(p.scope)) for p in contents.pins] == [
        ("torch", "install_requires[0]", []), ("numpy", "install_requires[1]", []),
        ("jax", "extras_require.jax[0]", ["extra:jax"])]
    marker = tmp_path / "ran"
    computed = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nfrom setuptools import setup\n" \
               "setup(install_requires=open('requirements.txt').read().splitlines())\n"
    report = check_text("setup.py", computed, load_database=lambda: database)
    assert [(p.id, p.severity) for p in report.problems] == [("CHK-SETUP-PY-COMPUTED", "warning")]
    assert not marker.exists()
    with pytest.raises(MalformedFile):
        read_contents("setup.py", "setup(\n")


def test_setup_cfg_install_requires_and_every_extra_are_checked():
    text = "[options]\ninstall_requires =\n    torch==2.5.1\n    # a comment\n    numpy\n" \
           "[options.extras_require]\ngpu =\n    jax[cuda12]==0.4.30\n"
    assert kind_of("setup.cfg", text) == "setup.cfg"
    contents = read_contents("setup.cfg", text)
    assert [(p.name, p.where) for p in contents.pins] == [
        ("torch", "options.install_requires[0]"), ("numpy", "options.install_requires[1]"),
        ("jax", "options.extras_require.gpu[0]")]


def test_cuda_libraries_beside_a_torch_that_bundles_its_own_are_unused_not_a_clash(database):
    # torch 2.0.1+cu118 of the PyTorch index carries cuDNN/cuBLAS/cudart in torch/lib (no Requires-Dist on
    # nvidia-*): a CUDA 12 library beside it is never loaded, so it is a warning to remove it
    bundled = ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.0.1+cu118\n"
               "nvidia-cudnn-cu12==8.9.2.26\n")
    [found] = [p for p in check_text("requirements.txt", bundled, load_database=lambda: database).problems
               if p.id == "CHK-CUDA-MAJOR-MISMATCH"]  # (and NUMPY-ABI: 2.0.1 was built against NumPy 1.x)
    assert (found.id, found.severity, found.where) == ("CHK-CUDA-MAJOR-MISMATCH", "warning", "line 3")
    assert "torch/lib" in found.message and "remove it" in found.fix
    # torch 2.1.0+cu121 loads NVIDIA's pip packages (its wheel requires nvidia-*-cu12): a CUDA 11 one is a clash
    loading = ("--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.1.0+cu121\n"
               "nvidia-cudnn-cu11==8.5.0.96\n")
    problems = check_text("requirements.txt", loading, load_database=lambda: database).problems
    assert [(p.id, p.severity, p.where) for p in problems if p.id == "CHK-CUDA-MAJOR-MISMATCH"] == [
        ("CHK-CUDA-MAJOR-MISMATCH", "error", "line 3")]


# `conda list --export`, as wgcban/ChangeFormer commits it as requirements.txt (shortened)
CONDA_SPEC_LIST = """# This file may be used to create an environment using:
# $ conda create --name <env> --file <this file>
# platform: linux-64
_libgcc_mutex=0.1=main
cudatoolkit=10.2.89=hfd86e86_1
libgcc-ng=9.3.0=h5101ec6_17
python=3.8.0=h0371630_2
pytorch=1.10.1=py3.8_cuda10.2_cudnn7.6.5_0
tensorboardx=2.5=pypi_0
torchvision=0.11.2=py38_cu102
"""


def test_a_conda_spec_list_named_requirements_txt_is_conda_s_and_judged_as_conda_pins(database):
    from envpin.check import check_text  # noqa: PLC0415 - as the command calls it
    from envpin.check.formats import kind_of  # noqa: PLC0415 - as above
    from envpin.check.targets import configured_target  # noqa: PLC0415 - as above
    from envpin.machine.spec import NamedTarget, TargetSpec  # noqa: PLC0415 - as above

    assert kind_of("requirements.txt", CONDA_SPEC_LIST) == "conda-specs"
    assert kind_of("requirements.txt", "numpy==1.26\ntorch>=2\n") == "requirements"
    assert kind_of("requirements.txt", "numpy=1.26\npandas=2.1\ntqdm=4.*\n") == "conda-specs"  # hand-written
    windows = configured_target(NamedTarget("w", TargetSpec(detect=False, os="windows", arch="x86_64", driver="472.12",
                                                            gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.9")), database)
    report = check_text("requirements.txt", CONDA_SPEC_LIST, load_database=lambda: database, targets=[windows])
    found = {(p.id, p.severity, p.where) for p in report.problems}
    assert ("CHK-STRUCTURE", "warning", "line 1") in found  # pip refuses it: said once, not per line
    assert ("CHK-TARGET-PLATFORM", "error", "line 1") in found  # a linux-64 list cannot be created on Windows
    # pytorch 1.10.1's cuda10.2 build is judged like pip's 1.10.1+cu102, whose arch list has the 1080 Ti's sm_61
    # and whose CUDA 10.2 driver 472 runs: nothing to say of the line
    assert not any(where == "line 8" for _, _, where in found)
    assert not any(i == "CHK-REQUIREMENT-INVALID" for i, _, _ in found)


def test_solve_project_reads_a_conda_spec_list_as_that_environments_export(tmp_path):
    from envpin.project.collect import collect_project  # noqa: PLC0415 - the solve's project reader

    (tmp_path / "requirements.txt").write_text(CONDA_SPEC_LIST, encoding="utf-8")
    project = collect_project(tmp_path)
    assert [r.text for r in project.requirements] == ["pytorch==1.10.1.*", "torchvision==0.11.2.*", "tensorboardx==2.5"]
    assert any("conda spec list" in n for n in project.notes)


def test_cuda_libraries_of_another_major_beside_pypis_torch_which_loads_them_are_a_clash(database):
    # PyPI's Linux torch 2.1.0 wheel requires nvidia-*-cu12 (its METADATA) and loads them from site-packages
    problems = check_text("requirements.txt", "torch==2.1.0\nnvidia-cudnn-cu11==8.5.0.96\n",
                          load_database=lambda: database).problems
    [clash] = [p for p in problems if p.id == "CHK-CUDA-MAJOR-MISMATCH"]
    assert (clash.severity, clash.where) == ("error", "line 2") and "from PyPI is, on Linux, a CUDA 12" in clash.message
    # its own CUDA 12 libraries beside it are no clash
    assert "CHK-CUDA-MAJOR-MISMATCH" not in [p.id for p in check_text(
        "requirements.txt", "torch==2.1.0\nnvidia-cudnn-cu12==8.9.2.26\n", load_database=lambda: database).problems]
