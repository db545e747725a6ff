"""The resolvelib provider: a thin adapter over the database and the fitness checks.

Candidates are builds: a package release tied to one variant (`torch 2.5.1+cu124`). A companion
(torchvision, torchaudio) depends on torch of a paired release *and the same variant*, which is what keeps
a `+cu121` torchvision from landing beside a `+cu124` torch. Candidates come out of `find_matches` in
preference order (newest release, then newest qualifying variant), so resolvelib's first choice is
envpin's preferred answer and backtracking walks down that order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import AbstractProvider

from envpin.compat.model import Database, TorchRelease, Variant
from envpin.resolver.fitness import Verdict, assess
from envpin.resolver.target import Target

COMPANIONS = ("torchvision", "torchaudio")


@dataclass(frozen=True)
class Candidate:
    name: str
    version: Version  # the package's own public version (0.20.1 for torchvision)
    variant: Variant
    torch_releases: tuple[TorchRelease, ...]  # the torch releases this build pairs with (itself for torch)

    @property
    def local_version(self) -> Version:
        return Version(f"{self.version}+{self.variant.name.replace('.', '')}")

    @property
    def key(self) -> tuple[str, Version, str]:
        return self.name, self.version, self.variant.name


@dataclass(frozen=True)
class Requirement:
    name: str
    specifier: SpecifierSet
    origin: str  # "the request" or the candidate that asked for it
    variant: str | None = None
    torch_releases: frozenset[Version] | None = None

    def matches(self, candidate: Candidate) -> bool:
        if candidate.name != self.name:
            return False
        if self.variant is not None and candidate.variant.name != self.variant:
            return False
        if self.torch_releases is not None and not any(r.version in self.torch_releases for r in candidate.torch_releases):
            return False
        return self.specifier.contains(candidate.local_version, prereleases=True)


class BuildProvider(AbstractProvider):
    def __init__(
        self,
        database: Database,
        target: Target,
        *,
        policy: str,
        allowed_kinds: frozenset[str],
    ):
        self.database = database
        self.target = target
        self.policy = policy
        self.allowed_kinds = allowed_kinds
        self._verdicts: dict[tuple[Version, str], Verdict] = {}

    # ------------------------------------------------------------ resolvelib interface

    def identify(self, requirement_or_candidate: Requirement | Candidate) -> str:
        return requirement_or_candidate.name

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterable],
        backtrack_causes: Sequence,
    ) -> tuple[bool, bool, str]:
        # Decide what the user constrained first (fewest choices), torch before its companions otherwise.
        constrained = any(str(info.requirement.specifier) for info in information[identifier])
        return (not constrained, identifier != "torch", identifier)

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Requirement]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> list[Candidate]:
        wanted = list(requirements[identifier])
        excluded = {candidate.key for candidate in incompatibilities[identifier]}
        return [
            candidate
            for candidate in self.builds(identifier)
            if candidate.key not in excluded and all(req.matches(candidate) for req in wanted)
        ]

    def is_satisfied_by(self, requirement: Requirement, candidate: Candidate) -> bool:
        return requirement.matches(candidate)

    def get_dependencies(self, candidate: Candidate) -> list[Requirement]:
        if candidate.name == "torch":
            return []
        return [
            Requirement(
                name="torch",
                specifier=SpecifierSet(),
                origin=f"{candidate.name} {candidate.local_version}",
                variant=candidate.variant.name,
                torch_releases=frozenset(r.version for r in candidate.torch_releases),
            )
        ]

    # ------------------------------------------------------------ candidates

    def builds(self, name: str) -> list[Candidate]:
        """Every build of `name` that runs on the target, in preference order."""
        if name == "torch":
            return [
                Candidate("torch", release.version, verdict.variant, (release,))
                for release in self.database.torch_releases
                for verdict in self.fitting_variants(release)
            ]
        return self._companion_builds(name)

    def fitting_variants(self, release: TorchRelease) -> list[Verdict]:
        verdicts = [self.verdict(release, variant) for variant in ordered_variants(release)]
        return [verdict for verdict in verdicts if verdict.fits]

    def verdict(self, release: TorchRelease, variant: Variant) -> Verdict:
        key = (release.version, variant.name)
        if key not in self._verdicts:
            self._verdicts[key] = assess(
                self.database, self.target, release, variant, policy=self.policy, allowed_kinds=self.allowed_kinds
            )
        return self._verdicts[key]

    def _companion_builds(self, name: str) -> list[Candidate]:
        grouped: dict[tuple[str, str], list[TorchRelease]] = {}
        variants: dict[tuple[str, str], Variant] = {}
        for release in self.database.torch_releases:
            companion = release.companions.get(name)
            if companion is None:
                continue
            for verdict in self.fitting_variants(release):
                key = (companion.version, verdict.variant.name)
                grouped.setdefault(key, []).append(release)
                variants.setdefault(key, verdict.variant)
        return [
            Candidate(name, Version(version), variants[(version, variant)], tuple(releases))
            for (version, variant), releases in grouped.items()
        ]


def ordered_variants(release: TorchRelease) -> list[Variant]:
    """Newest CUDA first, then ROCm, then CPU: the preference among a release's builds."""

    def rank(variant: Variant) -> tuple[int, tuple[int, ...]]:
        if variant.cuda:
            return (0, tuple(-int(p) for p in variant.cuda.split(".")))
        if variant.rocm:
            return (1, tuple(-int(p) for p in variant.rocm.split(".")))
        return (2, ())

    return sorted(release.variants.values(), key=rank)
