"""Encodings users bring: a console or redirected file that is not UTF-8 (Windows' cp1252, plain ASCII), and
facts files written by Windows PowerShell (UTF-16 with a byte-order mark) or Notepad (UTF-8 with one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

OLD_DRIVER = ["--os", "linux", "--arch", "x86_64", "--driver", "470.82.01", "--gpu", "NVIDIA GeForce RTX 3090",
              "--python", "3.11", "--spec", "torch>=2.9"]
FACTS = {"schema": 1, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
         "driver": {"version": "550.54.15", "cuda": "12.4", "source": "nvml"},
         "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}]}


def envpin(*args: str, encoding: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"PYTHONIOENCODING": encoding} if encoding else {})}
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, cwd=REPO, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("encoding", ["ascii", "cp1252", "latin-1"])
def test_a_console_that_is_not_utf8_gets_ascii_for_what_it_cannot_show(encoding):
    result = envpin("solve", *OLD_DRIVER, encoding=encoding)
    assert result.returncode == 1, result.stderr  # the old driver: an answer with fixes, not a crash
    text = result.stdout.decode(encoding)
    assert "Traceback" not in result.stderr.decode(encoding, errors="replace")
    assert "database" in text and "driver" in text
    if encoding == "ascii":
        assert "envpin 0.1.0 - database" in text


@pytest.mark.parametrize("codec, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-8", b"\xef\xbb\xbf")])
def test_facts_files_with_a_byte_order_mark_are_read(tmp_path, codec, bom):
    path = tmp_path / "facts.json"
    path.write_bytes(bom + json.dumps(FACTS, indent=2).replace("\n", "\r\n").encode(codec))
    result = envpin("solve", "--facts", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["target"]["driver"] == "550.54.15"
