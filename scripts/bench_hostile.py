#!/usr/bin/env python3
"""Benchmark: hostile inputs through the real commands, each against the baseline `python -c "import yaml"`.

The inputs a stranger's pull request can put in front of `envpin check` (and the same shapes for `solve`): a
megabyte GPU name (the credential redaction ran in n²/2 steps on it), one package listed 5,000 times (the
duplicate rule compared every pair), 10,000 `!=` clauses, 100,000 continuation lines, TOML nested 5,000 deep,
a Kubernetes gpu.count of 10^20. Each runs as a fresh process, interleaved with the baseline; the figure is the
median wall time and its ratio to the baseline's. Each must stay a small multiple of the baseline: bounded work
(docs/hardening.md, "Limits"), not a timed test. A row that runs past --limit seconds is reported as such.

    .venv/bin/python scripts/bench_hostile.py [--runs 5] [--limit 120] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENVPIN = [sys.executable, "-m", "envpin"]
BASELINE = [sys.executable, "-c", "import yaml"]
TARGET = ["--os", "linux", "--python", "3.11"]


def write_inputs(folder: Path) -> dict[str, list[str]]:
    """The hostile files, and the command that reads each."""
    rows: dict[str, list[str]] = {}
    facts = {"schema": 1, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
             "driver": {"version": "535.104.05"},
             "gpus": [{"index": 0, "name": "NVIDIA " + "a" * 1024 * 1024, "compute_capability": "8.6"}]}
    (folder / "facts.json").write_text(json.dumps(facts))
    rows["solve --facts (1 MiB GPU name) -o requirements.txt"] = [
        *ENVPIN, "solve", "--facts", str(folder / "facts.json"), "-o", str(folder / "out-requirements.txt")]
    for name, line in (("alike", '"torch",\n'), ("marked", "\"torch; python_version == '3.{i}'\",\n")):
        project = folder / f"torch-5000-{name}"
        project.mkdir()
        dependencies = "".join(line.format(i=i) for i in range(5_000))
        (project / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "1"\ndependencies = [\n{dependencies}]\n')
        rows[f"check pyproject.toml (torch x5,000, {name})"] = [*ENVPIN, "check", str(project / "pyproject.toml")]
    clauses = folder / "clauses"
    clauses.mkdir()
    (clauses / "requirements.txt").write_text("torch" + ",".join(f"!=1.{i}" for i in range(10_000)) + "\n")
    rows["check requirements.txt (10,000 != clauses)"] = [*ENVPIN, "check", str(clauses / "requirements.txt")]
    rows["solve -r requirements.txt (10,000 != clauses)"] = [*ENVPIN, "solve", "-r", str(clauses / "requirements.txt"),
                                                             *TARGET]
    continued = folder / "continued"
    continued.mkdir()
    (continued / "requirements.txt").write_text("torch\\\n" * 100_000 + "\n")
    rows["check requirements.txt (100,000 continuations)"] = [*ENVPIN, "check", str(continued / "requirements.txt")]
    deep = folder / "deep"
    deep.mkdir()
    (deep / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n[tool.x]\na = ' + "[" * 5_000
                                         + "]" * 5_000 + "\n")
    rows["check pyproject.toml (TOML nested 5,000 deep)"] = [*ENVPIN, "check", str(deep / "pyproject.toml")]
    nodes = json.loads((REPO / "tests" / "fixtures" / "kubernetes" / "lke-rtx4000-ada.nodes.json").read_text())
    nodes["items"][0]["metadata"]["labels"]["nvidia.com/gpu.count"] = "1" + "0" * 20
    (folder / "nodes.json").write_text(json.dumps(nodes))
    rows["fleet status (gpu.count 10^20)"] = [*ENVPIN, "fleet", "status", "--targets", str(folder / "nodes.json"),
                                              "--python", "3.12"]
    return rows


def timed(command: list[str], limit: float) -> float | None:
    start = time.perf_counter()
    try:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit, cwd=REPO)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=float, default=120.0, help="give up on one run after this many seconds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="envpin-bench-hostile-") as work:
        rows = write_inputs(Path(work))
        baseline: list[float] = []
        figures: dict[str, list[float | None]] = {name: [] for name in rows}
        for _ in range(args.runs):
            baseline.append(timed(BASELINE, args.limit) or args.limit)
            for name, command in rows.items():
                figures[name].append(timed(command, args.limit))
    base = statistics.median(baseline)
    report = {"baseline_ms": round(base * 1000, 1), "rows": {}}
    for name, times in figures.items():
        finished = [t for t in times if t is not None]
        if len(finished) < len(times):
            report["rows"][name] = {"ms": None, "ratio": None, "note": f"ran past {args.limit:g} s"}
        else:
            median = statistics.median(finished)
            report["rows"][name] = {"ms": round(median * 1000, 1), "ratio": round(median / base, 2)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"| what | median ms | x baseline |\n| --- | ---: | ---: |\n| baseline `python -c \"import yaml\"` | "
          f"{report['baseline_ms']} | 1.0 |")
    for name, row in report["rows"].items():
        print(f"| {name} | {row['ms'] if row['ms'] is not None else row['note']} | {row['ratio'] or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
