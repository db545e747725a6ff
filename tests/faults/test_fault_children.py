"""A SIGKILLed `envpin install` leaves no installer writing behind it (issue 16): on Linux the installer dies with
its parent, and while any installer still runs it holds the prefix's lock, so no next run cleans its folder.

Real processes: a parent Python that runs a step through envpin's runner and is then SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.provision import runner
from envpin.provision.atomic import prefix_lock
from tests.conftest import REPO

WRITER = "import sys, time\nwhile True:\n    open(sys.argv[1], 'a').write('x'); time.sleep(0.05)\n"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def start_parent(tmp_path: Path) -> tuple[subprocess.Popen, int, Path]:
    """A parent holding the prefix lock and running the writer through run_streaming, as `envpin install` runs
    uv; returns (parent, the writer's pid, the file it writes)."""
    written, pid_file, writer = tmp_path / "written", tmp_path / "child.pid", tmp_path / "writer.py"
    writer.write_text(f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n" + WRITER)
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from envpin.provision.atomic import prefix_lock
        from envpin.provision.runner import run_streaming
        with prefix_lock(Path({str(tmp_path / "env")!r})) as fd:
            run_streaming([sys.executable, {str(writer)!r}, {str(written)!r}], lambda line: None, 600, keep_fds=(fd,))
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text() and written.exists()):
        assert time.monotonic() < deadline, "the writer did not start"
        assert parent.poll() is None, "the parent failed"
        time.sleep(0.05)
    return parent, int(pid_file.read_text()), written


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_installer_dies_with_a_killed_parent(tmp_path):
    parent, child, written = start_parent(tmp_path)
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=30)
    deadline = time.monotonic() + 10
    while alive(child):
        assert time.monotonic() < deadline, "the installer outlived its killed parent"
        time.sleep(0.05)
    size = written.stat().st_size
    time.sleep(0.3)
    assert written.stat().st_size == size, "something still writes"


def test_an_installer_still_running_holds_the_prefix_lock(tmp_path):
    """The run that took the lock is gone (its handle closed), the installer it started still writes: no next
    run may take the lock and clean the folder, until the installer is gone too."""
    written = tmp_path / "written"
    started: list[subprocess.Popen] = []
    real_popen = subprocess.Popen

    def remembering_popen(*args, **kwargs):
        process = real_popen(*args, **kwargs)
        started.append(process)
        return process

    results = []
    with prefix_lock(tmp_path / "env") as fd:
        assert fd is not None  # POSIX: the lock is a file descriptor
        runner.subprocess.Popen = remembering_popen  # type: ignore[misc, assignment]  # to learn the child's pid; the child itself is real
        try:
            thread = threading.Thread(target=lambda: results.append(runner.run_streaming(
                [sys.executable, "-c", WRITER, str(written)], lambda line: None, 600, keep_fds=(fd,))))
            thread.start()
            deadline = time.monotonic() + 30
            # the child can write before the thread that started it has run on to remember it (a loaded machine)
            while not written.exists() or not started:
                assert time.monotonic() < deadline, "the writer did not start"
                time.sleep(0.05)
        finally:
            runner.subprocess.Popen = real_popen  # type: ignore[misc]
    # our handle is closed; only the installer's inherited descriptor holds the lock now
    with pytest.raises(EnvpinInputError, match="still running on it"):
        with prefix_lock(tmp_path / "env"):
            pass
    started[0].kill()
    thread.join(timeout=30)
    with prefix_lock(tmp_path / "env"):  # the installer is gone: the next run may clean up
        pass
