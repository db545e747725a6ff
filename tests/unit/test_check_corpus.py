"""The corpus of good and broken environment files and lockfiles (tests/fixtures/check, SOURCES.md says where
each comes from): every file gives exactly the problems expected.toml lists, at the field it names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from envpin.base import _toml
from envpin.check import check_text
from envpin.check.formats import kind_of
from envpin.readers.rules import PROBLEMS

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "check"
EXPECTED = _toml.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))


def shown(problem) -> str:
    default = PROBLEMS[problem.id][0]
    return f"{problem.id}@{problem.where}" + ("" if problem.severity == default else f"!{problem.severity}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_gives_exactly_the_expected_problems(name, database):
    path = CORPUS / name
    report = check_text(str(path), path.read_text(encoding="utf-8"), load_database=lambda: database)
    assert sorted(map(shown, report.problems)) == sorted(EXPECTED[name]["problems"])
    for problem in report.problems:
        assert problem.message and problem.fix, problem  # every problem says what is wrong and what to do


def test_the_corpus_is_large_and_spans_every_format():
    files = [p for p in CORPUS.rglob("*") if p.is_file() and p.suffix not in (".md", ".py") and p.name != "expected.toml"]
    assert sorted(str(p.relative_to(CORPUS)) for p in files) == sorted(EXPECTED), "every fixture has expectations"
    assert len(files) >= 40
    kinds = Counter(kind_of(str(p), p.read_text(encoding="utf-8")) for p in files)
    assert set(kinds) == {"requirements", "environment.yml", "pylock", "conda-lock", "explicit", "uv.lock"}
    good = Counter(kind_of(str(CORPUS / n), (CORPUS / n).read_text(encoding="utf-8")) for n, e in EXPECTED.items() if not e["problems"])
    bad = Counter(kind_of(str(CORPUS / n), (CORPUS / n).read_text(encoding="utf-8")) for n, e in EXPECTED.items() if e["problems"])
    assert all(good[k] >= 1 and bad[k] >= 3 for k in kinds), (good, bad)


def test_the_corpus_exercises_most_problem_ids():
    seen = {entry.split("@")[0] for e in EXPECTED.values() for entry in e["problems"]}
    # the ids reached only with a target, an unreadable file or a newer database are tested in
    # test_check_targets / test_check_cli / test_check_news / test_conda_rattler
    untested_here = {"CHK-FILE-UNREADABLE", "CHK-RELEASE-UNKNOWN", "CHK-DATABASE-NEWS", "CHK-CONDA-UNSOLVABLE",
                     "CHK-SOLVE-ASSUMED"}
    # a marker after an option line, a computed setup.py: test_check_formats, and the repositories' corpus
    # (tests/fixtures/repos: faceswap's requirements_nvidia.txt)
    untested_here |= {"CHK-OPTION-MARKER-IGNORED", "CHK-SETUP-PY-COMPUTED"}
    # a pin a framework release's own Requires-Dist excludes (protobuf==4.25.1 beside tensorflow==2.20.0):
    # test_framework_requires
    untested_here.add("CHK-PACKAGE-REQUIRES")
    # pins against PyPI's recorded file lists (a version not served, a stub): test_check_served
    untested_here |= {"CHK-PIN-NOT-SERVED", "CHK-PIN-STUB"}
    # what uv answers about the file's lines (`check --resolve`): test_resolution, against a loopback index
    untested_here |= {"CHK-RESOLVE-CONFLICT", "CHK-NOT-RESOLVED"}
    # files that include others (-r / -c): test_check_includes, which reads them from beside the file
    untested_here |= {"CHK-INCLUDE-NOT-READ", "CHK-INCLUDE-CYCLE", "CHK-CONSTRAINT-CONFLICT"}
    # what the environment sets when checking: test_requirements_variables
    untested_here.add("CHK-ENV-VARIABLE-UNSET")
    # a lock against the manifest beside it: test_check_staleness
    untested_here.add("CHK-LOCK-STALE")
    untested_here |= {i for i in PROBLEMS if i.startswith("CHK-TARGET-")}
    assert set(PROBLEMS) - seen == untested_here


def test_every_problem_id_is_documented():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "check.md").read_text(encoding="utf-8")
    missing = [i for i in PROBLEMS if f"`{i}`" not in docs]
    assert missing == []
