"""Pins no index can install: a version PyPI does not serve (deleted, never published), or a stub release that
only fails (`tensorflow-gpu` 2.12.0). Read from PyPI's file lists, recorded here, so `check` says it offline.

PyPI, https://pypi.org/pypi/tensorflow-gpu/json, read on 2026-12-01 (tests/fixtures/resolution/pypi.json holds the
read and tests/unit/test_check_served.py compares): these are all its releases. 2.12.0, the last, is one sdist of
2646 bytes and no wheel; its summary is 'Removed: please install "tensorflow" instead.' and its description says
that tensorflow-gpu "has been replaced with this new, empty package that generates an error upon installation".
Release candidates before 2.7 (2.3.0rc0 …) are not served at all.
"""

from __future__ import annotations

import re

from envpin.readers.model import Contents, Pin, Problem

SERVED = {
    "tensorflow-gpu": tuple(
        "0.12.0 0.12.1 1.0.0 1.0.1 1.1.0 1.2.0 1.2.1 1.3.0 1.4.0 1.4.1 1.5.0 1.5.1 1.6.0 1.7.0 1.7.1 1.8.0 1.9.0 "
        "1.10.0 1.10.1 1.11.0 1.12.0 1.12.2 1.12.3 1.13.1 1.13.2 1.14.0 1.15.0 1.15.2 1.15.3 1.15.4 1.15.5 2.0.0 "
        "2.0.1 2.0.2 2.0.3 2.0.4 2.1.0 2.1.1 2.1.2 2.1.3 2.1.4 2.2.0 2.2.1 2.2.2 2.2.3 2.3.0 2.3.1 2.3.2 2.3.3 2.3.4 "
        "2.4.0 2.4.1 2.4.2 2.4.3 2.4.4 2.5.0 2.5.1 2.5.2 2.5.3 2.6.0 2.6.1 2.6.2 2.6.3 2.6.4 2.6.5 2.7.0rc0 "
        "2.7.0rc1 2.7.0 2.7.1 2.7.2 2.7.3 2.7.4 2.8.0rc0 2.8.0rc1 2.8.0 2.8.1 2.8.2 2.8.3 2.8.4 2.9.0rc0 2.9.0rc1 "
        "2.9.0rc2 2.9.0 2.9.1 2.9.2 2.9.3 2.10.0rc0 2.10.0rc1 2.10.0rc2 2.10.0rc3 2.10.0 2.10.1 2.11.0rc0 2.11.0rc1 "
        "2.11.0rc2 2.11.0 2.12.0".split()),
}
# (project, version) -> what the release is, for a stub that installs nothing or fails
STUBS = {
    ("tensorflow-gpu", "2.12.0"): "an empty stub (one 2646-byte sdist, no wheel) that fails on install: PyPI's "
                                  "tensorflow-gpu was removed, 'please install \"tensorflow\" instead'",
}
STUB_FIX = {"tensorflow-gpu": "use tensorflow (the same package since TensorFlow 2.1, PyPI's removal note says; "
                              "tensorflow[and-cuda] from 2.14 brings CUDA): `envpin solve --framework tensorflow`, "
                              "or pin tensorflow-gpu==2.11.0, its last real release"}


def unserved_pins(contents: Contents) -> list[Problem]:
    from envpin.readers.rules import problem  # noqa: PLC0415 - only a file that names such a project

    problems = []
    for pin in contents.pins:
        served = SERVED.get(pin.name)
        if served is None or pin.manager != "pip":
            continue
        chosen = _what_pip_takes(pin, served)
        if pin.version and pin.version not in served and _public(pin.version) not in served:
            problems.append(problem(
                "CHK-PIN-NOT-SERVED", pin.where,
                f"PyPI serves no {pin.name} {pin.version} (its releases are {served[0]} … {served[-1]}; it was "
                "deleted or never published): pip cannot install this pin anywhere",
                f"pin a release PyPI serves; {STUB_FIX.get(pin.name, '')}".rstrip("; ")))
        elif chosen is not None and (pin.name, chosen) in STUBS:
            taken = f"{pin.shown} is" if pin.version else f"{pin.shown} takes the newest release, {chosen}:"
            problems.append(problem("CHK-PIN-STUB", pin.where, f"{taken} {STUBS[pin.name, chosen]}",
                                    STUB_FIX.get(pin.name, "pin a real release")))
    return problems


def _what_pip_takes(pin: Pin, served: tuple[str, ...]) -> str | None:
    """The release pip installs for the pin: the pinned one, else the newest final release the range admits."""
    if pin.version:
        return _public(pin.version)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a served-list project

    try:
        specifier = SpecifierSet(pin.specifier)
    except InvalidSpecifier:
        return None
    admitted = list(specifier.filter(served))  # final releases unless only pre-releases match, as pip chooses
    return admitted[-1] if admitted else None


def _public(version: str) -> str:
    return re.split(r"\+", version)[0]
