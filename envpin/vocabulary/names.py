"""Distribution names as installers compare them."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name: str) -> str:
    """PEP 503 normalisation, as packaging.utils.canonicalize_name gives it: `Torch_Vision` and `torch.vision` are one
    distribution (`torch-vision`). Here so that a reader needs no packaging.utils, which imports packaging.tags
    (with logging, subprocess and sysconfig) for its wheel names."""
    return _SEPARATORS.sub("-", name).lower()
