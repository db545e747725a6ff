"""Text from tools and users, shown by envpin: escaped, cut to a message's length, exit statuses in words."""

from __future__ import annotations

import signal
import subprocess
import sys

from envpin.escapes import exit_status, printable, shown
from envpin.host.nvidia_smi import _first_line


def test_a_signal_is_named():
    child = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert child.returncode == -signal.SIGSEGV
    assert exit_status(child.returncode) == "killed by SIGSEGV"
    assert exit_status(3) == "exit status 3" and exit_status(None) == "did not finish"
    assert exit_status(-200) == "killed by signal 200"


def test_tool_output_cannot_drive_the_terminal():
    hostile = "\x1b]0;owned\x07\x1b[2JNVIDIA-SMI has failed\r\n"
    line = _first_line(hostile)
    assert "\x1b" not in line and "\\x1b" in line and "NVIDIA-SMI has failed" in line


def test_a_long_value_is_cut_for_a_message():
    assert shown("x" * 500, 120) == "x" * 119 + "…"
    assert shown("short") == "short"
    assert printable("a\u202eb") == "a\\u202eb"  # a bidi override would reorder what the user reads
