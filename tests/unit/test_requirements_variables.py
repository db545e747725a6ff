"""`${NAME}` in requirements files, expanded as pip expands them (pip's requirements file format, "Using Environment
Variables": https://pip.pypa.io/en/stable/reference/requirements-file-format/#using-environment-variables) by the
reader of `envpin check` and the one of `envpin solve --project`; a variable that is not set is left as written,
as pip leaves it, and said."""

from __future__ import annotations

from pathlib import Path

from envpin.check import check_text
from envpin.check.included import beside
from envpin.check.targets import configured_target
from envpin.cli import main
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.project_files import Entries, read_requirements_txt
from envpin.readers.requirements import expand_variables, parse

RTX5090: dict = dict(os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",), python="3.12")
INDEXED = "--extra-index-url ${TORCH_INDEX}\ntorch==2.7.1+cu128\n"


def found(text: str, database) -> list[tuple[str, str, str]]:
    target = configured_target(NamedTarget("t", TargetSpec(detect=False, **RTX5090)), database)
    report = check_text("requirements.txt", text, load_database=lambda: database, targets=[target])
    return sorted((p.id, p.severity, p.where) for p in report.problems)


def test_only_the_braced_uppercase_form_is_expanded_and_only_where_set():
    environ = {"TOKEN": "s3cret", "VERSION": "2.7.1", "EMPTY": "", "lower": "x"}
    assert expand_variables("torch==${VERSION} ${TOKEN}", environ) == ("torch==2.7.1 s3cret", ())
    # pip: `$NAME` and lowercase names are not its form; an empty value is passed on as written, as an unset one
    assert expand_variables("$VERSION ${lower} ${EMPTY} ${MISSING} ${MISSING}", environ) == (
        "$VERSION ${lower} ${EMPTY} ${MISSING} ${MISSING}", ("EMPTY", "MISSING"))


def test_check_reads_the_index_a_variable_names(monkeypatch, database):
    monkeypatch.setenv("TORCH_INDEX", "https://download.pytorch.org/whl/cu128")
    assert [o.url for o in parse(INDEXED).indexes] == ["https://download.pytorch.org/whl/cu128"]
    assert found(INDEXED, database) == []


def test_check_names_a_variable_that_is_not_set_and_its_line(monkeypatch, database):
    monkeypatch.delenv("TORCH_VERSION", raising=False)
    text = "numpy<2\ntorch==${TORCH_VERSION}\n"
    # pip reads `torch==${TORCH_VERSION}` as written and cannot parse it: so does check, and says why
    assert found(text, database) == [("CHK-ENV-VARIABLE-UNSET", "warning", "line 2"),
                                     ("CHK-REQUIREMENT-INVALID", "error", "line 2")]
    report = check_text("requirements.txt", text, load_database=lambda: database)
    assert any("${TORCH_VERSION}" in p.message for p in report.problems if p.id == "CHK-ENV-VARIABLE-UNSET")
    monkeypatch.setenv("TORCH_VERSION", "2.7.1+cu128")
    assert [(p.name, p.version) for p in parse(text).pins] == [("numpy", None), ("torch", "2.7.1+cu128")]


def test_an_included_files_variable_is_named_with_that_file(tmp_path: Path, monkeypatch, database):
    monkeypatch.delenv("TORCH_INDEX", raising=False)
    (tmp_path / "requirements.txt").write_text("-r gpu.txt\n", encoding="utf-8")
    (tmp_path / "gpu.txt").write_text(INDEXED, encoding="utf-8")
    report = check_text("requirements.txt", "-r gpu.txt\n", load_database=lambda: database,
                        include=beside(tmp_path / "requirements.txt"))
    # read as written, `${TORCH_INDEX}` is no index that serves torch's +cu128 build, as pip finds
    assert sorted((p.id, p.where) for p in report.problems) == [("CHK-ENV-VARIABLE-UNSET", "gpu.txt line 1"),
                                                                ("CHK-INDEX-MISSING", "gpu.txt line 2")]


def test_the_project_reader_expands_them_and_says_which_it_could_not(monkeypatch):
    monkeypatch.setenv("TORCH_INDEX", "https://download.pytorch.org/whl/cu128")
    monkeypatch.delenv("WHEELS", raising=False)
    entries = read_requirements_txt(INDEXED + "--find-links ${WHEELS}\n", "requirements.txt",
                                    lambda target, constraint: Entries())
    assert entries.index_options == ["--extra-index-url https://download.pytorch.org/whl/cu128", "--find-links ${WHEELS}"]
    assert [r.text for r in entries.requirements][0] == "torch==2.7.1+cu128"
    assert "requirements.txt:1: ${TORCH_INDEX} expanded from the environment, as pip expands it" in entries.notes
    assert any(n.startswith("requirements.txt:3: ${WHEELS} is not set") for n in entries.notes)


def test_solve_project_refuses_a_line_an_unset_variable_leaves_unreadable_and_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TORCH_VERSION", raising=False)
    (tmp_path / "requirements.txt").write_text("numpy<2\ntorch==${TORCH_VERSION}\n", encoding="utf-8")
    code = main(["solve", "--project", str(tmp_path), "--os", "linux", "--arch", "x86_64", "--driver", "570.86.10",
                 "--gpu", "NVIDIA GeForce RTX 5090", "--python", "3.12"])
    error = capsys.readouterr().err
    assert code == 2 and "requirements.txt:2:" in error and "${TORCH_VERSION} is not set" in error
    monkeypatch.setenv("TORCH_VERSION", "2.7.1")
    assert main(["solve", "--project", str(tmp_path), "--os", "linux", "--arch", "x86_64", "--driver", "570.86.10",
                 "--gpu", "NVIDIA GeForce RTX 5090", "--python", "3.12"]) == 0
    assert "torch  2.7.1+cu128" in capsys.readouterr().out


def test_a_credential_a_variable_holds_never_shows_in_findings(monkeypatch, database):
    monkeypatch.setenv("INDEX_TOKEN", "s3cret")
    text = "--extra-index-url https://${INDEX_TOKEN}@download.pytorch.org/whl/cu128\ntorch==2.7.1+cu128 --index-url x\n"
    report = check_text("requirements.txt", text, load_database=lambda: database)
    assert [o.url for o in parse(text).indexes] == ["https://****@download.pytorch.org/whl/cu128"]
    assert report.problems and not any("s3cret" in p.message for p in report.problems)
