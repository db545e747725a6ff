"""The files a checked requirements file includes (`-r FILE`, `-c FILE`), read from beside it: the one place
`envpin check` reads more than the files it was given.

pip joins an include's path to the including file's directory (pypa/pip src/pip/_internal/req/req_file.py,
`_parse_and_recurse`: `os.path.join(os.path.dirname(filename), req_path)`), so each path is taken relative to
the file that names it. Each file is read with userfiles.read_included_text (UTF-8, UTF-16 with a BOM, the size bound,
and only a regular file: a FIFO would block the hook, a device never ends).
"""

from __future__ import annotations

import os
from pathlib import Path

from envpin.check.requirements import Included, IncludeReader
from envpin.userfiles import read_included_text


def beside(checked: str | Path) -> IncludeReader:
    """The reader of the files `checked` includes, each labelled by its path relative to `checked`'s directory."""
    return _Beside(Path(checked))


class _Beside:
    def __init__(self, checked: Path):
        self.top = checked.parent
        self.key = os.path.realpath(checked)

    def __call__(self, including: str | None, target: str) -> Included:
        directory = (self.top / including).parent if including else self.top
        path = directory / target
        label = target if Path(target).is_absolute() else os.path.normpath(os.path.relpath(path, self.top))
        return Included(label, os.path.realpath(path), read_included_text(path))
