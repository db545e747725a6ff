"""Which kind of file a path holds, and the one reader for each kind (one module per format)."""

from __future__ import annotations

import importlib
import re
from pathlib import PurePath
from typing import TYPE_CHECKING

from envpin.readers.model import Contents
from envpin.readers.rules import problem

if TYPE_CHECKING:
    from envpin.readers.requirements import IncludeReader

# kind -> the module whose parse(text) reads it
READERS = {
    "environment.yml": "envpin.readers.environment_yml",
    "requirements": "envpin.readers.requirements",
    "pylock": "envpin.check.pylock",
    "conda-lock": "envpin.check.conda_lock",
    "explicit": "envpin.check.explicit",
    "conda-specs": "envpin.readers.conda_specs",
    "uv.lock": "envpin.check.uv_lock",
    "pixi.lock": "envpin.check.pixi_lock",
    "poetry.lock": "envpin.check.poetry_lock",
    "Pipfile.lock": "envpin.check.pipfile_lock",
    "pdm.lock": "envpin.check.pdm_lock",
    "pyproject.toml": "envpin.check.manifests:parse_pyproject",
    "pixi.toml": "envpin.check.manifests:parse_pixi",
    "setup.py": "envpin.readers.setup_files:parse_setup_py",
    "setup.cfg": "envpin.readers.setup_files:parse_setup_cfg",
}
KINDS = tuple(READERS)
INCLUDING_KINDS = ("requirements", "environment.yml")  # pip requirement lines, which may include files
_PYLOCK_NAME = re.compile(r"^pylock\.[^.]+\.toml$")  # PEP 751: pylock.toml or pylock.<name>.toml
_EXPLICIT = re.compile(r"^@EXPLICIT\s*$", re.M)
_CONFLICT = re.compile(r"^(<{7}|={7}|>{7})(?: |$)", re.M)


def kind_of(path: str, text: str) -> str | None:
    """The kind of file, from its name first and its first lines where the name leaves it open."""
    name = PurePath(path).name.lower()
    if name in ("uv.lock", "pixi.lock", "poetry.lock", "pdm.lock"):
        return name
    if name == "pipfile.lock":
        return "Pipfile.lock"
    if name in ("pyproject.toml", "pixi.toml", "setup.py", "setup.cfg"):
        return name
    if name == "pylock.toml" or _PYLOCK_NAME.match(name):
        return "pylock"
    if _EXPLICIT.search(text[:4096]):
        return "explicit"
    if name.endswith((".yml", ".yaml")):
        return "conda-lock" if "conda-lock" in name or _looks_like_conda_lock(text) else "environment.yml"
    if name.endswith(".lock") and name.startswith("conda-"):
        return "explicit"  # conda-lock render's name (conda-linux-64.lock); the reader reports a missing @EXPLICIT
    if name.endswith((".txt", ".in")):
        from envpin.readers.conda_specs import is_spec_list  # noqa: PLC0415 - only a .txt needs the test

        return "conda-specs" if is_spec_list(text) else "requirements"
    return None


def _looks_like_conda_lock(text: str) -> bool:
    return bool(re.search(r"^metadata:", text, re.M) and re.search(r"^package:", text, re.M))


def read_contents(kind: str, text: str, include: IncludeReader | None = None) -> Contents:
    """The file's Contents; committed merge-conflict markers are reported instead of a parse error. `include`
    reads the files a requirements file (or an environment.yml's pip: section) includes with -r / -c."""
    conflicts = []
    if "<<<<<<<" in text:  # searched line by line, a long file without one cost a tenth of its check
        conflicts = [text.count("\n", 0, m.start()) + 1 for m in _CONFLICT.finditer(text) if m.group(1)[0] == "<"]
    if conflicts:
        return Contents(kind, problems=tuple(
            problem("CHK-MERGE-CONFLICT", f"line {line}", "an unresolved git merge conflict was committed",
                    "resolve it (keep one side, or regenerate the file) and commit again")
            for line in conflicts
        ))
    module, _, function = READERS[kind].partition(":")
    reader = getattr(importlib.import_module(module), function or "parse")
    return reader(text, include) if kind in INCLUDING_KINDS else reader(text)
