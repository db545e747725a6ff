"""Hash values as lockfiles write them: which algorithms an installer takes, and whether a digest can be one.

pip accepts only sha256, sha384 and sha512 in `--hash` (STRONG_HASHES in pypa/pip
src/pip/_internal/utils/hashes.py; "Allowed hash algorithms for --hash are sha256, sha384, sha512." from
src/pip/_internal/cli/cmdoptions.py). PEP 751 keys a pylock `hashes` table by hashlib algorithm names and asks
for at least one secure one (sha256 recommended). conda-lock v1 requires an md5 for conda packages.
"""

from __future__ import annotations

import re
from functools import cache

PIP_ALGORITHMS = ("sha256", "sha384", "sha512")
WEAK_ALGORITHMS = frozenset({"md5", "sha1"})
_HEX = re.compile(r"^[0-9a-f]+$")


@cache
def digest_lengths() -> dict[str, int]:
    """The hex digest length per hashlib algorithm with a fixed size (the shake_* functions have none). Made at
    the first hash read: importing hashlib (with OpenSSL) is 11 M instructions, 4% of a short requirements check."""
    import hashlib  # noqa: PLC0415

    return {name: hashlib.new(name).digest_size * 2 for name in hashlib.algorithms_guaranteed if not name.startswith("shake_")}


def digest_problem(algorithm: str, digest: object) -> str | None:
    """Why `algorithm: digest` cannot be a hash of a file, or None when it can."""
    lengths = digest_lengths()
    if algorithm not in lengths:
        if algorithm.lower() in lengths:
            return f"algorithm {algorithm!r} must be written in lower case ({algorithm.lower()!r})"
        return f"{algorithm!r} is not a hash algorithm installers know ({', '.join(PIP_ALGORITHMS)}, md5, ...)"
    if not isinstance(digest, str):
        return f"the {algorithm} value is a {type(digest).__name__}, not a hex string"
    expected = lengths[algorithm]
    if not _HEX.match(digest):
        shown = digest if len(digest) <= 24 else digest[:20] + "…"
        return f"the {algorithm} value {shown!r} is not lower-case hex"
    if len(digest) != expected:
        return f"the {algorithm} value has {len(digest)} hex digits; a {algorithm} digest has {expected}"
    return None


def split_hash(text: str) -> tuple[str, str] | None:
    """`sha256:abc…` -> ("sha256", "abc…"); None when there is no `algorithm:` part."""
    algorithm, separator, digest = text.partition(":")
    return (algorithm, digest) if separator and algorithm else None
