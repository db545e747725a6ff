"""Build an environment beside its prefix and move it into place only when it is complete.

    <parent>/<name>.envpin-tmp-XXXX   the environment being built (removed on any failure or interruption)
    <parent>/<name>.envpin-tmp-inputs-XXXX  what the installers read (the lock as pylock.toml and as a
                                      requirements file): beside the build, not in /tmp, so that what a
                                      SIGKILL leaves of it is cleaned with the build
    <parent>/<name>.envpin-old-XXXX   the previous environment, for the instant of the swap
    <parent>/.<name>.envpin-lock      held (flock) for the whole run: one envpin install per prefix at a time

An existing environment at the prefix is touched only by the swap at the very end, which exchanges the two
directories in one `renameat2(RENAME_EXCHANGE)` where Linux has it, else two renames. A SIGKILL can leave a
temporary directory, or (between the two renames) the old environment set aside: the next run, holding the
lock, deletes the first and puts the second back. Venvs and conda environments hold their own path
(script shebangs, activate scripts, conda's prefix records), so before the swap every occurrence of the
temporary path in those files is rewritten to the prefix.
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import shutil
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from envpin.base.errors import EnvpinInputError

TEMPORARY = ".envpin-tmp-"
SET_ASIDE = ".envpin-old-"
TEXT_LIMIT = 4 * 1024 * 1024  # script-sized files only; interpreters and libraries are left alone


class Staging:
    """The temporary environment of one run. Use `staged(prefix)`."""

    def __init__(self, prefix: Path, lock_fd: int | None):
        self.prefix = prefix
        self.path = prefix.with_name(f"{prefix.name}{TEMPORARY}{secrets.token_hex(4)}")
        # made by staged(), always removed; its name does not begin with the build's, which relocation rewrites
        self.inputs = prefix.with_name(f"{prefix.name}{TEMPORARY}inputs-{secrets.token_hex(4)}")
        self.lock_fd = lock_fd  # installers inherit it: the lock lasts while any of them runs
        self.committed = False

    def commit(self) -> None:
        """Relocate the built environment to the prefix's path and swap it in."""
        relocate(self.path, str(self.path), str(self.prefix))
        with signals_deferred():
            swap_in(self.path, self.prefix)
            self.committed = True


