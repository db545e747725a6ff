"""PEP 508 environment markers evaluated for a target machine, as pip evaluates them on it.

`torch==2.1.2+cu121; python_version >= "3.11"` beside `torch==2.0.1+cu118; python_version < "3.10"` is one
line per machine: `check` judges, and `solve --project` solves, only the line whose marker holds on the
target. The values are what CPython reports there (sys.platform, platform.system(), platform.machine():
`AMD64` on 64-bit Windows, `arm64` on Apple silicon).
"""

from __future__ import annotations

from envpin.vocabulary.platforms import MARKER_ENVIRONMENTS, platform_key


def marker_holds(marker: str, *, os_name: str, arch: str, python: str | None) -> bool:
    """Whether the marker holds on that machine. A marker on extras (its truth is which extras were asked
    for), one on the Python where the Python is not known (python=None), and one packaging cannot read or
    evaluate are not judged: they hold."""
    if "extra" in marker or (python is None and "python_" in marker.replace("platform_python_implementation", "")):
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName  # noqa: PLC0415 - packaging.markers is heavy: only a marker needs it

    platform = MARKER_ENVIRONMENTS.get(platform_key(os_name, arch))
    if platform is None:  # an architecture envpin has no platform for: its OS's values, the machine as given
        platform = {**MARKER_ENVIRONMENTS.get(platform_key(os_name, "x86_64"), {}), "platform_machine": arch}
    environment = {
        **platform, "python_version": python or "", "python_full_version": f"{python}.0" if python else "",
        "implementation_name": "cpython", "platform_python_implementation": "CPython",
    }
    try:
        return Marker(marker).evaluate(environment)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


# The Pythons a marker is tried on when two markers are compared: CPython 3.6 to 3.15
_PYTHONS = tuple(f"3.{minor}" for minor in range(6, 16))


def markers_meet(first: str, second: str) -> bool:
    """Whether some machine satisfies both markers: one of the platforms envpin knows (their CPython values)
    with some Python 3.6-3.15. `platform_machine == 'x86_64'` and `platform_machine == 'aarch64'` never meet, so a
    uv source for aarch64 never serves a line only x86_64 installs. A marker on extras, or one packaging cannot
    read or evaluate, is not judged: it meets any other."""
    if not first.strip() or not second.strip() or "extra" in first or "extra" in second:
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName  # noqa: PLC0415 - packaging.markers is heavy: only a marker needs it

    try:
        both = (Marker(first), Marker(second))
        for platform in MARKER_ENVIRONMENTS.values():
            for python in _PYTHONS:
                environment = {**platform, "python_version": python, "python_full_version": f"{python}.0",
                               "implementation_name": "cpython", "platform_python_implementation": "CPython"}
                if all(marker.evaluate(environment) for marker in both):
                    return True
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True
    return False


# an operator and its complement: `a OP b` fails exactly where `a COMPLEMENT b` holds (PEP 508 comparisons)
_COMPLEMENTS = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "in": "not in", "not in": "in"}


def negated(marker: str) -> str | None:
    """A PEP 508 marker that holds exactly where `marker` does not (De Morgan over `and`/`or`, each comparison
    by its complement), or None where one cannot be written (`~=`, `===`, an unreadable marker)."""
    from packaging.markers import InvalidMarker, Marker  # noqa: PLC0415 - packaging.markers is heavy: only a marker needs it

    try:
        tree = Marker(marker)._markers  # packaging's parsed form: comparisons, nested lists, "and" / "or"
    except InvalidMarker:
        return None
    return _negated(tree)


def _negated(node) -> str | None:
    if isinstance(node, tuple):
        left, op, right = node
        complement = _COMPLEMENTS.get(op.value)
        return f"{left.serialize()} {complement} {right.serialize()}" if complement else None
    # `a and b or c` is `(a and b) or c`: not that is `(not a or not b) and not c`
    alternatives: list[list] = [[]]
    for item in node:
        if item == "or":
            alternatives.append([])
        elif item != "and":
            alternatives[-1].append(item)
    parts = []
    for terms in alternatives:
        negated_terms = [t for t in (_negated(term) for term in terms) if t is not None]
        if len(negated_terms) != len(terms):
            return None
        parts.append(negated_terms[0] if len(negated_terms) == 1 else "(" + " or ".join(negated_terms) + ")")
    return " and ".join(parts)
