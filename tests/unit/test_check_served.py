"""`check` on pins no index can install: a version PyPI does not serve, a stub release (envpin.readers.served),
against PyPI's file list recorded in tests/fixtures/resolution/pypi.json (SOURCES.md there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from envpin.check import check_text
from envpin.readers.served import SERVED, STUBS

RECORDED = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "resolution" / "pypi.json").read_text())


def test_the_served_releases_are_pypis_as_recorded():
    releases = RECORDED["projects"]["tensorflow-gpu"]["releases"]
    assert SERVED["tensorflow-gpu"] == tuple(sorted(releases, key=Version))
    stubs = {v for v, files in releases.items() if files["wheels"] == 0}
    assert {(project, version) for project, version in STUBS} == {("tensorflow-gpu", v) for v in stubs}
    assert releases["2.12.0"]["sdists"] == [["tensorflow-gpu-2.12.0.tar.gz", 2646]]
    assert RECORDED["projects"]["tensorflow-gpu"]["summary"] == 'Removed: please install "tensorflow" instead.'


@pytest.mark.parametrize("line, found", [
    ("tensorflow-gpu==2.3.0rc0", "CHK-PIN-NOT-SERVED"),  # the pin: never on PyPI, or deleted
    ("tensorflow-gpu==2.12.0", "CHK-PIN-STUB"),
    ("tensorflow-gpu>=2.5", "CHK-PIN-STUB"),  # pip takes the newest the range admits: the stub
    ("tensorflow-gpu", "CHK-PIN-STUB"),
    ("tensorflow-gpu==2.11.0", None),  # the last real release
    ("tensorflow-gpu<2.12", None),
    ("tensorflow-gpu==2.10.0rc3", None),  # a release candidate PyPI does serve
])
def test_pins_of_a_stubbed_project(line, found, database):
    report = check_text("requirements.txt", line + "\n", load_database=lambda: database)
    problems = [p.id for p in report.problems if p.id in ("CHK-PIN-NOT-SERVED", "CHK-PIN-STUB")]
    assert problems == ([found] if found else [])
