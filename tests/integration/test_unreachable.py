"""An index or channel that does not answer is exit 2 and says "unreachable", never "no solution" or "does not
solve" (issue 16). Real uv and real py-rattler against a loopback port nothing listens on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import REPO

TARGET = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "none"]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def envpin(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "UV_HTTP_RETRIES": "0"}  # uv would retry a refused connection for seconds
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=300, env=env, stdin=subprocess.DEVNULL)


def test_an_unreachable_index_is_exit_2_and_says_so(tmp_path):
    base = f"http://127.0.0.1:{closed_port()}"
    result = envpin("lock", *TARGET, "--torch-index-url", f"{base}/whl", "--index-url", f"{base}/simple",
                    "-o", str(tmp_path / "pylock.toml"), "--format", "requirements")
    assert result.returncode == 2, result.stderr
    assert "unreachable" in result.stderr and "no solution" not in result.stderr
    assert not (tmp_path / "pylock.toml").exists()


def test_an_unreachable_channel_is_exit_2_and_not_does_not_solve(tmp_path):
    pytest.importorskip("rattler", reason="py-rattler is the conda extra; the dev install has it")
    environment = tmp_path / "environment.yml"
    environment.write_text("name: x\nchannels: [conda-forge]\ndependencies: [python=3.11]\n")
    result = envpin("conda", "solve", str(environment), *TARGET, "--glibc", "2.36", "--format", "json",
                    "--channel", f"conda-forge=http://127.0.0.1:{closed_port()}/conda-forge")
    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "unreachable"
    assert "does not solve" not in result.stderr
