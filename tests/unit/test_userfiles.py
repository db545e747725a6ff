"""Writing the user's files: never replace what is not a regular file, never leave half a file, keep the mode,
follow a symlink to its target. Special files are made in a temporary directory (mknod, mkfifo), never /dev."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.base.userfiles import (
    MAX_INPUT_BYTES,
    UnreadableFile,
    open_regular,
    read_json,
    read_log,
    read_text,
    repository_boundary,
    write_atomically,
)

REPO = Path(__file__).resolve().parents[2]
TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "550.54.15", "--gpu", "NVIDIA GeForce RTX 3090", "--python", "3.11"]


def character_device(directory: Path, name: str, minor: int) -> Path:
    """A character device with the numbers of /dev/null (1, 3) or /dev/zero (1, 5), in a temporary directory
    (root may make one)."""
    path = directory / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a character device needs root (CAP_MKNOD)")
    return path


def null_device(directory: Path) -> Path:
    return character_device(directory, "null", 3)


def test_a_new_file_is_written_whole_and_nothing_else_is_left(tmp_path):
    write_atomically(tmp_path / "environment.yml", "name: x\n")
    assert (tmp_path / "environment.yml").read_text() == "name: x\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["environment.yml"]


def test_an_existing_file_keeps_its_mode(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("old\n")
    path.chmod(0o640)
    write_atomically(path, "new\n")
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.yml"
    real.write_text("old\n")
    link = tmp_path / "environment.yml"
    link.symlink_to(real.name)
    write_atomically(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == "real.yml"
    assert real.read_text() == "new\n"


def test_a_character_device_is_written_through_not_replaced(tmp_path):
    device = null_device(tmp_path)
    write_atomically(device, "plan\n")
    assert stat.S_ISCHR(device.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_atomically(fifo, "plan\n")
    reader.join(timeout=10)
    assert received == ["plan\n"] and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_directory_is_refused_with_one_line(tmp_path):
    with pytest.raises(EnvpinInputError, match=r"is a directory; name a file") as caught:
        write_atomically(tmp_path, "plan\n")
    assert "\n" not in str(caught.value)


def test_a_write_that_fails_leaves_the_old_file(tmp_path):
    path = tmp_path / "environment.yml"
    path.write_text("old\n")
    planted = tmp_path / f".environment.yml.envpin-{os.getpid()}.tmp"
    planted.mkdir()  # something already at the temporary name: the exclusive create refuses it
    with pytest.raises(EnvpinInputError, match="cannot write") as caught:
        write_atomically(path, "new\n")
    assert "\n" not in str(caught.value)
    assert path.read_text() == "old\n" and planted.is_dir()


def test_solve_onto_a_device_keeps_the_device(tmp_path):
    device = null_device(tmp_path)
    result = subprocess.run([sys.executable, "-m", "envpin", "solve", *TARGET, "--format", "requirements.txt",
                             "-o", str(device)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(device.lstat().st_mode)


def test_reads_are_capped_and_name_the_option(tmp_path):
    big = tmp_path / "facts.json"
    with open(big, "wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk is used
    with pytest.raises(UnreadableFile, match=r"--facts .*: cannot be read \(larger than 16 MiB"):
        read_json(big, "--facts")


def test_a_device_is_never_read(tmp_path):
    zero = character_device(tmp_path, "zero", 5)  # opening a device can act on it; reading /dev/zero never ends
    with pytest.raises(UnreadableFile, match=r"--facts .*: cannot be read \(a character device, not a regular file"):
        read_text(zero, "--facts")


def test_unreadable_text_says_why_in_a_few_words(tmp_path):
    binary = tmp_path / "requirements.txt"
    binary.write_bytes(b"\x80\x81\x00torch")
    with pytest.raises(UnreadableFile) as caught:
        read_text(binary)
    assert caught.value.reason == "not UTF-8 text"
    assert read_text(binary, errors="replace").endswith("torch")
    with pytest.raises(UnreadableFile) as caught:
        read_text(tmp_path, "--error-text")
    assert caught.value.reason == "a directory, not a file"


def test_a_long_log_keeps_its_end(tmp_path):
    log = tmp_path / "error.txt"
    with open(log, "wb") as handle:
        handle.write(b"noise\n" * (3 * 1024 * 1024))  # 18 MiB of output before the error
        handle.write(b"\xffImportError: libcudnn.so.9: cannot open shared object file\n")
    text = read_log(log, "--error-text", keep=1024 * 1024)
    assert text.endswith("ImportError: libcudnn.so.9: cannot open shared object file\n") and len(text) <= 1024 * 1024


def test_a_log_past_the_read_limit_is_refused_with_one_line(tmp_path):
    log = tmp_path / "error.txt"
    with open(log, "wb") as handle:
        handle.truncate(512 * 1024 * 1024 + 1)  # sparse: no disk is used
    with pytest.raises(UnreadableFile, match="more than 512 MiB"):
        read_log(log, "--error-text")
    with pytest.raises(UnreadableFile, match="a character device, not a regular file"):
        read_log(character_device(tmp_path, "zero", 5), "--error-text")


def test_the_boundary_is_the_git_work_tree_else_the_files_directory(tmp_path):
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    (repository / "service").mkdir()
    (tmp_path / "outside.txt").write_text("x\n")
    boundary = repository_boundary(repository / "service" / "requirements.txt")
    assert boundary.root == os.path.realpath(repository) and boundary.repository
    assert boundary.contains(repository / "base.txt") and boundary.contains(repository / "service" / ".." / "a.txt")
    assert not boundary.contains(tmp_path / "outside.txt")
    assert not boundary.contains(tmp_path / "repo-other" / "a.txt")  # a sibling whose name starts the same
    (repository / "link.txt").symlink_to(tmp_path / "outside.txt")
    assert not boundary.contains(repository / "link.txt")  # where a link points decides
    with pytest.raises(UnreadableFile, match="outside the repository .*pass --allow-outside-repo"):
        boundary.admit(repository / "link.txt", "-r link.txt")
    repository_boundary(repository / "a.txt", allow_outside=True).admit(tmp_path / "outside.txt", "-r x")
    alone = repository_boundary(tmp_path / "outside.txt")  # no .git above tmp_path
    assert alone.root == os.path.realpath(tmp_path) and not alone.repository


def test_a_fifo_is_refused_without_blocking_and_a_file_read(tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)  # no writer: an open() without O_NONBLOCK would block here
    with pytest.raises(UnreadableFile, match="a FIFO, not a regular file"):
        read_text(pipe, "--facts")
    with pytest.raises(UnreadableFile, match="a FIFO, not a regular file"):
        read_log(pipe, "--error-text")
    with pytest.raises(UnreadableFile, match="envpin never reads /proc"):
        read_text("/proc/self/environ")
    (tmp_path / "facts.json").write_text("{}")
    with open_regular(tmp_path / "facts.json") as handle:
        assert handle.read() == b"{}"
