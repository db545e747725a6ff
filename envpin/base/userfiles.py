"""Reading and writing the user's files: one place that decides what a bad path means.

Every command reads files the user names (facts, requirements, error text) and writes files the user keeps
(environment.yml, locks). Only regular files are read, never one of /proc, /sys or /dev (open_regular), and a
file a project file names only inside its repository (Boundary; docs/hardening.md). A read that fails is a
one-line error naming the option and the path; a write never
leaves half a file, never replaces what is not a regular file (`-o /dev/null` as root must not turn the device
into a file), keeps an existing file's mode, and writes through a symlink to its target rather than replacing
the link.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import hidden
from envpin.base.limits import MAX_FILE_BYTES, MAX_LINES

MAX_INPUT_BYTES = MAX_FILE_BYTES  # no file envpin reads is near this; /dev/zero or a runaway log must not fill memory
LOG_TAIL_BYTES = 8 * 1024 * 1024  # of an error text, the end is what matters
LOG_READ_LIMIT = 512 * 1024 * 1024  # a log is read through to its end, up to this


class UnreadableFile(EnvpinInputError):
    """A file the user named cannot be read: `reason` says why in a few words."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: cannot be read ({reason})")
        self.reason = reason


def read_text(path: str | Path, option: str = "", errors: str = "strict") -> str:
    """A UTF-8 file's text (`-` is stdin); unreadable, not a regular file (open_regular), not UTF-8 (with
    errors="strict"), over MAX_INPUT_BYTES or over MAX_LINES lines (envpin.base.limits) is a one-line error naming the
    option (if any) and the path."""
    where = f"{option} {path}" if option else str(path)
    try:
        if str(path) == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with open_regular(path, where) as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        raise UnreadableFile(where, error.strerror or error.__class__.__name__) from None
    if len(data) > MAX_INPUT_BYTES:
        raise UnreadableFile(where, f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB, not a file envpin reads")
    try:
        text = decode(data, errors)
    except UnicodeDecodeError:
        raise UnreadableFile(where, "not UTF-8 text") from None
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > MAX_LINES:
        raise UnreadableFile(where, f"{lines:,} lines, more than envpin reads in one file ({MAX_LINES:,})")
    return text


def read_included_text(path: str | Path, where: str = "", boundary: Boundary | None = None) -> str:
    """The text of a file another file names (a requirements file's `-r`/`-c`): as read_text, and, with a
    `boundary`, only a file inside it. `where` names it in errors (the include as written)."""
    shown = where or str(path)
    try:
        _refuse_special(os.stat(path), path, shown)
    except OSError as error:
        raise UnreadableFile(shown, error.strerror or error.__class__.__name__) from None
    if boundary is not None:
        boundary.admit(path, shown)
    try:
        return read_text(path)
    except UnreadableFile as error:
        raise UnreadableFile(shown, error.reason) from None


# ---------------------------------------------------------------- what envpin opens

# Pseudo-file systems: their "regular" files are the kernel's (/proc/self/environ holds the environment of the
# process that reads it, a CI job's secrets), never a user's file, and /dev holds devices.
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")
_KINDS = ((stat.S_ISDIR, "a directory, not a file"), (stat.S_ISFIFO, "a FIFO, not a regular file"),
          (stat.S_ISCHR, "a character device, not a regular file"), (stat.S_ISBLK, "a block device, not a regular file"),
          (stat.S_ISSOCK, "a socket, not a regular file"))


def open_regular(path: str | Path, where: str = "") -> BinaryIO:
    """`path` opened for reading, when it is a regular file outside /proc, /sys and /dev; else UnreadableFile.

    A FIFO with no writer would block the reader forever, a device never ends, and /proc/self/environ is the
    environment of envpin itself. The kind is checked before opening (opening a device can act on it), the file
    is opened with O_NONBLOCK (a FIFO swapped in after the check then opens at once, and fstat refuses it) and
    checked again on the open descriptor."""
    shown = where or str(path)
    try:
        before = os.stat(path)
    except OSError as error:
        raise UnreadableFile(shown, error.strerror or error.__class__.__name__) from None
    _refuse_special(before, path, shown)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise UnreadableFile(shown, error.strerror or error.__class__.__name__) from None
    after = os.fstat(descriptor)
    if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        os.close(descriptor)
        raise UnreadableFile(shown, "changed while it was opened; not a regular file")
    return os.fdopen(descriptor, "rb")


def _refuse_special(status: os.stat_result, path: str | Path, shown: str) -> None:
    for test, reason in _KINDS:
        if test(status.st_mode):
            raise UnreadableFile(shown, reason)
    if not stat.S_ISREG(status.st_mode):
        raise UnreadableFile(shown, "not a regular file")
    pseudo = _pseudo_root(os.path.realpath(path), status)
    if pseudo is not None:
        raise UnreadableFile(shown, f"a file of {pseudo}, not a regular file; envpin never reads {pseudo}")


def _pseudo_root(real: str, status: os.stat_result) -> str | None:
    """The pseudo-file system (/proc, /sys, /dev) `real` lies in, by its path or, for one mounted elsewhere,
    by its device."""
    if os.name == "nt":
        return None
    for root in PSEUDO_ROOTS:
        if real == root or real.startswith(root + "/"):
            return root
        try:  # only a mounted /proc or /sys: an empty directory on the root file system shares its device
            if root != "/dev" and os.path.ismount(root) and os.stat(root).st_dev == status.st_dev:
                return root
        except OSError:
            continue
    return None


class Boundary:
    """Where the files a project file names may lie: inside `root` (the checked repository), unless the user
    passed `--allow-outside-repo`. A pull request controls what its files name; without the boundary a
    `-r /home/runner/.aws/credentials` would have `envpin check` quote a CI machine's file back."""

    OPTION = "--allow-outside-repo"

    def __init__(self, root: str | Path, allow_outside: bool = False, repository: bool = True):
        self.root = os.path.realpath(root)
        self.allow_outside = allow_outside
        self.repository = repository  # False: no git work tree holds the file, and root is its directory

    def admit(self, path: str | Path, shown: str) -> None:
        """Nothing when `path` (its real path: a symlink counts where it points) is inside; else UnreadableFile."""
        if self.allow_outside or self.contains(path):
            return
        where = "the repository" if self.repository else "the directory"
        raise UnreadableFile(shown, f"outside {where} {self.root}, and envpin reads only files inside it; "
                                    f"pass {self.OPTION} to read it")

    def contains(self, path: str | Path) -> bool:
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)


