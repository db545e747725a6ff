"""pip finds no torch (catalogue X7), TensorFlow or jaxlib (X8) for this interpreter or platform.

The database knows which Pythons and platforms each release has wheels for, so the fix names the
interpreter to use (or the index to add for a `+cuXYZ` local version) instead of guessing.
"""

from __future__ import annotations

import re

from envpin.doctor.model import CONFIRMED, MATCHED, Case, Finding
from envpin.vocabulary.variants import DEFAULT_TORCH_INDEX

X7, X8 = "PIP-NO-TORCH-FOR-PLATFORM", "PIP-NO-WHEEL-FOR-PYTHON"


def findings(case: Case) -> list[Finding]:
    return _no_torch(case) + _no_wheel_for_python(case)


def _minor(case: Case) -> str:
    python = case.env.python if case.env else None
    version = python.version if python else case.host.python.version
    return ".".join(version.split(".")[:2])


def _key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split(".") if part.isdigit())


def _no_wheel_for_python(case: Case) -> list[Finding]:
    """TensorFlow or jax/jaxlib: the Pythons the newest release has wheels for here, and the releases (if any) that
    have this interpreter's. The fix is the newest Python the newest release and its predecessors share: a Python
    that only the newest releases have is one an older index, pip or mirror does not offer yet."""
    hit = case.search(X8)
    if not hit:
        return []
    project, minor, platform = hit.group(1) or "", _minor(case), case.platform
    evidence = [hit.evidence()]
    if project.startswith("tensorflow"):
        name = "TensorFlow"
        releases = [(str(r.version), tuple(r.python.get(platform, ()))) for r in case.database.tensorflow_releases]
    else:
        name = "jaxlib"
        releases = [(str(r.version), tuple(r.python) if platform in r.platforms else ()) for r in case.database.jax_releases]
    releases = [(version, pythons) for version, pythons in releases if pythons]
    if not releases:
        return [Finding(X8, "error", f"pip found no {name} wheel for {platform}", tuple(evidence),
                        (f"{name} has no wheels for {platform} (database {case.database.version}): use a platform it "
                         "supports (Linux x86_64, Windows x86_64, macOS arm64)",), MATCHED)]
    newest, newest_pythons = releases[0]
    with_this = [version for version, pythons in releases if minor in pythons]
    shared = [m for m in newest_pythons if all(m in pythons for _, pythons in releases[:3])] or list(newest_pythons)
    below = [m for m in shared if _key(m) < _key(minor)]
    choice = (below or shared)[-1] if _key(minor) > _key(shared[0]) else shared[0]
    evidence.append(f"this is Python {minor}; {name} {newest}, the newest release in the database "
                    f"{case.database.version}, has {platform} wheels for Python {', '.join(newest_pythons)}")
    if with_this:
        evidence.append(f"{name} has Python {minor} wheels from {with_this[-1]} only: pip offered none, so the index "
                        "it read has no such release (an older pip, a mirror, or a time before it)")
    else:
        evidence.append(f"no {name} release in the database has {platform} wheels for Python {minor}")
    fix = [f"use Python {choice}, which {name} {newest} and the releases before it have {platform} wheels for: "
           f"create the environment with it (`py -{choice} -m venv .venv` on Windows, `uv venv --python {choice}`)"]
    if with_this:
        fix.append(f"or keep Python {minor} with {name} ≥ {with_this[-1]}: upgrade pip (`python -m pip install -U pip`) "
                   "and check the index it reads")
    fix.append(f"`envpin solve --framework {'tensorflow' if name == 'TensorFlow' else 'jax'} --python {choice}` prints the exact pins")
    return [Finding(X8, "error", f"pip found no {name} wheel for Python {minor} on {platform}", tuple(evidence),
                    tuple(fix), CONFIRMED)]


def _no_torch(case: Case) -> list[Finding]:
    hit = case.search(X7)
    if not hit:
        return []
    spec = (hit.group(1) or "").lstrip("=")
    evidence = [hit.evidence()]
    offered = [v.strip() for v in (hit.group(2) or "").split(",") if v.strip() and v.strip() != "none"]
    if spec and offered:
        # pip lists what the index has for this interpreter: the pinned release is not among them
        evidence.append(f"the index offers torch {offered[0]} … {offered[-1]} for this interpreter, not {spec}")
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
