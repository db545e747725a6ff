"""Run every rule group over a Case and rank what they find: most likely cause first.

Ranking follows the catalogue's §4.6: a signature confirmed by facts first, then a signature alone, then
faults the facts prove without any error text, then likely ones, then notes; severity breaks ties, then the
group order below. Over that order, specificity is the catalogue's data: a finding whose signature `outranks`
another that also fired is moved in front of it (an onnxruntime build for another CUDA major before "cuDNN is
not on the loader path"). Two rules reporting the same id keep the more likely one. A fix line whose
precondition the facts contradict (model.PRECONDITIONS) is dropped before anything is shown.
"""

from __future__ import annotations

import importlib

from envpin.base.record import Record, record, replace
from envpin.doctor.catalogue import BY_ID
from envpin.doctor.model import SEVERITIES, Case, Finding, holds

# One module per group of the catalogue; each exposes findings(case) -> list[Finding].
GROUPS = (
    "windows_dll",
    "linux_libs",
    "wsl_container",
    "driver",
    "arch",
    "builds",
    "interpreter",
    "abi",
    "tensorflow",
    "jax",
    "pairing",
    "extensions",
    "user_code",
    "install",
    "accelerators",
)


@record
class Diagnosis(Record):
    findings: tuple[Finding, ...]

    @property
    def has_error(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    @property
    def verdict(self) -> str:
        if not self.findings:
            return "no problem found: nothing in the facts or the error text matches a known failure"
        first = self.findings[0]
        errors = sum(1 for f in self.findings if f.severity == "error")
        if errors:
            return f"{errors} problem{'s' if errors > 1 else ''} found; most likely: {first.title} [{first.id}]"
        return f"no error found; {len(self.findings)} note{'s' if len(self.findings) > 1 else ''}: {first.title} [{first.id}]"

    def to_json(self) -> dict:
        return {"findings": [finding.to_json() for finding in self.findings]}


def diagnose(case: Case) -> Diagnosis:
    collected: list[tuple[int, Finding]] = []
    for position, group in enumerate(GROUPS):
        module = importlib.import_module(f"envpin.doctor.{group}")
        for finding in module.findings(case):
            kept_fixes = tuple(line for line in finding.fix if holds(case, line))
            collected.append((position, replace(finding, fix=kept_fixes) if kept_fixes != finding.fix else finding))
    best: dict[str, tuple[int, Finding]] = {}
    for position, finding in collected:
        kept = best.get(finding.id)
        if kept is None or _rank(finding, position) < _rank(kept[1], kept[0]):
            best[finding.id] = (position, finding)
    ordered = [finding for _, finding in sorted(best.values(), key=lambda item: _rank(item[1], item[0]))]
    return Diagnosis(tuple(_specific_first(ordered)))


def _specific_first(findings: list[Finding]) -> list[Finding]:
    """Move each finding in front of the first more generic one it outranks (the catalogue's data); the rest keep
    their order. The relation has no cycles (the catalogue test checks it names other ids), so this ends."""
    ordered = list(findings)
    for _ in range(len(ordered) ** 2 + 1):  # bounded: each move puts a finding strictly earlier
        moved = False
        for index, finding in enumerate(ordered):
            refined = BY_ID[finding.id].outranks
            earlier = next((i for i in range(index) if ordered[i].id in refined), None)
            if earlier is not None:
                ordered.insert(earlier, ordered.pop(index))
                moved = True
                break
        if not moved:
            return ordered
    return ordered


def _rank(finding: Finding, position: int) -> tuple[int, int, int]:
    return (-finding.likelihood, SEVERITIES.index(finding.severity), position)
