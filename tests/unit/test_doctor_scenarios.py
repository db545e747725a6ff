"""The doctor on replayed machines: facts + error text -> the expected first finding and the words of its fix.

Each scenario in tests/fixtures/doctor/scenarios.yaml is a machine (machines/*.json, HostFacts) with what
differs on it, the environment as `envpin verify --format json` reports it, and the error text the user saw
(SOURCES.md says where each comes from). The facts go through the real JSON parsers, exactly as
`envpin doctor --facts` reads them.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml

from envpin.base.record import replace
from envpin.doctor.catalogue import BY_ID, GROUPS
from envpin.doctor.engine import diagnose
from envpin.doctor.model import PROVEN, Case, Finding
from envpin.doctor.pairing import _xformers_cuda
from envpin.facts.host import env_facts_from_json, from_json, has_env_facts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "doctor"
SCENARIOS = yaml.safe_load((FIXTURES / "scenarios.yaml").read_text(encoding="utf-8"))
ENV_KEYS = ("packages", "torch", "tensorflow", "jax", "library_dirs")

# Catalogue §5: what the doctor must never recommend. A fix line that names one must be saying not to.
ANTI_FIXES = re.compile(
    r"\b(copy|copying|rename|renaming)\s+[`'\"]?[\w.\-]+\.(dll|so)\b|\bln -s\b|\bsymlink|DLL (web)?sites?|"
    r"CUDA_VISIBLE_DEVICES=-1|-allow-unsupported-compiler|comment(ing)? out", re.IGNORECASE)
NEGATION = re.compile(r"\b(do not|don't|never|not)\b", re.IGNORECASE)


def merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key not in ("files",):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def facts_document(scenario: dict) -> dict:
    """The scenario as one `--facts` document: HostFacts plus EnvFacts keys."""
    machine = json.loads((FIXTURES / "machines" / f"{scenario['machine']}.json").read_text(encoding="utf-8"))
    document = merge(machine, scenario.get("host") or {})
    env = scenario.get("env")
    if env:
        if env.get("python"):
            document["python"] = merge(document["python"], env["python"])
        for key in ENV_KEYS:
            if key in env:
                document[key] = env[key]
        document.setdefault("packages", {"pip": {}, "conda": {}})
    return document


def case_of(scenario: dict, database) -> Case:
    document = json.loads(json.dumps(facts_document(scenario)))  # exactly what a facts file would hold
    host = from_json(document, origin=scenario["name"])
    env = env_facts_from_json(document, origin=scenario["name"]) if has_env_facts(document) else None
    return Case(host=host, env=env, database=database, error_text=scenario.get("error_text") or "",
                script_path="train.py" if scenario.get("script") else None, script_text=scenario.get("script"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_scenario(scenario, database):
    diagnosis = diagnose(case_of(scenario, database))
    expect = scenario["expect"]
    ids = [finding.id for finding in diagnosis.findings]
    if expect["first"] is None:
        assert not diagnosis.has_error, [f.to_json() for f in diagnosis.findings]
        return
    assert ids and ids[0] == expect["first"], json.dumps([f.to_json() for f in diagnosis.findings], indent=1, ensure_ascii=False)
    first = diagnosis.findings[0]
    assert first.severity == expect.get("severity", "error")
    fix = "\n".join(first.fix)
    for words in expect.get("fix", []):
        assert words in fix, f"{words!r} not in fix:\n{fix}"
    for words in expect.get("first_fix", []):
        assert first.fix and words in first.fix[0], f"{words!r} not in the first fix:\n{fix}"
    every_fix = "\n".join(line for finding in diagnosis.findings for line in finding.fix)
    for words in expect.get("in_no_fix", []):
        assert words not in every_fix, f"{words!r} is offered:\n{every_fix}"
    evidence = "\n".join(first.evidence)
    for words in expect.get("evidence", []):
        assert words in evidence, f"{words!r} not in evidence:\n{evidence}"
    for words in expect.get("not_in_fix", []):
        assert words not in fix
    for also in expect.get("also", []):
        assert also in ids
    for absent in expect.get("absent", []):
        assert absent not in ids
    for finding in diagnosis.findings:
        assert finding.title and finding.evidence and finding.fix
        for line in finding.fix:
            if ANTI_FIXES.search(line):
                assert NEGATION.search(line), f"{finding.id} recommends an anti-fix: {line}"


def test_the_suite_covers_every_catalogue_group_and_both_seed_errors():
    assert len(SCENARIOS) >= 40
    names = {s["name"] for s in SCENARIOS}
    assert len(names) == len(SCENARIOS)
    firsts = {s["expect"]["first"] for s in SCENARIOS if s["expect"]["first"]}
    assert {BY_ID[i].group for i in firsts} == set(GROUPS)
    cublas = [s for s in SCENARIOS if "cublas64_12.dll is not found" in (s.get("error_text") or "")]
    winerror_1114 = [s for s in SCENARIOS if "WinError 1114" in (s.get("error_text") or "") + json.dumps(s.get("env") or {})]
    assert len(cublas) >= 6 and len(winerror_1114) >= 4
    # each seed error is answered with more than one cause, decided by the facts
    assert len({s["expect"]["first"] for s in winerror_1114}) >= 3


def test_every_finding_id_is_a_catalogue_id_and_every_rule_group_runs(database):
    seen = set()
    for scenario in SCENARIOS:
        seen |= {f.id for f in diagnose(case_of(scenario, database)).findings}
    assert seen <= set(BY_ID)
    assert len(seen) >= 55, sorted(set(BY_ID) - seen)


def test_a_finding_is_checked_as_it_is_made_by_a_rule_or_by_replace():
    made = Finding("DRV-NOT-FOUND", "error", "no driver", ("evidence",), ("fix",), PROVEN)
    assert replace(made, severity="warning").severity == "warning"
    with pytest.raises(ValueError, match="not a failure-catalogue id"):
        Finding("NO-SUCH-ID", "error", "t", (), ())
    with pytest.raises(ValueError, match="not a failure-catalogue id"):
        replace(made, id="NO-SUCH-ID")
    with pytest.raises(ValueError, match="severity 'fatal'"):
        Finding(id="DRV-NOT-FOUND", severity="fatal", title="t", evidence=(), fix=())


@pytest.mark.parametrize(("number", "torch", "expected"), [
    ("1201", "2.1.0+cu121", ("12.1", "cu121")),
    ("1108", "2.0.1", ("11.8", "cu118")),    # no local tag: the variant comes from the number
    ("1300", "2.9.0+cu130", ("13.0", "cu130")),
    ("12", "2.1.0", ("12", "cu12")),          # not the number's shape: kept as printed
])
def test_xformers_cuda_number_is_read_as_major_and_minor(number, torch, expected):
    assert _xformers_cuda(number, torch) == expected
