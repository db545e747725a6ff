"""The TOML reader: the standard library's `tomllib` on Python ≥ 3.11, its backport `tomli` on 3.10.

Import this module (lazily, like `tomllib` was) instead of `tomllib`, so that every TOML path works on each
Python that `requires-python` admits.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, load, loads  # novm: the 3.10 branch below is tomli
else:
    from tomli import TOMLDecodeError, load, loads

__all__ = ["TOMLDecodeError", "load", "loads"]
