"""Running external commands (nvidia-smi, nvcc) with a hard time limit.

Probes never call `subprocess` directly: they take a `Runner`, so tests can point them at fake
executables and the real default can guarantee that a hung driver tool never hangs envpin.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import NamedTuple, Protocol, Sequence


class CommandResult(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


class CommandTimeout(Exception):
    """The command ran longer than its timeout and was killed."""

    def __init__(self, argv: Sequence[str], timeout: float):
        super().__init__(f"{argv[0]} timed out after {timeout:g} s")
        self.argv = list(argv)
        self.timeout = timeout


class Runner(Protocol):
    def run(self, argv: Sequence[str], timeout: float) -> CommandResult:
        """Run argv; return its exit status and output, raise CommandTimeout or OSError."""


class SubprocessRunner:
    """The default runner: a child in its own process group, killed as a group on timeout.

    Killing only the child is not enough: nvidia-smi wrappers (WSL, containers) may fork, and a
    grandchild holding the pipes open would keep `communicate()` waiting forever.
    """

    def run(self, argv: Sequence[str], timeout: float) -> CommandResult:
        env = dict(os.environ)
        env.setdefault("LC_ALL", "C")  # nvidia-smi and nvcc print English regardless; be explicit
        kwargs: dict = {}
        if sys.platform == "win32":
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        else:
            kwargs["start_new_session"] = True
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            **kwargs,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            try:
                process.communicate(timeout=2)
            except subprocess.TimeoutExpired:  # a grandchild escaped the group; stop waiting for it
                pass
            raise CommandTimeout(argv, timeout) from None
        return CommandResult(process.returncode, _decode(stdout), _decode(stderr))


def _kill_group(process: subprocess.Popen) -> None:
    try:
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        process.kill()


def _decode(data: bytes) -> str:
    # Driver tools print ASCII; anything else is garbage we must still be able to report.
    return data.decode("utf-8", errors="replace")
