"""Run an installer step: stream its output lines to a callback, stop it on timeout or interruption.

The child runs in its own process group so that stopping it stops its children too (pip's build
subprocesses, uv's workers); on Ctrl-C, SIGTERM or a timeout the group is killed and waited for before the
caller removes the directory the child was writing into.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class StepResult:
    returncode: int
    tail: tuple[str, ...]  # the last lines of output, for the error message
    timed_out: bool = False


def run_streaming(argv: Sequence[str], on_line: Callable[[str], None], timeout: float,
                  env: dict[str, str] | None = None) -> StepResult:
    kwargs: dict = {"start_new_session": True} if sys.platform != "win32" else {
        "creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
    process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, text=True, errors="replace", bufsize=1, **kwargs)
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        stop(process)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    tail: deque[str] = deque(maxlen=40)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            tail.append(line)
            on_line(line)
        returncode = process.wait()
    except BaseException:  # Ctrl-C, SIGTERM (raised as KeyboardInterrupt), or a failing callback
        stop(process)
        raise
    finally:
        timer.cancel()
    return StepResult(returncode, tuple(tail), timed_out.is_set())


def stop(process: subprocess.Popen) -> None:
    """Kill the child's process group and wait for it, so nothing writes after we return."""
    from envpin.host.runner import kill_group

    if process.poll() is None:
        kill_group(process)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