@contextmanager
def staged(prefix: Path) -> Iterator[Staging]:
    prefix = Path(os.path.abspath(prefix))
    check_prefix(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with prefix_lock(prefix) as lock_fd:
        recover(prefix)
        staging = Staging(prefix, lock_fd)
        try:
            staging.inputs.mkdir()
            yield staging
        finally:
            with signals_deferred():
                shutil.rmtree(staging.inputs, ignore_errors=True)
                if not staging.committed:
                    shutil.rmtree(staging.path, ignore_errors=True)


def check_prefix(prefix: Path) -> None:
    """Refuse to replace a directory that is not an environment (a home directory, a project)."""
    if prefix.is_file() or prefix.is_symlink():
        raise EnvpinInputError(f"--prefix {prefix}: exists and is not a directory")
    if prefix.is_dir() and any(prefix.iterdir()) and not is_environment(prefix):
        raise EnvpinInputError(f"--prefix {prefix}: exists and is not a Python environment (no pyvenv.cfg or "
                               "conda-meta); refusing to replace it")


def is_environment(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir()


def recover(prefix: Path) -> None:
    """Clean what a killed run left: temporary builds go; a set-aside environment comes back if the prefix
    is empty, else goes."""
    for leftover in sorted(prefix.parent.glob(f"{glob_escape(prefix.name)}{SET_ASIDE}*")):
        if not prefix.exists():
            os.rename(leftover, prefix)
        else:
            shutil.rmtree(leftover, ignore_errors=True)
    for leftover in prefix.parent.glob(f"{glob_escape(prefix.name)}{TEMPORARY}*"):
        shutil.rmtree(leftover, ignore_errors=True)


def leftovers(prefix: Path) -> list[Path]:
    prefix = Path(os.path.abspath(prefix))
    name = glob_escape(prefix.name)
    return sorted(prefix.parent.glob(f"{name}{TEMPORARY}*")) + sorted(prefix.parent.glob(f"{name}{SET_ASIDE}*"))


def swap_in(built: Path, prefix: Path) -> None:
    if not prefix.exists():
        os.rename(built, prefix)
        return
    if exchange(built, prefix):  # the old environment is now at `built`
        shutil.rmtree(built, ignore_errors=True)
        return
    aside = prefix.with_name(f"{prefix.name}{SET_ASIDE}{secrets.token_hex(4)}")
    os.rename(prefix, aside)
    os.rename(built, prefix)
    shutil.rmtree(aside, ignore_errors=True)


def exchange(first: Path, second: Path) -> bool:
    """Swap two directories atomically (Linux ≥ 3.15 renameat2 RENAME_EXCHANGE); False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # noqa: PLC0415 - Linux only (renameat2), and ctypes costs ~3 ms

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0


# ---------------------------------------------------------------- relocation


def relocate(environment: Path, old: str, new: str) -> list[Path]:
    """Rewrite `old` to `new` in the files of an environment that record its path: scripts and activate
    files in bin/ (Scripts/), pyvenv.cfg, and files conda lists with a prefix placeholder. Binary files keep
    their length (the new path is shorter: the rest is NUL-padded, as conda does)."""
    changed = []
    for path, mode in files_holding_prefix(environment):
        if _rewrite(path, old.encode(), new.encode(), mode):
            changed.append(path)
    return changed


def files_holding_prefix(environment: Path) -> list[tuple[Path, str]]:
    found: dict[Path, str] = {}
    for folder in ("bin", "Scripts"):
        directory = environment / folder
        if directory.is_dir():
            for path in directory.iterdir():
                if path.is_file() and not path.is_symlink() and path.stat().st_size <= TEXT_LIMIT:
                    found[path] = "text"
    if (environment / "pyvenv.cfg").is_file():
        found[environment / "pyvenv.cfg"] = "text"
    for record in sorted((environment / "conda-meta").glob("*.json")) if (environment / "conda-meta").is_dir() else []:
        for relative, mode in conda_prefix_files(record):
            path = environment / relative
            if path.is_file() and not path.is_symlink():
                found[path] = mode
    return sorted(found.items())


def conda_prefix_files(record: Path) -> list[tuple[str, str]]:
    """(relative path, "text"|"binary") of a conda package's files that had its prefix written into them."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    paths = (data.get("paths_data") or {}).get("paths", [])
    return [(p["_path"], p.get("file_mode", "text")) for p in paths if p.get("prefix_placeholder") and "_path" in p]


def _rewrite(path: Path, old: bytes, new: bytes, mode: str) -> bool:
    data = path.read_bytes()
    if old not in data:
        return False
    if mode == "binary":
        data = re.sub(re.escape(old) + rb"([^\0]*)\0",
                      lambda m: new + m[1] + b"\0" * (len(old) - len(new) + 1), data)
    elif b"\0" in data:
        return False  # a binary in bin/ that conda did not list: not ours to edit
    else:
        data = data.replace(old, new)
    mode_bits = path.stat().st_mode
    temporary = path.with_name(f".{path.name}.envpin")
    temporary.write_bytes(data)
    os.chmod(temporary, mode_bits)
    os.replace(temporary, path)
    return True


# ---------------------------------------------------------------- locking and signals


@contextmanager
def prefix_lock(prefix: Path) -> Iterator[int | None]:
    """An exclusive lock per prefix, so that one run never cleans up another's temporary directory. Yields the
    lock file's descriptor (None without flock): a child that inherits it holds the lock as long as it lives."""
    lock_path = prefix.with_name(f".{prefix.name}.envpin-lock")
    try:
        import fcntl  # noqa: PLC0415 - POSIX only
    except ImportError:  # Windows: no flock; runs on one prefix must not overlap
        yield None
        return
    with open(lock_path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EnvpinInputError(f"--prefix {prefix}: another envpin install, or an installer one started, is "
                                   "still running on it") from None
        yield handle.fileno()


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM during a step that must not be cut in half (the swap, the cleanup)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    wanted = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, wanted)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def glob_escape(text: str) -> str:
    return glob.escape(text)
