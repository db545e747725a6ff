"""Wheel METADATA -> the requirements the database records (pure).

Pins are written as the database writes them (SCHEMA.md "nvidia_pins"): the normalised project name, the
specifier as packaging prints it (`<14,>=13.0.3`), markers dropped, extras dropped from the name
(`cuda-toolkit[cublas,...]==13.2.2` -> `cuda-toolkit: "==13.2.2"`), and `>=0` for a requirement with no
specifier. Which requirements apply on a platform is decided by evaluating their markers there, for every
Python the release has wheels for: `triton; platform_system == "Linux"` is not a Windows requirement.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from email.parser import HeaderParser

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envpin.base.record import Record, record
from envpin.vocabulary.platforms import LINUX_X86_64
from envpin.vocabulary.platforms import MARKER_ENVIRONMENTS as _ENVIRONMENTS  # PEP 508 marker values (CPython)


@record
class Metadata(Record):
    name: str
    version: str
    requires_python: str | None
    requires_dist: tuple[str, ...]
    provides_extra: tuple[str, ...]
    summary: str = ""


def parse_metadata(text: str) -> Metadata:
    headers = HeaderParser().parsestr(text, headersonly=True)
    return Metadata(
        name=str(headers.get("Name", "")).strip(),
        version=str(headers.get("Version", "")).strip(),
        requires_python=(str(headers.get("Requires-Python")).strip() or None) if headers.get("Requires-Python") else None,
        requires_dist=tuple(str(v).strip() for v in headers.get_all("Requires-Dist") or ()),
        provides_extra=tuple(str(v).strip() for v in headers.get_all("Provides-Extra") or ()),
        summary=str(headers.get("Summary", "")).strip(),
    )


def requirements(metadata: Metadata) -> list[Requirement]:
    """The Requires-Dist lines that parse (a malformed line is skipped: it cannot be installed either)."""
    parsed = []
    for line in metadata.requires_dist:
        try:
            parsed.append(Requirement(line))
        except InvalidRequirement:
            continue
    return parsed


def environment(platform: str, python: str, extra: str = "") -> dict[str, str]:
    return {
        **_ENVIRONMENTS[platform],
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
        "implementation_version": f"{python}.0",
        "extra": extra,
    }


def applies(marker: Marker | None, platform: str, pythons: Iterable[str], extra: str = "") -> bool:
    """Whether a requirement with this marker is installed on the platform for at least one of the Pythons."""
    if marker is None:
        return not extra
    return any(marker.evaluate(environment(platform, python, extra)) for python in pythons)


def base_pins(metadata: Metadata, platform: str, pythons: Iterable[str],
              wanted: Callable[[str], bool]) -> dict[str, str]:
    """The requirements outside any extra that apply on the platform, for the projects `wanted` names."""
    pythons = tuple(pythons) or ("3.12",)
    pins: dict[str, str] = {}
    for requirement in requirements(metadata):
        name = canonicalize_name(requirement.name)
        if wanted(name) and applies(requirement.marker, platform, pythons):
            pins[name] = specifier_text(requirement)
    return pins


def extra_pins(metadata: Metadata, extra: str, platform: str = LINUX_X86_64,
               pythons: Iterable[str] = ("3.12",)) -> dict[str, str]:
    """Every requirement that belongs to the extra (on the platform): its marker holds with the extra and
    not without it."""
    pythons = tuple(pythons)
    pins: dict[str, str] = {}
    for requirement in requirements(metadata):
        marker = requirement.marker
        if marker is None:
            continue
        if applies(marker, platform, pythons, extra) and not applies(marker, platform, pythons):
            pins[canonicalize_name(requirement.name)] = specifier_text(requirement)
    return pins


def extra_requirement(metadata: Metadata, extra: str, project: str) -> Requirement | None:
    """The extra's requirement on one project (jax[cuda12] -> jax-cuda12-plugin[with-cuda]==V)."""
    wanted = canonicalize_name(project)
    for requirement in requirements(metadata):
        if canonicalize_name(requirement.name) != wanted or requirement.marker is None:
            continue
        if applies(requirement.marker, LINUX_X86_64, ("3.12", "3.13", "3.14"), extra):
            return requirement
    return None


def base_requirement(metadata: Metadata, project: str) -> Requirement | None:
    """The requirement on one project outside any extra (torchvision -> torch==2.14.0)."""
    wanted = canonicalize_name(project)
    for requirement in requirements(metadata):
        if canonicalize_name(requirement.name) == wanted and (
            requirement.marker is None or not _mentions_extra(requirement.marker)
        ):
            return requirement
    return None


def cuda_extras(metadata: Metadata) -> list[tuple[str, int]]:
    """The `cudaNN` extras a jax release provides, with their CUDA major (local-CUDA and pip aliases aside)."""
    found = []
    for extra in metadata.provides_extra:
        name = canonicalize_name(extra)
        if name.startswith("cuda") and name[4:].isdigit() and len(name) == 6:
            found.append((name, int(name[4:])))
    return sorted(found)


_ROCM_PLUGIN = re.compile(r"^jax-rocm\d+-plugin$")
_ROCM_OF_SUMMARY = re.compile(r"\bROCm[: ]\s*(\d+)\.(\d+)(?:\.\d+)*\b")


def rocm_extras(metadata: Metadata) -> list[tuple[str, str]]:
    """The ROCm extras a jax release provides, with the plugin each installs: [("rocm7-local", "jax-rocm7-plugin")]
    (the extras whose requirements name a jax-rocmNN-plugin)."""
    found = []
    for extra in metadata.provides_extra:
        name = canonicalize_name(extra)
        for requirement in requirements(metadata):
            project = canonicalize_name(requirement.name)
            if _ROCM_PLUGIN.match(project) and requirement.marker is not None \
                    and applies(requirement.marker, LINUX_X86_64, ("3.12", "3.13", "3.14"), name) \
                    and not applies(requirement.marker, LINUX_X86_64, ("3.12", "3.13", "3.14")):
                found.append((name, project))
                break
    return sorted(found)


def rocm_of_summary(summary: str) -> str | None:
    """The ROCm X.Y a jax-rocm plugin's Summary states: `JAX Plugin for AMD GPUs (ROCm:7.14.0)` -> 7.14; None for
    `(ROCm:unknown)` or no statement."""
    match = _ROCM_OF_SUMMARY.search(summary)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def specifier_text(requirement: Requirement) -> str:
    return str(requirement.specifier) or ">=0"


def _mentions_extra(marker: Marker) -> bool:
    return "extra" in str(marker)
