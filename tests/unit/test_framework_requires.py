"""What a framework release requires beside it: the database's requires.yaml is what the recorded PyPI METADATA
(tests/fixtures/pypi-metadata/framework-requires.json, written by scripts/record-framework-requires) says; a
release's lines are judged on the target's Python (markers); a project line that the solved release leaves no room
for moves the solve to a release that does, and says which it passed over; check reports a pin no matching release
leaves room for; a project without such a line never reads the file."""

from __future__ import annotations

import json
import re

from envpin.check import check_text
from envpin.check.targets import configured_target
from envpin.cli import main
from envpin.compat.loader import load_database
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.framework_requires import SNAPSHOT, framework_bound, kept_line, requires_yaml
from tests.conftest import LIVE_DB_DIR

RTX_3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "560.35", "--gpu", "NVIDIA GeForce RTX 3090"]
RTX_5090 = ["--os", "linux", "--arch", "x86_64", "--driver", "570.86.10", "--gpu", "NVIDIA GeForce RTX 5090"]


def test_the_database_file_is_what_the_recorded_metadata_says(database):
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert requires_yaml(snapshot) == (LIVE_DB_DIR / "requires.yaml").read_text(encoding="utf-8")
    records = {(r.framework, r.version): r for r in database.framework_requires}
    assert len(records) == 104
    for record in records.values():  # each cites the wheel it was read in; nothing recorded elsewhere is repeated
        assert record.wheel.startswith("https://files.pythonhosted.org/packages/") and record.wheel.endswith(".whl")
        assert not {"numpy", "triton"} & record.names and not any(n.startswith("nvidia-") for n in record.names)
    assert records["tensorflow", "2.20.0"].on("protobuf", "3.11", "linux-x86_64") == ">=5.28.0"
    # torch 2.5.1: sympy==1.12.1 on Python 3.8, sympy==1.13.1 from 3.9; setuptools from 3.12 only
    torch = records["torch", "2.5.1"]
    assert torch.on("sympy", "3.8", "linux-x86_64") == "==1.12.1" and torch.on("sympy", "3.11", "linux-x86_64") == "==1.13.1"
    assert torch.on("setuptools", "3.11", "linux-x86_64") is None and torch.on("setuptools", "3.12", "linux-x86_64") == ""
    assert torch.on("typing-extensions", "3.11", "windows-x86_64") == ">=4.8.0"


def test_lines_of_an_extra_and_those_recorded_elsewhere_are_not_kept():
    assert kept_line("protobuf>=5.28.0") and kept_line('sympy==1.13.1; python_version >= "3.9"')
    assert not kept_line('nvidia-cudnn-cu12==9.3.0.75; extra == "and-cuda"')
    assert not kept_line("numpy>=1.26.0") and not kept_line("triton==3.1.0") and not kept_line("nvidia-nccl-cu12==2.21.5")


def test_the_releases_a_line_leaves_room_for(database):
    releases = [str(r.version) for r in database.tensorflow_releases]
    allowed, ruled_out = framework_bound(database, "tensorflow", "protobuf", "==4.25.1", releases, "3.11", "linux-x86_64")
    assert {"2.20.0", "2.21.0"} <= dict(ruled_out).keys() and "2.19.1" in allowed and "2.17.1" in allowed
    # a package no release requires: every release is allowed, nothing ruled out
    assert framework_bound(database, "tensorflow", "pillow", "==9.0.0", releases, "3.11", "linux-x86_64") == (releases, [])


