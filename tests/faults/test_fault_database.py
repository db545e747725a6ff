"""A damaged compatibility database or database cache, through the real command.

- a truncated, garbled, emptied or missing database file (`--db DIR`): one line naming the file, exit 2;
- a corrupted cache entry in ENVPIN_CACHE_DIR: ignored, the answer is the same as with a good cache,
  and the entry is rewritten;
- a cache directory that cannot be written (read-only file system, or a path under a regular file):
  the solve still answers, the same answer;
- the cache cannot run code: a crafted pickle (envpin 0.1's format) is never unpickled, and removed;
- an entry or a cache directory that another user owns, or that others may write, is not used; a
  symbolic link is not followed;
- old entries are pruned when one is written.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import time
from pathlib import Path

import pytest

from envpin.compat import cache as db_cache
from tests.cache_entries import document_of, entry_of
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


def flip_a_body_byte(path: Path) -> None:
    """One digit of the body changed: still JSON, still the same shape, no longer what was written."""
    data = bytearray(path.read_bytes())
    at = data.index(b"\n") + data[data.index(b"\n"):].index(b'"2.') + 2
    data[at] = ord("9") if data[at] != ord("9") else ord("8")
    path.write_bytes(bytes(data))


def other_stamps(path: Path) -> None:
    header, _, rest = path.read_bytes().partition(b"\n")
    fields = json.loads(header)
    fields["stamps"] = fields["stamps"].replace("torch.yaml:", "torch.yaml:1")
    path.write_bytes(json.dumps(fields).encode() + b"\n" + rest)


def forged(path: Path, change) -> None:
    """An entry altered with its digests made again: what only someone who can write the file could do."""
    header, document = document_of(path.read_bytes())
    change(document)
    path.write_bytes(entry_of(document, header["stamps"], header["part"]))


def wrong_shape(document) -> None:
    document["fields"]["arch_sets"] = []  # a list where the arch sets by name are


def newest_torch_renamed(document) -> None:
    """The newest torch release becomes 99.0.0, which a solve would pick if the entry were used."""
    newest = document["fields"]["torch_releases"][0]  # a record: its fields in order, the version first
    assert newest[0] == "2.15.0"
    newest[0] = "99.0.0"


def only_entry(cache: Path) -> Path:
    """The entry of the torch part (the database's torch releases), the one a torch solve reads besides the base."""
    [entry] = cache.glob("db-*-torch.json")
    return entry


def test_a_solve_writes_the_entries_of_the_parts_it_read_and_no_other(good_cache):
    parts = sorted(path.name.rsplit("-", 1)[1] for path in good_cache.glob("db-*.json"))
    assert parts == ["base.json", "torch.json"]
    assert len({db_cache._database_of(path.name) for path in good_cache.glob("db-*.json")}) == 1


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_a_damaged_file_of_a_part_a_solve_does_not_read_leaves_its_answer_alone(tmp_path, db_copy, good_answer, cached):
    path = db_copy / "tensorflow.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("\nreleases:", "\nreleases: [", 1), encoding="utf-8")
    env = {"ENVPIN_CACHE_DIR": str(tmp_path / "cache")} if cached else {"ENVPIN_NO_CACHE": "1"}
    torch = envpin(*SOLVE_3090, "--format", "json", "--db", str(db_copy), env=env)
    assert torch.returncode == 0, torch.stderr
    assert json.loads(torch.stdout) == json.loads(good_answer)
    tensorflow = [part if part != "torch" else "tensorflow" for part in SOLVE_3090]
    assert_one_line_error(envpin(*tensorflow, "--db", str(db_copy), env=env), "tensorflow.yaml line")
    if cached:
        assert not list((tmp_path / "cache").glob("db-*-tensorflow.json")), "a part with problems was cached"


@pytest.mark.parametrize("corrupt", [
    lambda path: path.write_bytes(b""),
    lambda path: truncate(path, 0.5),
    lambda path: path.write_bytes(b"\x80\x05garbage that is not JSON"),
    lambda path: path.write_bytes(pickle.dumps(("stamps of another database", {"not": "a Database"}))),
    lambda path: path.write_bytes(path.read_bytes().partition(b"\n")[2]),
    flip_a_body_byte,
    other_stamps,
    lambda path: forged(path, wrong_shape),
    lambda path: forged(path, lambda document: document["shared"].append(["Provenance", [["a"], None], "extra"])),
    lambda path: forged(path, lambda document: document["fields"]["torch_releases"].__setitem__(0, len(document["shared"]) + 5)),
], ids=["empty", "truncated", "garbage", "a-pickle", "no-header", "body-changed", "other-database", "forged-wrong-type",
        "forged-bad-shared-record", "forged-dangling-reference"])
def test_corrupted_cache_entry_is_ignored_and_rewritten(tmp_path, good_cache, good_answer, corrupt):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    entry = only_entry(cache)
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


# ---------------------------------------------------------------- the cache runs no code, trusts no one else


class _RunsCode:
    """Unpickling this makes the directory `marker`: proof that a pickle was loaded."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def test_a_crafted_pickle_in_the_cache_is_never_unpickled_and_is_removed(tmp_path, good_cache, good_answer, db_copy):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    marker = tmp_path / "the-pickle-ran"
    crafted = pickle.dumps(_RunsCode(marker))
    legacy = [cache / "db-00000000.pickle", cache / "db-ffffffff.pickle"]  # envpin 0.1's names: db-<crc32>.pickle
    for path in legacy:
        path.write_bytes(crafted)
    only_entry(cache).write_bytes(crafted)  # and in place of the entry itself
    for args in (SOLVE_3090, (*SOLVE_3090, "--db", str(db_copy))):  # a hit after the rewrite, a miss
        result = envpin(*args, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == json.loads(good_answer)
    assert not marker.exists(), "a pickle from the cache directory was loaded"
    assert not any(path.exists() for path in legacy), "old pickles are pruned when an entry is written"


def test_a_forged_entry_is_what_the_solve_uses_when_it_is_the_users_own(tmp_path, good_cache, good_answer):
    # The control for the owner and mode tests below: an entry altered with a digest made again (what only
    # someone who can write as the user could do) is used, so a test where it is not used shows a refusal.
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    forged(only_entry(cache), newest_torch_renamed)
    result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert "99.0.0" in result.stdout


OTHER_USER = 4242
NOT_ROOT = not hasattr(os, "geteuid") or os.geteuid() != 0


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership and modes")
@pytest.mark.parametrize("unsafe", [
    pytest.param(lambda path: path.chmod(0o666), id="world-writable"),
    pytest.param(lambda path: path.chmod(0o620), id="group-writable"),
    pytest.param(lambda path: os.chown(path, OTHER_USER, -1), id="another-owner",
                 marks=pytest.mark.skipif(NOT_ROOT, reason="giving a file to another user needs root")),
])
def test_an_entry_others_own_or_may_write_is_ignored_and_replaced(tmp_path, good_cache, good_answer, unsafe):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    entry = only_entry(cache)
    forged(entry, newest_torch_renamed)
    unsafe(entry)
    result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(good_answer), "the unsafe entry was used"
    info = entry.stat()
    assert info.st_uid == os.getuid() and info.st_mode & 0o777 == 0o600, "the entry was not written again, safely"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX symbolic links and modes")
def test_a_symbolic_link_in_place_of_the_entry_is_not_followed(tmp_path, good_cache, good_answer):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    entry = only_entry(cache)
    elsewhere = tmp_path / "elsewhere.json"
    shutil.copy(entry, elsewhere)
    forged(elsewhere, newest_torch_renamed)
    entry.unlink()
    entry.symlink_to(elsewhere)
    result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(good_answer)
    assert not entry.is_symlink() and "99.0.0" in elsewhere.read_text(), "the link was followed or its target changed"


@pytest.mark.skipif(NOT_ROOT, reason="giving a directory to another user needs root")
def test_a_cache_directory_of_another_user_is_neither_read_nor_written(tmp_path, good_cache, good_answer):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    entry = only_entry(cache)
    forged(entry, newest_torch_renamed)
    os.chown(cache, OTHER_USER, -1)
    before = entry.read_bytes(), sorted(p.name for p in cache.iterdir())
    result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(good_answer)
    assert (entry.read_bytes(), sorted(p.name for p in cache.iterdir())) == before, "the directory was written"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")
def test_a_new_cache_directory_is_private_and_an_open_one_of_ours_is_closed(tmp_path, good_answer):
    fresh = tmp_path / "parent" / "cache"
    opened = tmp_path / "opened"
    opened.mkdir()
    opened.chmod(0o777)
    for directory in (fresh, opened):
        result = envpin(*SOLVE_3090, "--format", "json", env={"ENVPIN_CACHE_DIR": str(directory)})
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == json.loads(good_answer)
        assert directory.stat().st_mode & 0o777 == 0o700
        assert only_entry(directory).stat().st_mode & 0o777 == 0o600


def test_old_entries_are_pruned_when_an_entry_is_written(tmp_path, good_cache, db_copy):
    cache = tmp_path / "cache"
    shutil.copytree(good_cache, cache)
    now = time.time()
    recent = [cache / f"db-{n:016x}.json" for n in range(db_cache.MAX_DATABASES + 3)]
    for age, path in enumerate(recent):  # other databases' entries, used 1, 2, ... hours ago
        path.write_text("{}")
        os.utime(path, (now - 3600 * (age + 1),) * 2)
    ancient = cache / "db-0123456789abcdef.json"
    ancient.write_text("{}")
    os.utime(ancient, (now - 86400 * (db_cache.MAX_AGE_DAYS + 1),) * 2)
    stale = cache / ".db-0123456789abcdef.json.99999.0a0b0c0d.tmp"
    stale.write_text("half")
    os.utime(stale, (now - 7200,) * 2)
    legacy = cache / "db-1234abcd.pickle"
    legacy.write_bytes(b"never read")
    unrelated = cache / "notes.txt"
    unrelated.write_text("not the cache's")
    good = only_entry(good_cache).name

    result = envpin(*SOLVE_3090, "--db", str(db_copy), env={"ENVPIN_CACHE_DIR": str(cache)})  # a miss: writes
    assert result.returncode == 0, result.stderr

    entries = sorted(p.name for p in cache.glob("db-*.json"))
    assert len({db_cache._database_of(name) for name in entries}) == db_cache.MAX_DATABASES, entries
    written = [name for name in entries if name not in {p.name for p in recent} | {p.name for p in good_cache.glob("db-*.json")}]
    assert sorted(name.rsplit("-", 1)[1] for name in written) == ["base.json", "torch.json"], entries
    # Kept: the new entry and the ones used last (the good entry was written just now, the others by age).
    assert good in entries and recent[0].name in entries and recent[-1].name not in entries
    assert not ancient.exists() and not stale.exists() and not legacy.exists()
    assert unrelated.exists()


def test_prune_keeps_what_is_in_use_and_only_its_own_files(tmp_path):
    now = time.time()
    for n in range(3):
        path = tmp_path / f"db-{n:016x}.json"
        path.write_text("{}")
        os.utime(path, (now - n,) * 2)
    fresh_temporary = tmp_path / ".db-0000000000000000.json.1.00000000.tmp"
    fresh_temporary.write_text("being written")
    (tmp_path / "db-notes.md").write_text("x")
    assert db_cache.prune(tmp_path, now=now) == []
    assert fresh_temporary.exists() and (tmp_path / "db-notes.md").exists()
