"""What the user asked for: frameworks (`--framework torch`) and PEP 508 specs (`--spec 'torch>=2.4'`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from envpin.compat.drivers import POLICIES
from envpin.errors import EnvpinInputError

FRAMEWORKS = {"torch": ("torch", "torchvision", "torchaudio")}
FRAMEWORK_ALIASES = {"pytorch": "torch"}
SOLVABLE_PACKAGES = frozenset(name for packages in FRAMEWORKS.values() for name in packages)
DEFAULT_TORCH_INDEX = "https://download.pytorch.org/whl"


@dataclass(frozen=True)
class Request:
    frameworks: tuple[str, ...]
    packages: tuple[str, ...]  # what the answer pins, torch first
    specifiers: dict[str, SpecifierSet]  # user constraints by package
    required: frozenset[str]  # packages the solve must include (others are added when they exist)
    policy: str = "minor"
    torch_index: str = DEFAULT_TORCH_INDEX

    def describe(self) -> str:
        parts = [f"{name}{self.specifiers[name]}" for name in self.packages if str(self.specifiers.get(name, ""))]
        return ", ".join(parts) or "torch"


def parse_request(
    frameworks: list[str],
    specs: list[str],
    policy: str = "minor",
    torch_index: str | None = None,
) -> Request:
    if policy not in POLICIES:
        raise EnvpinInputError(f"--driver-policy {policy!r}: expected one of {', '.join(POLICIES)}")
    packages: list[str] = []
    chosen: list[str] = []
    for framework in frameworks:
        name = FRAMEWORK_ALIASES.get(framework.lower(), framework.lower())
        if name not in FRAMEWORKS:
            raise EnvpinInputError(f"unknown framework {framework!r}; envpin solves: {', '.join(FRAMEWORKS)}")
        chosen.append(name)
        packages.extend(p for p in FRAMEWORKS[name] if p not in packages)
    specifiers: dict[str, SpecifierSet] = {}
    required = {"torch"}
    for text in specs:
        name, specifier = _parse_spec(text)
        specifiers[name] = specifiers.get(name, SpecifierSet()) & specifier
        required.add(name)
        if name not in packages:
            packages.append(name)
    if "torch" not in packages:
        packages.insert(0, "torch")
    canonical_order = [name for names in FRAMEWORKS.values() for name in names]
    packages.sort(key=canonical_order.index)
    index = torch_index or os.environ.get("ENVPIN_TORCH_INDEX_URL") or DEFAULT_TORCH_INDEX
    if not index.startswith(("http://", "https://", "file://")):
        raise EnvpinInputError(f"torch index URL {index!r}: expected an http(s):// or file:// URL")
    return Request(tuple(dict.fromkeys(chosen)), tuple(packages), specifiers, frozenset(required), policy, index.rstrip("/"))


def _parse_spec(text: str) -> tuple[str, SpecifierSet]:
    try:
        requirement = Pep508(text)
    except InvalidRequirement as error:
        reason = str(error).splitlines()[0]
        raise EnvpinInputError(f"--spec {text!r}: not a PEP 508 requirement ({reason})") from None
    name = canonicalize_name(requirement.name)
    if name not in SOLVABLE_PACKAGES:
        raise EnvpinInputError(f"--spec {text!r}: envpin pins {', '.join(sorted(SOLVABLE_PACKAGES))}; not {name}")
    if requirement.marker is not None or requirement.url:
        raise EnvpinInputError(f"--spec {text!r}: markers and URLs are not supported here")
    return name, requirement.specifier
