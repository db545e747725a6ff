"""`solve --project --resolve -o DIR/uv.lock`: a uv project's lock, written by a real `uv lock` against the loopback
index of test_resolution (PyPI's recorded METADATA, and torch 2.0.1+cu118 on a loopback PyTorch index), beside the
pyproject.toml it is locked from; `uv lock --check` accepts the pair, and the project itself is never written."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from envpin.base import _toml
from envpin.cli import main
from envpin.lock.engines import find_uv
from tests.integration.loopback_metadata import MetadataIndex
from tests.integration.test_resolution import RTX3090
from tests.integration.test_resolution import index as index  # noqa: PLC0414 - the loopback index fixture, shared

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is a dependency of envpin; these need its binary")

PYPROJECT = """# the project's own comment
[project]
name = "app"
version = "0"
requires-python = ">=3.9"
dependencies = ["torch", "tensorflow==2.13.0"]

[dependency-groups]
dev = []
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")  # `uv lock` runs on the Python here (requires-python >=3.9)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "out").mkdir()
    return folder


def solve(project: Path, index: MetadataIndex, capsys, *options: str) -> tuple[int, str]:
    code = main(["solve", "--project", str(project), *RTX3090, "--python", "3.10", "--resolve",
                 "--index-url", f"{index.url}/simple", "--torch-index-url", f"{index.url}/whl",
                 "--allow-insecure-index", *options])
    return code, capsys.readouterr().err


def uv_lock_check(folder: Path) -> subprocess.CompletedProcess:
    """`uv lock --check`: the lock is what `uv lock` makes of the pyproject.toml beside it, as uv itself says."""
    uv = find_uv()
    assert uv is not None
    return subprocess.run([uv, "lock", "--check"], cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "XDG_CONFIG_HOME": str(folder / "no-user-config")}, check=False)


def locked(folder: Path) -> dict[str, dict]:
    return {p["name"]: p for p in _toml.loads((folder / "uv.lock").read_text())["package"]}


def test_a_uv_project_is_locked_by_uv_beside_the_pyproject_it_holds_with(project, index, capsys):
    out = project.parent / "out"
    code, err = solve(project, index, capsys, "-o", str(out / "uv.lock"))
    assert code == 0, err
    packages = locked(out)
    assert packages["torch"]["version"] == "2.0.1+cu118"
    assert packages["torch"]["source"] == {"registry": f"{index.url}/whl/cu118"}
    assert packages["tensorflow"]["version"] == "2.13.0"
    assert packages["tensorflow"]["source"] == {"registry": f"{index.url}/simple"}
    assert {"numpy", "protobuf", "app"} <= set(packages)
    assert all(f["hash"].startswith("sha256:") for p in packages.values() for f in p.get("wheels", []))
    written = _toml.loads((out / "pyproject.toml").read_text())
    assert written["project"]["dependencies"] == ["torch==2.0.1+cu118", "tensorflow==2.13.0", "numpy<2"]  # the pins
    assert written["tool"]["uv"]["sources"] == {"torch": {"index": "whl-cu118"}}
    assert {"name": "whl-cu118", "url": f"{index.url}/whl/cu118", "explicit": True} in written["tool"]["uv"]["index"]
    assert written["tool"]["uv"]["environments"] == [
        "sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '3.10'"]
    checked = uv_lock_check(out)
    assert checked.returncode == 0, checked.stderr
    # the project is read, never written: its pyproject.toml as it was, and no uv.lock beside it
    assert (project / "pyproject.toml").read_text() == PYPROJECT
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]
    assert f"wrote {out / 'uv.lock'} (torch==2.0.1+cu118" in err and f"and {out / 'pyproject.toml'}" in err


def test_moved_into_the_project_the_pair_is_its_own_and_the_lock_is_written_in_place(project, index, capsys):
    out = project.parent / "out"
    assert solve(project, index, capsys, "--format", "uv.lock", "-o", str(out))[0] == 0
    for name in ("pyproject.toml", "uv.lock"):  # as the user moves them in; the uv.lock's versions are uv's preferences
        shutil.copy(out / name, project / name)
    code, err = solve(project, index, capsys, "-o", str(project / "uv.lock"))
    assert code == 0, err
    assert (project / "pyproject.toml").read_text() == (out / "pyproject.toml").read_text()  # not rewritten
    assert "uv's lock of the project's own pyproject.toml, which already pins and binds them" in err
    assert locked(project)["torch"]["version"] == "2.0.1+cu118"
    checked = uv_lock_check(project)
    assert checked.returncode == 0, checked.stderr


