"""The TOML reader: the standard library's `tomllib` on Python ≥ 3.11, its backport `tomli` on 3.10.

Import this module (lazily, like `tomllib` was) instead of `tomllib`, so that every TOML path works on each
Python that `requires-python` admits.

`loads` reads TOML 1.0, which is what pip, build backends and lockfile writers use. A user's manifest (a
`pixi.toml`, a `pyproject.toml`) may be TOML 1.1 instead: pixi accepts inline tables that span lines and end in a
comma. `loads_manifest` reads those with `tomli` ≥ 2.4, the first release that reads TOML 1.1 (its CHANGELOG,
2.4.0: "TOML v1.1.0 compatibility"); the standard library gets TOML 1.1 only in Python 3.15.
"""

from __future__ import annotations

import sys
from typing import Any

from envpin.base.limits import MAX_TOML_DEPTH, toml_depth

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, load  # novm: the 3.10 branch below is tomli
    from tomllib import loads as _loads  # novm: the same
else:
    from tomli import TOMLDecodeError, load
    from tomli import loads as _loads

__all__ = ["ManifestDecodeError", "TOMLDecodeError", "load", "loads", "loads_manifest"]

_TOML_1_1_TOMLI = (2, 4)  # tomli 2.4.0 added TOML 1.1


class ManifestDecodeError(TOMLDecodeError):
    """A manifest neither TOML reader takes; caught as TOMLDecodeError. Its message is the whole text (the parent's
    own constructor wants the document and position, and formats them differently on each Python)."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)


def loads(text: str) -> dict[str, Any]:
    """TOML 1.0; arrays and inline tables nested deeper than envpin.base.limits.MAX_TOML_DEPTH are refused (as a
    TOMLDecodeError) before the reader, which recurses once per level, runs out of stack."""
    _refuse_deep(text)
    return _read(_loads, text)


def _read(reader, text: str) -> dict[str, Any]:
    """`reader(text)`, with an integer past Python's digit limit (the readers' int() raises a bare ValueError, not
    TOMLDecodeError) refused as bad TOML."""
    try:
        return reader(text)
    except TOMLDecodeError:
        raise
    except ValueError as error:
        if "digits" not in str(error):
            raise
        raise ManifestDecodeError("an integer of more than 4,300 digits, past what Python reads as a number") from None


def _refuse_deep(text: str) -> None:
    depth = toml_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise ManifestDecodeError(f"arrays or tables nested {depth:,} deep, more than envpin reads ({MAX_TOML_DEPTH})")


def loads_manifest(text: str) -> dict[str, Any]:
    """A user's manifest, TOML 1.0 or 1.1. A document that is neither raises TOMLDecodeError naming TOML 1.1 and
    the line, as does TOML 1.1 where only a tomli older than 2.4 is installed (it says to upgrade)."""
    _refuse_deep(text)  # for both readers
    try:
        return _read(_loads, text)
    except TOMLDecodeError as strict:
        older = f"not valid TOML 1.0 ({strict}); reading TOML 1.1, which pixi also accepts, needs tomli >= 2.4 " \
                "(pip install 'tomli>=2.4')"
        try:
            import tomli  # noqa: PLC0415 - the TOML 1.1 reader, only for a manifest the TOML 1.0 reader refused
        except ImportError:
            raise ManifestDecodeError(older) from None
        version = tuple(int(p) for p in str(getattr(tomli, "__version__", "0.0")).split(".")[:2] if p.isdigit())
        if version < _TOML_1_1_TOMLI:
            raise ManifestDecodeError(older) from None
        try:
            return _read(tomli.loads, text)
        except tomli.TOMLDecodeError as error:
            raise ManifestDecodeError(f"not valid TOML 1.1 ({error})") from None
