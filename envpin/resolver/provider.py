"""The resolvelib provider: a thin adapter over the builds and their fitness checks.

Identifiers are the frameworks (torch, tensorflow, jax), torch's companions (torchvision, torchaudio), `cuda`
(the CUDA major every GPU build of one environment must share) and the pip CUDA libraries the builds pin
(`nvidia-cudnn-cu12` …). A companion depends on torch of a paired release *and the same variant*, which keeps
a `+cu121` torchvision from landing beside a `+cu124` torch. A GPU build depends on its CUDA major and on its
library pins, so two frameworks only meet where their pins intersect. Candidates come out of `find_matches`
in preference order (newest release, then its newest qualifying build), so resolvelib's first choice is
envpin's preferred answer and backtracking walks down that order.

The builds are those of one channel (`channel`: pip wheels, or conda-forge / pytorch-channel builds), judged by
the same fitness checks. conda-forge's CUDA builds pin `cuda-version` from the CUDA they were built with, so two
frameworks there meet through the same pins. On a conda channel a torch build also depends on the companions
asked for that it is paired with (`companions`), each built beside it: conda-forge's torchvision and torchaudio
are packages with CUDA builds of their own, and one that was not built for the CUDA of a torch build rules that
build out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from typing import TYPE_CHECKING

from packaging.version import Version
from resolvelib import AbstractProvider

from envpin.base.record import Record, record
from envpin.compat.model import Database
from envpin.resolver.builds import Build, builds_of
from envpin.resolver.fitness import Verdict, assess
from envpin.resolver.request import NumpyBound
from envpin.resolver.target import Target
from envpin.vocabulary.frameworks import COMPANIONS, FRAMEWORKS

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

CUDA = "cuda"


@record(eq=False)
class Candidate(Record):
    name: str
    version: Version  # the package's own public version (0.20.1 for torchvision; 12 for `cuda`)
    build: Build | None = None  # the framework build; for a companion, the first torch build it sits beside

    @property
    def local_version(self) -> Version:
        if self.build is not None and self.build.framework == "torch":
            return Version(f"{self.version}+{self.build.flavor}")
        return self.version

    @property
    def framework_build(self) -> Build:
        """The build of a framework's or a companion's candidate (those of `cuda` and the libraries have none)."""
        if self.build is None:
            raise AssertionError(f"the {self.name} {self.version} candidate has no build")
        return self.build

    @property
    def key(self) -> tuple[str, Version, str]:
        return self.name, self.version, self.build.flavor if self.build else ""


@record
class Requirement(Record):
    name: str
    specifier: SpecifierSet | None  # None: any version (packaging.specifiers costs a solve time to import)
    origin: str  # "the request" or the candidate that asked for it
    flavor: str | None = None  # the build flavor it must be (a companion's torch variant)
    extras: frozenset[str] = frozenset()  # `jax[cuda12]`: the build must carry these extras
    # a companion's requirement on torch: (companion, its version, platform, Python) that the torch build pairs
    paired: tuple[str, Version, str, str] | None = None

    def matches(self, candidate: Candidate) -> bool:
        if candidate.name != self.name:
            return False
        build = candidate.build
        if self.flavor is not None and (build is None or build.flavor != self.flavor):
            return False
        if self.extras and (build is None or not self.extras <= set(build.extras)):
            return False
        if self.paired is not None:
            name, version, platform, python = self.paired
            pairing = build.companions.get(name) if build is not None else None
            if pairing is None or not any(Version(v) == version for v in pairing.versions_on(platform, python)):
                return False
        return self.specifier is None or self.specifier.contains(candidate.local_version, prereleases=True)


class BuildProvider(AbstractProvider):
    def __init__(
        self,
        database: Database,
        target: Target,
        *,
        policy: str,
        allowed_kinds: Mapping[str, frozenset[str]],
        order: Sequence[str] = FRAMEWORKS,
        shared_libraries: bool = False,
        channel: str = "pip",
        companions: frozenset[str] = frozenset(),
        numpy: NumpyBound | None = None,
        preferred_cuda: Mapping[str, str] | None = None,
    ):
        self.database = database
        self.target = target
        self.policy = policy
        self.allowed_kinds = allowed_kinds
        self.order = tuple(order)
        self.shared_libraries = shared_libraries  # several frameworks: their CUDA pins must agree
        self.channel = channel  # where the builds come from: pip, conda-forge, pytorch-channel
        # Companions a torch build must bring along where it is paired with them (conda: each has builds of its own)
        self.companions = companions
        self.numpy = numpy  # the numpy the builds' own requirement must leave room for (a project's numpy line)
        # framework -> the CUDA X.Y the project pins its build to: first among a release's builds that fit
        self.preferred_cuda = dict(preferred_cuda or {})
        self._verdicts: dict[int, Verdict] = {}
        self._builds: dict[str, Sequence[Build]] = {}
        self._library_versions: dict[str, list[Version]] | None = None

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
    ) -> tuple[int, str]:
        # Frameworks in the order asked (the first gets its newest release), then companions, then CUDA and
        # the libraries, which only check that the choices agree.
        if identifier in self.order:
            return (self.order.index(identifier), identifier)
        if identifier in COMPANIONS:
            return (len(self.order), identifier)
        return (len(self.order) + (1 if identifier == CUDA else 2), identifier)

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Requirement]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> Callable[[], Iterator[Candidate]]:
        # A factory of the matches, which resolvelib iterates only as far as it needs: the builds of a release
        # older than the answer are never judged (nor read from the database cache).
        wanted = list(requirements[identifier])
        excluded = {candidate.key for candidate in incompatibilities[identifier]}
        return lambda: (
            candidate
            for candidate in self.candidates(identifier)
            if candidate.key not in excluded and all(req.matches(candidate) for req in wanted)
        )

    def is_satisfied_by(self, requirement: Requirement, candidate: Candidate) -> bool:
        return requirement.matches(candidate)

    def get_dependencies(self, candidate: Candidate) -> list[Requirement]:
        if candidate.name in COMPANIONS:
            return [
                Requirement(
                    name="torch",
                    specifier=None,
                    origin=f"{candidate.name} {candidate.local_version}",
                    flavor=candidate.framework_build.flavor,
                    paired=(candidate.name, candidate.version, self.target.platform, self.target.python),
                )
            ]
        build = candidate.build
        if build is None:
            return []
        needs = self._companions_needed(build) + self._numpy_needed(build)
        if build.kind != "cuda" or not self.shared_libraries:
            return needs
        from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - costly to import; only shared CUDA pins need it

        origin = build.label
        needs.append(Requirement(CUDA, SpecifierSet(f"=={build.cuda_major}"), origin))
        for name, specifier in build.pins.items():
            needs.append(Requirement(library_name(name), SpecifierSet(specifier), origin))
        return needs

    def _numpy_needed(self, build: Build) -> list[Requirement]:
        """Beside another framework, the numpy this build needs: its wheels' own Requires-Dist on numpy, and `<2`
        where it was compiled against NumPy 1.x (the plan's numpy<2), so that two frameworks only meet where one
        numpy serves both (torch 2.2's numpy<2 and jax 0.10's numpy>=2.0 never do)."""
        specifier = numpy_of(build, self.target)
        if len(self.order) < 2 or not specifier:
            return []
        from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - costly to import; only several frameworks

        return [Requirement(NUMPY, SpecifierSet(specifier), build.label)]

    def _companions_needed(self, build: Build) -> list[Requirement]:
        """The companions asked for that this torch build is paired with: each of the paired version and a build
        beside this one (a conda-forge torchvision must have been built for the same CUDA)."""
        wanted = [name for name in COMPANIONS if name in self.companions and name in build.companions]
        if not wanted:
            return []
        from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - costly to import; only conda solves need it here

        return [Requirement(name, SpecifierSet(f"=={build.companions[name].version}"), build.label, flavor=build.flavor)
                for name in wanted]

    # ------------------------------------------------------------ candidates

    def candidates(self, identifier: str) -> Iterator[Candidate]:
        """In preference order, made as they are asked for."""
        if identifier in FRAMEWORKS:
            for verdict in self.fitting(identifier):
                # Beside another framework every CUDA library pin must be checked, so only builds whose
                # pins were read take part (for torch since 1.13: the build PyPI serves).
                if not self.shared_libraries or verdict.build.pins_known:
                    yield Candidate(identifier, verdict.build.version, verdict.build)
        elif identifier in COMPANIONS:
            yield from self._companions(identifier)
        elif identifier == CUDA:
            yield from (Candidate(CUDA, Version(major)) for major in ("13", "12", "11", "10"))
        elif identifier == NUMPY:
            yield from (Candidate(NUMPY, version) for version in self.numpy_versions())
        else:
            yield from (Candidate(identifier, version) for version in self.library_versions().get(identifier, []))

    def builds(self, framework: str) -> Sequence[Build]:
        if framework not in self._builds:
            self._builds[framework] = builds_of(self.database, framework, self.channel)
        return self._builds[framework]

    def fitting(self, framework: str) -> Iterator[Verdict]:
        """The verdicts of the builds that fit, in preference order, each judged when reached. A CUDA the project
        pins (`cudatoolkit=11.3`) comes first among each release's builds that fit: the build asked for is kept
        where it runs, and another CUDA of the release taken only where it does not."""
        fits = (v for v in (self.verdict(b) for b in self.builds(framework)) if v.fits)
        cuda = self.preferred_cuda.get(framework)
        if cuda is None:
            return fits
        return (verdict for _, release in groupby(fits, key=lambda v: v.build.version)
                for verdict in sorted(release, key=lambda v: v.build.cuda != cuda))

    def verdict(self, build: Build) -> Verdict:
        key = id(build)  # builds are made once per provider, so identity is the key
        if key not in self._verdicts:
            self._verdicts[key] = assess(
                self.database,
                self.target,
                build,
                policy=self.policy,
                allowed_kinds=self.allowed_kinds.get(build.framework, frozenset({"cpu"})),
                numpy=self.numpy,
            )
        return self._verdicts[key]

    def _companions(self, name: str) -> Iterator[Candidate]:
        """Companion builds in torch's preference order; one candidate per (version, variant), beside the first
        torch build that pairs it (its requirement on torch takes any torch build of the variant that does)."""
        seen: set[tuple[str, str]] = set()
        for verdict in self.fitting("torch"):
            pairing = verdict.build.companions.get(name)
            for version in pairing.versions_on(self.target.platform, self.target.python) if pairing is not None else ():
                if (version, verdict.build.flavor) not in seen:
                    seen.add((version, verdict.build.flavor))
                    yield Candidate(name, Version(version), verdict.build)

    def numpy_versions(self) -> list[Version]:
        """Representative numpy versions: every bound the solved frameworks' builds give numpy here, and 2 (two
        specifiers meet exactly when one of these satisfies both)."""
        found = {Version("2")}
        for framework in self.order:
            for build in self.builds(framework):
                specifier = numpy_of(build, self.target)
                if specifier:
                    found.update(representatives(specifier))
        return sorted(found, reverse=True)

    def library_versions(self) -> dict[str, list[Version]]:
        """Representative versions of each pinned library: every exact pin and lower bound in the database.

        They stand in for the library's real releases, which the database does not list: two ranges
        intersect exactly when one of these versions satisfies both.
        """
        if self._library_versions is None:
            found: dict[str, set[Version]] = {}
            for framework in FRAMEWORKS:
                for build in self.builds(framework):
                    for name, specifier in build.pins.items():
                        found.setdefault(library_name(name), set()).update(representatives(specifier))
            self._library_versions = {name: sorted(versions, reverse=True) for name, versions in found.items()}
        return self._library_versions


NUMPY = "numpy"


def numpy_of(build: Build, target: Target) -> str:
    """The numpy specifier a pip build needs on the target: its Requires-Dist there, `<2` for a NumPy 1.x build."""
    if build.channel != "pip":
        return ""
    parts = [build.numpy.on(target.python)] if build.numpy is not None else []
    if target.platform in build.numpy_below_2:
        parts.append("<2")
    return ",".join(p for p in parts if p)


def library_name(requirement_name: str) -> str:
    """`cuda-toolkit[cublas,cudart]` → `cuda-toolkit`: the identifier is the distribution."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - pulls in packaging.tags; only library pins need it

    return canonicalize_name(requirement_name.split("[", 1)[0])


def representatives(specifier: str) -> set[Version]:
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - costly to import; only library pins need it

    versions = {Version("0")}
    for clause in SpecifierSet(specifier):
        if clause.operator in ("==", "===", ">=", "~=", "<=") and "*" not in clause.version:
            try:
                versions.add(Version(clause.version))
            except ValueError:  # InvalidVersion, or a number too long for int()
                continue
    return versions
