"""A project's numpy bound against a build's own requirement on numpy (its wheels' Requires-Dist, in the database).

pip installs one numpy for the whole environment: a release whose requirement on numpy leaves none of the numpy
versions the project allows cannot be installed beside it (multinerf's numpy<1.24 beside tensorflow 2.21.0,
which requires numpy>=1.26.0). Two specifiers meet when some version satisfies both; the versions tried are
each one's lower bounds and exact versions, and just above each exclusive lower bound, which is where two ranges
of versions meet if they meet at all (an exclusion, `!=1.24.0`, is not reasoned about).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `envpin check` reads `meet` alone
    from envpin.resolver.builds import Build
    from envpin.resolver.request import NumpyBound
    from envpin.resolver.target import Target


def numpy_needed(build: Build, target: Target) -> str | None:
    """The numpy specifier the build's wheels require on the target's Python; None where it was not read."""
    return build.numpy.on(target.python) if build.numpy is not None else None


def meet(first: str, second: str) -> bool:
    """Whether some version satisfies both specifiers."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a solve with a numpy bound
    from packaging.version import InvalidVersion, Version  # noqa: PLC0415 - as above

    try:
        both = SpecifierSet(first) & SpecifierSet(second)
    except InvalidSpecifier:
        return True  # a bound pip cannot read either is not this check's to refuse
    tried = {Version("0")}
    for clause in both:
        text = clause.version.rstrip(".*")
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if clause.operator in ("==", "===", ">=", "~=", "<="):
            tried.add(version)
        elif clause.operator == ">":
            tried.add(Version(f"{version.public}.1") if not version.is_postrelease else Version(f"{version}.1"))
    return any(both.contains(v, prereleases=True) for v in tried)


def numpy_clash(build: Build, target: Target, bound: NumpyBound) -> str | None:
    """Why the build cannot be installed beside the bound (None when it can, or its requirement was not read)."""
    needed = numpy_needed(build, target)
    if needed is None or meet(needed, bound.specifier):
        return None
    return f"{build.label} requires numpy{needed} (its wheels' Requires-Dist), which {bound.asked} excludes"
