"""`check` reads pyproject.toml (`[project]`, extras, PEP 735 groups, uv's indexes and sources) and pixi
manifests through the manifest reader `solve --project` uses."""

from __future__ import annotations

from envpin.check import check_text
from envpin.check.formats import kind_of
from envpin.check.targets import configured_target
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.project.collect import collect_project, for_platform
from envpin.readers.project_files import read_manifest, read_pyproject

RTX_5090: dict = dict(os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",), python="3.12")

# uv's documented layout (docs.astral.sh/uv/guides/integration/pytorch/, "Configuring accelerators with optional
# dependencies"), with cu126 where the guide has cu128
UV_EXTRAS = """
[project]
name = "project"
version = "0.1.0"
requires-python = ">=3.12"
dependencies = []

[project.optional-dependencies]
cpu = ["torch>=2.7.0", "torchvision>=0.22.0"]
cu126 = ["torch>=2.7.0", "torchvision>=0.22.0"]

[dependency-groups]
dev = ["pytest>=8"]

[tool.uv]
conflicts = [[{ extra = "cpu" }, { extra = "cu126" }]]

[tool.uv.sources]
torch = [{ index = "pytorch-cpu", extra = "cpu" }, { index = "pytorch-cu126", extra = "cu126" }]
torchvision = [{ index = "pytorch-cpu", extra = "cpu" }, { index = "pytorch-cu126", extra = "cu126" }]

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu126"
url = "https://download.pytorch.org/whl/cu126"
explicit = true
"""

PIXI = """
[workspace]
name = "demo"
channels = ["conda-forge"]
platforms = ["linux-64", "win-64"]

[dependencies]
python = "3.11.*"

[feature.cuda.system-requirements]
cuda = "12.0"

[feature.cuda.dependencies]
pytorch-gpu = "2.4.*"

[pypi-dependencies]
numpy = ">=1.26"

[environments]
cuda = ["cuda"]
"""


def problems(database, path: str, text: str, **target):
    targets = [configured_target(NamedTarget("t", TargetSpec(detect=False, **target)), database)] if target else []
    return check_text(path, text, load_database=lambda: database, targets=targets).problems


def test_pyproject_and_pixi_manifests_are_kinds_check_reads():
    assert kind_of("pyproject.toml", "") == "pyproject.toml"
    assert kind_of("sub/pixi.toml", "") == "pixi.toml"


def test_each_uv_extra_is_judged_with_its_own_index(database):
    found = problems(database, "pyproject.toml", UV_EXTRAS, **RTX_5090)
    by_where = {p.where: p for p in found}
    gpu = by_where["project.optional-dependencies.cu126[0] (tool.uv.sources.torch[1])"]
    assert gpu.id == "CHK-TARGET-GPU" and "+cu126" in gpu.message and "sm_120" in gpu.message
    # the cpu extra's torch comes from PyTorch's cpu index: a CPU build by name, no missed GPU
    assert "project.optional-dependencies.cpu[0] (tool.uv.sources.torch[0])" not in by_where


def test_a_pyproject_without_gpu_frameworks_has_no_problems(database):
    assert problems(database, "pyproject.toml", '[project]\nname = "x"\ndependencies = ["numpy"]\n') == ()


def test_bad_toml_is_a_malformed_file(database):
    report = check_text("pyproject.toml", "[project\n", load_database=lambda: database)
    assert report.unreadable and report.problems[0].id == "CHK-FILE-MALFORMED"


def test_pixi_system_requirements_cuda_needs_a_driver_that_runs_it(database):
    found = problems(database, "pixi.toml", PIXI, **RTX_5090 | {"driver": "470.82.01", "python": "3.11"})
    assert [(p.id, p.where) for p in found] == [("CHK-TARGET-DRIVER", "feature.cuda.system-requirements.cuda")]


def test_pixi_conda_forge_pytorch_gpu_has_no_windows_build_before_2_5(database):
    found = problems(database, "pixi.toml", PIXI, os="windows", arch="x86_64", driver="560.94",
                     gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.11")
    assert [(p.id, p.where) for p in found] == [("CHK-TARGET-PLATFORM", "feature.cuda.dependencies.pytorch-gpu")]


def test_the_manifest_reader_keeps_every_extra_group_and_feature_apart():
    manifest = read_manifest(UV_EXTRAS, "pyproject.toml")
    torches = [e for e in manifest.entries if e.text.startswith("torch>")]
    assert {(e.scope, e.index) for e in torches} == {
        (("extra:cpu",), "https://download.pytorch.org/whl/cpu"),
        (("extra:cu126",), "https://download.pytorch.org/whl/cu126")}
    assert ("group:dev",) in {e.scope for e in manifest.entries}
    pixi = read_manifest(PIXI, "pixi.toml")
    assert pixi.channels == ("conda-forge",)
    assert {(e.text, e.manager, e.scope) for e in pixi.entries} >= {
        ("pytorch-gpu 2.4.*", "conda", ("feature:cuda",)), ("numpy>=1.26", "pip", ()), ("__cuda 12.0", "conda", ("feature:cuda",))}


def test_solve_project_reads_the_same_manifest_for_the_extras_asked_for():
    entries = read_pyproject(UV_EXTRAS, "pyproject.toml", ("cu126",), ("dev",))
    assert sorted(r.text for r in entries.requirements) == ["pytest>=8", "torch>=2.7.0", "torchvision>=0.22.0"]
    assert any("replaced by the index of the solved build" in n for n in entries.notes)
    pixi = read_pyproject(PIXI, "pixi.toml", (), ())
    assert [r.text for r in pixi.requirements] == ["numpy>=1.26"] and pixi.python == "3.11"
    assert any("pixi features cuda are not solved" in n for n in pixi.notes)


def test_solve_project_joins_a_pixi_target_table_once_the_target_is_known(tmp_path):
    (tmp_path / "pixi.toml").write_text(
        '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64", "win-64"]\n\n'
        '[target.linux-64.pypi-dependencies]\ntorch = { version = ">=2.5", index = "https://download.pytorch.org/whl/cu124" }\n'
        '[target.win-64.pypi-dependencies]\ntorch = { version = ">=2.5", index = "https://download.pytorch.org/whl/cpu" }\n',
        encoding="utf-8")
    project = collect_project(tmp_path)
    assert project.requirements == () and len(project.by_platform) == 2
    linux = for_platform(project, "linux-64")
    assert [r.text for r in linux.requirements] == ["torch>=2.5"]
    assert any("is for win-64, not linux-64; left out" in note for note in linux.notes)


# fish-speech's layout: torch in `[project]` dependencies and again in each accelerator extra, sources per extra
BASE_AND_EXTRAS = """
[project]
name = "demo"
version = "0.1"
dependencies = ["torch==2.8.0"]

[project.optional-dependencies]
cpu = ["torch==2.8.0"]
cu126 = ["torch==2.8.0"]

[tool.uv.sources]
torch = [{ index = "pytorch-cpu", extra = "cpu" }, { index = "pytorch-cu126", extra = "cu126" }]

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu126"
url = "https://download.pytorch.org/whl/cu126"
explicit = true
"""

# docling-serve's layout: one dependency group per accelerator, conflicting, the CUDA sources for Linux only, and
# a `pypi` group bound to PyPI's own index, installed by default
GROUPS_WITH_MARKERS = """
[project]
name = "demo"
version = "0.1"

[dependency-groups]
pypi = ["torch>=2.7.1"]
cu126 = ["torch>=2.7.1"]
cu130 = ["torch>=2.7.1"]

[tool.uv]
default-groups = ["pypi"]
conflicts = [[{ group = "pypi" }, { group = "cu126" }, { group = "cu130" }]]

[tool.uv.sources]
torch = [
  { index = "pytorch-pypi", group = "pypi" },
  { index = "pytorch-cu126", group = "cu126", marker = "sys_platform == 'linux'" },
  { index = "pytorch-cu130", group = "cu130", marker = "sys_platform == 'linux'" },
]

[[tool.uv.index]]
name = "pytorch-pypi"
url = "https://pypi.org/simple"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu126"
url = "https://download.pytorch.org/whl/cu126"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu130"
url = "https://download.pytorch.org/whl/cu130"
explicit = true
"""


def test_a_source_for_an_extra_applies_to_that_extras_lines_only(database):
    # uv lowers a source with `extra = …` for the requirements of that extra alone: `[project]`'s torch is PyPI's
    torches = [(e.where, e.scope, e.index) for e in read_manifest(BASE_AND_EXTRAS, "pyproject.toml").entries]
    assert ("project.dependencies[0]", (), None) in torches
    assert not any(where.startswith("project.dependencies") and index for where, _, index in torches)
    found = {(p.id, p.where) for p in problems(database, "pyproject.toml", BASE_AND_EXTRAS, **RTX_5090)}
    assert found == {("CHK-TARGET-GPU", "project.optional-dependencies.cu126[0] (tool.uv.sources.torch[1])")}
    entries = read_pyproject(BASE_AND_EXTRAS, "pyproject.toml", (), ())
    assert [r.text for r in entries.requirements] == ["torch==2.8.0"]  # `uv sync` without extras: PyPI's torch


def test_where_the_sources_markers_leave_a_machine_out_the_default_index_serves_it(database):
    manifest = read_manifest(GROUPS_WITH_MARKERS, "pyproject.toml")
    cu126 = [(e.scope, e.index) for e in manifest.entries if e.where.startswith("dependency-groups.cu126")]
    assert cu126 == [(("group:cu126", "sys_platform == 'linux'"), "https://download.pytorch.org/whl/cu126"),
                     (("group:cu126", 'sys_platform != "linux"'), None)]
    windows = dict(os="windows", arch="x86_64", driver="560.94", gpus=("NVIDIA GeForce RTX 4090",), python="3.12")
    found = {(p.id, p.where) for p in problems(database, "pyproject.toml", GROUPS_WITH_MARKERS, **windows)}
    # on Windows each group's torch is PyPI's, a CPU build there; the pypi group's index is PyPI itself
    assert found == {("CHK-TARGET-CPU-BUILD", "dependency-groups.pypi[0] (tool.uv.sources.torch[0])"),
                     ("CHK-TARGET-CPU-BUILD", "dependency-groups.cu126[0]"),
                     ("CHK-TARGET-CPU-BUILD", "dependency-groups.cu130[0]")}


def test_conflicting_groups_that_share_a_marker_never_meet(database):
    found = {p.id for p in problems(database, "pyproject.toml", GROUPS_WITH_MARKERS, **RTX_5090)}
    assert "CHK-CUDA-MAJOR-MISMATCH" not in found  # cu126 and cu130 are alternatives, not one environment


def test_solve_project_takes_uvs_default_groups():
    entries = read_pyproject(GROUPS_WITH_MARKERS, "pyproject.toml", (), ())
    assert [r.text for r in entries.requirements] == ["torch>=2.7.1"]
    assert any("uv installs by default (pypi)" in n for n in entries.notes)
    # without `default-groups`, uv installs the `dev` group
    dev = read_pyproject('[project]\nname = "x"\n\n[dependency-groups]\ndev = ["torch"]\nlint = ["ruff"]\n',
                         "pyproject.toml", (), ())
    assert [r.text for r in dev.requirements] == ["torch"]


# pixi installs the Python its manifest asks for (conda-forge's python), whatever the machine has
PIXI_PYTHON = """
[workspace]
channels = ["conda-forge"]
platforms = ["linux-64"]

[dependencies]
python = "PYTHON"
pytorch-gpu = "*"
"""


def test_a_pixi_python_that_leaves_out_the_targets_python_is_the_python_mismatch(database):
    target = configured_target(NamedTarget("t", TargetSpec(detect=False, **RTX_5090)), database)
    for python, found in (("3.10.*", True), (">=3.11,<3.13", False), (">=3.13.13,<4", True)):
        report = check_text("pixi.toml", PIXI_PYTHON.replace("PYTHON", python), load_database=lambda: database,
                            targets=[target])
        problems = [(p.id, p.where) for p in report.problems if p.id == "CHK-TARGET-PYTHON"]
        assert problems == ([("CHK-TARGET-PYTHON", "dependencies.python")] if found else []), python
    # in a pyproject's [tool.pixi] too
    pyproject = "[project]\nname = 'p'\n[tool.pixi.workspace]\nchannels = ['conda-forge']\nplatforms = ['linux-64']\n" \
                "[tool.pixi.dependencies]\npython = '3.10.*'\n"
    report = check_text("pyproject.toml", pyproject, load_database=lambda: database, targets=[target])
    assert [p.where for p in report.problems if p.id == "CHK-TARGET-PYTHON"] == ["tool.pixi.dependencies.python"]


def test_solve_refuses_a_python_the_pixi_manifest_leaves_out_and_takes_one_it_allows(tmp_path, capsys):
    from envpin.cli import main  # noqa: PLC0415 - the command, as users run it

    (tmp_path / "pixi.toml").write_text(PIXI_PYTHON.replace("PYTHON", "3.10.*"), encoding="utf-8")
    flags = ["--os", "linux", "--arch", "x86_64", "--driver", "570.86.10", "--gpu", "NVIDIA GeForce RTX 5090",
             "--format", "requirements.txt"]
    assert main(["solve", "--project", str(tmp_path), *flags, "--python", "3.12"]) == 1
    out = capsys.readouterr().out
    assert "no solution (python-unsupported)" in out and "--python 3.10" in out
    assert main(["solve", "--project", str(tmp_path), *flags, "--python", "3.10"]) == 0
    assert any(line.startswith("torch==") for line in capsys.readouterr().out.splitlines())


NEEDS_PYTHON_3_10 = '[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = ["torch==2.7.1"]\n'


def test_a_pyproject_whose_requires_python_leaves_out_the_targets_python_is_an_error(database):
    windows = dict(os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",), python="3.9")
    found = {(p.id, p.where) for p in problems(database, "pyproject.toml", NEEDS_PYTHON_3_10, **windows)}
    assert ("CHK-TARGET-PYTHON", "project.requires-python") in found
    assert ("CHK-TARGET-PYTHON", "project.requires-python") not in {
        (p.id, p.where) for p in problems(database, "pyproject.toml", NEEDS_PYTHON_3_10, **RTX_5090)}


def test_solve_project_refuses_a_python_that_requires_python_leaves_out(tmp_path, capsys):
    from envpin.cli import main  # noqa: PLC0415 - the command, as users run it

    (tmp_path / "pyproject.toml").write_text(NEEDS_PYTHON_3_10, encoding="utf-8")
    flags = ["--os", "windows", "--arch", "x86_64", "--driver", "472.12", "--gpu", "NVIDIA GeForce GTX 1080 Ti"]
    assert main(["solve", "--project", str(tmp_path), *flags, "--python", "3.9"]) == 1
    out = capsys.readouterr().out
    assert "no solution (python-unsupported)" in out and "requires-python >=3.10 leaves out Python 3.9" in out
    assert main(["solve", "--project", str(tmp_path), *flags, "--python", "3.10", "--format", "requirements.txt"]) == 0
    assert "torch==2.7.1+cu118" in capsys.readouterr().out


# remsky/Kokoro-FastAPI's pyproject.toml@26eec068d8ce6f559afef83f68933127ac38e315, cut to the
# gpu extra: one line per machine, each with the source whose marker is its own (uv's "multiple sources",
# docs.astral.sh/uv/concepts/projects/dependencies/#multiple-sources)
MARKER_SPLIT_SOURCES = """
[project]
name = "project"
version = "0.1.0"
dependencies = []

[project.optional-dependencies]
gpu = [
    "torch==2.8.0+cu126 ; platform_machine == 'x86_64'",
    "torch==2.8.0+cu129 ; platform_machine == 'aarch64'",
]

[tool.uv.sources]
torch = [
    { index = "pytorch-cu126", extra = "gpu", marker = "platform_machine == 'x86_64'" },
    { index = "pytorch-cu129", extra = "gpu", marker = "platform_machine == 'aarch64'" },
]

[[tool.uv.index]]
name = "pytorch-cu126"
url = "https://download.pytorch.org/whl/cu126"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu129"
url = "https://download.pytorch.org/whl/cu129"
explicit = true
"""


def test_a_line_is_bound_only_to_the_sources_whose_marker_meets_its_own(database):
    entries = [(e.where, e.index) for e in read_manifest(MARKER_SPLIT_SOURCES, "pyproject.toml").entries]
    assert entries == [
        ("project.optional-dependencies.gpu[0] (tool.uv.sources.torch[0])", "https://download.pytorch.org/whl/cu126"),
        ("project.optional-dependencies.gpu[1] (tool.uv.sources.torch[1])", "https://download.pytorch.org/whl/cu129"),
    ]  # no line left to the default index: the sources cover every machine each line is installed on
    found = {(p.id, p.where) for p in problems(database, "pyproject.toml", MARKER_SPLIT_SOURCES, **RTX_5090)}
    assert found == {("CHK-TARGET-GPU", "project.optional-dependencies.gpu[0] (tool.uv.sources.torch[0])")}
