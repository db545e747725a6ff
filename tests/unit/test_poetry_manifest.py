"""A poetry project's own tables ([tool.poetry.dependencies], its extras and groups) are read as `poetry install`
reads them: deezer/spleeter's pyproject.toml has no [project] table, only poetry's, and was once invisible to
check and solve ("no GPU framework among the requirements")."""

from __future__ import annotations

import pytest

from envpin.check import check_text
from envpin.check.targets import configured_target
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.poetry import poetry_specifier
from envpin.readers.project_files import read_manifest, read_pyproject


@pytest.mark.parametrize("constraint, specifier", [
    ("2.12.1", "==2.12.1"),  # a bare version is exactly that release (poetry's dependency specification)
    ("^1.2.3", ">=1.2.3,<2"), ("^0.2.3", ">=0.2.3,<0.3"), ("^0.0.3", ">=0.0.3,<0.0.4"), ("^0", ">=0,<1"),
    ("~1.2.3", ">=1.2.3,<1.3"), ("~1", ">=1,<2"), ("*", ""), ("1.2.*", "==1.2.*"),
    (">=3.8,<3.12", ">=3.8,<3.12"), (">= 2.0, < 3.0", ">=2.0,<3.0"), ("<2.0.0", "<2.0.0"),
    ("^1.0 || ^2.0", None), ("latest", None),
])
def test_a_poetry_constraint_is_its_pep_440_specifier(constraint, specifier):
    assert poetry_specifier(constraint) == specifier


PROJECT = """[tool.poetry]
name = "demo"

[tool.poetry.dependencies]
python = ">=3.8,<3.12"
tensorflow = "2.12.1"
numpy = {version = "<2.0.0", python = ">=3.9"}
musdb = {version = "^0.4.0", optional = true}
local = {path = "../local"}

[tool.poetry.extras]
evaluation = ["musdb"]

[tool.poetry.group.dev.dependencies]
pytest = "^6.2.1"
"""


def test_the_dependencies_extras_and_groups_with_their_places():
    manifest = read_manifest(PROJECT, "pyproject.toml")
    found = {(e.text, e.where, e.scope) for e in manifest.entries}
    assert found == {
        ("tensorflow==2.12.1", "tool.poetry.dependencies.tensorflow", ()),
        ('numpy<2.0.0; (python_version >= "3.9")', "tool.poetry.dependencies.numpy", ()),
        ("musdb>=0.4.0,<0.5", "tool.poetry.dependencies.musdb", ("extra:evaluation",)),
        ("pytest>=6.2.1,<7", "tool.poetry.group.dev.dependencies.pytest", ("group:dev",)),
    }
    assert manifest.requires_python == ">=3.8,<3.12"
    assert manifest.requires_python_where == "tool.poetry.dependencies.python"
    assert any("tool.poetry.dependencies.local: not read" in note for note in manifest.notes)


def test_a_solve_reads_the_poetry_dependencies():
    entries = read_pyproject(PROJECT, "pyproject.toml", (), ())
    assert [r.name for r in entries.requirements] == ["tensorflow", "numpy"]
    assert entries.requires_python == ">=3.8,<3.12"


def test_check_judges_the_poetry_python_and_pins(database):
    spec = TargetSpec(os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",), python="3.12",
                      detect=False)
    target = configured_target(NamedTarget("rtx", spec), database)
    report = check_text("pyproject.toml", PROJECT, load_database=lambda: database, kind="pyproject.toml", targets=[target])
    assert sorted(f"{p.id}@{p.where}" for p in report.problems) == [
        "CHK-TARGET-PYTHON@tool.poetry.dependencies.python", "CHK-TARGET-PYTHON@tool.poetry.dependencies.tensorflow"]


def test_beside_project_dependencies_poetrys_own_table_is_not_read_twice():
    """Poetry 2 installs `[project] dependencies`; its `[tool.poetry.dependencies]` only refines them."""
    text = '[project]\nname = "demo"\ndependencies = ["torch>=2.4"]\n\n[tool.poetry.dependencies]\ntorch = {source = "pytorch"}\n'
    assert [(e.text, e.where) for e in read_manifest(text, "pyproject.toml").entries] == [
        ("torch>=2.4", "project.dependencies[0]")]