def test_a_line_the_newest_release_leaves_no_room_for_moves_the_solve(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("tensorflow\nprotobuf==4.25.1\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *RTX_3090, "--python", "3.11", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [p["version"] for p in document["packages"] if p["name"] == "tensorflow"] == ["2.19.1"]
    passed = [r for r in document["reasons"] if r.startswith("passed over")]
    assert passed and "tensorflow 2.20.0, which requires protobuf>=5.28.0" in passed[0]
    assert "protobuf==4.25.1 (requirements.txt:2) excludes" in passed[0] and "2.19.1" not in passed[0]


def test_a_refusal_says_what_the_line_must_allow_after_each_move(tmp_path, capsys):
    # sympy==1.12 holds torch at 2.4.1 (2.5.0-2.6.0 require sympy==1.13.1, later ones >=1.13.3), which has no sm_120
    (tmp_path / "requirements.txt").write_text("torch>=2.0\nsympy==1.12\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), *RTX_5090, "--python", "3.11"])
    out = capsys.readouterr().out
    assert code == 1 and "torch 2.4.1" in out and "passed over: torch 2.5.0-2.6.0, which require sympy==1.13.1" in out
    fixes = [line for line in out.splitlines() if line.startswith("  - ")]
    moved = next(i for i, fix in enumerate(fixes) if "--spec 'torch==2.7.0'" in fix)
    assert re.search(r"requirements.txt:2: with it, change sympy==1.12 to allow sympy>=1\.13\.3, which torch 2\.7\.0",
                     fixes[moved + 1]), fixes


def test_check_reports_a_pin_no_matching_release_leaves_room_for(database):
    report = check_text("requirements.txt", "tensorflow==2.20.0\nprotobuf==4.25.1\n", load_database=lambda: database)
    found = [p for p in report.problems if p.id == "CHK-PACKAGE-REQUIRES"]
    assert len(found) == 1 and found[0].where == "line 1"
    assert "tensorflow==2.20.0 requires protobuf>=5.28.0" in found[0].message
    # a range is fine while one release leaves room (pip takes it), and so is a line on a package none requires
    for text in ("tensorflow>=2.16\nprotobuf==4.25.1\n", "tensorflow==2.20.0\npillow==9.0.0\n"):
        assert not [p for p in check_text("requirements.txt", text, load_database=lambda: database).problems
                    if p.id == "CHK-PACKAGE-REQUIRES"], text
    # sympy==1.12.1 is what torch 2.5.1 requires on Python 3.8 only: judged on the target's Python
    text = "torch==2.5.1\nsympy==1.12.1\n"
    assert not [p for p in check_text("requirements.txt", text, load_database=lambda: database).problems
                if p.id == "CHK-PACKAGE-REQUIRES"]
    spec = TargetSpec(detect=False, os="linux", arch="x86_64", python="3.11", driver="none")
    target = configured_target(NamedTarget("t", spec), database)
    found = [p for p in check_text("requirements.txt", text, load_database=lambda: database, targets=[target]).problems
             if p.id == "CHK-PACKAGE-REQUIRES"]
    assert found and "torch==2.5.1 requires sympy==1.13.1" in found[0].message


def test_a_range_beside_such_a_line_is_judged_by_the_release_the_installer_takes(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("torch>=2.0\nsympy==1.12\n", encoding="utf-8")
    code = main(["check", str(tmp_path / "requirements.txt"), *RTX_5090, "--python", "3.11"])
    out = capsys.readouterr().out
    assert code == 1 and "CHK-TARGET-GPU" in out and "torch 2.4.1" in out and "within what sympy==1.12" in out


def test_a_project_without_such_a_line_never_reads_requires_yaml(db_copy, tmp_path, capsys):
    (db_copy / "requires.yaml").write_text("releases: {{{\n")
    (tmp_path / "requirements.txt").write_text("torch>=2.4\nnumpy\nrequests\n")
    assert main(["solve", "--db", str(db_copy), "--project", str(tmp_path), *RTX_3090, "--python", "3.11"]) == 0
    database = load_database(db_copy)
    assert "framework_requires" not in database.__dict__
    (tmp_path / "requirements.txt").write_text("torch>=2.4\nsympy==1.12\n")
    capsys.readouterr()
    assert main(["solve", "--db", str(db_copy), "--project", str(tmp_path), *RTX_3090, "--python", "3.11"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "requires.yaml" in err and "Traceback" not in err


def test_a_bad_line_is_named_with_its_file_record_and_field(db_copy, capsys):
    path = db_copy / "requires.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace('"protobuf>=5.28.0"', '"protobuf>=>5.28"', 1),
                    encoding="utf-8")
    assert main(["db", "validate", str(db_copy)]) == 1
    assert re.search(r"requires.yaml: releases\[\d+\]\.requires: tensorflow 2.20.0: line \d+ 'protobuf>=>5.28' is not "
                     "a requirement", capsys.readouterr().out)
