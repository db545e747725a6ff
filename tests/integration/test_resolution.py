"""`solve --project --resolve`: the whole environment resolved by a real uv against a loopback index serving the
file lists and METADATA recorded from PyPI (tests/fixtures/resolution/SOURCES.md), so the conflicts are the real
ones: tensorflow-text 2.20.1 requires tensorflow<2.21, TensorFlow 2.20.0 protobuf>=5.28.0 and 2.21.0
protobuf>=6.31.1."""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from envpin.base import _toml
from envpin.cli import main
from envpin.lock.engines import find_uv
from tests.integration.loopback_metadata import MetadataIndex

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "resolution"
RTX3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "560.35.03", "--gpu", "NVIDIA GeForce RTX 3090"]

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is a dependency of envpin; these need its binary")


@pytest.fixture(scope="module")
def uv_only_database(tmp_path_factory) -> Path:
    """The frozen database without what it knows offline of these conflicts (requires.yaml: tensorflow 2.20.0
    requires protobuf>=5.28.0; tied.yaml's tensorflow-text, tf-keras and tensorflow-decision-forests), so that each
    move these tests watch is read from uv's answer, as for a package the database does not record."""
    from tests.conftest import DB_DIR  # noqa: PLC0415 - this fixture only

    copy = tmp_path_factory.mktemp("db") / "db"
    shutil.copytree(DB_DIR, copy)
    (copy / "requires.yaml").unlink()
    tied = copy / "tied.yaml"
    kept = [line for line in tied.read_text(encoding="utf-8").splitlines(keepends=True)
            if not re.search(r"\{package: (tensorflow-text|tf-keras|tensorflow-decision-forests),", line)]
    tied.write_text("".join(kept), encoding="utf-8")
    return copy


@pytest.fixture(autouse=True)
def uv_decides(uv_only_database, monkeypatch):
    monkeypatch.setenv("ENVPIN_DB", str(uv_only_database))


@pytest.fixture
def index(tmp_path, monkeypatch):
    """The loopback PyPI (`simple`) and PyTorch index (`whl/cu118`), and a uv cache of the test's own."""
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    served = MetadataIndex()
    for project, entry in json.loads((FIXTURES / "pypi.json").read_text())["projects"].items():
        for recorded in entry["files"]:
            served.add("simple", project, recorded)
    for recorded in json.loads((FIXTURES / "torch-index.json").read_text())["files"]:
        served.add("whl/cu118", "torch", recorded)
    with served:
        yield served


def solve(tmp_path: Path, lines: str, index: MetadataIndex, capsys, *options: str, python: str = "3.11") -> tuple[int, dict]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "requirements.txt").write_text(lines)
    mirror = ["--index-url", f"{index.url}/simple"] if "--resolve" in options else []
    code = main(["solve", "--project", str(project), *RTX3090, "--python", python, "--format", "json", *mirror,
                 "--allow-insecure-index", *options])
    return code, json.loads(capsys.readouterr().out)


def pins(answer: dict) -> list[str]:
    return [p["requirement"] for p in answer["packages"]]


def test_a_companions_upper_bound_moves_tensorflow_to_2_20(tmp_path, index, capsys):
    code, answer = solve(tmp_path, "tensorflow\ntensorflow-text>=2.20.1,<2.21\n", index, capsys, "--resolve")
    assert code == 0, answer
    assert pins(answer) == ["tensorflow[and-cuda]==2.20.0"]
    resolution = answer["resolution"]
    assert resolution["status"] == "resolved"
    assert {"tensorflow==2.20.0", "tensorflow-text==2.20.1", "protobuf==5.29.5", "numpy==1.26.4"} <= set(resolution["packages"])
    # the index serves one tensorflow-text, so uv says "all versions of tensorflow-text depend on"
    assert resolution["passed_over"] == [
        "tensorflow 2.21.0 was passed over: all versions of tensorflow-text depend on tensorflow>=2.20.0,<2.21 "
        "(requirements.txt:2: tensorflow-text<2.21,>=2.20.1)"]
    assert resolution["passed_over"][0] in answer["reasons"]


def test_a_protobuf_pin_passes_over_each_tensorflow_that_needs_a_newer_one(tmp_path, index, capsys):
    code, answer = solve(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "--resolve")
    assert code == 0, answer
    assert pins(answer) == ["tensorflow[and-cuda]==2.19.1"]
    passed = answer["resolution"]["passed_over"]
    assert [p.split(" was passed over")[0] for p in passed] == ["tensorflow 2.21.0", "tensorflow 2.20.0"]
    assert "depends on protobuf>=5.28.0" in passed[1] and "requirements.txt:2: protobuf==4.25.1" in passed[1]
    assert "protobuf==4.25.1" in answer["resolution"]["packages"]
    assert answer["reasons"][-2:] == passed  # both moves, in the plan's reasons too


def test_without_resolve_the_plan_says_it_was_not_resolved(tmp_path, index, capsys):
    code, answer = solve(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys)
    assert code == 0
    assert pins(answer) == ["tensorflow[and-cuda]==2.21.0"]  # what the database alone chooses
    assert answer["resolution"]["status"] == "not-resolved"
    assert answer["resolution"]["detail"].startswith("not asked")
    assert not any(path.startswith("/simple") for path in index.requests)  # and nothing asked the index


def test_no_tensorflow_that_runs_here_fits_the_lines_so_the_solve_refuses_naming_them(tmp_path, index, capsys):
    # TensorFlow 2.13.0 needs Python <= 3.11 and protobuf < 5, but 2.19.1 is the oldest the index serves here
    code, answer = solve(tmp_path, "tensorflow>=2.19\nprotobuf==4.25.1\ntensorflow-text==2.20.1\n", index, capsys,
                         "--resolve")
    assert code == 1
    assert answer["error"]["code"] == "unresolvable"
    assert "tensorflow-text" in answer["error"]["message"]
    assert any("requirements.txt:3: tensorflow-text==2.20.1" in fix for fix in answer["error"]["fixes"])


def test_two_index_built_frameworks_resolve_side_by_side(tmp_path, index, capsys):
    # torch 2.0.1+cu118 from the PyTorch index (it carries its CUDA in torch/lib) beside tensorflow 2.13.0 from PyPI
    code, answer = solve(tmp_path, "torch==2.0.1+cu118\ntensorflow==2.13.0\n", index, capsys, "--resolve",
                         "--torch-index-url", f"{index.url}/whl", python="3.10")
    assert code == 0, answer.get("error")
    assert pins(answer)[:2] == ["torch==2.0.1+cu118", "tensorflow==2.13.0"]
    packages = answer["resolution"]["packages"]
    assert {"torch==2.0.1+cu118", "tensorflow==2.13.0", "numpy==1.24.3", "protobuf==4.25.1"} <= set(packages)
    assert any(path.startswith("/whl/cu118/torch") for path in index.requests)
    assert not any(path.endswith(".whl") for path in index.requests)  # resolved from METADATA alone


def test_a_pin_the_index_does_not_serve_is_named(tmp_path, index, capsys):
    # protobuf 4.25.0 exists on PyPI, but this index (a mirror that dropped it) serves 4.25.1 and 5.29.5 only
    code, answer = solve(tmp_path, "tensorflow==2.19.1\nprotobuf==4.25.0\n", index, capsys, "--resolve")
    assert code == 1
    assert answer["error"]["code"] == "unresolvable"
    assert answer["error"]["message"].startswith("the index serves no file for protobuf==4.25.0 "
                                                 "(requirements.txt:2: protobuf==4.25.0)")


