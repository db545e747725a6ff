"""A damaged compatibility database or database cache, through the real command.

- a truncated, garbled, emptied or missing database file (`--db DIR`): one line naming the file, exit 2;
- a corrupted cache entry in ENVPIN_CACHE_DIR: ignored, the answer is the same as with a good cache,
  and the entry is rewritten;
- a cache directory that cannot be written (read-only file system, or a path under a regular file):
  the solve still answers, the same answer.
"""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from tests.faults.support import (
    DB_DIR,
    SOLVE_3090,
    assert_one_line_error,
    can_mount,
    envpin,
    mount_tmpfs,
    remount_read_only,
    unmount,
)


@pytest.fixture
def db_copy(tmp_path) -> Path:
    target = tmp_path / "db"
    shutil.copytree(DB_DIR, target)
    return target


@pytest.fixture(scope="module")
def good_cache(tmp_path_factory) -> Path:
    """A cache directory holding the entry a first solve wrote."""
    cache = tmp_path_factory.mktemp("good-cache")
    result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    (cache / "answer.json").write_text(result.stdout)
    return cache


@pytest.fixture(scope="module")
def good_answer(good_cache) -> str:
    return (good_cache / "answer.json").read_text()


def truncate(path: Path, fraction: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


@pytest.mark.parametrize("damage, expected", [
    (lambda db: truncate(db / "torch.yaml", 0.5), "torch.yaml"),  # cut mid-record: valid YAML, schema violation
    (lambda db: truncate(db / "cuda.yaml", 0.37), "cuda.yaml"),
    (lambda db: (db / "gpus.yaml").write_text("gpus:\n  - cc: '8.6'\n    names: [unterminated\n"), "gpus.yaml line"),
    (lambda db: (db / "torch.yaml").write_bytes(b"\xff\xfe\x00garbage\x80\x81"), "torch.yaml: cannot be read"),
    (lambda db: (db / "sources.yaml").write_text(""), "sources.yaml"),
    (lambda db: (db / "cuda.yaml").unlink(), "cuda.yaml is missing"),
    (lambda db: (db / "VERSION").write_text("yesterday\n"), "VERSION"),
    (lambda db: (db / "torch.yaml").write_text("!!python/object/apply:os.system ['touch /tmp/pwned']\n"), "torch.yaml line"),
], ids=["torch-truncated", "cuda-truncated", "gpus-bad-yaml", "torch-not-utf8", "sources-empty", "cuda-missing",
        "version-garbage", "yaml-code-tag"])
def test_damaged_database_is_one_line_exit_2(db_copy, damage, expected):
    damage(db_copy)
    result = envpin(*SOLVE_3090, "--db", str(db_copy), env={"ENVPIN_NO_CACHE": "1"})
    assert_one_line_error(result, expected)
    assert result.stdout == ""


def test_database_option_naming_a_file_is_one_line(tmp_path):
    (tmp_path / "not-a-dir").write_text("x")
    assert_one_line_error(envpin(*SOLVE_3090, "--db", str(tmp_path / "not-a-dir")), "not a directory")


@pytest.mark.parametrize("corrupt", [
    lambda path: path.write_bytes(b""),
    lambda path: truncate(path, 0.5),
    lambda path: path.write_bytes(b"\x80\x05garbage that is not a pickle"),
    lambda path: path.write_bytes(pickle.dumps(("stamps of another database", {"not": "a Database"}))),
], ids=["empty", "truncated", "garbage", "foreign-pickle"])
def test_corrupted_cache_entry_is_ignored_and_rewritten(tmp_path, good_cache, good_answer, corrupt):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    [entry] = cache.glob("db-*.pickle")
    corrupt(entry)
    damaged = entry.read_bytes()
    again = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(good_answer)
    assert entry.read_bytes() != damaged, "the damaged entry was not replaced by a good one"


@pytest.mark.skipif(not can_mount(), reason="a read-only file system needs root with CAP_SYS_ADMIN to mount; "
                                             "the unwritable-path test below covers the same code here")
def test_read_only_cache_directory_still_solves(tmp_path, good_answer):
    cache = tmp_path / "cache"
    cache.mkdir()
    mount_tmpfs(cache, "64k")
    try:
        remount_read_only(cache)
        result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    finally:
        unmount(cache)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(good_answer)


def test_cache_directory_that_cannot_exist_still_solves(tmp_path, good_answer):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(blocker / "cache")})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(good_answer)
