"""The files a checked requirements file includes (`-r FILE`, `-c FILE`), read from beside it: the one place
`envpin check` reads more than the files it was given.

pip joins an include's path to the including file's directory (pypa/pip src/pip/_internal/req/req_file.py,
`_parse_and_recurse`: `os.path.join(os.path.dirname(filename), req_path)`), so each path is taken relative to
the file that names it. Each file is read with userfiles.read_included_text (UTF-8, UTF-16 with a BOM, the size bound,
and only a regular file: a FIFO would block the hook, a device never ends), and only from inside the checked file's
repository (userfiles.repository_boundary) unless the user allows more: the hook runs on a pull request's files,
which must not make it read, and quote back, a file of the machine it runs on (docs/hardening.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from envpin.base.userfiles import read_included_text, repository_boundary
from envpin.readers.requirements import Included, IncludeReader


def beside(checked: str | Path, allow_outside: bool = False) -> IncludeReader:
    """The reader of the files `checked` includes, each labelled by its path relative to `checked`'s directory;
    `allow_outside`: also files outside its repository."""
    return _Beside(Path(checked), allow_outside)


class _Beside:
    def __init__(self, checked: Path, allow_outside: bool):
        self.top = checked.parent
        self.key = os.path.realpath(checked)
        self.boundary = repository_boundary(checked, allow_outside)

    def __call__(self, including: str | None, target: str) -> Included:
        directory = (self.top / including).parent if including else self.top
        path = directory / target
        label = target if Path(target).is_absolute() else os.path.normpath(os.path.relpath(path, self.top))
        return Included(label, os.path.realpath(path), read_included_text(path, boundary=self.boundary))
