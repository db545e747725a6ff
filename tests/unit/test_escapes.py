"""Text from tools and users, shown by envpin: escaped, cut to a message's length, exit statuses in words."""

from __future__ import annotations

import signal
import subprocess
import sys

from envpin.base.escapes import MIN_HIDDEN, exit_status, expanded, forget_expanded, hidden, printable, shown, terminal
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


def test_a_block_for_the_terminal_keeps_its_lines_and_escapes_the_rest():
    block = "GPUs:     NVIDIA \x1b[2J\x00\x9b\x7f\r\n\tnext line\n"
    assert terminal(block) == "GPUs:     NVIDIA \\x1b[2J\\x00\\x9b\\x7f\\r\n\tnext line\n"
    assert terminal("plain\n") == "plain\n"


def test_an_expanded_value_is_written_as_its_name(monkeypatch):
    forget_expanded()
    try:
        expanded("s3cr3t-value-from-ci", "AWS_SECRET_ACCESS_KEY")
        expanded("3.11", "PYTHON_MINOR")  # shorter than MIN_HIDDEN: a version, not hidden in every text
        assert printable("torch==s3cr3t-value-from-ci\n") == "torch==${AWS_SECRET_ACCESS_KEY}\\n"
        assert terminal("a s3cr3t-value-from-ci b\n") == "a ${AWS_SECRET_ACCESS_KEY} b\n"
        assert hidden("python 3.11") == "python 3.11"
        # a line's own values are hidden whatever their length, the longest first
        assert hidden("python==3.11 at 3.11.4", {"3.11": "${A}", "3.11.4": "${B}"}) == "python==${A} at ${B}"
        assert len("s3cr3t-value-from-ci") >= MIN_HIDDEN > len("3.11")
    finally:
        forget_expanded()
    assert printable("torch==s3cr3t-value-from-ci") == "torch==s3cr3t-value-from-ci"  # a new run hides its own