def test_offline_with_an_empty_cache_is_not_resolved_and_says_why(tmp_path, index, capsys):
    code, answer = solve(tmp_path, "tensorflow\n", index, capsys, "--resolve", "--offline")
    assert code == 0
    assert answer["resolution"]["status"] == "not-resolved"
    assert "offline, and uv's cache does not hold tensorflow[and-cuda]==2.21.0" in answer["resolution"]["detail"]
    assert not index.requests


def test_offline_from_a_warm_cache_resolves(tmp_path, index, capsys):
    solve(tmp_path, "tensorflow\n", index, capsys, "--resolve")
    asked = len(index.requests)
    code, answer = solve(tmp_path, "tensorflow\n", index, capsys, "--resolve", "--offline")
    assert code == 0 and answer["resolution"]["status"] == "resolved"
    assert "from uv's cache (--offline)" in answer["resolution"]["detail"]
    assert len(index.requests) == asked


def test_an_index_that_does_not_answer_is_not_resolved(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("tensorflow\n")
    code = main(["solve", "--project", str(project), *RTX3090, "--python", "3.11", "--format", "json", "--resolve",
                 "--index-url", "http://127.0.0.1:9/simple", "--allow-insecure-index"])
    answer = json.loads(capsys.readouterr().out)
    assert code == 0
    assert answer["resolution"]["status"] == "not-resolved"
    assert answer["resolution"]["detail"].startswith("an index did not answer")


def test_text_answer_lists_every_package_resolved(tmp_path, index, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("tensorflow\nprotobuf==4.25.1\n")
    assert main(["solve", "--project", str(project), *RTX3090, "--python", "3.11", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index"]) == 0
    text = capsys.readouterr().out
    assert "\nresolution: resolved end to end by uv " in text
    assert "\n  protobuf==4.25.1\n" in text and "\n  tensorflow==2.19.1\n" in text


@pytest.mark.parametrize("flags, says", [
    (["--offline"], "--offline is for --resolve"),
    (["--resolve"], "--resolve resolves a project's lines"),
    (["--project", ".", "--resolve", "--index-url", "http://mirror.example/simple"], "is plain http on a remote host"),
    (["--project", ".", "--resolve", "--targets", "fleet.json"], "--resolve is for one target"),
])
def test_resolve_flags_out_of_place_are_a_one_line_error(flags, says, capsys):
    with_project = [] if "--resolve" in flags else ["--project", "."]  # the flags give it where they need one
    assert main(["solve", *with_project, *RTX3090, *flags]) == 2
    assert says in capsys.readouterr().err


def test_a_tensorflow_gpu_pin_pypi_never_served_is_named_in_the_refusal(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("tensorflow-gpu==2.3.0rc0\n")
    assert main(["solve", "--project", str(project), *RTX3090, "--python", "3.10", "--format", "json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert "(requirements.txt:1; PyPI serves no tensorflow-gpu 2.3.0rc0: as written, the line cannot be installed " \
           "anywhere)" in error["message"]


def test_the_tensorflow_gpu_stub_is_named_when_the_line_is_solved_as_tensorflow(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("tensorflow-gpu==2.12.0\n")
    assert main(["solve", "--project", str(project), *RTX3090, "--python", "3.10"]) == 0
    assert "tensorflow-gpu==2.12.0 is solved as tensorflow (as written, pip would install tensorflow-gpu 2.12.0, " \
           "an empty stub" in capsys.readouterr().err


def test_a_file_format_says_the_resolution_beside_it(tmp_path, index, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("tensorflow\ntensorflow-text>=2.20.1,<2.21\n")
    assert main(["solve", "--project", str(project), *RTX3090, "--python", "3.11", "--resolve", "--format",
                 "requirements.txt", "--index-url", f"{index.url}/simple", "--allow-insecure-index"]) == 0
    captured = capsys.readouterr()
    assert "tensorflow==2.20.0 \\" in captured.out.splitlines()  # the resolution is written, not the lines
    assert "envpin: note: tensorflow 2.21.0 was passed over: all versions of tensorflow-text depend on" in captured.err
    assert "envpin: note: resolved end to end by uv " in captured.err
    assert "the file pins every one of them, with the sha256 of each file" in captured.err


def test_lock_moves_to_the_framework_the_projects_lines_allow(tmp_path, index, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("tensorflow\ntensorflow-text>=2.20.1,<2.21\n")
    code = main(["lock", "-r", "requirements.txt", *RTX3090, "--python", "3.11", "--index-url", f"{index.url}/simple",
                 "--allow-insecure-index", "-o", "pylock.toml"])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    assert "envpin: note: tensorflow 2.21.0 was passed over" in captured.err
    locked = {p["name"]: p["version"] for p in _toml.loads((tmp_path / "pylock.toml").read_text())["packages"]}
    assert locked["tensorflow"] == "2.20.0" and locked["tensorflow-text"] == "2.20.1"


def test_the_moves_are_bounded(tmp_path, index, capsys, monkeypatch):
    from envpin.lock import resolution  # noqa: PLC0415 - its bound, lowered for this test

    monkeypatch.setattr(resolution, "MAX_MOVES", 1)  # protobuf==4.25.1 needs two (2.21.0, then 2.20.0)
    code, answer = solve(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "--resolve")
    assert code == 1 and answer["error"]["code"] == "unresolvable"
    assert "passed over: tensorflow 2.21.0 was passed over" in answer["error"]["message"]
    assert any(fix == "relax or remove requirements.txt:2: protobuf==4.25.1" for fix in answer["error"]["fixes"])


def test_an_environment_yml_whose_channel_does_not_answer_is_not_resolved_end_to_end(tmp_path, index, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text("name: x\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n"
                                             "  - ffmpeg\n  - pip\n  - pip:\n    - tensorflow\n")
    # a channel that refuses the connection, as conda.anaconda.org does where there is no network
    assert main(["solve", "--project", str(project), *RTX3090, "--format", "json", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index",
                 "--channel", "conda-forge=http://127.0.0.1:9/conda-forge", "--cache-dir", str(tmp_path / "rattler")]) == 0
    resolution = json.loads(capsys.readouterr().out)["resolution"]
    assert resolution["status"] == "not-resolved"  # uv resolved the pip part; the conda part could not be solved
    assert resolution["detail"].startswith("the conda packages (ffmpeg) were not solved: a channel is unreachable: ")
    assert "Connection refused" in resolution["detail"] and resolution["conda"] == []
    # the loopback index serves no protobuf 6, which 2.21.0 requires: 2.20.0 is what resolves
    assert "tensorflow==2.20.0" in resolution["packages"] and resolution["passed_over"]


# ---------------------------------------------------------------- the file formats write the resolution


def recorded_sha256(project: str, filename_start: str) -> str:
    files = json.loads((FIXTURES / "pypi.json").read_text())["projects"][project]["files"]
    return next(f["sha256"] for f in files if f["filename"].startswith(filename_start))


def write(tmp_path: Path, lines: str, index: MetadataIndex, capsys, *options: str) -> tuple[int, str, str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "requirements.txt").write_text(lines)
    code = main(["solve", "--project", str(project), *RTX3090, "--python", "3.11", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index", *options])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_requirements_txt_pins_every_package_resolved_with_the_hash_of_its_file(tmp_path, index, capsys):
    code, text, err = write(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "--format", "requirements.txt")
    assert code == 0, err
    lines = text.splitlines()
    pins = [line.removesuffix(" \\") for line in lines if line and not line.startswith(("#", " ", "--"))]
    assert pins == ["numpy==1.26.4", "protobuf==4.25.1", "tensorflow==2.19.1"]  # what uv resolved, each pinned
    assert "tensorflow" not in lines and "tensorflow[and-cuda]==2.19.1" not in lines  # not the lines as written
    numpy = lines.index("numpy==1.26.4 \\")
    assert lines[numpy + 1] == f"    --hash=sha256:{recorded_sha256('numpy', 'numpy-1.26.4-cp311')}"
    assert f"--index-url {index.url}/simple" in lines
    regenerate = next(line for line in lines if line.startswith("# Regenerate: "))
    assert f" --resolve --index-url {index.url}/simple --format requirements.txt" in regenerate


def test_a_line_a_lock_cannot_hold_is_kept_as_written_and_then_no_line_has_hashes(tmp_path, index, capsys):
    code, text, err = write(tmp_path, "tensorflow==2.19.1\n-e ./lib\n", index, capsys, "--format", "requirements.txt")
    assert code == 0, err
    lines = text.splitlines()
    assert "tensorflow==2.19.1" in lines and "-e ./lib" in lines
    assert not any("--hash" in line for line in lines)  # pip's hash-checking mode would refuse `-e ./lib`
    assert "the file pins every one of them\n" in err


def test_pylock_toml_is_the_resolution_as_a_pep_751_lock(tmp_path, index, capsys):
    from envpin.lock.pylock import validate  # noqa: PLC0415 - packaging.pylock's check, and envpin's own

    code, text, err = write(tmp_path, "tensorflow\ntensorflow-text>=2.20.1,<2.21\n", index, capsys,
                            "-o", str(tmp_path / "pylock.toml"))
    assert code == 0, err
    document = _toml.loads((tmp_path / "pylock.toml").read_text())
    assert validate(document) == []
    assert {(p["name"], p["version"]) for p in document["packages"]} == {
        ("numpy", "1.26.4"), ("protobuf", "5.29.5"), ("tensorflow", "2.20.0"), ("tensorflow-text", "2.20.1")}
    text_wheel = next(p for p in document["packages"] if p["name"] == "tensorflow-text")["wheels"][0]
    assert text_wheel["hashes"]["sha256"] == recorded_sha256("tensorflow-text", "tensorflow_text-2.20.1-cp311")
    assert "--resolve" in document["tool"]["envpin"]["regenerate"]
    assert document["tool"]["envpin"]["pins"] == ["tensorflow[and-cuda]==2.20.0"]


def test_environment_yml_pip_section_pins_every_package_resolved(tmp_path, index, capsys):
    import yaml  # noqa: PLC0415 - the written file, read as conda reads it

    code, text, err = write(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "--format", "environment.yml")
    assert code == 0, err
    dependencies = yaml.safe_load(text)["dependencies"]
    assert dependencies[:2] == ["python=3.11", "pip"]
    assert dependencies[-1]["pip"] == [f"--index-url {index.url}/simple", "numpy==1.26.4", "protobuf==4.25.1",
                                       "tensorflow==2.19.1"]


def test_pylock_toml_without_resolve_is_a_one_line_error(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("tensorflow\n")
    assert main(["solve", "--project", str(project), *RTX3090, "--format", "pylock.toml"]) == 2
    assert "a pylock.toml is a resolution of the whole environment: add --resolve" in capsys.readouterr().err


def test_no_pylock_toml_is_written_where_nothing_was_resolved(tmp_path, index, capsys):
    code, text, err = write(tmp_path, "tensorflow\n", index, capsys, "--offline", "-o", str(tmp_path / "pylock.toml"))
    assert code == 1
    assert "no pylock.toml to write: the environment was not resolved end to end (offline, and uv's cache" in err
    assert not (tmp_path / "pylock.toml").exists()


def test_a_requirements_file_not_resolved_end_to_end_keeps_the_lines_as_written(tmp_path, index, capsys):
    code, text, err = write(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "--offline", "--format",
                            "requirements.txt")
    assert code == 0
    assert "protobuf==4.25.1" in text.splitlines() and "tensorflow[and-cuda]==2.21.0" in text.splitlines()
    assert "envpin: warning: not resolved end to end: offline" in err


# ---------------------------------------------------------------- an environment.yml: conda part, then pip part

CONDA_CHANNELS = FIXTURES.parent / "conda" / "conda-lock-derived"  # python 3.12.0, pip 23.3.1, idna 3.4 (linux-64)


def solve_environment_yml(tmp_path: Path, text: str, index: MetadataIndex, capsys, *options: str) -> tuple[int, dict]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "environment.yml").write_text(text)
    code = main(["solve", "--project", str(project), *RTX3090, "--glibc", "2.28", "--format", "json", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index", "--channels", str(CONDA_CHANNELS),
                 "--cache-dir", str(tmp_path / "rattler"), *options])
    return code, json.loads(capsys.readouterr().out)


ENVIRONMENT_YML = "channels: [conda-forge]\ndependencies:\n  - python=3.12\n  - idna\n  - pip\n  - pip:\n    - tensorflow\n"


def test_the_conda_part_is_solved_then_the_pip_part_for_the_python_it_chose(tmp_path, index, capsys):
    code, answer = solve_environment_yml(tmp_path, ENVIRONMENT_YML, index, capsys)
    assert code == 0, answer.get("error")
    resolution = answer["resolution"]
    assert resolution["status"] == "resolved"
    assert "python=3.12.0=hab00c5b_0_cpython" in resolution["conda"] and "idna=3.4=pyhd8ed1ab_0" in resolution["conda"]
    assert len(resolution["conda"]) == 24  # every linux-64 record of the lock the channel was derived from
    assert "the conda part solved by rattler" in resolution["detail"] and "for Python 3.12.0 on" in resolution["detail"]
    assert {"tensorflow==2.20.0", "numpy==1.26.4", "protobuf==5.29.5"} <= set(resolution["packages"])
    # uv read the cp312 wheel's METADATA: the pip part was resolved for the conda part's Python
    assert any("numpy-1.26.4-cp312" in path for path in index.requests)


def test_an_environment_yml_written_from_the_resolution_pins_both_parts(tmp_path, index, capsys):
    import yaml  # noqa: PLC0415 - the written file, read as conda reads it

    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text(ENVIRONMENT_YML)
    assert main(["solve", "--project", str(project), *RTX3090, "--glibc", "2.28", "--resolve", "--format",
                 "environment.yml", "--index-url", f"{index.url}/simple", "--allow-insecure-index",
                 "--channels", str(CONDA_CHANNELS), "--cache-dir", str(tmp_path / "rattler")]) == 0
    text = capsys.readouterr().out
    dependencies = yaml.safe_load(text)["dependencies"]
    assert "python=3.12.0=hab00c5b_0_cpython" in dependencies and "pip=23.3.1=pyhd8ed1ab_0" in dependencies
    regenerate = next(line for line in text.splitlines() if line.startswith("# Regenerate: "))
    assert f"--resolve --index-url {index.url}/simple --channels {CONDA_CHANNELS}" in regenerate
    assert dependencies[-1]["pip"][1:] == ["numpy==1.26.4", "protobuf==5.29.5", "tensorflow==2.20.0"]


def test_the_text_answer_of_an_environment_yml_installs_the_pip_part_into_the_conda_part(tmp_path, index, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text(ENVIRONMENT_YML)
    assert main(["solve", "--project", str(project), *RTX3090, "--glibc", "2.28", "--resolve", "--index-url",
                 f"{index.url}/simple", "--allow-insecure-index", "--channels", str(CONDA_CHANNELS),
                 "--cache-dir", str(tmp_path / "rattler")]) == 0
    text = capsys.readouterr().out
    install = text.split("\ninstall:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert install[-2] == "  # every package of the resolution below, pinned, into the conda part (-o environment.yml " \
                          "writes both)"
    assert shlex.split(install[-1]) == ["pip", "install", "numpy==1.26.4", "protobuf==5.29.5", "tensorflow==2.20.0",
                                        "--index-url", f"{index.url}/simple"]
    assert "\nconda part:\n  " in text


def test_a_pip_line_the_conda_parts_python_cannot_install_is_refused_naming_that_python(tmp_path, index, capsys):
    # scipy 1.10.1 says Requires-Python <3.12 and has no cp312 wheel; the conda part installs Python 3.12.0
    code, answer = solve_environment_yml(tmp_path, ENVIRONMENT_YML + "    - scipy==1.10.1\n", index, capsys)
    assert code == 1
    assert answer["error"]["code"] == "unresolvable"
    message = answer["error"]["message"]
    assert message.startswith("the index serves no file for scipy==1.10.1 (environment.yml: dependencies[3].pip[1]: "
                              "scipy==1.10.1)")
    assert "Python 3.12.0, which the conda part solves to" in message


def test_a_conda_part_that_does_not_solve_is_refused_with_rattlers_reason(tmp_path, index, capsys):
    # no python pin in the file: the plan is for --python 3.11, and the channel serves Python 3.12.0 only
    text = ENVIRONMENT_YML.replace("  - python=3.12\n", "")
    code, answer = solve_environment_yml(tmp_path, text, index, capsys, "--python", "3.11")
    assert code == 1
    assert answer["error"]["code"] == "unresolvable"
    assert "conda part does not solve for linux-64" in answer["error"]["message"]
    assert "No candidates were found for python 3.11.*" in answer["error"]["message"]
    assert not any(path.startswith("/simple") for path in index.requests)  # the pip part was never asked


def test_offline_without_rattlers_cache_of_a_remote_channel_is_not_resolved(tmp_path, index, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text(ENVIRONMENT_YML)
    solve(tmp_path, "tensorflow\n", index, capsys, "--resolve")  # uv's cache, warm
    (project / "requirements.txt").unlink()
    assert main(["solve", "--project", str(project), *RTX3090, "--glibc", "2.28", "--format", "json", "--resolve",
                 "--offline", "--index-url", f"{index.url}/simple", "--allow-insecure-index",
                 "--channel", "conda-forge=http://127.0.0.1:9/conda-forge", "--cache-dir", str(tmp_path / "rattler")]) == 0
    resolution = json.loads(capsys.readouterr().out)["resolution"]
    assert resolution["status"] == "not-resolved"
    assert "offline, and rattler's cache does not hold the channels' repodata" in resolution["detail"]


def test_conda_defaults_is_read_as_condas_default_channels_for_the_subdir():
    from envpin.conda.rattler_solve import resolve_channels  # noqa: PLC0415 - the conda side's own

    main_r = ["https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r"]
    assert resolve_channels(("defaults", "conda-forge"), None, "f", "linux-64") == [*main_r, "conda-forge"]
    assert resolve_channels(("defaults",), None, "f", "win-64") == [*main_r, "https://repo.anaconda.com/pkgs/msys2"]
    assert resolve_channels(("https://repo.anaconda.com/pkgs/main", "defaults", "nodefaults"), None, "f",
                            "osx-arm64") == main_r  # each once, in the file's order


DEFAULTS_YML = ENVIRONMENT_YML.replace("channels: [conda-forge]", "channels: [defaults]")


def test_an_environment_yml_on_defaults_is_solved_from_a_defaults_folder(tmp_path, index, capsys):
    shutil.copytree(CONDA_CHANNELS / "conda-forge", tmp_path / "channels" / "defaults")  # a mirror of the alias
    code, answer = solve_environment_yml(tmp_path, DEFAULTS_YML, index, capsys, "--channels", str(tmp_path / "channels"))
    assert code == 0, answer.get("error")
    resolution = answer["resolution"]
    assert resolution["status"] == "resolved", resolution["detail"]
    assert "python=3.12.0=hab00c5b_0_cpython" in resolution["conda"]
    assert f"rattler from {tmp_path / 'channels' / 'defaults'} for linux-64" in resolution["detail"]


def test_an_environment_yml_on_defaults_is_solved_from_a_location_given_for_it(tmp_path, index, capsys):
    # a loopback mirror laid out as repo.anaconda.com is, its main channel at /pkgs/main
    shutil.copytree(CONDA_CHANNELS / "conda-forge", tmp_path / "repo" / "pkgs" / "main")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "repo"))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text(DEFAULTS_YML)
    main_channel = f"http://127.0.0.1:{server.server_address[1]}/pkgs/main"
    try:
        code = main(["solve", "--project", str(project), *RTX3090, "--glibc", "2.28", "--format", "json", "--resolve",
                     "--index-url", f"{index.url}/simple", "--allow-insecure-index", "--channel",
                     f"defaults={main_channel}", "--cache-dir", str(tmp_path / "rattler")])
    finally:
        server.shutdown()
    resolution = json.loads(capsys.readouterr().out)["resolution"]
    assert code == 0 and resolution["status"] == "resolved", resolution["detail"]
    assert f"rattler from {main_channel} for linux-64" in resolution["detail"]
    assert "idna=3.4=pyhd8ed1ab_0" in resolution["conda"]


def _resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


@pytest.mark.skipif(_resolves("repo.anaconda.com"), reason="a machine with a network would fetch anaconda's repodata")
def test_an_environment_yml_on_defaults_without_a_network_is_not_resolved_end_to_end(tmp_path, index, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text(DEFAULTS_YML)
    assert main(["solve", "--project", str(project), *RTX3090, "--glibc", "2.28", "--format", "json", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index",
                 "--cache-dir", str(tmp_path / "rattler")]) == 0
    resolution = json.loads(capsys.readouterr().out)["resolution"]
    assert resolution["status"] == "not-resolved"  # conda's own channels were asked, and did not answer
    assert resolution["detail"].startswith("the conda packages (idna) were not solved: a channel is unreachable: ")
    assert "https://repo.anaconda.com/pkgs/" in resolution["detail"]
    assert "tensorflow==2.20.0" in resolution["packages"]  # the pip part, resolved for the target's Python


def test_the_channel_is_what_derive_conda_lock_channel_writes_from_the_lock():
    """conda-lock-derived/ is generated data: the script turns the real conda-lock.yml into exactly these files."""
    import importlib.util  # noqa: PLC0415 - the fixture's own script

    import yaml  # noqa: PLC0415 - as the script reads the lock

    script = CONDA_CHANNELS.parent / "derive_conda_lock_channel.py"
    spec = importlib.util.spec_from_file_location("derive_conda_lock_channel", script)
    assert spec is not None and spec.loader is not None
    derive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(derive)
    committed = {p.parent.name: p.read_text(encoding="utf-8") for p in (CONDA_CHANNELS / "conda-forge").glob("*/repodata.json")}
    assert derive.channel(yaml.safe_load(derive.LOCK.read_text(encoding="utf-8"))) == committed


# ---------------------------------------------------------------- `check --resolve`: the file's own lines


def check(tmp_path: Path, lines: str, index: MetadataIndex, capsys, *options: str, python: str = "3.11") -> tuple[int, list]:
    (tmp_path / "requirements.txt").write_text(lines.replace("INDEX", index.url))
    mirror = ["--index-url", f"{index.url}/simple", "--allow-insecure-index"] if "--resolve" in options else []
    code = main(["check", str(tmp_path / "requirements.txt"), "--format", "json", "--no-config", *mirror, *options,
                 *RTX3090, "--python", python])
    problems = json.loads(capsys.readouterr().out)["files"][0]["problems"]
    return code, [p for p in problems if p["id"] in ("CHK-RESOLVE-CONFLICT", "CHK-PIN-NOT-SERVED", "CHK-NOT-RESOLVED")]


def test_check_resolve_reports_lines_that_conflict_with_uvs_reason(tmp_path, index, capsys):
    code, problems = check(tmp_path, "tensorflow==2.20.0\nprotobuf==4.25.1\n", index, capsys, "--resolve")
    assert code == 1
    [conflict] = problems
    assert conflict["id"] == "CHK-RESOLVE-CONFLICT" and conflict["severity"] == "error"
    assert conflict["message"].startswith("uv resolves no environment of the file's lines for Python 3.11 on "
                                          "linux-x86_64: Because tensorflow==2.20.0 depends on protobuf>=5.28.0")
    assert conflict["where"] in ("line 1", "line 2")


def test_check_resolve_reports_a_pin_the_index_does_not_serve(tmp_path, index, capsys):
    code, problems = check(tmp_path, "tensorflow==2.19.1\nprotobuf==4.25.0\n", index, capsys, "--resolve")
    assert code == 1
    assert [(p["id"], p["where"]) for p in problems] == [("CHK-PIN-NOT-SERVED", "line 2")]
    assert problems[0]["message"].startswith("the index serves no file of protobuf==4.25.0 for Python 3.11")


def test_check_resolve_of_lines_that_install_together_adds_nothing(tmp_path, index, capsys):
    # the file's own --extra-index-url: torch's CUDA build from the PyTorch index, tensorflow from the mirror
    code, problems = check(tmp_path, "--extra-index-url INDEX/whl/cu118\ntorch==2.0.1+cu118\ntensorflow==2.13.0\n",
                           index, capsys, "--resolve", python="3.10")
    assert problems == [] and code == 0
    assert any(path.startswith("/whl/cu118/torch") for path in index.requests)


def test_check_resolve_names_a_python_the_pins_were_not_built_for(tmp_path, index, capsys):
    # scipy 1.10.1 has no cp312 wheel (and says Requires-Python <3.12)
    code, problems = check(tmp_path, "scipy==1.10.1\n", index, capsys, "--resolve", python="3.12")
    assert code == 1
    assert [(p["id"], p["where"]) for p in problems] == [("CHK-PIN-NOT-SERVED", "line 1")]
    assert "for Python 3.12 on linux-x86_64" in problems[0]["message"]


def test_check_without_resolve_asks_no_index(tmp_path, index, capsys):
    code, problems = check(tmp_path, "tensorflow==2.20.0\nprotobuf==4.25.1\n", index, capsys)
    assert problems == [] and not index.requests  # the pre-commit hook stays offline unless asked


def test_check_resolve_offline_without_the_cache_is_a_warning(tmp_path, index, capsys):
    code, problems = check(tmp_path, "protobuf==4.25.1\n", index, capsys, "--resolve", "--offline")
    assert code == 0
    assert [(p["id"], p["severity"]) for p in problems] == [("CHK-NOT-RESOLVED", "warning")]
    assert "offline, and uv's cache does not hold protobuf: run once online" in problems[0]["message"]
    assert not index.requests


def test_check_offline_without_resolve_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text("protobuf==4.25.1\n")
    assert main(["check", str(tmp_path / "requirements.txt"), "--offline"]) == 2
    assert "--offline is for --resolve" in capsys.readouterr().err


def test_check_resolve_reads_an_environment_yml_pip_section(tmp_path, index, capsys):
    (tmp_path / "environment.yml").write_text("channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - pip\n"
                                              "  - pip:\n    - tensorflow==2.19.1\n    - protobuf==4.25.0\n")
    code = main(["check", str(tmp_path / "environment.yml"), "--format", "json", "--no-config", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index", *RTX3090, "--python", "3.11"])
    problems = json.loads(capsys.readouterr().out)["files"][0]["problems"]
    assert code == 1
    assert [(p["id"], p["where"]) for p in problems if p["id"] == "CHK-PIN-NOT-SERVED"] == [
        ("CHK-PIN-NOT-SERVED", "dependencies[2].pip[1]")]


def test_an_environment_yml_of_pip_lines_only_has_its_python_and_pip_solved_too(tmp_path, index, capsys):
    text = "channels: [conda-forge]\ndependencies:\n  - python=3.12\n  - pip\n  - pip:\n    - protobuf==5.29.5\n" \
           "    - tensorflow\n"
    code, answer = solve_environment_yml(tmp_path, text, index, capsys)
    assert code == 0, answer.get("error")
    assert answer["resolution"]["status"] == "resolved"
    assert "python=3.12.0=hab00c5b_0_cpython" in answer["resolution"]["conda"]
    assert "idna=3.4=pyhd8ed1ab_0" not in answer["resolution"]["conda"]  # what the file asks for, and no more


# ---------------------------------------------------------------- the install commands print the resolution

HOST_RUNS_THE_WHEELS = sys.platform == "linux" and platform.machine() == "x86_64" and sys.version_info[:2] in (
    (3, 10), (3, 11), (3, 12))  # the recorded wheels: manylinux x86_64, cp310 to cp312
HOST_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def command(tmp_path: Path, lines: str, index: MetadataIndex, capsys, output_format: str, *options: str,
            python: str = "3.11") -> tuple[str, str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "requirements.txt").write_text(lines)
    assert main(["solve", "--project", str(project), *RTX3090, "--python", python, "--resolve", "--index-url",
                 f"{index.url}/simple", "--allow-insecure-index", "--format", output_format, *options]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_the_pip_command_pins_what_the_requirements_file_pins(tmp_path, index, capsys):
    text, _ = command(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "requirements.txt")
    written = [line.removesuffix(" \\") for line in text.splitlines() if line and not line.startswith(("#", " "))]
    printed, err = command(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "pip")
    assert shlex.split(printed) == ["pip", "install", "numpy==1.26.4", "protobuf==4.25.1", "tensorflow==2.19.1",
                                    "--index-url", f"{index.url}/simple"]
    assert [w for w in shlex.split(printed)[2:] if not w.startswith("--")] == \
        [w for w in written if not w.startswith("--")] + [f"{index.url}/simple"]  # the same pins, the same index
    assert "tensorflow[and-cuda]" not in printed  # the resolution, not the plan's framework pin
    assert "; the command pins every one of them" in err


def test_the_commands_carry_each_index_and_a_line_a_lock_cannot_hold(tmp_path, index, capsys):
    # torch 2.0.1+cu118 from the PyTorch index beside tensorflow 2.13.0 from the mirror, and an editable install
    lines = "torch==2.0.1+cu118\ntensorflow==2.13.0\n-e ./lib\n"
    torch_index = ["--torch-index-url", f"{index.url}/whl"]
    pip, _ = command(tmp_path, lines, index, capsys, "pip", *torch_index, python="3.10")
    uv, _ = command(tmp_path, lines, index, capsys, "uv", *torch_index, python="3.10")
    indexes, _ = command(tmp_path, lines, index, capsys, "index-url", *torch_index, python="3.10")
    pins = ["numpy==1.24.3", "protobuf==4.25.1", "tensorflow==2.13.0", "torch==2.0.1+cu118", "-e", "./lib"]
    options = ["--index-url", f"{index.url}/simple", "--extra-index-url", f"{index.url}/whl/cu118"]
    assert shlex.split(pip) == ["pip", "install", *pins, *options]
    # uv takes a package from the first index that lists it unless told, as pip does, to take the best of any
    assert shlex.split(uv) == ["uv", "pip", "install", *pins, *options, "--index-strategy", "unsafe-best-match"]
    assert indexes.splitlines() == [f"{index.url}/simple", f"{index.url}/whl/cu118"]


def test_not_resolved_end_to_end_the_commands_print_the_plan_as_before(tmp_path, index, capsys):
    printed, err = command(tmp_path, "tensorflow\n", index, capsys, "pip", "--offline")
    assert shlex.split(printed) == ["pip", "install", "tensorflow[and-cuda]==2.21.0"]
    assert "envpin: warning: not resolved end to end: offline" in err


def test_the_text_answers_install_command_installs_the_resolution(tmp_path, index, capsys):
    printed, _ = command(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "pip")
    text, _ = command(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "text")
    install = text.split("\ninstall:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # what --format pip prints: every package uv resolved, pinned, and the index; not the plan's framework pin
    assert install == ["  # every package of the resolution below, pinned", f"  {printed.strip()}"]
    assert "tensorflow[and-cuda]" not in install[1]


def test_not_resolved_end_to_end_the_text_answer_installs_the_plans_pins(tmp_path, index, capsys):
    text, _ = command(tmp_path, "tensorflow\n", index, capsys, "text", "--offline")
    install = text.split("\ninstall:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert install == ["  pip install 'tensorflow[and-cuda]==2.21.0'"]


@pytest.mark.skipif(not HOST_RUNS_THE_WHEELS, reason="installs (dry run) the recorded linux x86_64 wheels here")
def test_the_printed_uv_command_installs_the_resolution(tmp_path, index, capsys):
    printed, _ = command(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "uv", python=HOST_PYTHON)
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(tmp_path / "venv")], check=True,
                   cwd=tmp_path)
    ran = subprocess.run([uv, *shlex.split(printed)[1:], "--python", str(tmp_path / "venv"), "--dry-run"],
                         capture_output=True, text=True, cwd=tmp_path, check=False)
    assert ran.returncode == 0, ran.stderr
    assert re.findall(r"^ \+ (\S+)$", ran.stderr, re.MULTILINE) == ["numpy==1.26.4", "protobuf==4.25.1",
                                                                   "tensorflow==2.19.1"]
    assert not any(path.endswith(".whl") for path in index.requests)  # uv read METADATA; no wheel was fetched


@pytest.mark.skipif(not HOST_RUNS_THE_WHEELS, reason="installs (dry run) the recorded linux x86_64 wheels here")
def test_the_printed_pip_command_installs_the_resolution(tmp_path, index, capsys, monkeypatch):
    printed, _ = command(tmp_path, "tensorflow\nprotobuf==4.25.1\n", index, capsys, "pip", python=HOST_PYTHON)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # this machine's pip configuration stays out of it
    report = tmp_path / "report.json"
    ran = subprocess.run([sys.executable, "-m", *shlex.split(printed), "--dry-run", "--ignore-installed", "--quiet",
                          "--report", str(report)], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert ran.returncode == 0, ran.stderr
    installed = sorted(f"{p['metadata']['name']}=={p['metadata']['version']}" for p in json.loads(report.read_text())["install"])
    assert installed == ["numpy==1.26.4", "protobuf==4.25.1", "tensorflow==2.19.1"]
    assert not any(path.endswith(".whl") for path in index.requests)  # pip read METADATA (PEP 658) alone


# ---------------------------------------------------------------- `check --resolve` of a pyproject.toml

PYPROJECT = """[project]
name = "app"
version = "0"
dependencies = ["tensorflow==2.19.1"]

[project.optional-dependencies]
text = ["tensorflow-text==2.20.1"]
old-protobuf = ["protobuf==4.25.0"]
protobuf = ["protobuf==4.25.1"]
"""


def check_pyproject(tmp_path: Path, text: str, index: MetadataIndex, capsys, *options: str,
                    python: str = "3.11") -> tuple[int, list]:
    (tmp_path / "pyproject.toml").write_text(text.replace("INDEX", index.url))
    code = main(["check", str(tmp_path / "pyproject.toml"), "--format", "json", "--no-config", "--resolve",
                 "--index-url", f"{index.url}/simple", "--allow-insecure-index", *options, *RTX3090, "--python", python])
    problems = json.loads(capsys.readouterr().out)["files"][0]["problems"]
    return code, [p for p in problems if p["id"] in ("CHK-RESOLVE-CONFLICT", "CHK-PIN-NOT-SERVED", "CHK-NOT-RESOLVED")]


def test_check_resolve_of_a_pyproject_resolves_the_dependencies_with_each_extra(tmp_path, index, capsys):
    code, problems = check_pyproject(tmp_path, PYPROJECT, index, capsys)
    assert code == 1
    found = {(p["id"], p["where"]) for p in problems}
    # tensorflow-text 2.20.1 needs tensorflow>=2.20.0: the `text` extra does not install beside the dependencies;
    # the mirror serves no protobuf 4.25.0; the `protobuf` extra installs
    assert found == {("CHK-RESOLVE-CONFLICT", "project.dependencies[0]"),
                     ("CHK-PIN-NOT-SERVED", "project.optional-dependencies.old-protobuf[0]")}
    conflict = next(p for p in problems if p["id"] == "CHK-RESOLVE-CONFLICT")
    assert conflict["message"].startswith("uv resolves no environment of the project's dependencies with extra text "
                                          "for Python 3.11 on linux-x86_64: ")
    assert "tensorflow-text" in conflict["message"] and "tensorflow==2.19.1" in conflict["message"]


def test_check_resolve_of_a_pyprojects_dependencies_that_conflict_asks_no_extra(tmp_path, index, capsys):
    text = PYPROJECT.replace('["tensorflow==2.19.1"]', '["tensorflow==2.20.0", "protobuf==4.25.1"]')
    code, problems = check_pyproject(tmp_path, text, index, capsys)
    assert code == 1
    [conflict] = problems  # the extras would say it again
    assert conflict["message"].startswith("uv resolves no environment of the project's dependencies for Python 3.11")
    assert "tensorflow==2.20.0 depends on protobuf>=5.28.0" in conflict["message"]


TORCH_PYPROJECT = """[project]
name = "app"
version = "0"
dependencies = ["tensorflow==2.13.0"]

[project.optional-dependencies]
cu118 = ["torch==2.0.1+cu118"]

[[tool.uv.index]]
name = "pytorch-cu118"
url = "INDEX/whl/cu118"
explicit = true
"""


def test_check_resolve_takes_a_package_from_the_index_its_uv_source_names(tmp_path, index, capsys):
    sourced = TORCH_PYPROJECT + '\n[tool.uv.sources]\ntorch = { index = "pytorch-cu118", extra = "cu118" }\n'
    code, problems = check_pyproject(tmp_path, sourced, index, capsys, python="3.10")
    assert (code, problems) == (0, [])
    assert any(path.startswith("/whl/cu118/torch") for path in index.requests)


def test_check_resolve_without_the_source_looks_for_torch_on_the_default_index_alone(tmp_path, index, capsys):
    # the index is explicit: only a package its source names comes from it, and the mirror serves no torch
    code, problems = check_pyproject(tmp_path, TORCH_PYPROJECT, index, capsys, python="3.10")
    assert code == 1
    assert [(p["id"], p["where"]) for p in problems] == [("CHK-PIN-NOT-SERVED", "project.optional-dependencies.cu118[0]")]
    assert not any(path.startswith("/whl/cu118") for path in index.requests)


def test_check_resolve_asks_a_non_explicit_uv_index_first_for_every_package(tmp_path, index, capsys):
    # not explicit: uv asks it before the default index for each package (first-index), so torch is found there
    code, problems = check_pyproject(tmp_path, TORCH_PYPROJECT.replace("explicit = true", "explicit = false"), index,
                                     capsys, python="3.10")
    assert (code, problems) == (0, [])
    assert {"/whl/cu118/torch/", "/whl/cu118/tensorflow/"} <= set(index.requests)


# ---------------------------------------------------------------- `check --resolve` of a pixi manifest

PIXI_TOML = """[workspace]
name = "app"
channels = ["conda-forge"]
platforms = ["linux-64", "win-64"]

[dependencies]
python = "3.11.*"

[pypi-dependencies]
tensorflow = "==2.19.1"

[target.linux-64.pypi-dependencies]
numpy = "==1.26.4"

[target.win-64.pypi-dependencies]
numpy = "==1.25.0"

[feature.text.pypi-dependencies]
tensorflow-text = "==2.20.1"

[feature.old-protobuf.pypi-dependencies]
protobuf = { version = "==4.25.0" }
"""


def check_pixi(tmp_path: Path, text: str, index: MetadataIndex, capsys, *options: str,
               python: str = "3.11") -> tuple[int, list]:
    (tmp_path / "pixi.toml").write_text(text.replace("INDEX", index.url))
    code = main(["check", str(tmp_path / "pixi.toml"), "--format", "json", "--no-config", "--resolve",
                 "--allow-insecure-index", *options, *RTX3090, "--python", python])
    problems = json.loads(capsys.readouterr().out)["files"][0]["problems"]
    return code, [p for p in problems if p["id"] in ("CHK-RESOLVE-CONFLICT", "CHK-PIN-NOT-SERVED", "CHK-NOT-RESOLVED")]


def test_check_resolve_of_a_pixi_manifest_resolves_its_pypi_dependencies_with_each_feature(tmp_path, index, capsys):
    code, problems = check_pixi(tmp_path, PIXI_TOML, index, capsys, "--index-url", f"{index.url}/simple")
    assert code == 1
    # tensorflow-text 2.20.1 needs tensorflow>=2.20.0; the mirror serves no protobuf 4.25.0; the win-64 table's
    # numpy==1.25.0 (which it does not serve either) is not the linux target's
    assert {(p["id"], p["where"]) for p in problems} == {
        ("CHK-RESOLVE-CONFLICT", "pypi-dependencies.tensorflow"),
        ("CHK-PIN-NOT-SERVED", "feature.old-protobuf.pypi-dependencies.protobuf")}
    conflict = next(p for p in problems if p["id"] == "CHK-RESOLVE-CONFLICT")
    assert conflict["message"].startswith("uv resolves no environment of the pixi manifest's pypi-dependencies with "
                                          "feature text (its conda dependencies left out: they are not uv's) for "
                                          "Python 3.11 on linux-x86_64: ")


def test_check_resolve_of_a_pixi_manifest_takes_the_target_tables_of_the_targets_subdir(tmp_path, index, capsys):
    text = PIXI_TOML.split("[feature.")[0].replace('numpy = "==1.26.4"', 'protobuf = "==4.25.0"')
    code, problems = check_pixi(tmp_path, text, index, capsys, "--index-url", f"{index.url}/simple")
    assert code == 1  # the linux-64 table's protobuf==4.25.0 is asked, the win-64 table's numpy==1.25.0 is not
    assert [(p["id"], p["where"]) for p in problems] == [
        ("CHK-PIN-NOT-SERVED", "target.linux-64.pypi-dependencies.protobuf")]


def test_check_resolve_of_a_pixi_manifest_resolves_for_the_python_it_installs(tmp_path, index, capsys):
    # scipy 1.10.1 has no cp312 wheel: pixi installs Python 3.12, whatever the target's Python
    text = '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n[dependencies]\npython = "3.12.*"\n' \
           '[pypi-dependencies]\nscipy = "==1.10.1"\n'
    code, problems = check_pixi(tmp_path, text, index, capsys, "--index-url", f"{index.url}/simple")
    assert code == 1
    assert [(p["id"], p["where"]) for p in problems] == [("CHK-PIN-NOT-SERVED", "pypi-dependencies.scipy")]
    assert "for Python 3.12 (the manifest's python) on linux-x86_64" in problems[0]["message"]
    code, problems = check_pixi(tmp_path, text.replace("3.12.*", "3.11.*"), index, capsys, "--index-url",
                                f"{index.url}/simple", python="3.12")
    assert problems == []  # for 3.11, which the manifest installs, scipy 1.10.1 has its wheel (and CHK-TARGET-PYTHON
    assert code == 1  # says that the target's 3.12 is not the Python pixi installs)


def test_check_resolve_of_a_pixi_manifest_asks_its_pypi_options_index(tmp_path, index, capsys):
    text = PIXI_TOML.split("[target.")[0] + '\n[pypi-options]\nindex-url = "INDEX/simple"\n'
    code, problems = check_pixi(tmp_path, text, index, capsys)
    assert (code, problems) == (0, [])
    assert any(path.startswith("/simple/tensorflow") for path in index.requests)


def test_check_resolve_of_a_pixi_manifest_of_git_and_path_packages_says_it_was_not_resolved(tmp_path, index,
                                                                                             capsys):
    text = '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n[dependencies]\npython = "3.11.*"\n' \
           '[pypi-dependencies]\napp = { path = ".", editable = true }\n' \
           'lib = { git = "https://github.com/example/lib.git" }\n'
    code, problems = check_pixi(tmp_path, text, index, capsys, "--index-url", f"{index.url}/simple")
    assert code == 0
    assert [(p["id"], p["severity"], p["where"]) for p in problems] == [
        ("CHK-NOT-RESOLVED", "warning", "pypi-dependencies.app")]
    assert "(pypi-dependencies.app, pypi-dependencies.lib) are path, git or URL packages" in problems[0]["message"]
    assert not index.requests


# ---------------------------------------------------------------- a plan of conda builds, solved by rattler

# three offline channels derived from prefix-dev/pixi's examples/pytorch/pixi.lock (tests/fixtures/conda/SOURCES.md):
# its `cf-channel` environment is conda-forge's pytorch 2.4.0 for CUDA 12, 73 linux-64 packages
PIXI_CHANNELS = FIXTURES.parent / "conda" / "lock-derived"
CUDA_12_1 = ["--os", "linux", "--arch", "x86_64", "--driver", "530.30.02", "--gpu", "NVIDIA GeForce RTX 3090"]


def solve_conda_plan(tmp_path: Path, lines: str, capsys, *options: str, python: str = "3.12") -> tuple[int, dict]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "requirements.txt").write_text(lines)
    code = main(["solve", "--project", str(project), *CUDA_12_1, "--python", python, "--conda-source", "conda-forge",
                 "--format", "json", "--cache-dir", str(tmp_path / "rattler"), *options])
    return code, json.loads(capsys.readouterr().out)


def test_a_conda_forge_plan_is_solved_by_rattler_with_resolve(tmp_path, capsys):
    code, answer = solve_conda_plan(tmp_path, "torch==2.4.0\n", capsys, "--resolve", "--channels", str(PIXI_CHANNELS))
    assert code == 0, answer.get("error")
    assert "pytorch=2.4.0=cuda120*" in answer["conda"]["dependencies"]
    resolution = answer["resolution"]
    assert resolution["status"] == "resolved"
    assert resolution["detail"].startswith("resolved end to end: the conda part solved by rattler from ")
    records = resolution["conda"]
    assert len(records) == 73  # the packages pixi locked for this environment
    assert "pytorch=2.4.0=cuda120_py312h26b3cf7_301" in records and "python=3.12.6=hc5c86c4_1_cpython" in records
    assert not any(r.split("=")[2].startswith("cpu") for r in records)


def test_a_conda_forge_plan_written_with_resolve_lists_the_solved_records(tmp_path, capsys):
    import yaml  # noqa: PLC0415 - the written file, read as conda reads it

    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("torch==2.4.0\n")
    assert main(["solve", "--project", str(project), *CUDA_12_1, "--python", "3.12", "--conda-source", "conda-forge",
                 "--resolve", "--channels", str(PIXI_CHANNELS), "--cache-dir", str(tmp_path / "rattler"),
                 "--format", "environment.yml"]) == 0
    captured = capsys.readouterr()
    dependencies = yaml.safe_load(captured.out)["dependencies"]
    assert len(dependencies) == 73 and "libtorch=2.4.0=cuda120_h2b0da52_301" in dependencies
    regenerate = next(line for line in captured.out.splitlines() if line.startswith("# Regenerate: "))
    assert f"--conda-source conda-forge --resolve --channels {PIXI_CHANNELS}" in regenerate
    assert "; the file's dependencies are the solved records" in captured.err


def test_a_conda_forge_plan_with_pip_lines_needs_pip_from_the_channel(tmp_path, capsys):
    code, answer = solve_conda_plan(tmp_path, "torch==2.4.0\nprotobuf==4.25.1\n", capsys, "--resolve",
                                    "--channels", str(PIXI_CHANNELS))
    assert code == 1  # pixi's lock holds no pip, and the environment.yml's pip section needs conda's pip
    assert answer["error"]["code"] == "unresolvable"
    assert "No candidates were found for pip *" in answer["error"]["message"]


def test_a_conda_forge_plans_pip_lines_leave_it_not_resolved_end_to_end(tmp_path, capsys):
    # conda-forge's records of both recorded locks (the pixi one's first where both hold a file): pytorch and pip
    for subdir in ("linux-64", "noarch"):
        merged: dict = {}
        for channel in (PIXI_CHANNELS, CONDA_CHANNELS):
            recorded = json.loads((channel / "conda-forge" / subdir / "repodata.json").read_text())
            for key, value in recorded.items():
                if key.startswith("packages"):
                    for filename, record in value.items():
                        merged.setdefault(key, {}).setdefault(filename, record)
                else:
                    merged.setdefault(key, value)
        (tmp_path / "channels" / "conda-forge" / subdir).mkdir(parents=True)
        (tmp_path / "channels" / "conda-forge" / subdir / "repodata.json").write_text(json.dumps(merged))
    code, answer = solve_conda_plan(tmp_path, "torch==2.4.0\nprotobuf==4.25.1\n", capsys, "--resolve",
                                    "--channels", str(tmp_path / "channels"))
    assert code == 0, answer.get("error")
    resolution = answer["resolution"]
    assert resolution["status"] == "not-resolved" and "pip=23.3.1=pyhd8ed1ab_0" in resolution["conda"]
    assert len(resolution["conda"]) == 76  # the 73 of the pixi lock, and pip, setuptools, wheel
    assert resolution["detail"].endswith("its pip lines (protobuf==4.25.1) are not resolved beside it (uv does not see "
                                         "the conda packages)")


def test_a_conda_forge_plan_whose_channel_does_not_answer_is_not_resolved_end_to_end(tmp_path, capsys):
    code, answer = solve_conda_plan(tmp_path, "torch==2.4.0\n", capsys, "--resolve",
                                    "--channel", "conda-forge=http://127.0.0.1:9/conda-forge")
    assert code == 0
    resolution = answer["resolution"]
    assert resolution["status"] == "not-resolved" and resolution["conda"] == []
    assert resolution["detail"].startswith("the conda part (conda-forge's builds) was not solved: a channel is "
                                           "unreachable: ")


def test_a_conda_forge_plan_the_channels_cannot_solve_is_refused(tmp_path, capsys):
    # the channel serves Python 3.12.6 alone
    code, answer = solve_conda_plan(tmp_path, "torch==2.4.0\n", capsys, "--resolve", "--channels", str(PIXI_CHANNELS),
                                    python="3.11")
    assert code == 1
    assert answer["error"]["code"] == "unresolvable"
    assert "No candidates were found for python 3.11.*" in answer["error"]["message"]


def test_a_conda_forge_plan_without_resolve_says_it_was_not_asked(tmp_path, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("torch==2.4.0\n")
    assert main(["solve", "--project", str(project), *CUDA_12_1, "--python", "3.12", "--conda-source", "conda-forge",
                 "--format", "json"]) == 0
    resolution = json.loads(capsys.readouterr().out)["resolution"]
    assert resolution["status"] == "not-resolved" and resolution["detail"].startswith("not asked")


def test_what_the_database_knows_offline_is_what_uv_resolves(tmp_path, index, capsys, monkeypatch):
    """With the whole database the solve moves before uv is asked (tensorflow-text's and protobuf's bounds are in
    tied.yaml and requires.yaml): uv then resolves the first plan as it stands, with nothing left to pass over."""
    from tests.conftest import DB_DIR  # noqa: PLC0415 - this test only

    monkeypatch.setenv("ENVPIN_DB", str(DB_DIR))
    for lines, expected in (("tensorflow\ntensorflow-text>=2.20.1,<2.21\n", "tensorflow[and-cuda]==2.20.0"),
                            ("tensorflow\nprotobuf==4.25.1\n", "tensorflow[and-cuda]==2.19.1")):
        code, answer = solve(tmp_path, lines, index, capsys, "--resolve")
        assert code == 0 and pins(answer) == [expected], answer
        assert answer["resolution"]["status"] == "resolved" and not answer["resolution"]["passed_over"], answer
