"""pip finds no torch for this interpreter or platform (catalogue X7).

The database knows which Pythons and platforms each torch release has wheels for, so the fix names the
interpreter to use (or the index to add for a `+cuXYZ` local version) instead of guessing.
"""

from __future__ import annotations

import re

from envpin.doctor.model import CONFIRMED, MATCHED, Case, Finding
from envpin.vocabulary.variants import DEFAULT_TORCH_INDEX

X7 = "PIP-NO-TORCH-FOR-PLATFORM"


def findings(case: Case) -> list[Finding]:
    hit = case.search(X7)
    if not hit:
        return []
    spec = (hit.group(1) or "").lstrip("=")
    evidence = [hit.evidence()]
    fix = []
    python = case.env.python if case.env else None
    version = python.version if python else case.host.python.version
    minor = ".".join(version.split(".")[:2])
    platform = case.platform
    confirmed = False
    if python and python.bits == 32:
        evidence.append(f"{python.executable} is a 32-bit Python: torch has no 32-bit wheels")
        fix.append("install a 64-bit CPython")
        confirmed = True
    if spec and "+" in spec and not re.search(r"download\.pytorch\.org", case.error_text):
        local = spec.split("+")[1]
        evidence.append(f"torch=={spec} is a local version: it exists only on the PyTorch index, not on PyPI")
        fix.append(f"add the index: `--index-url {DEFAULT_TORCH_INDEX}/{local}`")
        confirmed = True
    release = case.database.torch_release(spec.split("+")[0]) if spec else case.database.torch_releases[0]
    if release is not None:
        pythons = release.python.get(platform, ())
        if not pythons:
            evidence.append(f"torch {release.version} has no wheels for {platform} (database {case.database.version})")
            fix.append("use a supported platform (Linux x86_64/aarch64, Windows x86_64, macOS arm64)")
            confirmed = True
        elif minor not in pythons:
            evidence.append(f"torch {release.version} has {platform} wheels for Python {', '.join(pythons)}; this is Python {minor}")
            fix.append(f"use Python {pythons[-1]} (or any of {', '.join(pythons)}) for torch {release.version}, or a torch "
                       f"release with Python {minor} wheels (`envpin solve --framework torch --python {minor}`)")
            confirmed = True
    fix.append("`envpin solve --framework torch` prints the exact pin and index for this machine")
    return [Finding(X7, "error", "pip found no torch wheel for this interpreter or platform", tuple(evidence), tuple(fix),
                    CONFIRMED if confirmed else MATCHED)]
