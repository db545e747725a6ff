"""Run an installer step: stream its output lines to a callback, stop it on timeout or interruption.

The child runs in its own process group so that stopping it stops its children too (pip's build
subprocesses, uv's workers); on Ctrl-C, SIGTERM or a timeout the group is killed and waited for before the
caller removes the directory the child was writing into.

A SIGKILL of envpin gives no chance to stop anything, so two things hold without it: on Linux the child is
killed with its parent (PR_SET_PDEATHSIG), and the child inherits `keep_fds` (the prefix's lock), so while it or
anything it started still runs, the lock is held and no next run cleans the folder it writes into.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence

from envpin.base.record import Record, record
from envpin.host.runner import become_subreaper, children, finished, kill_tree, launched


@record
class StepResult(Record):
    returncode: int
    tail: tuple[str, ...]  # the last lines of output, for the error message
    timed_out: bool = False


def run_streaming(argv: Sequence[str], on_line: Callable[[str], None], timeout: float,
                  env: dict[str, str] | None = None, keep_fds: tuple[int, ...] = ()) -> StepResult:
    kwargs: dict = {"start_new_session": True, "pass_fds": keep_fds} if sys.platform != "win32" else {
        "creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
    if _prctl is not None:
        kwargs["preexec_fn"] = functools.partial(_die_with, os.getpid())
    if sys.platform != "win32":
        become_subreaper()
    before = set(children(os.getpid()))
    process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, text=True, errors="replace", bufsize=1, **kwargs)
    launched(process, before)
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
        finished(process)
    return StepResult(returncode, tuple(tail), timed_out.is_set())


def _load_prctl() -> Callable[..., int] | None:
    """prctl(2) on Linux, looked up once in the parent, so the child makes only system calls between fork and exec."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # noqa: PLC0415 - only Linux has prctl

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_prctl = _load_prctl()


def _die_with(parent: int) -> None:
    """Run in the child before exec: be SIGKILLed when the parent dies."""
    assert _prctl is not None
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the call: nobody is left to signal the child
        os._exit(1)


def stop(process: subprocess.Popen) -> None:
    """Kill the child and everything it started (envpin.host.runner.kill_tree) and wait for it, so nothing writes
    after we return."""
    kill_tree(process)  # a child that has ended may have left processes behind
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
