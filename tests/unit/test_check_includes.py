"""`-r FILE` / `-c FILE` in a checked requirements file, followed as pip follows them: each path relative to the
file that names it, findings naming the included file and its line, constraints narrowing what they name (and
installing nothing), URLs said and never fetched, cycles an error, unreadable includes bad input (exit 2)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from envpin.check import check_text
from envpin.check.included import beside
from envpin.check.targets import configured_target
from envpin.cli import main
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.requirements import MAX_INCLUDE_DEPTH, parse

RTX5090 = dict(os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",), python="3.12")


def write(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")
    return directory / next(iter(files))


def found(path: Path, database, **target) -> list[tuple[str, str, str]]:
    targets = [configured_target(NamedTarget("t", TargetSpec(detect=False, **target)), database)] if target else []
    report = check_text(str(path), path.read_text(encoding="utf-8"), load_database=lambda: database,
                        targets=targets, include=beside(path))
    assert not report.unreadable, report.problems
    return sorted((p.id, p.severity, p.where) for p in report.problems)


def test_an_included_file_is_checked_and_its_findings_name_it_and_its_line(tmp_path, database):
    top = write(tmp_path, {
        "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\n-r requirements/base.txt\n",
        # relative to base.txt's own directory, as pip joins it
        "requirements/base.txt": "numpy<2\n-r torch.txt\n",
        "requirements/torch.txt": "torch==2.1.0+cu121\ntorchvision==0.15.2+cu121\n",
    })
    # the index of the top file serves the included pins (pip applies index options to the whole install)
    assert found(top, database) == [("CHK-TORCH-COMPANION-MISMATCH", "error", "requirements/torch.txt line 2")]


def test_a_constraint_decides_the_build_a_range_takes_and_installs_nothing_itself(tmp_path, database):
    top = write(tmp_path, {
        "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu129\n-c constraints.txt\n"
                            "torch>=2.7,<2.13\n",
        "constraints.txt": "torch==2.12.1+cu126\ntensorflow==2.7.0\n",
    })
    # pip takes the constraint's cu126 build, which has no sm_120 code; the range alone would take cu129
    [(problem_id, _, where)] = [p for p in found(top, database, **RTX5090) if p[0].startswith("CHK-TARGET")]
    assert (problem_id, where) == ("CHK-TARGET-GPU", "line 3")
    (tmp_path / "constraints.txt").write_text("tensorflow==2.7.0\n", encoding="utf-8")
    # tensorflow 2.7.0 has no Python 3.12 wheel, but only a constraint names it: nothing installs it
    assert found(top, database, **RTX5090) == []


def test_a_constraint_no_version_of_the_requirement_meets_is_an_error(tmp_path, database):
    top = write(tmp_path, {"requirements.txt": "-c c.txt\ntorch>=2.7\n", "c.txt": "torch==2.5.1\n"})
    report = check_text(str(top), top.read_text(encoding="utf-8"), load_database=lambda: database,
                        include=beside(top))
    [conflict] = [p for p in report.problems if p.id == "CHK-CONSTRAINT-CONFLICT"]
    assert conflict.where == "line 2" and "c.txt line 1" in conflict.message


def test_a_url_include_is_said_and_never_fetched(tmp_path, database):
    # a port nothing listens on: a fetch would fail loudly, the finding says it was not tried
    top = write(tmp_path, {"requirements.txt": "-r http://127.0.0.1:9/requirements.txt\n--constraint=https://x/c.txt\n"})
    assert found(top, database) == [("CHK-INCLUDE-NOT-READ", "warning", "line 1"),
                                    ("CHK-INCLUDE-NOT-READ", "warning", "line 2")]


def test_text_without_its_file_says_its_includes_were_not_read(database):
    report = check_text("requirements.txt", "-r other.txt\n", load_database=lambda: database)
    assert [(p.id, p.where) for p in report.problems] == [("CHK-INCLUDE-NOT-READ", "line 1")]


def test_an_include_cycle_is_an_error_on_the_line_that_closes_it(tmp_path, database):
    top = write(tmp_path, {"requirements.txt": "-r a.txt\n", "a.txt": "numpy\n-r sub/b.txt\n",
                           "sub/b.txt": "-r ../requirements.txt\n"})
    assert found(top, database) == [("CHK-INCLUDE-CYCLE", "error", "sub/b.txt line 1")]


def test_an_environment_yml_pip_item_includes_a_file_beside_it(tmp_path, database):
    top = write(tmp_path, {"environment.yml": "dependencies:\n  - python=3.10\n  - pip\n  - pip:\n"
                                              "    - -r requirements.txt\n",
                           "requirements.txt": "torch==2.1.0+cu121\n"})
    assert ("CHK-INDEX-MISSING", "error", "requirements.txt line 1") in found(top, database)


def check_cli(path: Path, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["check", str(path), "--no-config", *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("target, reason", [
    ("missing.txt", "No such file or directory"),
    ("folder", "a directory, not a file"),
    ("fifo", "not a regular file"),            # opening it would block the hook
    ("/dev/zero", "not a regular file"),       # reading it would never end
    ("latin1.txt", "not UTF-8 text"),
    ("huge.txt", "larger than 16 MiB"),
])
def test_an_include_that_cannot_be_read_is_bad_input_in_one_line(tmp_path, capsys, target, reason):
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "latin1.txt").write_bytes("torch==2.1.0 # café\n".encode("latin-1"))
    with open(tmp_path / "huge.txt", "wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse: no disk used
    top = write(tmp_path, {"requirements.txt": f"numpy\n-r {target}\n"})
    code, out, err = check_cli(top, capsys)
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith(f"envpin: error: {top}: line 2: -r {target}: cannot be read") and reason in line
    code, out, err = check_cli(top, capsys, "--format", "json")
    assert code == 2 and json.loads(out)["files"][0]["problems"][0]["id"] == "CHK-FILE-UNREADABLE"


def test_includes_nested_past_the_bound_are_bad_input(tmp_path, capsys):
    depth = MAX_INCLUDE_DEPTH + 1
    top = write(tmp_path, {"requirements.txt": "-r 1.txt\n",
                           **{f"{n}.txt": f"-r {n + 1}.txt\n" for n in range(1, depth)}, f"{depth}.txt": "numpy\n"})
    code, _, err = check_cli(top, capsys)
    assert code == 2 and f"deeper than {MAX_INCLUDE_DEPTH} files" in err


SOLVE_TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "570.86.10", "--gpu", "NVIDIA GeForce RTX 4090",
                "--python", "3.11", "--format", "requirements.txt"]


def test_solve_says_a_url_include_is_not_fetched_and_refuses_a_fifo(tmp_path, capsys):
    top = write(tmp_path, {"requirements.txt": "-r https://127.0.0.1:9/more.txt\ntorch==2.5.1\n"})
    assert main(["solve", "-r", str(top), *SOLVE_TARGET]) == 0
    out, err = capsys.readouterr()
    assert "torch==2.5.1" in out.splitlines() and "does not fetch" in err
    os.mkfifo(tmp_path / "fifo")
    top.write_text("-c fifo\ntorch==2.5.1\n", encoding="utf-8")
    assert main(["solve", "-r", str(top), *SOLVE_TARGET]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_constraints_under_exclusive_markers_make_one_requirement_per_marker(tmp_path, database):
    # nncf's constraints.txt pins onnxruntime per Python (openvinotoolkit/nncf at ef8e1dbd)
    top = write(tmp_path, {"requirements.txt": "-c c.txt\nonnxruntime\n",
                           "c.txt": "onnxruntime==1.23.2; python_version < '3.11'\n"
                                    "onnxruntime==1.24.3; python_version >= '3.11'\n"})
    assert found(top, database) == []  # no conflict: the two constraints never meet
    pins = parse(top.read_text(encoding="utf-8"), beside(top)).pins
    assert sorted((p.version, sorted(p.scope)) for p in pins) == [
        ("1.23.2", ["python_version < \"3.11\""]), ("1.24.3", ["python_version >= \"3.11\""])]
