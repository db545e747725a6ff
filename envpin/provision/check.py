"""After an install, before the swap: does the new environment hold the lock, and do its frameworks import?

The probe is stdlib-only Python run in the new interpreter (a separate process, with a timeout): the
installed distributions and, for each GPU framework in the lock, the import result, version and build CUDA.
`compare` (pure) says what differs from the lock. (`envpin verify`, the full probe with GPU computations,
is its own command; this is the minimum an install must prove before it replaces anything.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envpin.base.errors import EnvpinError
from envpin.base.escapes import exit_status, shown
from envpin.base.record import Record, record
from envpin.host.runner import CommandTimeout, run_command
from envpin.vocabulary.frameworks import COMPANIONS, FRAMEWORKS, PINNED_FRAMEWORK_OF
from envpin.vocabulary.names import canonical_name

# A pinned framework package -> the module to import (the framework's name); companions are not imported.
FRAMEWORK_MODULES = {name: framework for name, framework in PINNED_FRAMEWORK_OF.items() if name not in COMPANIONS}

PROBE = r"""
import importlib, json, sys, traceback
from importlib import metadata
report = {"python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable, "distributions": {}, "frameworks": {}}
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if name:
        report["distributions"][name.lower().replace("_", "-").replace(".", "-")] = dist.version
for module in sys.argv[1:]:
    entry = {"import_ok": False}
    try:
        imported = importlib.import_module(module)
        entry.update(import_ok=True, version=str(getattr(imported, "__version__", "")))
        if module == "torch":
            entry["cuda"] = imported.version.cuda
        elif module == "tensorflow":
            entry["cuda"] = imported.sysconfig.get_build_info().get("cuda_version")
    except BaseException:
        entry["import_error"] = traceback.format_exc()
    report["frameworks"][module] = entry
print(json.dumps(report))
"""


@record
class Verification(Record):
    report: Mapping[str, Any]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        parts = []
        for module, entry in self.report.get("frameworks", {}).items():
            if entry.get("import_ok"):
                build = f"CUDA {entry['cuda']} build" if entry.get("cuda") else "CPU build"
                parts.append(f"{module} {entry.get('version')} imports ({build})")
            else:
                parts.append(f"{module} does not import")
        head = []
        if "conda_packages" in self.report:
            head.append(f"{self.report['conda_packages']} conda packages")
        if "python" in self.report:
            head.append(f"Python {self.report['python']}, {len(self.report.get('distributions', {}))} distributions")
        return ", ".join(head or ["nothing to check"]) + "".join(f"; {p}" for p in parts)


def probe(python: Path, modules: list[str], timeout: float = 300) -> dict[str, Any]:
    """Run the probe in `python`; a crash or a hang is reported, never raised."""
    try:
        result = run_command([str(python), "-I", "-c", PROBE, *modules], timeout)
    except CommandTimeout:
        return {"error": f"the probe did not finish in {timeout:g} s"}
    except OSError as error:
        return {"error": f"{python}: cannot run ({error.strerror or error})"}
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = " ".join(result.stderr.strip().splitlines()[-2:])
        return {"error": f"the probe failed ({exit_status(result.returncode)}): {shown(tail, 300)}"}


def frameworks_in(document: Mapping[str, Any]) -> list[str]:
    names = {canonical_name(p["name"]) for p in document["packages"]}
    return sorted({module for name, module in FRAMEWORK_MODULES.items() if name in names})


def compare(report: Mapping[str, Any], document: Mapping[str, Any]) -> tuple[str, ...]:
    """What the environment lacks or has in another version than the lock; frameworks that fail to import."""
    if "error" in report:
        return (report["error"],)
    installed = report.get("distributions", {})
    problems = []
    for package in document["packages"]:
        name = canonical_name(package["name"])
        have = installed.get(name)
        if have is None:
            problems.append(f"{package['name']} {package['version']} is not installed")
        elif have != package["version"]:
            problems.append(f"{package['name']} is {have}, the lock says {package['version']}")
    for module, entry in report.get("frameworks", {}).items():
        if not entry.get("import_ok"):
            last = (entry.get("import_error") or "").strip().splitlines()[-1:] or ["?"]
            problems.append(f"import {module} fails: {last[0]}")
    return tuple(problems)


def verify_environment(python: Path, document: Mapping[str, Any], timeout: float = 300) -> Verification:
    """`envpin verify`'s probe (envpin.verify.run.run_probe: imports and a small computation per framework)
    where it is present, else the minimal stdlib probe above."""
    try:
        from envpin.verify.run import run_probe  # noqa: PLC0415 - its ImportError selects the stdlib probe above
    except ImportError:
        report = probe(python, frameworks_in(document), timeout)
    else:
        report = report_of_verify(python, run_probe, timeout)
    return Verification(report, compare(report, document))


def verify_conda_environment(location: Path, python: Path, timeout: float = 300) -> Verification:
    """An environment made from conda inputs, with no PEP 751 lock to compare against: the tool recorded packages
    in conda-meta and, where the environment has a Python, the frameworks in it import."""
    records = list((location / "conda-meta").glob("*.json"))
    if not records:
        return Verification({}, ("no conda packages were recorded in conda-meta",))
    report: dict[str, Any] = {"conda_packages": len(records)}
    if python.exists():
        report.update(verify_environment(python, {"packages": []}, timeout).report)
    return Verification(report, compare(report, {"packages": []}))


def report_of_verify(python: Path, run_probe, timeout: float) -> dict[str, Any]:
    try:
        facts = run_probe(str(python), import_timeout=timeout)
    except EnvpinError as error:
        return {"error": str(error)}
    frameworks = {}
    for module in FRAMEWORKS:
        framework = getattr(facts, module, None)
        if framework is not None and framework.import_ok is not None:
            frameworks[module] = {"import_ok": bool(framework.import_ok), "version": framework.version,
                                  "cuda": framework.cuda, "import_error": framework.import_error,
                                  "smoke": dict(framework.smoke)}
    return {"python": facts.python.version, "distributions": dict(facts.packages.pip), "frameworks": frameworks}


