"""Inputs that ask for unbounded work, through the real commands (`envpin check`, the pre-commit hook's entry, and
`solve`): each is refused with one line naming the limit (envpin.base.limits, docs/hardening.md "Limits") and exit 2,
or, where the work is made linear instead, answered. The times are in scripts/bench_hostile.py, not asserted here."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envpin.base.limits import MAX_CONTINUATIONS, MAX_ENTRIES_PER_PACKAGE, MAX_LINES, MAX_SPECIFIERS, MAX_TOML_DEPTH
from envpin.base.userfiles import MAX_INPUT_BYTES
from tests.integration.test_cli import envpin

TARGET = ["--os", "linux", "--python", "3.11"]


def _refused(result, *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-500:])
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("envpin: error:")]
    assert len(errors) == 1 and len(errors[0]) < 400, result.stderr[-500:]
    for word in words:
        assert word in errors[0], errors[0]


def _project(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "project"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def test_ten_thousand_clauses_in_one_requirement(tmp_path):
    line = "torch" + ",".join(f"!=1.{i}" for i in range(10_000))
    folder = _project(tmp_path, "requirements.txt", line + "\n")
    for command in (["check", str(folder / "requirements.txt")], ["solve", "-r", str(folder / "requirements.txt"), *TARGET]):
        _refused(envpin(*command), "10,000 version clauses", f"({MAX_SPECIFIERS})")
    spec = "torch" + ",".join(f"!=1.{i}" for i in range(MAX_SPECIFIERS + 1))
    _refused(envpin("solve", "--framework", "torch", "--spec", spec, *TARGET), f"({MAX_SPECIFIERS})")


def test_a_hundred_thousand_continuation_lines(tmp_path):
    folder = _project(tmp_path, "requirements.txt", "torch\\\n" * 100_000 + "\n")
    for command in (["check", str(folder / "requirements.txt")], ["solve", "-r", str(folder / "requirements.txt"), *TARGET]):
        _refused(envpin(*command), f"more than {MAX_CONTINUATIONS:,} lines")


@pytest.mark.parametrize("line", ['"torch"', "\"torch; python_version == '3.{i}'\""])
def test_one_package_listed_five_thousand_times(tmp_path, line):
    dependencies = "".join(line.format(i=i) + ",\n" for i in range(5_000))
    folder = _project(tmp_path, "pyproject.toml", f'[project]\nname = "x"\nversion = "1"\ndependencies = [\n{dependencies}]\n')
    _refused(envpin("check", str(folder / "pyproject.toml")), "torch is listed 5,000 times",
             f"{MAX_ENTRIES_PER_PACKAGE:,} entries")
    # solve --project reads a framework's lines as solver specs, which intersect: answered, or refused the same way
    result = envpin("solve", "--project", str(folder), *TARGET)
    if result.returncode != 0:
        _refused(result, "torch is listed 5,000 times")


def test_a_thousand_alike_lines_are_compared_once(tmp_path):
    # under the limit, lines alike but for where they are cost one comparison each (before: 1,000²/2)
    dependencies = '"torch",\n' * MAX_ENTRIES_PER_PACKAGE
    folder = _project(tmp_path, "pyproject.toml", f'[project]\nname = "x"\nversion = "1"\ndependencies = [\n{dependencies}]\n')
    result = envpin("check", str(folder / "pyproject.toml"))
    assert result.returncode == 0, result.stderr


def test_toml_nested_past_the_limit(tmp_path):
    deep = "[" * 5_000 + "]" * 5_000
    folder = _project(tmp_path, "pyproject.toml", f'[project]\nname = "x"\nversion = "1"\n[tool.x]\na = {deep}\n')
    for command in (["check", str(folder / "pyproject.toml")], ["solve", "--project", str(folder), *TARGET]):
        _refused(envpin(*command), "nested 5,000 deep", f"({MAX_TOML_DEPTH})")
    # brackets inside strings and comments are text, not nesting
    text = '[project]\nname = "x"\nversion = "1"\ndependencies = ["torch"]\n# ' + "[" * 500 + '\n[tool.x]\na = "' + \
        "[" * 500 + "\"\nb = '''\n" + "{" * 500 + "\n'''\n"
    folder = _project(tmp_path, "pyproject.toml", text)
    assert envpin("check", str(folder / "pyproject.toml")).returncode == 0


def test_a_file_of_too_many_lines_or_bytes(tmp_path):
    folder = _project(tmp_path, "environment.yml", "name: x\n" + "#\n" * MAX_LINES)
    _refused(envpin("check", str(folder / "environment.yml")), f"more than envpin reads in one file ({MAX_LINES:,})")
    path = folder / "environment.yml"
    with open(path, "w") as handle:  # one long comment line: the size is the limit met first
        handle.write("name: x\n# ")
        handle.truncate(MAX_INPUT_BYTES + 1)
    path.write_bytes(path.read_bytes().replace(b"\0", b"a"))
    _refused(envpin("check", str(path)), "larger than 16 MiB")
    _refused(envpin("solve", "--project", str(folder), *TARGET), "larger than 16 MiB")


def test_a_python_of_five_thousand_digits():
    _refused(envpin("solve", "--framework", "torch", "--python", "3." + "1" * 5_000, "--os", "linux"),
             "--python", "expected a Python version")


def test_pixi_keys_of_the_wrong_type(tmp_path):
    for line, where in (("platforms = 5", "workspace.platforms"), ('channels = "conda-forge"', "workspace.channels")):
        folder = _project(tmp_path, "pixi.toml", f'[workspace]\nname = "x"\n{line}\n[dependencies]\npython = "3.11.*"\n')
        for command in (["check", str(folder / "pixi.toml")], ["solve", "--project", str(folder), *TARGET]):
            _refused(envpin(*command), where, "expected a list")


def test_a_megabyte_gpu_name_is_answered(tmp_path):
    # the file's header names the GPU, and written text goes through credential redaction: linear now (a 20,000-letter
    # name took 25 s before; a megabyte, hours)
    facts = {"schema": 1, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
             "driver": {"version": "535.104.05"},
             "gpus": [{"index": 0, "name": "NVIDIA " + "a" * 1024 * 1024, "compute_capability": "8.6"}]}
    (tmp_path / "facts.json").write_text(json.dumps(facts))
    result = envpin("solve", "--facts", str(tmp_path / "facts.json"), "-o", str(tmp_path / "requirements.txt"))
    assert result.returncode == 0, result.stderr[-500:]
    assert "torch==" in (tmp_path / "requirements.txt").read_text()


def test_a_toml_integer_past_pythons_digit_limit(tmp_path):
    folder = _project(tmp_path, "pyproject.toml", f'[project]\nname = "x"\nversion = "1"\n[tool.ruff]\nline-length = {"9" * 5_000}\n')
    for command in (["check", str(folder / "pyproject.toml")], ["solve", "--project", str(folder), *TARGET]):
        _refused(envpin(*command), "more than 4,300 digits")


def test_the_pre_commit_hook_entry_on_a_repository_of_hostile_files(tmp_path):
    # as pre-commit runs the hook: its `entry` with the repository's files that its `files` pattern matches, from the
    # repository's root (`pre-commit try-repo` itself needs PyPI: scripts/check_precommit_hook.py)
    hooks = yaml.safe_load((Path(__file__).parents[2] / ".pre-commit-hooks.yaml").read_text())
    [hook] = [h for h in hooks if h["id"] == "envpin-check"]
    repository = tmp_path / "repo"
    (repository / "sub").mkdir(parents=True)
    (repository / "requirements.txt").write_text("torch" + ",".join(f"!=1.{i}" for i in range(10_000)) + "\n")
    (repository / "sub" / "requirements-dev.txt").write_text("torch\\\n" * 100_000 + "\n")
    (repository / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\ndependencies = [\n'
                                               + '"torch",\n' * 5_000 + "]\n")
    (repository / "pixi.toml").write_text('[workspace]\nname = "x"\nplatforms = 5\n')
    (repository / "README.md").write_text("not checked\n")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    subprocess.run(["git", "-C", str(repository), "add", "."], check=True)
    files = subprocess.run(["git", "-C", str(repository), "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
    matched = [name for name in files if re.search(hook["files"], name)]
    assert sorted(matched) == ["pixi.toml", "pyproject.toml", "requirements.txt", "sub/requirements-dev.txt"]
    entry = hook["entry"].split()
    assert entry[0] == "envpin"
    result = subprocess.run([sys.executable, "-m", "envpin", *entry[1:], *matched], cwd=repository,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr[-1000:]
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("envpin: error:")]
    assert len(errors) == 4 and all(len(line) < 400 for line in errors), errors
    said = "\n".join(errors)
    for words in (f"({MAX_SPECIFIERS})", f"{MAX_CONTINUATIONS:,} lines", "listed 5,000 times", "expected a list"):
        assert words in said, said


def test_a_timeout_past_a_week_is_one_line():
    # 1e300 s is finite, but no clock or timer takes it: OverflowError from deep inside before
    for command in (["detect", "--timeout", "1e300"], ["verify", "--timeout", "1e300", "--no-smoke"]):
        result = envpin(*command)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "604,800 s" in result.stderr, result.stderr


@pytest.mark.parametrize(("value", "words"), [("[" * 5_000 + "]" * 5_000, "nested"), ("9" * 5_000, "4300 digits"),
                                              ("2020-13-45", "month")])
def test_environment_yml_values_yaml_cannot_make(tmp_path, value, words):
    folder = _project(tmp_path, "environment.yml", f"name: x\ndependencies:\n  - python=3.11\n  - pip\nx: {value}\n")
    result = envpin("solve", "--project", str(folder), *TARGET)
    _refused(result, "environment.yml", words)
    result = envpin("check", str(folder / "environment.yml"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-500:]