def test_in_the_projects_folder_a_pyproject_without_the_pins_is_never_rewritten(project, index, capsys):
    code, err = solve(project, index, capsys, "-o", str(project / "uv.lock"))
    assert code == 2
    [line] = err.strip().splitlines()[-1:]
    assert line.startswith(f"envpin: error: -o {project / 'uv.lock'}: the uv.lock holds only with a pyproject.toml "
                           "that pins torch==2.0.1+cu118")
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]
    assert (project / "pyproject.toml").read_text() == PYPROJECT


def test_no_uv_lock_is_written_where_nothing_was_resolved(project, index, capsys):
    out = project.parent / "out"
    code, err = solve(project, index, capsys, "--offline", "-o", str(out / "uv.lock"))
    assert code == 1
    assert "no uv.lock to write: the environment was not resolved end to end (offline, and uv's cache does not hold" \
        in err
    assert not any(out.iterdir())


def test_uv_locks_the_extras_not_asked_for_too_and_its_no_solution_writes_nothing(project, index, capsys):
    # the mirror serves protobuf 4.25.1 and 5.29.5 only: the plan resolves without the extra, uv's lock of the whole
    # project does not
    (project / "pyproject.toml").write_text(PYPROJECT.replace("[dependency-groups]", "[project.optional-dependencies]\n"
                                                              "old = [\"protobuf==4.25.0\"]\n\n[dependency-groups]"))
    out = project.parent / "out"
    code, err = solve(project, index, capsys, "-o", str(out / "uv.lock"))
    assert code == 1
    assert "envpin: error: no uv.lock written: uv: no solution: " in err and "protobuf==4.25.0" in err
    assert not any(out.iterdir())


def test_a_project_read_from_a_requirements_file_too_has_no_uv_lock(project, index, capsys):
    (project / "requirements.txt").write_text("protobuf==4.25.1\n")
    code, err = solve(project, index, capsys, "-o", str(project.parent / "out" / "uv.lock"))
    assert code == 2
    assert "a uv.lock locks a project's pyproject.toml alone; the plan reads requirements.txt" in err


@pytest.mark.parametrize("output, says", [
    (["--format", "uv.lock", "-o", "OUT/gpu.lock"], "-o OUT/gpu.lock: uv reads a lock only as uv.lock beside its "
                                                    "pyproject.toml"),
    (["-o", "OUT/missing/uv.lock"], "-o OUT/missing/uv.lock: OUT/missing is not a folder"),
    (["--format", "uv.lock"], "a uv.lock is written beside the pyproject.toml it is locked from: give -o DIR/uv.lock"),
    (["--format", "uv.lock", "-o", "-"], "give -o DIR/uv.lock"),
    (["--format", "uv.lock", "-o", "FOREIGN"], "-o FOREIGN: FOREIGN/pyproject.toml exists and envpin did not write it"),
])
def test_a_bad_uv_lock_output_is_a_one_line_error_before_anything_is_solved(project, capsys, output, says):
    out, foreign = project.parent / "out", project.parent / "foreign"
    foreign.mkdir()
    (foreign / "pyproject.toml").write_text('[project]\nname = "other"\n')
    words = [w.replace("OUT", str(out)).replace("FOREIGN", str(foreign)) for w in output]
    code = main(["solve", "--project", str(project), *RTX3090, "--python", "3.10", "--resolve",
                 "--index-url", "http://127.0.0.1:9/simple", "--allow-insecure-index", *words])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and says.replace("OUT", str(out)).replace("FOREIGN", str(foreign)) in err
    assert not any(out.iterdir()) and sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]


@pytest.mark.parametrize("flags, says", [
    (["--project", "P", "-o", "OUT/uv.lock"], "a uv.lock is a resolution of the whole environment: add --resolve"),
    (["-r", "P/pyproject.toml", "--resolve", "-o", "OUT/uv.lock"], "a uv.lock is the lock of a project's "
                                                                  "pyproject.toml: give --project DIR"),
])
def test_a_uv_lock_needs_resolve_and_a_project(project, capsys, flags, says):
    words = [w.replace("OUT", str(project.parent / "out")).replace("P", str(project), 1) if w != "-r" else w
             for w in flags]
    assert main(["solve", *RTX3090, *words]) == 2
    assert says in capsys.readouterr().err
