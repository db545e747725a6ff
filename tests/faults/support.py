"""Shared by the fault tests: running envpin as users do (a fresh process), fake executables, tmpfs mounts."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from tests.conftest import DB_DIR  # noqa: F401 - the frozen database, whose copies these tests corrupt

REPO = Path(__file__).resolve().parents[2]
TARGET_3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090",
               "--python", "3.11"]
SOLVE_3090 = ["solve", "--framework", "torch", *TARGET_3090]


def envpin_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "envpin", *args]


def envpin(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    environment = {**os.environ, **(env or {})}
    return subprocess.run(envpin_command(*args), capture_output=True, text=True, env=environment, timeout=timeout,
                          cwd=REPO)


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit 2, one line on stderr starting `envpin: error:`, naming what is wrong; no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("envpin: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def fake_executable(bin_dir: Path, name: str, script: str) -> Path:
    """A real executable on disk; `script` is a complete shell script body."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def can_mount() -> bool:
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN, as in this project's containers)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("mount"):
        return False
    probe = Path(f"/tmp/envpin-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(probe)],
                                 capture_output=True).returncode == 0
        if mounted:
            subprocess.run(["umount", str(probe)], check=True)
        return mounted
    finally:
        probe.rmdir()


def mount_tmpfs(directory: Path, size: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)], check=True,
                   capture_output=True)


def remount_read_only(directory: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(directory)], check=True, capture_output=True)


def unmount(directory: Path) -> None:
    subprocess.run(["umount", "-l", str(directory)], check=False, capture_output=True)
