"""poetry.lock, Pipfile.lock and pdm.lock: the locked framework builds and their sources, judged for a target
as a uv.lock is; hashes said (tests/fixtures/locks/SOURCES.md says where each file comes from)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envpin.check import check_text
from envpin.check.formats import kind_of
from envpin.check.poetry_lock import parse
from envpin.check.targets import configured_target
from envpin.machine.spec import NamedTarget, TargetSpec

LOCKS = Path(__file__).resolve().parents[1] / "fixtures" / "locks"
POETRY = LOCKS / "poetry" / "gpu-using-with-poetry" / "poetry.lock"
PIPFILE = LOCKS / "pipenv" / "ocp-cu117" / "Pipfile.lock"  # torch 1.13.1+cu117 from a `pytorch` source, .../whl/cu117
PDM = LOCKS / "pdm" / "fsrcnn-cu129" / "pdm.lock"  # torch 2.8.0 with its +cu129 files, Python 3.13
RTX_4090: dict[str, Any] = {"os": "linux", "arch": "x86_64", "driver": "550.54.14", "gpus": ("NVIDIA GeForce RTX 4090",)}
GTX_1080_TI: dict[str, Any] = {"os": "linux", "arch": "x86_64", "driver": "470.82.01", "gpus": ("NVIDIA GeForce GTX 1080 Ti",)}


def check(database, path: Path, text: str | None = None, **target: Any):
    targets = [configured_target(NamedTarget("target", TargetSpec(detect=False, **target)), database)] if target else []
    return check_text(str(path), path.read_text(encoding="utf-8") if text is None else text,
                      load_database=lambda: database, targets=targets)


def ids(report) -> list[tuple[str, str, str]]:
    return sorted((p.id, p.severity, p.where) for p in report.problems)


def test_the_tools_lock_names_are_their_kinds():
    assert [kind_of(f"x/{n}", "") for n in ("poetry.lock", "Pipfile.lock", "pdm.lock")] == \
        ["poetry.lock", "Pipfile.lock", "pdm.lock"]


def test_real_locks_of_each_tool_read_clean(database):
    for path in (POETRY, LOCKS / "pipenv" / "examples" / "Pipfile.lock", LOCKS / "pdm" / "demo" / "pdm.lock"):
        assert check(database, path).problems == (), path


def test_a_poetry_lock_of_cuda_118_torch_needs_the_driver_cuda_11_does(database):
    assert check(database, POETRY, python="3.10", **RTX_4090).problems == ()
    assert check(database, POETRY, python="3.10", **GTX_1080_TI).problems == ()  # 470 runs CUDA 11.8
    old = check(database, POETRY, python="3.10", os="linux", arch="x86_64", driver="418.87.01",
                gpus=("NVIDIA GeForce GTX 1080 Ti",))
    assert ids(old) == [("CHK-TARGET-DRIVER", "error", "package[23]")]
    assert "450.80.02" in old.problems[0].message


def test_a_poetry_source_that_serves_another_variant_is_an_index_mismatch(database):
    text = POETRY.read_text(encoding="utf-8").replace('url = "https://download.pytorch.org/whl/cu118"',
                                                       'url = "https://download.pytorch.org/whl/cu121"')
    assert ("CHK-INDEX-VARIANT-MISMATCH", "error", "package[23]") in ids(check(database, POETRY, text))


def test_poetry_hashes_missing_or_malformed_are_said(database):
    text = POETRY.read_text(encoding="utf-8")
    unhashed = text.replace('{file = "torch-2.0.1+cu118-cp310-cp310-linux_x86_64.whl", hash = "sha256:a7a49d459bf4862f'
                            '64f7bc1a68beccf8881c2fa9f3e0569608e16ba6f85ebf7b"}',
                            '{file = "torch-2.0.1+cu118-cp310-cp310-linux_x86_64.whl"}')
    assert ("CHK-HASH-MISSING", "error", "package[23].files[0].hash") in ids(check(database, POETRY, unhashed))
    truncated = text.replace("sha256:a7a49d459bf4862f64f7bc1a68beccf8881c2fa9f3e0569608e16ba6f85ebf7b", "sha256:a7a49d")
    assert ("CHK-HASH-MALFORMED", "error", "package[23].files[0].hash") in ids(check(database, POETRY, truncated))


def envpin_check(capsys, path: Path, *target: str) -> tuple[int, str]:
    """`envpin check` as users run it, on one lock and one described machine."""
    from envpin.cli import main  # noqa: PLC0415 - the command, as users run it

    code = main(["check", "--no-config", "--os", "linux", "--arch", "x86_64", *target, str(path)])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_real_pipfile_lock_of_cuda_11_7_torch_is_clean_on_driver_550_and_fails_on_418(database, capsys):
    assert check(database, PIPFILE, python="3.9", **RTX_4090).problems == ()
    old = check(database, PIPFILE, python="3.9", os="linux", arch="x86_64", driver="418.87.01",
                gpus=("NVIDIA GeForce GTX 1080 Ti",))
    assert ids(old) == [("CHK-TARGET-DRIVER", "error", "default.torch")]
    assert "450.80.02" in old.problems[0].message  # CUDA 11.x on Linux
    code, said = envpin_check(capsys, PIPFILE, "--python", "3.9", "--driver", "550.54.14", "--gpu", "NVIDIA GeForce RTX 4090")
    assert code == 0, said
    code, said = envpin_check(capsys, PIPFILE, "--python", "3.9", "--driver", "418.87.01", "--gpu", "NVIDIA GeForce GTX 1080 Ti")
    assert code == 1, said
    assert "Pipfile.lock:default.torch: error CHK-TARGET-DRIVER" in said and "cu117 needs driver ≥ 450.80.02" in said


def test_a_real_pdm_lock_of_cuda_12_torch_is_clean_on_driver_550_and_fails_on_470(database, capsys):
    assert check(database, PDM, python="3.13", **RTX_4090).problems == ()
    old = check(database, PDM, python="3.13", **{**RTX_4090, "driver": "470.82.01"})
    assert ids(old) == [("CHK-TARGET-DRIVER", "error", "package[42]")]
    assert "525.60.13" in old.problems[0].message  # CUDA 12.x on Linux
    code, said = envpin_check(capsys, PDM, "--python", "3.13", "--driver", "550.54.14", "--gpu", "NVIDIA GeForce RTX 4090")
    assert code == 0, said
    code, said = envpin_check(capsys, PDM, "--python", "3.13", "--driver", "470.82.01", "--gpu", "NVIDIA GeForce RTX 4090")
    assert code == 1, said
    assert "pdm.lock:package[42]: error CHK-TARGET-DRIVER" in said and "needs driver ≥ 525.60.13" in said


def test_a_pipfile_lock_entry_is_bound_to_its_named_source(database):
    moved = PIPFILE.read_text(encoding="utf-8").replace("whl/cu117", "whl/cu121")
    assert ("CHK-INDEX-VARIANT-MISMATCH", "error", "default.torch") in ids(check(database, PIPFILE, moved))
    lock = json.loads(PIPFILE.read_text(encoding="utf-8"))
    lock["default"]["torch"]["hashes"] = []
    unhashed = json.dumps(lock, indent=4)
    assert ("CHK-HASH-MISSING", "error", "default.torch.hashes") in ids(check(database, PIPFILE, unhashed))


def test_malformed_locks_are_one_line_not_a_traceback(database):
    for name, text in (("Pipfile.lock", "{"), ("pdm.lock", "[[package]\n"), ("poetry.lock", "package = 3\n")):
        report = check_text(name, text, load_database=lambda: database)
        assert report.problems and all(p.message for p in report.problems), name


def test_a_poetry_lock_2_1_marker_keeps_an_entry_off_the_platforms_it_excludes(database):
    text = POETRY.read_text(encoding="utf-8")
    old_driver: dict[str, Any] = {"arch": "x86_64", "driver": "418.87.01", "gpus": ("NVIDIA GeForce GTX 1080 Ti",), "python": "3.10"}
    # triton is reached only under torch's `platform_system == "Linux"` edge: not installed on Windows
    assert ids(check(database, POETRY, text, os="windows", **old_driver)) == [("CHK-TARGET-DRIVER", "error", "package[23]")]
    # lock-version 2.1 writes the markers under which a package is installed (one string, or one per group)
    linux_only = text.replace('[[package]]\nname = "torch"\n', '[[package]]\nname = "torch"\nmarkers = "sys_platform == \'linux\'"\n')
    # on Windows the lock then installs no torch at all: said, and the driver is not judged
    assert ids(check(database, POETRY, linux_only, os="windows", **old_driver)) == [
        ("CHK-TARGET-PLATFORM", "error", "package[23]")]
    per_group = text.replace('[[package]]\nname = "torch"\n',
                             '[[package]]\nname = "torch"\nmarkers = {main = "sys_platform == \'linux\'"}\n')
    assert ids(check(database, POETRY, per_group, os="windows", **old_driver)) == [
        ("CHK-TARGET-PLATFORM", "error", "package[23]")]
    assert ids(check(database, POETRY, per_group, os="linux", **old_driver)) == [("CHK-TARGET-DRIVER", "error", "package[23]")]


def test_a_poetry_lock_version_1_keeps_its_files_under_metadata_files():
    path = LOCKS / "poetry" / "poetry-old_lock" / "poetry.lock"
    contents = parse(path.read_text(encoding="utf-8"))
    assert not contents.problems and {p.name for p in contents.pins} >= {"sampleproject"}
    hashless = path.read_text(encoding="utf-8").replace("sha256:", "sha256")
    assert {p.id for p in parse(hashless).problems} == {"CHK-HASH-MALFORMED"}
