"""The pyproject.toml a uv.lock is locked from (envpin.lock.uvlock, pure): the project's own with the plan's pins in
place of its GPU lines, each bound to its index, the default index, and the target as uv's environments; and the
check that the lock uv wrote holds the pins."""

from __future__ import annotations

import re

import pytest

from envpin.base import _toml
from envpin.base.errors import EnvpinInputError
from envpin.lock.indexes import index_plan
from envpin.lock.uvlock import check_lock, check_uv_project, lock_project, replaced_lines
from envpin.project.collect import collect_project
from envpin.resolver.plan import PinnedPackage

CU118 = "https://download.pytorch.org/whl/cu118"
PINS = (PinnedPackage("torch", "2.0.1+cu118", CU118), PinnedPackage("numpy", "<2", None, bound=True))
TARGET = "sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '3.10'"

PYPROJECT = """[project]
name = "app"
version = "0"
dependencies = ["requests>=2", "torch>=2", "scipy"]

[project.optional-dependencies]
cu118 = ["torch", "einops"]
cpu = ["torch"]

[dependency-groups]
dev = ["pytest"]

[tool.uv]
conflicts = [[{ extra = "cu118" }, { extra = "cpu" }]]

[tool.uv.sources]
torch = [{ index = "pytorch-cpu", extra = "cpu" }, { index = "pytorch-cu118", extra = "cu118" }]
einops = { git = "https://github.com/arogozhnikov/einops" }

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu118"
url = "https://download.pytorch.org/whl/cu118/"
explicit = true
"""


def written(tmp_path, text: str = PYPROJECT, extras: tuple[str, ...] = ("cu118",), default: str | None = None) -> dict:
    (tmp_path / "pyproject.toml").write_text(text)
    project = collect_project(tmp_path, extras=extras)
    return lock_project(_toml.loads(text), PINS, "linux-x86_64", "3.10", replaced_lines(project), default)


def test_the_gpu_lines_the_solve_read_become_the_pins_where_the_first_was(tmp_path):
    document = written(tmp_path)
    assert document["project"]["dependencies"] == ["requests>=2", "torch==2.0.1+cu118", "numpy<2", "scipy"]
    # the extra asked for loses its torch line, which the pins replace; the extra not asked for keeps its own
    assert document["project"]["optional-dependencies"] == {"cu118": ["einops"], "cpu": ["torch"]}
    assert document["dependency-groups"] == {"dev": ["pytest"]}
    assert document["tool"]["uv"]["conflicts"] == [[{"extra": "cu118"}, {"extra": "cpu"}]]


def test_torch_is_bound_to_the_projects_own_index_of_that_url_and_the_target_is_uvs_environment(tmp_path):
    uv = written(tmp_path)["tool"]["uv"]
    # one source for every torch line (the extras' ones replaced); other sources kept as written
    assert uv["sources"] == {"einops": {"git": "https://github.com/arogozhnikov/einops"},
                             "torch": {"index": "pytorch-cu118"}}
    assert [i["name"] for i in uv["index"]] == ["pytorch-cpu", "pytorch-cu118"]  # no second entry for the same URL
    assert uv["environments"] == [TARGET] and uv["required-environments"] == [TARGET]


def test_a_project_without_the_index_gets_an_explicit_one_and_the_default_index_asked_for(tmp_path):
    text = '[project]\nname = "app"\nversion = "0"\ndependencies = ["tensorflow", "torch"]\n\n' \
           '[[tool.uv.index]]\nname = "whl-cu118"\nurl = "https://mirror.example/other"\ndefault = true\n'
    uv = written(tmp_path, text, extras=(), default="https://mirror.example/simple/")["tool"]["uv"]
    assert uv["index"] == [
        {"name": "whl-cu118", "url": "https://mirror.example/other"},  # not the default any more, and its name taken
        {"name": "whl-cu118-2", "url": CU118, "explicit": True},
        {"name": "default", "url": "https://mirror.example/simple", "default": True}]
    assert uv["sources"] == {"torch": {"index": "whl-cu118-2"}}


def test_the_written_pyproject_is_its_own_fixed_point(tmp_path):
    """Moved into the project, it is read again and changes nothing: a second run writes the uv.lock in place."""
    import tomli_w  # noqa: PLC0415 - as the file is written

    first = written(tmp_path)
    again = written(tmp_path, tomli_w.dumps(first))
    assert again == first


@pytest.mark.parametrize("text, says", [
    ('[tool.uv]\nenvironments = []\n', "no [project] table with a name"),
    ('[project]\nname = "a"\ndynamic = ["dependencies"]\n', "its dependencies are dynamic"),
    ('[project]\nname = "a"\n[tool.uv.workspace]\nmembers = ["lib"]\n', "a uv workspace is locked with its members"),
    ('[project]\nname = "a"\n[tool.uv.sources]\nlib = { path = "../lib" }\n', "tool.uv.sources.lib is a local source"),
    ('[project]\nname = "a"\ndependencies = "torch"\n', "project.dependencies is not a list"),
    ('[project]\nname = "a"\n[tool]\nuv = 5\n', "tool.uv is not a table"),
])
def test_what_a_uv_lock_written_elsewhere_cannot_hold_is_a_one_line_error(text, says):
    with pytest.raises(EnvpinInputError, match=re.escape(says)):
        check_uv_project(_toml.loads(text), "pyproject.toml")


LOCK = """version = 1
[[package]]
name = "torch"
version = "2.0.1+cu118"
source = { registry = "%s" }
[[package]]
name = "numpy"
version = "1.24.3"
source = { registry = "https://pypi.org/simple" }
"""


def test_the_lock_must_hold_each_pin_from_its_index():
    indexes = index_plan(PINS)
    assert check_lock(LOCK % CU118, PINS, indexes) == []
    assert check_lock(LOCK % "https://pypi.org/simple", PINS, indexes) == [
        f"torch comes from https://pypi.org/simple, not {CU118}"]
    assert check_lock((LOCK % CU118).replace("2.0.1+cu118", "2.0.1"), PINS, indexes) == [
        "torch==2.0.1+cu118 is 2.0.1 in the lock"]
