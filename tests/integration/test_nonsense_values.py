"""Nonsense values are bad input: exit 2 and one line naming the value, never an answer (issue 16)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

BASE = ["--os", "linux", "--arch", "x86_64", "--python", "3.11"]


def envpin(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args, says", [
    (["solve", *BASE, "--driver", "550.54.15", "--compute-capability", "99.9"], "compute capability 99.9"),
    (["solve", *BASE, "--driver", "", "--gpu", "NVIDIA GeForce RTX 3090"], "--driver ''"),
    (["solve", *BASE, "--driver", "５５０.５４.１５", "--gpu", "NVIDIA GeForce RTX 3090"], "not an NVIDIA driver version"),
    (["solve", *BASE, "--driver", "5_50.54", "--gpu", "NVIDIA GeForce RTX 3090"], "not an NVIDIA driver version"),
    (["solve", *BASE[:-1], "３.１１", "--driver", "none"], "expected a Python version"),
    (["solve", *BASE, "--driver", "550.54.15", "--compute-capability", "８.６"], "expected X.Y"),
    (["detect", "--timeout", "inf"], "'inf' is not a positive number of seconds"),
    (["detect", "--timeout", "nan"], "'nan' is not a positive number of seconds"),
    (["verify", "--timeout", "-5"], "'-5' is not a positive number of seconds"),
    (["install", "--prefix", "/tmp/never", "--timeout", "0"], "'0' is not a positive number of seconds"),
    (["lock", "--lock-timeout", "inf"], "'inf' is not a positive number of seconds"),
    (["db", "validate", "/nonexistent/db"], "database /nonexistent/db: not a directory"),
])
def test_nonsense_is_exit_2_with_one_line(args, says):
    result = envpin(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and says in result.stderr and "Traceback" not in result.stderr


def test_a_gpu_one_generation_past_the_database_still_gets_an_answer():
    result = envpin("solve", *BASE, "--driver", "580.65.06", "--compute-capability", "13.0", "--format", "json")
    assert result.returncode in (0, 1) and '"status"' in result.stdout
