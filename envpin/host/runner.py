"""Running external commands (nvidia-smi, nvcc, the verify probe, uv and pip) with a hard time limit.

Probes never call `subprocess` directly: they take a `Runner`, so tests can point them at fake
executables and the real default can guarantee that a hung driver tool never hangs envpin. Every command
envpin runs starts here (`run_command`) or in envpin.provision.runner, in a session of its own, and at its
timeout is killed with everything it started (`kill_tree`): its process group, and every process below it
found through /proc, including those that left the group with setsid() and those orphaned on the way
(envpin is their "child subreaper" on Linux, so they are re-parented to envpin, not to init).
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


def run_command(argv: Sequence[str], timeout: float, *, cwd: str | os.PathLike | None = None,
                env: dict[str, str] | None = None, max_output: int = MAX_OUTPUT_BYTES) -> CommandResult:
    """Run argv in a session of its own, its output kept up to `max_output` bytes; at `timeout` (or past the
    output bound) it is killed with every process it started. Raises CommandTimeout, OutputTooLarge or OSError."""
    kwargs: dict = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        kwargs["start_new_session"] = True
        become_subreaper()
    before = set(children(os.getpid()))
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        **kwargs,
    )
    launched(process, before)
    try:
        return _collect(process, argv, timeout, max_output)
    except BaseException:  # Ctrl-C or SIGTERM while waiting: nothing it started outlives envpin
        kill_tree(process)
        raise
    finally:
        finished(process)


def _collect(process: subprocess.Popen, argv: Sequence[str], timeout: float, max_output: int) -> CommandResult:
    output = _BoundedOutput(process, max_output)
    deadline = time.monotonic() + timeout
    outcome = output.wait(deadline)
    if outcome == "complete":
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:  # closed its pipes but kept running
            outcome = "timeout"
    if outcome != "complete":
        kill_tree(process)
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:  # unkillable (stuck in the kernel): stop waiting for it
            pass
        # The readers end at EOF once the tree is dead; a process envpin could not see may hold a pipe open,
        # and then the (daemon) readers are left behind rather than waited for.
        if output.join(timeout=1.0):
            _close_pipes(process)
        if outcome == "too large":
            raise OutputTooLarge(argv, max_output)
        raise CommandTimeout(argv, timeout)
    stdout, stderr = output.result()
    output.join(timeout=1.0)  # both readers saw EOF: they are ending
    _close_pipes(process)
    return CommandResult(process.returncode, _decode(stdout), _decode(stderr))


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
        return run_command(argv, timeout, env=env, max_output=self.max_output)


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


# ---------------------------------------------------------------- the whole tree of a command

# The commands running now: pid -> envpin's children just before it started. An orphan adopted by envpin while
# a command runs is a child of envpin that is neither a command nor one of those (a test's server, say).
_RUNNING: dict[int, set[int]] = {}
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>, Linux >= 3.4
_subreaper = False


def become_subreaper() -> None:
    """On Linux, make envpin the child subreaper of what it runs: a process whose parent exits (a double fork, a
    daemon that detached with setsid) is re-parented to envpin instead of init, so kill_tree still finds it."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return
    _subreaper = True
    import ctypes  # noqa: PLC0415 - only Linux has prctl, and only a command needs it

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def children(pid: int) -> list[int]:
    """The direct children of `pid`, from /proc/PID/task/TID/children (Linux); [] where /proc cannot say."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                found += [int(word) for word in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, whatever session or group it moved to (a breadth-first walk of /proc)."""
    found: list[int] = []
    seen = {pid}
    queue = [pid]
    while queue:
        for child in children(queue.pop()):
            if child not in seen:
                seen.add(child)
                found.append(child)
                queue.append(child)
    return found


def launched(process: subprocess.Popen, before: set[int]) -> None:
    """Note a command started (`before`: envpin's children just before), for kill_tree's orphans."""
    _RUNNING[process.pid] = before


def finished(process: subprocess.Popen) -> None:
    _RUNNING.pop(process.pid, None)


def _adopted_orphans(process: subprocess.Popen) -> list[int]:
    """Processes re-parented to envpin (as subreaper) since `process` started that are no command it runs."""
    if not _subreaper or process.pid not in _RUNNING:
        return []
    before = _RUNNING[process.pid]
    return [pid for pid in children(os.getpid()) if pid not in _RUNNING and pid not in before]


def kill_tree(process: subprocess.Popen) -> None:
    """Kill the child and everything it started: its process group, every descendant /proc shows (those that
    called setsid() included) and every orphan re-parented to envpin. The tree is stopped (SIGSTOP) as it is
    walked, so nothing forks a new process between the walk and the kill."""
    if sys.platform == "win32":
        process.kill()
        return
    alive = process.poll() is None  # once reaped, its pid may be another process's: only its orphans are left
    stopped: set[int] = set()
    for _ in range(10):  # each round stops what the last one found; a stopped process cannot fork
        found = {process.pid, *descendants(process.pid)} if alive else set()
        for orphan in _adopted_orphans(process):
            found |= {orphan, *descendants(orphan)}
        new = found - stopped
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        stopped |= new
    if alive:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in stopped:
        _signal(pid, signal.SIGKILL)
    _reap(sorted(stopped - {process.pid}))  # the adopted orphans, and what was re-parented to envpin as it died


def _reap(pids: list[int], within: float = 1.0) -> None:
    """Wait for killed orphans, envpin's children now (subprocess does not know them), so no zombie is left."""
    deadline = time.monotonic() + within
    waiting = list(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except OSError:  # not a child (any more)
                done = pid
            if done:
                waiting.remove(pid)
        if waiting:
            time.sleep(0.01)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except OSError:  # gone already, or not ours to signal
        pass



def _decode(data: bytes) -> str:
    # Driver tools print ASCII; anything else is garbage we must still be able to report.
    return data.decode("utf-8", errors="replace")
