"""A lock against the manifest beside it: the content hashes poetry, pdm and pipenv record, computed again
exactly as each tool does (real pairs from tests/fixtures/locks), uv.lock's locked requirements and
pixi.lock's environments; a changed manifest is CHK-LOCK-STALE with the tool's refresh command."""

from __future__ import annotations

import shutil
from pathlib import Path

from envpin.base import _toml
from envpin.check import check_text
from envpin.check.included import beside
from envpin.check.staleness import pdm_content_hash, pipfile_hash, poetry_content_hash

LOCKS = Path(__file__).resolve().parents[1] / "fixtures" / "locks"
POETRY = LOCKS / "poetry" / "gpu-using-with-poetry"
PDM = LOCKS / "pdm" / "demo"
PIPENV = LOCKS / "pipenv" / "examples"
PIXI = LOCKS / "pixi" / "v7-multi-machine"


def stale(database, lock: Path) -> list[tuple[str, str]]:
    report = check_text(str(lock), lock.read_text(encoding="utf-8"), load_database=lambda: database,
                        include=beside(lock))
    return [(p.where, p.fix) for p in report.problems if p.id == "CHK-LOCK-STALE"]


def copied(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / folder.name
    shutil.copytree(folder, target)
    return target


def test_each_tools_hash_of_its_real_manifest_is_the_one_its_lock_records():
    poetry = _toml.loads((POETRY / "pyproject.toml").read_text(encoding="utf-8"))
    assert poetry_content_hash(poetry) == "98233051531f33bf1af10d3115adddbe1b9ac5bbf9fc6bf88c6b9f7ea19ef109"
    pdm = _toml.loads((PDM / "pyproject.toml").read_text(encoding="utf-8"))
    assert pdm_content_hash(pdm) == "2584886ac58a0ae70aa36bc0318b62c3e2c89acc9c21ebb9aee74147c0a9dc06"
    pipfile = _toml.loads((PIPENV / "Pipfile").read_text(encoding="utf-8"))
    assert pipfile_hash(pipfile) == "edff3c36826f984dacc94d24141b4fc9895c9b8568f16fb67deeea60631ec1a6"


def test_poetrys_own_up_to_date_and_outdated_pairs_are_judged_as_poetry_check_lock_judges_them(database):
    # python-poetry/poetry tests/console/commands/test_check.py: exit 0 on up_to_date_lock, 1 on outdated_lock
    assert stale(database, LOCKS / "poetry" / "poetry-up_to_date_lock" / "poetry.lock") == []
    assert stale(database, LOCKS / "poetry" / "poetry-outdated_lock" / "poetry.lock") == [
        ("metadata.content-hash", "run `poetry lock` and commit the lock it writes")]


def test_real_locks_beside_their_manifests_are_fresh(database):
    for lock in (POETRY / "poetry.lock", PDM / "pdm.lock", PIPENV / "Pipfile.lock", PIXI / "pixi.lock",
                 LOCKS / "pipenv" / "ocp-cu117" / "Pipfile.lock"):
        assert stale(database, lock) == [], lock


def test_a_real_pdm_lock_whose_manifest_changed_its_resolution_table_after_locking_is_stale(database, tmp_path):
    # suxrobGM/fsrcnn committed `resolution.respect-source-order = true` with a lock made before it; pdm hashes the
    # [tool.pdm.resolution] table (src/pdm/project/project_file.py, content_hash), so `pdm lock --check` fails
    folder = LOCKS / "pdm" / "fsrcnn-cu129"
    shutil.copy(folder / "pdm.lock", tmp_path / "pdm.lock")
    shutil.copy(folder / "manifest" / "pyproject.toml", tmp_path / "pyproject.toml")
    assert stale(database, tmp_path / "pdm.lock") == [("metadata.content_hash", "run `pdm lock` and commit the lock it writes")]
    as_locked = (tmp_path / "pyproject.toml").read_text(encoding="utf-8").replace("resolution.respect-source-order = true\n", "")
    (tmp_path / "pyproject.toml").write_text(as_locked, encoding="utf-8")
    assert stale(database, tmp_path / "pdm.lock") == []  # the manifest as it was when the lock was made


def test_a_changed_manifest_is_a_stale_lock_with_the_tools_command(database, tmp_path):
    poetry = copied(POETRY, tmp_path)
    manifest = poetry / "pyproject.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('numpy = "^1.24.3"', 'numpy = "^1.26"'),
                        encoding="utf-8")
    assert stale(database, poetry / "poetry.lock") == [
        ("metadata.content-hash", "run `poetry lock` and commit the lock it writes")]
    pdm = copied(PDM, tmp_path)
    (pdm / "pyproject.toml").write_text((pdm / "pyproject.toml").read_text(encoding="utf-8").replace(
        '"idna",', '"idna>=3",'), encoding="utf-8")
    assert [w for w, _ in stale(database, pdm / "pdm.lock")] == ["metadata.content_hash"]
    pipenv = copied(PIPENV, tmp_path)
    (pipenv / "Pipfile").write_text((pipenv / "Pipfile").read_text(encoding="utf-8") + "\n[torch]\n", encoding="utf-8")
    assert [f for _, f in stale(database, pipenv / "Pipfile.lock")] == ["run `pipenv lock` and commit the lock it writes"]


