"""The fleet report: per machine class its nodes, its answer, the nodes whose facts differ, and, once the
class is provisioned, each node's verify result (the JSON `envpin verify --format json` wrote for it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envpin.base.errors import EnvpinInputError
from envpin.base.userfiles import read_json
from envpin.resolver.plan import Plan

if TYPE_CHECKING:  # the answers come from the planning layer above; the report only reads them
    from envpin.app.fleet import ClassAnswer, PlannedClasses

NO_REPORT = "no report"


def node_result(reports: Path, node: str) -> dict[str, Any]:
    """One node's verify result: {"status": "ok" | "not ok" | "no report", "why": […]}."""
    if node in (".", "..") or any(c in node for c in "/\\\0"):  # a report's file name, and never a path elsewhere
        return {"status": NO_REPORT, "why": [f"node {node!r} cannot name a report file in {reports}"]}
    path = reports / f"{node}.json"
    if not path.is_file():
        return {"status": NO_REPORT, "why": [f"no verify report {path.name} in {reports}"]}
    try:
        document = read_json(path, "--reports")
    except EnvpinInputError as error:
        return {"status": "not ok", "why": [f"the verify report is unreadable: {error}"]}
    if not isinstance(document, dict) or not isinstance(document.get("ok"), bool):
        return {"status": "not ok", "why": ["the verify report is not an `envpin verify --format json` document"]}
    checks = document.get("checks")
    if not isinstance(checks, list):
        checks = []
    problems = [str(c.get("message")) for c in checks if isinstance(c, dict) and c.get("status") == "problem"]
    why = problems or [str(document.get("verdict", ""))]
    return {"status": "ok" if document["ok"] else "not ok", "why": why}


def answer_summary(entry: ClassAnswer) -> dict[str, Any]:
    answer = entry.answer
    if isinstance(answer, Plan):
        return {"status": "ok", "accelerator": answer.accelerator,
                "requirements": [p.requirement for p in answer.packages]}
    return {"status": "unsatisfiable", "code": answer.code, "message": answer.message}


def report_json(planned: PlannedClasses, reports: Path | None) -> dict[str, Any]:
    classes = []
    for entry in planned.classes:
        machine_class = entry.machine_class
        item: dict[str, Any] = {"class": machine_class.name, "group": machine_class.group,
                                "nodes": list(machine_class.node_names), "answer": answer_summary(entry),
                                "differences": list(machine_class.differences)}
        if reports is not None:
            results = {node: node_result(reports, node) for node in machine_class.node_names}
            item["verify"] = results
            item["good"] = [node for node, result in results.items() if result["status"] == "ok"]
            item["not_good"] = [node for node, result in results.items() if result["status"] != "ok"]
        classes.append(item)
    ok = planned.ok and all(not c.get("not_good") for c in classes)
    return {"ok": ok, "classes": classes}


def render_text(document: dict[str, Any]) -> str:
    lines = []
    for item in document["classes"]:
        answer = item["answer"]
        group = f" ({item['group']})" if item["group"] else ""
        if answer["status"] == "ok":
            said = f"{' '.join(answer['requirements'])} ({answer['accelerator']})"
        else:
            said = f"no answer: {answer['code']}: {answer['message']}"
        lines.append(f"class {item['class']}{group}: {len(item['nodes'])} node(s); {said}")
        lines += [f"  differs: {text}" for text in item["differences"]]
        if "verify" in item:
            width = max(len(node) for node in item["nodes"])
            lines.append(f"  {'node'.ljust(width)}  {'verify'.ljust(9)}  why")
            for node, result in item["verify"].items():
                lines.append(f"  {node.ljust(width)}  {result['status'].ljust(9)}  {'; '.join(result['why'])}")
            lines.append(f"  good: {', '.join(item['good']) or 'none'}; not good: {', '.join(item['not_good']) or 'none'}")
        else:
            lines.append(f"  nodes: {', '.join(item['nodes'])}")
    lines.append("fleet: OK" if document["ok"] else "fleet: NOT OK")
    return "\n".join(lines) + "\n"


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"
