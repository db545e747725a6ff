"""`envpin solve -o FILE` when writing fails: a full disk, a read-only file system, a size limit, a SIGKILL.

Each time the previous FILE must be untouched (or, after a completed rename, the new one whole), no
temporary file may be left behind by a failure envpin sees, and the message is one line with exit 2.
Full and read-only file systems are real: a 64 KiB tmpfs, remounted read-only for the second case
(this needs root with CAP_SYS_ADMIN, which the project's containers have). The size limit
(RLIMIT_FSIZE) needs no privilege and runs everywhere on Linux.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.support import (
    REPO,
    SOLVE_3090,
    assert_one_line_error,
    can_mount,
    envpin,
    envpin_command,
    mount_tmpfs,
    remount_read_only,
    unmount,
)

resource = pytest.importorskip("resource", reason="setrlimit is POSIX only")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux file systems and signals")

PREVIOUS = "# an environment.yml the user already has\nname: keep-me\n"
MOUNTABLE = can_mount()


@pytest.fixture
def small_tmpfs(tmp_path):
    if not MOUNTABLE:
        pytest.skip("mounting a tmpfs needs root with CAP_SYS_ADMIN; the RLIMIT_FSIZE test covers failed writes here")
    mount_point = tmp_path / "fs"
    mount_point.mkdir()
    mount_tmpfs(mount_point, "64k")
    yield mount_point
    unmount(mount_point)


def fill(directory: Path) -> None:
    """Write until the file system says ENOSPC."""
    try:
        with open(directory / "filler", "wb", buffering=0) as handle:
            while True:
                handle.write(b"\0" * 4096)
    except OSError as error:
        assert error.errno == 28, error  # ENOSPC


def test_full_disk_keeps_the_previous_file(small_tmpfs):
    target = small_tmpfs / "environment.yml"
    target.write_text(PREVIOUS)
    fill(small_tmpfs)
    result = envpin(*SOLVE_3090, "-o", str(target))
    assert_one_line_error(result, f"-o {target}: cannot write", "No space left on device")
    assert target.read_text() == PREVIOUS
    assert sorted(p.name for p in small_tmpfs.iterdir()) == ["environment.yml", "filler"], "a temporary file was left"


def test_read_only_file_system_keeps_the_previous_file(small_tmpfs):
    target = small_tmpfs / "environment.yml"
    target.write_text(PREVIOUS)
    remount_read_only(small_tmpfs)
    result = envpin(*SOLVE_3090, "-o", str(target))
    assert_one_line_error(result, f"-o {target}: cannot write", "Read-only file system")
    assert target.read_text() == PREVIOUS


def test_file_size_limit_keeps_the_previous_file(tmp_path):
    # RLIMIT_FSIZE makes the write fail (EFBIG) like a quota would; SIGXFSZ is ignored so the write returns
    # an error instead of killing the process. The limit is far below the ~600-byte environment.yml.
    target = tmp_path / "environment.yml"
    target.write_text(PREVIOUS)

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    result = subprocess.run(envpin_command(*SOLVE_3090, "-o", str(target)), capture_output=True, text=True, cwd=REPO,
                            env={**os.environ, "ENVPIN_NO_CACHE": "1", "PYTHONDONTWRITEBYTECODE": "1"},
                            preexec_fn=limit_file_size, timeout=60)
    assert_one_line_error(result, f"-o {target}: cannot write", "File too large")
    assert target.read_text() == PREVIOUS
    assert [p.name for p in tmp_path.iterdir()] == ["environment.yml"], "a temporary file was left"


def test_output_into_a_missing_directory_is_one_line(tmp_path):
    result = envpin(*SOLVE_3090, "-o", str(tmp_path / "no-such-dir" / "environment.yml"))
    assert_one_line_error(result, "cannot write", "No such file or directory")


# ---------------------------------------------------------------- SIGKILL


def kill_at(syscalls: str, target: Path) -> str:
    """Run `solve -o target` under strace, which delivers SIGKILL when the process first enters one of
    `syscalls`; return strace's log. No byte-code or cache writes, so the first write is envpin's."""
    result = subprocess.run(
        ["strace", "-f", "-qq", "-e", f"trace=openat,write,{syscalls}", "-e", f"inject={syscalls}:signal=KILL:when=1",
         *envpin_command(*SOLVE_3090, "-o", str(target))],
        capture_output=True, text=True, cwd=REPO, timeout=60,
        env={**os.environ, "ENVPIN_NO_CACHE": "1", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 128 + signal.SIGKILL or "+++ killed by SIGKILL +++" in result.stderr, result.stderr[-2000:]
    return result.stderr


def strace_works() -> bool:
    if not shutil.which("strace"):
        return False
    return subprocess.run(["strace", "-qq", "-e", "trace=none", "true"], capture_output=True).returncode == 0


needs_strace = pytest.mark.skipif(not strace_works(), reason="needs strace with ptrace permitted; the timed kills below run anyway")


@needs_strace
def test_sigkill_while_writing_leaves_the_previous_file(tmp_path):
    target = tmp_path / "environment.yml"
    target.write_text(PREVIOUS)
    log = kill_at("write", target)
    killed = log.strip().splitlines()[-2]
    # The kill hit the write of the new content into the temporary file beside the target.
    assert re.search(r'openat\(.*/\.environment\.yml\.envpin-\d+\.tmp", O_WRONLY\|O_CREAT', log), log[-2000:]
    assert killed.startswith("write(") and "# Generated by envpin" in killed, killed
    assert target.read_text() == PREVIOUS


@needs_strace
def test_sigkill_at_the_rename_leaves_the_previous_file(tmp_path):
    target = tmp_path / "environment.yml"
    target.write_text(PREVIOUS)
    log = kill_at("rename,renameat,renameat2", target)
    assert "environment.yml" in log.strip().splitlines()[-2]
    assert target.read_text() == PREVIOUS


def test_sigkill_at_any_moment_leaves_a_whole_file(tmp_path):
    """Kills spread over a solve's whole life: the file is always the old one or the complete new one."""
    target = tmp_path / "environment.yml"
    env = dict(os.environ)
    for _ in range(2):  # the first run fills the database cache; the second is what the killed runs cost
        started = time.monotonic()
        complete = subprocess.run(envpin_command(*SOLVE_3090, "-o", str(target)), capture_output=True, env=env,
                                  cwd=REPO, timeout=60)
        lifetime = time.monotonic() - started
        assert complete.returncode == 0
    new = target.read_text()  # the header names the file, so the new content is taken for this very path
    outcomes = []
    # Most of a solve's life is start-up and solving; the kills cluster around its end, where the write is.
    for delay in [lifetime * f for f in (0.3, 0.6, 0.8, 0.9, 0.95, 1.0, random.uniform(0.7, 1.1))]:
        target.write_text(PREVIOUS)
        process = subprocess.Popen(envpin_command(*SOLVE_3090, "-o", str(target)), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        content = target.read_text()
        assert content in (PREVIOUS, new), f"killed after {delay:.2f} s: a file that is neither the old nor the new one"
        outcomes.append("old" if content == PREVIOUS else "new")
    # The early kills leave the old file (the rename is the solve's last step); the late ones may find it done.
    assert "old" in outcomes, outcomes
