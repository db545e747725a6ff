"""NumPy ABI (catalogue §2.6, N1 and N2): a binary module built against another NumPy major or a newer NumPy."""

from __future__ import annotations

import re

from envpin.doctor.model import CONFIRMED, MATCHED, Case, Finding, version_tuple

N1, N2 = "NUMPY2-ABI-BREAK", "NUMPY-TOO-OLD-FOR-MODULE"
# The module the traceback blames: "File ".../site-packages/<module>/..." lines, or NumPy's own hint.
TRACEBACK_MODULE = re.compile(r"site-packages[\\/]([A-Za-z_][\w]*)[\\/]")


def findings(case: Case) -> list[Finding]:
    return [f for f in (_numpy2(case), _numpy_too_old(case)) if f]


def _blamed_module(case: Case) -> str | None:
    modules = [m for _, text in case.texts for m in TRACEBACK_MODULE.findall(text) if m not in ("numpy", "_pytest")]
    return modules[-1] if modules else None


def _numpy2(case: Case) -> Finding | None:
    hit = case.search(N1) or case.search_pattern(r"_ARRAY_API not found")
    if not hit:
        return None
    numpy = case.package("numpy")
    evidence = [hit.evidence()]
    if numpy:
        evidence.append(f"numpy {numpy} is installed")
    module = _blamed_module(case)
    version = case.package(module) if module else None
    if module:
        evidence.append(f"the extension in the traceback: {module}" + (f" {version}" if version else "")
                        + " (built against NumPy 1.x)")
    fix = [case.pip("install", '"numpy<2"') + " and keep it with a constraints file (`-c constraints.txt` holding `numpy<2`)"]
    if module:
        fix.append(f"or upgrade {module} to a release built for NumPy 2: " + case.pip("install", "--upgrade", module))
    confirmed = numpy is not None and version_tuple(numpy) >= (2,)
    return Finding(N1, "error", "a module built for NumPy 1.x is running under NumPy 2", tuple(evidence), tuple(fix),
                   CONFIRMED if confirmed else MATCHED)


def _numpy_too_old(case: Case) -> Finding | None:
    hit = case.search(N2)
    if not hit:
        return None
    numpy = case.package("numpy")
    evidence = [hit.evidence(), f"the module needs NumPy C API {hit.group(1)}; this NumPy has {hit.group(2)}"]
    if numpy:
        evidence.append(f"numpy {numpy} is installed")
    return Finding(N2, "error", "NumPy is older than a module was built with", tuple(evidence),
                   (case.pip("install", "--upgrade", '"numpy<2"' if numpy and version_tuple(numpy) < (2,) else "numpy")
                    + " (stay below 2 while other modules are NumPy-1 builds)",),
                   CONFIRMED if numpy else MATCHED)
