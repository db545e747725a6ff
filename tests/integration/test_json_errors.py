"""With `--format json`, a failing command still prints exactly one JSON document on stdout (docs/contracts.md):
`{"status": "error", "error": {"code", "message"}}`, exit 2, one line on stderr, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "550.54.15", "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.11"]


def envpin(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=REPO, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, code, says", [
    (["solve", "--format", "json", "--facts", "/nonexistent/facts.json"], "unreadable-file", "--facts /nonexistent/facts.json"),
    (["solve", "--format", "json", *TARGET[:-2], "--python", "three"], "input", "--python 'three'"),
    (["solve", "--format=json", "--bogus"], "usage", "unrecognized arguments: --bogus"),
    (["solve", "--format", "json", "--framework", "caffe", *TARGET], "input", "unknown framework 'caffe'"),
    (["solve", "--format", "json", *TARGET, "--db", "/nonexistent/db"], "database", "/nonexistent/db"),
    (["db", "info", "--format", "json", "--db", "/nonexistent/db"], "database", "/nonexistent/db"),
    (["doctor", "--format", "json", "--facts", "/nonexistent/facts.json"], "unreadable-file", "/nonexistent/facts.json"),
    (["verify", "--format", "json", "--interpreter", "/nonexistent/python"], "input", "/nonexistent/python"),
    (["detect", "--format", "json", "--timeout", "soon"], "usage", "--timeout"),
])
def test_an_error_with_format_json_is_one_json_document(args, code, says):
    result = envpin(*args)
    assert result.returncode == 2, result.stderr
    document = json.loads(result.stdout)  # exactly one document: json.loads refuses anything after it
    assert document["status"] == "error"
    assert document["error"]["code"] == code
    assert says in document["error"]["message"]
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_without_format_json_stdout_stays_empty():
    result = envpin("solve", "--facts", "/nonexistent/facts.json")
    assert result.returncode == 2 and result.stdout == ""
