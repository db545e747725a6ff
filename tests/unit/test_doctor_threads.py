"""The doctor on real broken installs: public threads replayed, the thread's cause first, its fix first.

Each file in tests/fixtures/doctor/threads/ is one public thread (GitHub issue or pull request): its URL, the
error text exactly as the thread quotes it, the facts its reporter gave (as HostFacts / EnvFacts over a machine
of machines/*.json; `*-unreported` machines carry nothing the thread does not say), and the resolution the
thread reached. The test replays it through the real JSON parsers and the engine and asserts the first
finding and that the first fix is the one the thread confirms. threads/README.md says how the facts were
taken from each thread. No thread here is cited by the failure catalogue: these are replays, not the rules'
sources.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from envpin.doctor import catalogue
from envpin.doctor.engine import diagnose
from envpin.resolver.plan import Plan
from tests.unit.test_doctor_scenarios import ANTI_FIXES, NEGATION, case_of
from tests.unit.test_doctor_solved_fixes import pinned_builds, solve_answer

THREADS = Path(__file__).resolve().parents[1] / "fixtures" / "doctor" / "threads"
FILES = sorted(THREADS.glob("*.yaml"))
CATALOGUE = Path(catalogue.__file__).with_name("failure_catalogue.yaml")


def load(path: Path) -> dict:
    thread = yaml.safe_load(path.read_text(encoding="utf-8"))
    thread["name"] = path.stem
    return thread


def replay(thread: dict, database):
    scenario = dict(thread)
    # What the thread shows besides the error (an install command, a pip line) is pasted with it, as a user would.
    scenario["error_text"] = (thread.get("error_text") or "") + (thread.get("reported_text") or "")
    return diagnose(case_of(scenario, database))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_thread_first_finding_and_first_fix(path, database):
    thread = load(path)
    diagnosis = replay(thread, database)
    expect = thread["expect"]
    ids = [finding.id for finding in diagnosis.findings]
    assert ids and ids[0] == expect["first"], [f.to_json() for f in diagnosis.findings]
    first = diagnosis.findings[0]
    assert first.fix, first.to_json()
    for words in expect["first_fix"]:
        assert words in first.fix[0], f"{words!r} not in the first fix: {first.fix[0]}"
    evidence = "\n".join(first.evidence)
    for words in expect.get("evidence", []):
        assert words in evidence, f"{words!r} not in evidence:\n{evidence}"
    every_fix = "\n".join(line for finding in diagnosis.findings for line in finding.fix)
    for words in expect.get("in_no_fix", []):
        assert words not in every_fix
    if "solve" in expect:  # the same machine asked of `envpin solve`: the first finding's install is exactly its answer
        answer = solve_answer(expect["solve"], database)
        assert isinstance(answer, Plan), answer
        install = next((line for line in first.fix if pinned_builds(line)), None)
        assert install is not None, first.to_json()
        named = {name for name, _ in pinned_builds(install)}
        for package in answer.packages:
            if package.name in named:
                assert f"{package.name}=={package.version}" in install, (package.requirement, install)
        if answer.packages[0].index_url:
            assert answer.packages[0].index_url in install
    for finding in diagnosis.findings:
        for line in finding.fix:
            if ANTI_FIXES.search(line):
                assert NEGATION.search(line), f"{finding.id} recommends an anti-fix: {line}"


def test_the_corpus_is_real_threads_the_catalogue_does_not_cite():
    threads = [load(path) for path in FILES]
    assert len(threads) >= 25
    urls = [t["url"] for t in threads]
    assert len(set(urls)) == len(urls)
    cited = CATALOGUE.read_text(encoding="utf-8")
    for thread in threads:
        assert thread["url"].startswith("https://github.com/"), thread["name"]
        assert thread["url"] not in cited, f"{thread['name']}: the catalogue cites {thread['url']}"
        assert thread["title"] and thread["resolution"] and thread["reported"], thread["name"]
        assert thread.get("error_text") or thread.get("env"), thread["name"]
        assert thread["expect"]["first"] in catalogue.BY_ID and thread["expect"]["first_fix"], thread["name"]


def test_the_corpus_covers_platforms_environments_and_frameworks():
    threads = [load(path) for path in FILES]
    assert {t["platform"] for t in threads} >= {"linux", "windows", "wsl"}
    environments = " ".join(t["environment"] for t in threads)
    for kind in ("pip", "conda", "conda-forge", "venv", "container"):
        assert kind in environments, kind
    assert {t["framework"] for t in threads} >= {"torch", "tensorflow", "jax", "onnxruntime-gpu", "ctranslate2"}
