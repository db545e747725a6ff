"""Standard output that cannot take envpin's answer: closed (`envpin … >&-`), on a full device (`> /dev/full`), or a
pipe whose reader stopped (`| head -1`). The first two are one line on stderr and exit 2; the last a quiet exit, as
the tools of a shell pipeline do. Never a traceback, never Python's "Exception ignored" at exit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SOLVE = [sys.executable, "-m", "envpin", "solve", "--framework", "torch", "--os", "linux", "--python", "3.11",
         "--gpu", "RTX 3090", "--driver", "535.104.05"]
MATRIX = [sys.executable, "-m", "envpin", "matrix", "--framework", "torch", "--os", "linux", "--python", "3.11",
          "--gpu", "RTX 3090", "--driver", "535.104.05"]


def _run(argv: list[str], stdout) -> subprocess.CompletedProcess:
    return subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60,
                          close_fds=True)


@pytest.mark.parametrize("extra", [[], ["--format", "json"]])
def test_a_full_device_is_one_line_and_exit_2(extra):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        result = _run(SOLVE + extra, full)
    assert result.returncode == 2
    assert result.stderr == "envpin: error: cannot write to standard output (No space left on device)\n"


def test_a_closed_stdout_is_one_line_and_exit_2(tmp_path):
    # the shell's `>&-`: the child starts with file descriptor 1 closed
    result = subprocess.run(["sh", "-c", '"$@" >&-', "sh", *SOLVE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == "envpin: error: standard output is closed; nothing can be printed\n"
    # a command that prints nothing on stdout does not mind
    written = tmp_path / "requirements.txt"
    result = subprocess.run(["sh", "-c", '"$@" -o "$0" >&-', str(written), *SOLVE], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "Traceback" not in result.stderr and "torch==" in written.read_text()


def test_a_reader_that_stops_early_ends_the_run_quietly():
    process = subprocess.Popen(MATRIX + ["--format", "html"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.read(10)
    process.stdout.close()  # as `| head -c 10` does
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert stderr == b""
