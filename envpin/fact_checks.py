"""The spellings of versions that HostFacts (envpin.facts) and EnvFacts (envpin.env_facts) both check.

Kept in a module of their own so that env_facts needs nothing from facts: facts re-exports env_facts'
names lazily, and the import graph between the two stays one-directional.
"""

from __future__ import annotations

import re

# ASCII digits only (re.ASCII): `\d` alone also takes full-width and other scripts' digits, which int() accepts
_DRIVER_VERSION = re.compile(r"\d{2,4}(\.\d{1,3}){0,2}", re.ASCII)
_COMPUTE_CAPABILITY = re.compile(r"\d{1,2}\.\d", re.ASCII)
_PYTHON_VERSION = re.compile(r"3\.\d{1,2}(\.\d{1,3})?[a-z0-9]*", re.ASCII)


def is_driver_version(text: str) -> bool:
    return bool(_DRIVER_VERSION.fullmatch(text))


def is_compute_capability(text: str) -> bool:
    return bool(_COMPUTE_CAPABILITY.fullmatch(text))


def is_python_version(text: str) -> bool:
    return bool(_PYTHON_VERSION.fullmatch(text))
