"""Packages built for one framework release, as their own wheels' METADATA (or torch's) says.

A project that pins `torchdata==0.6.1` beside `torch>=2.0.1` can only install with torch 2.0.1: torchdata
0.6.1's wheel requires `torch (==2.0.1)`. Left out of the solve, the solver moves torch and pip cannot resolve
the result. A range is the same question asked of every release it allows: for `xformers>=0.0.20` pip takes the
newest xformers whose own `torch==X` holds beside the torch it installs, so torch can be any release one of them
names, and the xformers that goes with the solved torch is the newest of those.

The facts are envpin/project/tied_packages.json, written by scripts/record-tied-packages from PyPI (each with the
wheel whose METADATA was read) and derived from the recorded snapshot by facts_from_snapshot, so the tests check
them offline. `triton` is the other way round: torch names triton (torch 2.0.0 and 2.0.1 require
`triton==2.0.0` on Linux), so a triton release allows the torch releases that require it. Packages PyPI has no
wheel of (flash-attn, torch-scatter) are built at install time against the torch already there.

The suffixed CUDA packages (`cuml-cu11`, `nvidia-cublas-cu12`, `cupy-cuda12x`) and `[cuNN]` extras are for one CUDA
major: `cuda_major_of_requirement` says which, for the plan's check against the solved build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

FACTS_FILE = Path(__file__).with_name("tied_packages.json")
# the projects read for their Requires-Dist on torch; torch itself is read for the triton it requires
TORCH_TIED = ("xformers", "torchdata", "torchtext")
# projects whose wheels are for some platforms only, read for their sdists too: with none, pip has nothing to
# install elsewhere (triton and torch-xla publish Linux wheels only; PyPI's file lists, recorded per release)
PLATFORM_LIMITED = ("triton", "torch-xla")


@dataclass(frozen=True)
class Tied:
    package: str
    version: str
    torch: str | None  # its Requires-Dist on torch ("==2.0.1", ">=2"); for triton the torch releases that require
    #                    it ("==2.0.0||==2.0.1"); None: it names no torch release
    platforms: tuple[str, ...]  # where it has wheels on PyPI
    source: str  # the wheel(s) whose METADATA says so

    def allows(self, torch_version: str) -> bool:
        from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - heavy; only a project with such a package
        from packaging.version import Version  # noqa: PLC0415 - as above

        if self.torch is None:
            return True
        public = Version(torch_version).public
        return any(SpecifierSet(option).contains(public, prereleases=True) for option in self.torch.split("||"))

    @property
    def exact(self) -> bool:
        return self.torch is not None and all(o.startswith("==") for o in self.torch.split("||"))


@dataclass(frozen=True)
class BuiltFromSource:
    """A package PyPI has no wheel of: pip compiles it against the torch installed beside it."""

    package: str
    source: str


@dataclass(frozen=True)
class ReleaseFiles:
    """What one release of a project publishes on PyPI, as its file list says."""

    package: str
    version: str
    platforms: tuple[str, ...]  # where it has wheels
    sdist: bool  # whether it has an sdist pip could build from
    source: str  # the release's file list on PyPI


@cache
def _facts() -> dict:
    return json.loads(FACTS_FILE.read_text(encoding="utf-8"))


def tied_facts() -> tuple[Tied, ...]:
    return tuple(Tied(f["package"], f["version"], f["torch"], tuple(f["platforms"]), f["source"])
                 for f in _facts()["tied"])


def built_from_source(name: str) -> BuiltFromSource | None:
    return next((BuiltFromSource(f["package"], f["source"]) for f in _facts()["built_from_source"]
                 if f["package"] == name), None)


def release_files(name: str, specifier: str) -> list[ReleaseFiles]:
    """The recorded file lists of the releases of `name` that `specifier` allows (every one for no specifier),
    oldest first: the platform-limited projects' own lists, else the platforms of a torch-tied project's
    releases (whose sdists were not read: None of them is taken to have one)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - heavy; project paths only
    from packaging.version import Version  # noqa: PLC0415 - as above

    records = [ReleaseFiles(f["package"], f["version"], tuple(f["platforms"]), f["sdist"], f["source"])
               for f in _facts().get("platform_files", []) if f["package"] == name]
    if not records:
        records = [ReleaseFiles(t.package, t.version, t.platforms, False, t.source) for t in tied_facts()
                   if t.package == name]
    try:
        allowed = SpecifierSet(specifier.strip())
    except InvalidSpecifier:
        return []
    return sorted((r for r in records if allowed.contains(r.version, prereleases=False)),
                  key=lambda r: Version(r.version))