def repository_boundary(file: str | Path, allow_outside: bool = False) -> Boundary:
    """The Boundary of a file: the git work tree it lies in (the nearest directory above it holding `.git`,
    as `git rev-parse --show-toplevel` finds it, without running git), else the file's own directory."""
    directory = Path(os.path.abspath(file)).parent
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return Boundary(candidate, allow_outside)
    return Boundary(directory, allow_outside, repository=False)


def decode(data: bytes, errors: str = "strict") -> str:
    """UTF-8, or UTF-16 where a byte-order mark says so (Windows PowerShell's `>` writes UTF-16 LE with one);
    a UTF-8 byte-order mark (Notepad's) is dropped."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors=errors)
    return data.decode("utf-8-sig", errors=errors)


def read_log(path: str | Path, option: str, keep: int = LOG_TAIL_BYTES) -> str:
    """The last `keep` bytes of a log (a file, or stdin for `-`), decoded leniently: an error is at the end of
    what a program printed, and a log of any length must not be refused."""
    where = f"{option} {path}"
    tail = bytearray()
    try:
        with (open(sys.stdin.fileno(), "rb", closefd=False) if str(path) == "-" else open_regular(path, where)) as handle:
            total = 0
            while chunk := handle.read(1024 * 1024):
                total += len(chunk)
                if total > LOG_READ_LIMIT:  # /dev/zero, or a pipe that never closes
                    raise UnreadableFile(where, f"more than {LOG_READ_LIMIT // (1024 * 1024)} MiB; pass the end of the log")
                tail += chunk
                del tail[:-keep]
    except OSError as error:
        raise UnreadableFile(where, error.strerror or error.__class__.__name__) from None
    return decode(bytes(tail), errors="replace")


def read_json(path: str | Path, option: str) -> Any:
    """A JSON document from a file, or stdin for `-`; unreadable or malformed input is a one-line error."""
    text = read_text(path, option)
    try:
        return json.loads(text)
    except ValueError as error:
        raise EnvpinInputError(f"{option} {path}: not JSON ({error})") from None
    except RecursionError:  # json raises this, not ValueError, for arrays or objects nested too deep
        raise EnvpinInputError(f"{option} {path}: not JSON (nested too deep)") from None


def write_atomically(path: str | Path, text: str, option: str = "-o") -> None:
    """Write `text` to `path` so that a failure never leaves a half-written file.

    A regular file (or a new path) is written beside itself and renamed into place, keeping the old file's
    mode. A symlink is followed: its target is replaced, the link stays. A character device or FIFO
    (/dev/null, /dev/stdout, a pipe) is written through, since renaming onto it would replace the device. A
    directory or any other kind of file is refused.
    """
    path = Path(path)
    text = hidden(text)  # an environment variable's value a project file named is written as its ${NAME}
    try:
        status = os.stat(path)  # follows symlinks: what the link points at decides
    except FileNotFoundError:
        status = None
    except OSError as error:
        raise EnvpinInputError(f"{option} {path}: cannot write ({error.strerror or error})") from None
    if status is not None and stat.S_ISDIR(status.st_mode):
        raise EnvpinInputError(f"{option} {path}: is a directory; name a file")
    if status is not None and (stat.S_ISCHR(status.st_mode) or stat.S_ISFIFO(status.st_mode)):
        _write_through(path, text, option)
        return
    if status is not None and not stat.S_ISREG(status.st_mode):
        raise EnvpinInputError(f"{option} {path}: not a regular file; envpin writes only files")
    final = Path(os.path.realpath(path)) if path.is_symlink() else path
    mode = stat.S_IMODE(status.st_mode) if status is not None else None
    _replace(final, text, mode, option, shown=path)


def _write_through(path: Path, text: str, option: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise EnvpinInputError(f"{option} {path}: cannot write ({error.strerror or error})") from None


def _replace(final: Path, text: str, mode: int | None, option: str, shown: Path) -> None:
    temporary = final.with_name(f".{final.name}.envpin-{os.getpid()}.tmp")
    try:
        # O_EXCL: never write into a file someone placed at the temporary name (or a link planted there)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        with open(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(temporary, mode)  # the umask narrowed the mode given to os.open
        os.replace(temporary, final)
    except OSError as error:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:  # a read-only file system refuses even the unlink of a file it never created
            pass
        raise EnvpinInputError(f"{option} {shown}: cannot write ({error.strerror or error})") from None
