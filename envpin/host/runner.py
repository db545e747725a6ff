"""Running external commands (nvidia-smi, nvcc) with a hard time limit.

Probes never call `subprocess` directly: they take a `Runner`, so tests can point them at fake
executables and the real default can guarantee that a hung driver tool never hangs envpin.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, NamedTuple, Protocol

# The most a probe command may print, stdout and stderr together. `nvidia-smi -q -x` on an 8-GPU server
# prints about 0.3 MiB; a broken tool streaming forever would otherwise fill memory at pipe speed
# (measured here: 2.8 GB in 3 s) until the timeout.
MAX_OUTPUT_BYTES = 8 * 1024 * 1024


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


class OutputTooLarge(OSError):
    """The command printed more than the limit and was killed. An OSError, so that every caller that
    already treats "could not run it" as a note treats this one the same way."""

    def __init__(self, argv: Sequence[str], limit: int):
        super().__init__(f"{argv[0]} printed more than {limit // (1024 * 1024)} MiB; stopped it")
        self.argv = list(argv)
        self.limit = limit


class Runner(Protocol):
    def run(self, argv: Sequence[str], timeout: float) -> CommandResult:
        """Run argv; return its exit status and output, raise CommandTimeout or OSError."""


class SubprocessRunner:
    """The default runner: a child in its own process group, killed as a group on timeout.

    Killing only the child is not enough: nvidia-smi wrappers (WSL, containers) may fork, and a
    grandchild holding the pipes open would keep `communicate()` waiting forever.
    """

    def __init__(self, max_output: int = MAX_OUTPUT_BYTES):
        self.max_output = max_output

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
        output = _BoundedOutput(process, self.max_output)
        deadline = time.monotonic() + timeout
        outcome = output.wait(deadline)
        if outcome == "complete":
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:  # closed its pipes but kept running
                outcome = "timeout"
        if outcome != "complete":
            kill_group(process)
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:  # unkillable (stuck in the kernel): stop waiting for it
                pass
            # The readers end at EOF once the group is dead; a grandchild that escaped the group may hold a
            # pipe open, and then the (daemon) readers are left behind rather than waited for.
            if output.join(timeout=1.0):
                _close_pipes(process)
            if outcome == "too large":
                raise OutputTooLarge(argv, self.max_output)
            raise CommandTimeout(argv, timeout)
        stdout, stderr = output.result()
        output.join(timeout=1.0)  # both readers saw EOF: they are ending
        _close_pipes(process)
        return CommandResult(process.returncode, _decode(stdout), _decode(stderr))


class _BoundedOutput:
    """Reads a child's stdout and stderr on two threads, keeping at most `limit` bytes in all.

    `communicate()` would keep everything a runaway child prints until the timeout; this stops at the
    limit. Threads rather than select() because Windows cannot select() on pipes.
    """

    def __init__(self, process: subprocess.Popen, limit: int):
        self.limit = limit
        self.kept = 0
        self.chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        self.lock = threading.Lock()
        self.events: queue.Queue[str] = queue.Queue()
        self.threads = [
            threading.Thread(target=self._pump, args=(name, stream), daemon=True)
            for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))
        ]
        for thread in self.threads:
            thread.start()

    def _pump(self, name: str, stream: IO[bytes]) -> None:
        try:
            while True:
                data = stream.read1(65536)  # type: ignore[attr-defined]
                if not data:
                    break
                with self.lock:
                    self.kept += len(data)
                    if self.kept > self.limit:
                        self.events.put("too large")
                        return
                    self.chunks[name].append(data)
        except (OSError, ValueError):  # the pipe closed under us
            pass
        self.events.put("eof")

    def wait(self, deadline: float) -> str:
        """'complete' when both pipes reached EOF, 'too large' or 'timeout' otherwise."""
        finished = 0
        while finished < 2:
            try:
                event = self.events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return "timeout"
            if event == "too large":
                return event
            finished += 1
        return "complete"

    def join(self, timeout: float) -> bool:
        """Wait for both readers to end; whether they did."""
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self.threads)

    def result(self) -> tuple[bytes, bytes]:
        with self.lock:
            return b"".join(self.chunks["stdout"]), b"".join(self.chunks["stderr"])


def _close_pipes(process: subprocess.Popen) -> None:
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def kill_group(process: subprocess.Popen) -> None:
    """Kill the child and everything it started (it runs in its own process group)."""
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