def linux_only_packages() -> frozenset[str]:
    """The platform-limited projects whose every recorded release has Linux wheels only and no sdist."""
    by_package: dict[str, list[dict]] = {}
    for record in _facts().get("platform_files", []):
        by_package.setdefault(record["package"], []).append(record)
    return frozenset(name for name, records in by_package.items()
                     if all(not r["sdist"] and r["platforms"] and all(p.startswith("linux-") for p in r["platforms"])
                            for r in records))


def releases_of(name: str, specifier: str) -> list[Tied]:
    """The recorded releases of `name` that `specifier` allows (every one for no specifier), oldest first."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - heavy; project paths only
    from packaging.version import Version  # noqa: PLC0415 - as above

    records = [t for t in tied_facts() if t.package == name]
    if not records:
        return []
    try:
        allowed = SpecifierSet(specifier.strip())
    except InvalidSpecifier:
        return []
    return sorted((t for t in records if allowed.contains(t.version, prereleases=True)), key=lambda t: Version(t.version))


def torch_specifier(records: Sequence[Tied], torch_releases: Sequence[str]) -> str | None:
    """The torch releases a requirement's recorded releases allow, as one specifier for the solve: None where
    they allow every torch (one of them names none, or each release of `torch_releases` is allowed). The
    database's releases (`torch_releases`) turn a union (2.0.1 or 2.1.0 or …) into a range less the releases
    none allows; without them the narrowest range holding every exact pin."""
    from packaging.version import Version  # noqa: PLC0415 - heavy; project paths only

    if not records or any(r.torch is None for r in records):
        return None
    ordered = sorted(dict.fromkeys(torch_releases), key=Version)
    allowed = [v for v in ordered if any(r.allows(v) for r in records)]
    if ordered and len(allowed) == len(ordered):
        return None
    if not allowed:
        pins = sorted({o[2:] for r in records if r.exact for o in r.torch.split("||")}, key=Version)  # type: ignore[union-attr]
        if not pins:
            return None if not ordered else records[-1].torch
        return f"=={pins[0]}" if len(pins) == 1 else f">={pins[0]},<={pins[-1]}"
    low, high = allowed[0], allowed[-1]
    inside = [v for v in ordered if Version(low) <= Version(v) <= Version(high)]
    gaps = [f"!={v}" for v in inside if v not in allowed]
    bounds = [f"=={low}"] if low == high else [f">={low}", f"<={high}"]
    return ",".join(bounds + gaps)


def release_for(records: Iterable[Tied], torch_version: str, platform: str | None = None) -> Tied | None:
    """The release pip takes beside `torch_version`: the newest whose torch requirement holds (and that has a
    wheel for `platform`, where one is named)."""
    from packaging.version import Version  # noqa: PLC0415 - heavy; project paths only

    fitting = [r for r in records if r.allows(torch_version) and (platform is None or platform in r.platforms)]
    return max(fitting, key=lambda r: Version(r.version), default=None)


def described(record: Tied) -> str:
    """`torch==2.0.1` / `torch>=2` / `torch 2.0.0 or 2.0.1` (triton: the releases that require it)."""
    if record.torch is None:
        return "any torch"
    if record.package == "triton":
        return "torch " + " or ".join(o.removeprefix("==") for o in record.torch.split("||"))
    return f"torch{record.torch}"


# ---------------------------------------------------------------- the recorded snapshot -> the facts (pure)


def facts_from_snapshot(snapshot: Mapping) -> dict:
    """What scripts/record-tied-packages read on PyPI (tests/fixtures/pypi-metadata/tied-packages.json) as the facts
    envpin reads: one record per release with wheels of the torch-tied projects, one per triton release torch
    requires, and the projects with no wheel at all."""
    from packaging.requirements import Requirement  # noqa: PLC0415 - heavy; only the recorder and its test
    from packaging.version import Version  # noqa: PLC0415 - as above

    def in_order(releases: Mapping) -> list:
        return sorted(releases.items(), key=lambda item: Version(item[0]))

    projects = snapshot["projects"]
    tied: list[dict] = []
    for name in TORCH_TIED:
        for version, release in in_order(projects[name]["releases"]):
            if not release["wheels"] or "read" not in release:
                continue
            torch = [Requirement(r) for r in release["read"]["requires_dist"]]
            specifier = str(torch[0].specifier) if torch and str(torch[0].specifier) else None
            tied.append({"package": name, "version": version, "torch": specifier,
                         "platforms": _platforms(release["wheels"]), "source": release["read"]["url"]})
    by_triton: dict[str, list[tuple[str, str]]] = {}
    for version, release in in_order(projects["torch"]["releases"]):
        for line in release.get("read", {}).get("requires_dist", []):
            requirement = Requirement(line)
            pins = [s.version for s in requirement.specifier if s.operator == "=="]
            if pins:
                by_triton.setdefault(pins[0], []).append((version, release["read"]["url"]))
    triton_files = projects["triton"]["releases"]
    for version, requiring in by_triton.items():
        tied.append({"package": "triton", "version": version, "torch": "||".join(f"=={v}" for v, _ in requiring),
                     "platforms": _platforms(triton_files.get(version, {}).get("wheels", [])),
                     "source": " and ".join(url for _, url in requiring)})
    source_only = [{"package": name, "source": project["url"]} for name, project in sorted(projects.items())
                   if project["releases"] and all(r.get("wheels") == [] for r in project["releases"].values())]
    platform_files = [{"package": name, "version": version, "platforms": _platforms(release["wheels"]),
                       "sdist": bool(release["sdists"]), "source": f"https://pypi.org/project/{name}/{version}/#files"}
                      for name in PLATFORM_LIMITED if name in projects
                      for version, release in in_order(projects[name]["releases"]) if "sdists" in release]
    return {"about": "generated by scripts/record-tied-packages from PyPI; see envpin/project/tied.py",
            "tied": tied, "built_from_source": source_only, "platform_files": platform_files}


def _platforms(wheels: Iterable[str]) -> list[str]:
    from envpin.refresh.wheels import wheel_tags  # noqa: PLC0415 - only the recorder and its test
    from envpin.vocabulary.platforms import PLATFORMS  # noqa: PLC0415 - as above

    found: set[str] = set()
    for wheel in wheels:
        tags = wheel_tags(wheel)
        if tags is not None:
            found.update(tags.platforms)
    return [p for p in PLATFORMS if p in found]


# ---------------------------------------------------------------- CUDA majors


_SUFFIX = re.compile(r"-cu(?:da)?(\d{2})(?:x)?$")
_EXTRA = re.compile(r"^cu(?:da)?(\d{2})$")


def cuda_major_of_requirement(name: str, extras: tuple[str, ...]) -> str | None:
    """`cuml-cu11` -> 11, `cupy-cuda12x` -> 12, `nvidia-cublas-cu12` -> 12, `jax[cuda13]`-style extras of other
    packages (`onnxruntime[cu12]`, `cuml[cu13]`) -> that major."""
    match = _SUFFIX.search(name)
    if match:
        return str(int(match.group(1)))
    for extra in extras:
        match = _EXTRA.match(extra)
        if match:
            return str(int(match.group(1)))
    return None
