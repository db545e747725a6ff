"""What a solve produces: a Plan (pins, index, reasons) or an Unsatisfiable answer (message, fixes)."""

from __future__ import annotations

from dataclasses import dataclass

from envpin.resolver.target import Target


@dataclass(frozen=True)
class PinnedPackage:
    name: str
    version: str  # the full version to pin: "2.5.1+cu124", or "2.5.1" when PyPI serves the build
    index_url: str | None  # None: PyPI

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class Plan:
    target: Target
    db_version: str
    accelerator: str  # cpu, cuXYZ, rocmX.Y, mps
    index_url: str | None
    packages: tuple[PinnedPackage, ...]
    reasons: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    python_range: tuple[str, ...] = ()  # Pythons the chosen build supports on the target platform


@dataclass(frozen=True)
class Unsatisfiable:
    target: Target
    db_version: str
    code: str
    message: str
    fixes: tuple[str, ...]
