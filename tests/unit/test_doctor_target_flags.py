"""`envpin doctor` takes the target flags every command takes, with the same precedence: flags over --facts over
detection. The machine the flags describe is the one its install fixes are solved for."""

from __future__ import annotations

import json

import pytest

from envpin.cli import main
from tests.unit.test_doctor_scenarios import facts_document
from tests.unit.test_doctor_solved_fixes import pinned_builds, solve_answer

WARNING = ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
           "installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n")


def doctor(tmp_path, capsys, scenario: dict, *flags: str) -> tuple[int, dict]:
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(facts_document(scenario)), encoding="utf-8")
    error = tmp_path / "error.txt"
    error.write_text(scenario.get("error_text", ""), encoding="utf-8")
    code = main(["doctor", "--facts", str(facts), "--error-text", str(error), "--format", "json", *flags])
    return code, json.loads(capsys.readouterr().out)


def first_install(document: dict) -> str:
    return next(line for line in document["findings"][0]["fix"] if pinned_builds(line))


def test_gpu_and_driver_flags_describe_the_machine_the_fix_is_solved_for(tmp_path, capsys, database):
    scenario = {"name": "flags", "machine": "linux-unreported", "env": {"packages": {"pip": {"torch": "2.5.1+cu124"}}},
                "error_text": WARNING}
    code, document = doctor(tmp_path, capsys, scenario, "--gpu", "NVIDIA GeForce RTX 5090", "--driver", "575.57.08",
                            "--db", str(database_dir()))
    assert code == 1
    install = first_install(document)
    answer = solve_answer("--framework torch --spec torch==2.7.0 --os linux --arch x86_64 --python 3.10 --driver 575.57.08 "
                          "--gpu 'NVIDIA GeForce RTX 5090'", database)
    assert f"torch=={answer.packages[0].version}" in install
    every = "\n".join(document["findings"][0]["fix"])
    assert "--driver 575.57.08" in every and "solved for 570.26" not in every  # the flag, not the inferred floor


def test_a_flag_wins_over_the_facts_file(tmp_path, capsys, database):
    scenario = {"name": "precedence", "machine": "linux-rtx3060-570.124.04",
                "env": {"packages": {"pip": {"torch": "2.7.0+cu128"}}},
                "error_text": "RuntimeError: The NVIDIA driver on your system is too old (found version 12040).\n"}
    _, from_facts = doctor(tmp_path, capsys, scenario, "--db", str(database_dir()))
    _, flagged = doctor(tmp_path, capsys, scenario, "--driver", "550.54.14", "--python", "3.12", "--db", str(database_dir()))
    assert "NVIDIA driver 570.124.04" in json.dumps(from_facts)
    text = json.dumps(flagged)
    assert "--driver 550.54.14" in text and "--python 3.12" in text


def test_a_bad_flag_is_one_line_exit_2(tmp_path, capsys):
    scenario = {"name": "bad", "machine": "linux-unreported", "error_text": WARNING}
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(facts_document(scenario)), encoding="utf-8")
    code = main(["doctor", "--facts", str(facts), "--driver", "banana", "--format", "json"])
    out = capsys.readouterr()
    assert code == 2
    document = json.loads(out.out or out.err)
    assert document["status"] == "error" and "banana" in document["error"]["message"]


def database_dir():
    from tests.conftest import DB_DIR  # noqa: PLC0415 - the frozen database the `database` fixture loads

    return DB_DIR


@pytest.fixture(autouse=True)
def _no_env_db(monkeypatch):
    monkeypatch.delenv("ENVPIN_DB", raising=False)
