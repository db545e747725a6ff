"""The fleet report: per machine class its nodes, its answer, the nodes whose facts differ, and, once the
class is provisioned, each node's verify result (the JSON `envpin verify --format json` wrote for it, or the log of
envpin's probe in the node's image, judged against the node's facts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envpin.base.errors import EnvpinInputError
from envpin.base.userfiles import read_text
from envpin.compat.model import Database
from envpin.facts.env import env_facts_from_json
from envpin.fleet.nodes import ClusterNode
from envpin.resolver.plan import Plan
from envpin.verify.report import verify
from envpin.verify.run import MARKER, parse_probe_output

if TYPE_CHECKING:  # the answers come from the planning layer above; the report only reads them
    from envpin.app.fleet import ClassAnswer, PlannedClasses

NO_REPORT = "no report"


def node_result(reports: Path, node: ClusterNode, database: Database) -> dict[str, Any]:
    """One node's verify result: {"status": "ok" | "not ok" | "no report", "why": […]}. The report is what `envpin
    verify --format json` wrote for the node, or the log of envpin's probe run in the node's image (a verify Job's
    pod), which is judged here against the node's facts as `envpin verify` judges it on the node."""
    name = node.name
    if name in (".", "..") or any(c in name for c in "/\\\0"):  # a report's file name, and never a path elsewhere
        return {"status": NO_REPORT, "why": [f"node {name!r} cannot name a report file in {reports}"]}
    path = reports / f"{name}.json"
    if not path.is_file():
        return {"status": NO_REPORT, "why": [f"no verify report {path.name} in {reports}"]}
    try:
        text = read_text(path, "--reports")
        if MARKER in text:
            return _judged_probe(text, node, database)
        document = json.loads(text)
    except (EnvpinInputError, ValueError, RecursionError) as error:
        return {"status": "not ok", "why": [f"the verify report is unreadable: {error}"]}
    if not isinstance(document, dict) or not isinstance(document.get("ok"), bool):
        return {"status": "not ok", "why": ["the verify report is not an `envpin verify --format json` document"]}
    checks = document.get("checks")
    if not isinstance(checks, list):
        checks = []
    problems = [str(c.get("message")) for c in checks if isinstance(c, dict) and c.get("status") == "problem"]
    why = problems or [str(document.get("verdict", ""))]
    return {"status": "ok" if document["ok"] else "not ok", "why": why}


def _judged_probe(text: str, node: ClusterNode, database: Database) -> dict[str, Any]:
    document = parse_probe_output(text)
    if document is None:
        return {"status": "not ok", "why": ["the probe's log ends before its report"]}
    if "error" in document:
        return {"status": "not ok", "why": [f"the probe failed: {document['error']}"]}
    try:
        env = env_facts_from_json(document, origin=f"the probe's report of node {node.name}")
    except EnvpinInputError as error:
        return {"status": "not ok", "why": [f"the probe's report is unreadable: {error}"]}
    report = verify(env, node.facts, database)
    problems = [check.message for check in report.checks if check.status == "problem"]
    return {"status": "ok" if report.ok else "not ok", "why": problems or [report.verdict]}


def answer_summary(entry: ClassAnswer) -> dict[str, Any]:
    answer = entry.answer
    if isinstance(answer, Plan):
        return {"status": "ok", "accelerator": answer.accelerator,
                "requirements": [p.requirement for p in answer.packages]}
    return {"status": "unsatisfiable", "code": answer.code, "message": answer.message}


def report_json(planned: PlannedClasses, reports: Path | None, database: Database) -> dict[str, Any]:
    classes = []
    for entry in planned.classes:
        machine_class = entry.machine_class
        item: dict[str, Any] = {"class": machine_class.name, "group": machine_class.group,
                                "nodes": list(machine_class.node_names), "answer": answer_summary(entry),
                                "differences": list(machine_class.differences)}
        if reports is not None:
            results = {node.name: node_result(reports, node, database) for node in machine_class.nodes}
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