def test_comments_and_formatting_do_not_make_a_lock_stale(database, tmp_path):
    poetry = copied(POETRY, tmp_path)
    manifest = poetry / "pyproject.toml"
    manifest.write_text("# a comment\n" + manifest.read_text(encoding="utf-8").replace(
        'numpy = "^1.24.3"', "numpy   =   '^1.24.3'  # pinned"), encoding="utf-8")
    assert stale(database, poetry / "poetry.lock") == []


def test_a_lock_by_poetry_before_2_3_is_hashed_without_dependency_groups(database, tmp_path):
    poetry = copied(POETRY, tmp_path)  # its lock says "@generated by Poetry 1.4.2"
    manifest = poetry / "pyproject.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + '\n[dependency-groups]\nlint = ["ruff"]\n',
                        encoding="utf-8")
    assert stale(database, poetry / "poetry.lock") == []
    lock = poetry / "poetry.lock"
    lock.write_text(lock.read_text(encoding="utf-8").replace("Poetry 1.4.2", "Poetry 2.3.1"), encoding="utf-8")
    assert [w for w, _ in stale(database, lock)] == ["metadata.content-hash"]


def test_a_pixi_manifest_environment_the_lock_lacks_is_stale(database, tmp_path):
    pixi = copied(PIXI, tmp_path)
    manifest = pixi / "pixi.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + '\n[environments]\ncuda = []\n', encoding="utf-8")
    assert stale(database, pixi / "pixi.lock") == [("environments", "run `pixi lock` and commit the lock it writes")]


# constructed, in uv's shape: the workspace member records what it was locked from in [package.metadata]
UV_LOCK = '''version = 1
requires-python = ">=3.11"

[[package]]
name = "app"
version = "0.1.0"
source = { virtual = "." }
dependencies = [{ name = "torch" }]

[package.metadata]
requires-dist = [{ name = "torch", specifier = ">=2.5.1", index = "https://download.pytorch.org/whl/cu124" }]

[[package]]
name = "torch"
version = "2.5.1+cu124"
source = { registry = "https://download.pytorch.org/whl/cu124" }
wheels = [
    { url = "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl", hash = "sha256:6b2966ede9affe2fd69e0765691ca723ec870e0c34c7761f4d5b8e318383fdaf" },
]
'''


def test_a_uv_lock_whose_requirements_the_manifest_changed_is_stale(database, tmp_path):
    (tmp_path / "uv.lock").write_text(UV_LOCK, encoding="utf-8")
    manifest = tmp_path / "pyproject.toml"
    manifest.write_text('[project]\nname = "app"\nversion = "0.1.0"\ndependencies = ["torch>=2.5.1"]\n', encoding="utf-8")
    assert stale(database, tmp_path / "uv.lock") == []
    manifest.write_text('[project]\nname = "app"\nversion = "0.1.0"\ndependencies = ["torch>=2.6", "numpy"]\n',
                        encoding="utf-8")
    report = check_text(str(tmp_path / "uv.lock"), UV_LOCK, load_database=lambda: database,
                        include=beside(tmp_path / "uv.lock"))
    found = [p for p in report.problems if p.id == "CHK-LOCK-STALE"]
    assert [(p.where, p.fix) for p in found] == [("package[0].metadata", "run `uv lock` and commit the lock it writes")]
    assert "numpy is not in the lock" in found[0].message and "torch>=2.6 is locked as torch>=2.5.1" in found[0].message


def test_without_a_manifest_beside_it_nothing_is_said(database, tmp_path):
    lock = tmp_path / "poetry.lock"
    shutil.copy(POETRY / "poetry.lock", lock)
    assert stale(database, lock) == []


def test_a_pixi_dependency_the_lock_does_not_hold_is_stale(database, tmp_path):
    pixi = copied(PIXI, tmp_path)
    manifest = pixi / "pixi.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('[dependencies]\n', '[dependencies]\njax = "*"\n'), encoding="utf-8")
    found = stale(database, pixi / "pixi.lock")
    assert sorted(w for w, _ in found) == [f"environments.default.packages.{p}"
                                           for p in ("linux-64", "p1", "p2", "p3", "win-64")]


def test_a_pdm_lock_with_recorded_lock_inputs_is_left_to_pdm(database, tmp_path):
    pdm = copied(PDM, tmp_path)
    (pdm / "pyproject.toml").write_text((pdm / "pyproject.toml").read_text(encoding="utf-8").replace(
        '"idna",', '"idna>=3",'), encoding="utf-8")
    lock = pdm / "pdm.lock"
    lock.write_text(lock.read_text(encoding="utf-8").replace('lock_version = "4.5.0"\n',
                                                             'lock_version = "4.5.0"\nlock_inputs = {}\n'), encoding="utf-8")
    assert stale(database, lock) == []
