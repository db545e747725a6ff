"""Packages built for one framework release, as their own wheels' METADATA (or torch's) says.

A project that pins `torchdata==0.6.1` beside `torch>=2.0.1` can only install with torch 2.0.1: torchdata
0.6.1's wheel requires `torch (==2.0.1)`; one that pins `tensorflow-text>=2.20.1,<2.21` can only install with
TensorFlow 2.20: tensorflow-text 2.20.1 requires `tensorflow<2.21,>=2.20.0`. Left out of the solve, the solver
moves the framework and pip cannot resolve the result. A range is the same question asked of every release it
allows: for `xformers>=0.0.20` pip takes the newest xformers whose own `torch==X` holds beside the torch it
installs, so torch can be any release one of them names, and the xformers that goes with the solved torch is the
newest of those.

The facts are the database's tied.yaml (`Database.tied_releases`, `Database.built_from_source`: each record cites
the wheel whose METADATA was read), written by scripts/record-tied-packages from PyPI through `tied_yaml`, which
derives it from the recorded snapshot, so the tests check it offline; `compat.model.TIED` names each package's
framework. `triton` is the other way round: torch names triton (torch 2.0.0 and 2.0.1 require `triton==2.0.0` on
Linux), so a triton release allows the torch releases that require it. Packages PyPI has no wheel of (flash-attn,
torch-scatter) are built at install time against the torch already there. A lookup of any other name
(compat.model TIED, BUILT_AGAINST_TORCH) never reads tied.yaml: a project without such a package does not pay for
it.

The suffixed CUDA packages (`cuml-cu11`, `nvidia-cublas-cu12`, `cupy-cuda12x`) and `[cuNN]` extras are for one CUDA
major: `cuda_major_of_requirement` says which, for the plan's check against the solved build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

from envpin.compat.model import (
    BUILT_AGAINST_TORCH,
    PLATFORM_LIMITED,
    TIED,
    Database,
    ReleaseFiles,
    TiedRelease,
)

# the projects read for their Requires-Dist on their framework; torch itself is read for the triton it requires
READ_FOR_FRAMEWORK = tuple(name for name in TIED if name != "triton")


def built_from_source(database: Database, name: str) -> str | None:
    """Where PyPI shows that `name` has no wheel (its files page), or None for a package that has wheels."""
    if name not in BUILT_AGAINST_TORCH:
        return None
    return database.built_from_source.get(name)


def release_files(database: Database, name: str, specifier: str) -> list[ReleaseFiles]:
    """The recorded file lists of the releases of `name` that `specifier` allows (every one for no specifier),
    oldest first: the platform-limited projects' own lists, else the platforms of a torch-tied project's
    releases (whose sdists were not read: none of them is taken to have one). Any other name: none, unread."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - heavy; project paths only
    from packaging.version import Version  # noqa: PLC0415 - as above

    if name not in PLATFORM_LIMITED and name not in TIED:
        return []
    records = [r for r in database.release_files if r.package == name]
    if not records:
        records = [ReleaseFiles(t.package, t.version, t.platforms, False, t.source, t.provenance)
                   for t in database.tied_releases if t.package == name]
    try:
        allowed = SpecifierSet(specifier.strip())
    except InvalidSpecifier:
        return []
    return sorted((r for r in records if allowed.contains(r.version, prereleases=False)),
                  key=lambda r: Version(r.version))


def without_wheel_for_python(database: Database, name: str, specifier: str, platform: str,
                             python: str) -> tuple[list[ReleaseFiles], list[str]] | None:
    """(the releases `specifier` allows with wheels for `platform`, the CPython minors of those wheels) where none
    of them has a wheel for `python` there or an sdist (tensorflow-addons>=0.18 on Python 3.12); None where one
    installs, or nothing of it was recorded."""
    records = [r for r in release_files(database, name, specifier) if platform in r.platforms]
    if not records or any(r.sdist or not r.pythons or python in r.pythons for r in records):
        return None
    return records, sorted({p for r in records for p in r.pythons}, key=lambda p: tuple(map(int, p.split("."))))


def linux_only_packages(database: Database, names: Iterable[str] = PLATFORM_LIMITED) -> frozenset[str]:
    """Those of `names` among the platform-limited projects whose every recorded release has Linux wheels only and
    no sdist (tied.yaml is read only when one of `names` is such a project)."""
    wanted = set(names) & set(PLATFORM_LIMITED)
    if not wanted:
        return frozenset()
    by_package: dict[str, list[ReleaseFiles]] = {}
    for record in database.release_files:
        by_package.setdefault(record.package, []).append(record)
    return frozenset(name for name, records in by_package.items() if name in wanted
                     and all(not r.sdist and r.platforms and all(p.startswith("linux-") for p in r.platforms)
                             for r in records))


def releases_of(database: Database, name: str, specifier: str) -> list[TiedRelease]:
    """The recorded releases of `name` that `specifier` allows (every one for no specifier), oldest first."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - heavy; project paths only
    from packaging.version import Version  # noqa: PLC0415 - as above

    if name not in TIED:
        return []
    records = [t for t in database.tied_releases if t.package == name]
    if not records:
        return []
    try:
        allowed = SpecifierSet(specifier.strip())
    except InvalidSpecifier:
        return []
    return sorted((t for t in records if allowed.contains(t.version, prereleases=True)), key=lambda t: Version(t.version))


def framework_specifier(records: Sequence[TiedRelease], framework_releases: Sequence[str]) -> str | None:
    """The framework releases a requirement's recorded releases allow, as one specifier for the solve: None where
    they allow every release (one of them names none, or each of `framework_releases` is allowed). The
    database's releases (`framework_releases`) turn a union (2.0.1 or 2.1.0 or …) into a range less the releases
    none allows; without them the narrowest range holding every exact pin."""
    from packaging.version import Version  # noqa: PLC0415 - heavy; project paths only

    if not records or any(r.requires is None for r in records):
        return None
    ordered = sorted(dict.fromkeys(framework_releases), key=Version)
    allowed = [v for v in ordered if any(r.allows(v) for r in records)]
    if ordered and len(allowed) == len(ordered):
        return None
    if not allowed:
        pins = sorted({o[2:] for r in records if r.exact for o in r.requires.split("||")}, key=Version)  # type: ignore[union-attr]
        if not pins:
            return None if not ordered else records[-1].requires
        return f"=={pins[0]}" if len(pins) == 1 else f">={pins[0]},<={pins[-1]}"
    return releases_specifier(allowed, ordered)


def releases_specifier(allowed: Sequence[str], ordered: Sequence[str]) -> str:
    """Some of a framework's releases (`allowed`, a non-empty part of `ordered`, both oldest first) as one
    specifier: the range from the first to the last, less the releases inside it that are not allowed."""
    from packaging.version import Version  # noqa: PLC0415 - heavy; project paths only

    low, high = allowed[0], allowed[-1]
    inside = [v for v in ordered if Version(low) <= Version(v) <= Version(high)]
    gaps = [f"!={v}" for v in inside if v not in allowed]
    bounds = [f"=={low}"] if low == high else [f">={low}", f"<={high}"]
    return ",".join(bounds + gaps)


def framework_versions(database: Database, framework: str) -> list[str]:
    """The database's torch or TensorFlow releases, oldest first (what a bound on them is written against)."""
    from packaging.version import Version  # noqa: PLC0415 - heavy; project paths only

    known = database.torch_releases if framework == "torch" else database.tensorflow_releases
    return sorted({str(r.version) for r in known}, key=Version)


def release_for(records: Iterable[TiedRelease], framework_version: str,
                platform: str | None = None) -> TiedRelease | None:
    """The release pip takes beside `framework_version`: the newest whose requirement on its framework holds (and
    that has a wheel for `platform`, where one is named)."""
    from packaging.version import Version  # noqa: PLC0415 - heavy; project paths only

    fitting = [r for r in records if r.allows(framework_version) and (platform is None or platform in r.platforms)]
    return max(fitting, key=lambda r: Version(r.version), default=None)


def described(record: TiedRelease) -> str:
    """`torch==2.0.1` / `torch>=2` / `torch 2.0.0 or 2.0.1` (triton: the releases that require it) /
    `tensorflow<2.21,>=2.20.0`."""
    if record.requires is None:
        return f"any {record.framework}"
    if record.package == "triton":
        return "torch " + " or ".join(o.removeprefix("==") for o in record.requires.split("||"))
    return f"{record.framework}{record.requires}"


# ---------------------------------------------------------------- the recorded snapshot -> the facts (pure)


def tied_yaml(snapshot: Mapping) -> str:
    """What scripts/record-tied-packages read on PyPI (tests/fixtures/pypi-metadata/tied-packages.json) as the
    database's tied.yaml: one record per release with wheels of the framework-tied projects, one per triton release torch
    requires, and the projects with no wheel at all; one source per wheel whose METADATA was read and one per
    project's files page (the wheel names: the platforms)."""
    from packaging.requirements import Requirement  # noqa: PLC0415 - heavy; only the recorder and its test
    from packaging.version import Version  # noqa: PLC0415 - as above

    def in_order(releases: Mapping) -> list:
        return sorted(releases.items(), key=lambda item: Version(item[0]))

    read, projects = snapshot["read"], snapshot["projects"]
    sources: dict[str, dict[str, str]] = {}

    def files_source(name: str, what: str) -> str:
        sid = f"pypi-files-{name}"
        sources[sid] = {"title": f"PyPI {name}: the files of every release (JSON API): {what}",
                        "url": projects[name]["url"], "grade": "pypi", "read": read}
        return sid

    def wheel_source(name: str, version: str, url: str, about: str) -> str:
        sid = f"pypi-wheel-{name}-{version}"
        sources[sid] = {"title": f"{url.rsplit('/', 1)[-1]}: its METADATA's Requires-Dist on {about} (PEP 658 "
                                 ".metadata or HTTP range requests)", "url": url, "grade": "pypi", "read": read}
        return sid

    tied: list[str] = []
    for name in READ_FOR_FRAMEWORK:
        if name not in projects:
            continue
        framework = TIED[name]
        files = files_source(name, "the wheel names give the platforms of each release")
        for version, release in in_order(projects[name]["releases"]):
            if not release["wheels"] or "read" not in release:
                continue
            # the line pip follows for the framework itself, not one of an extra (`tensorflow-cpu; extra == ...`)
            written = [Requirement(r) for r in release["read"]["requires_dist"]]
            named = [r for r in written if r.marker is None or "extra" not in str(r.marker)]
            specifier = str(named[0].specifier) if named and str(named[0].specifier) else None
            wheel = wheel_source(name, version, release["read"]["url"], framework)
            tied.append(_flow({"package": name, "version": version, framework: specifier,
                               "platforms": _platforms(release["wheels"]), "sources": [wheel, files]}))
    by_triton: dict[str, list[tuple[str, str]]] = {}
    for version, release in in_order(projects["torch"]["releases"]):
        for line in release.get("read", {}).get("requires_dist", []):
            requirement = Requirement(line)
            pins = [s.version for s in requirement.specifier if s.operator == "=="]
            if pins:
                by_triton.setdefault(pins[0], []).append((version, release["read"]["url"]))
    triton_files = projects["triton"]["releases"]
    files = files_source("triton", "the wheel names give the platforms of each release")
    for version, requiring in by_triton.items():
        wheels = [wheel_source("torch", v, url, "triton") for v, url in requiring]
        tied.append(_flow({"package": "triton", "version": version, "required_by": [v for v, _ in requiring],
                           "platforms": _platforms(triton_files.get(version, {}).get("wheels", [])),
                           "sources": [*wheels, files]}))
    source_only = [_flow({"package": name, "sources": [files_source(name, "no release has a wheel")]})
                   for name, project in sorted(projects.items())
                   if project["releases"] and all(r.get("wheels") == [] for r in project["releases"].values())]
    release_files = []
    for name in PLATFORM_LIMITED:
        for version, release in in_order(projects.get(name, {}).get("releases", {})):
            if "sdists" not in release:
                continue
            sid = f"pypi-release-{name}-{version}"
            sources[sid] = {"title": f"PyPI {name} {version}: its files (wheel names and sdists)",
                            "url": f"https://pypi.org/project/{name}/{version}/#files", "grade": "pypi", "read": read}
            release_files.append(_flow({"package": name, "version": version,
                                        "platforms": _platforms(release["wheels"]), "sdist": bool(release["sdists"]),
                                        "pythons": _pythons(release["wheels"]) or None, "sources": [sid]}))
    lines = [_HEADER.rstrip("\n"), "sources:"]
    for sid, source in sorted(sources.items()):
        lines.append(f"  {sid}:")
        lines += [f"    {key}: {_scalar(value)}" for key, value in source.items()]
    lines += ["tied:", *(f"  - {record}" for record in tied), "built_from_source:", *(f"  - {r}" for r in source_only),
              "release_files:", *(f"  - {r}" for r in release_files)]
    return "\n".join(lines) + "\n"


_HEADER = """\
# Packages built for one framework release, as PyPI's wheels say (envpin/readers/tied.py; SCHEMA.md "tied.yaml").
# Written by scripts/record-tied-packages from what it read on PyPI (tests/fixtures/pypi-metadata/tied-packages.json,
# envpin.readers.tied.tied_yaml): edit by re-recording, not by hand.
# tied: xformers, torchdata and torchtext with the Requires-Dist on torch of one Linux x86_64 wheel (`torch`);
#   tensorflow-text, tf-keras and tensorflow-decision-forests with theirs on tensorflow (`tensorflow`); triton with the
#   torch releases whose wheels require it (`required_by`); platforms: where the release has wheels.
# built_from_source: packages PyPI has no wheel of (pip compiles them against the torch installed beside them).
# release_files: what each release of triton, torch-xla, tensorflow-text, tensorflow-decision-forests and tensorflow-addons
#   publishes (wheel platforms, their CPython minors, an sdist or not).
"""


def _flow(record: Mapping) -> str:
    return "{" + ", ".join(f"{key}: {_scalar(value)}" for key, value in record.items() if value is not None) + "}"


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(item) for item in value) + "]"
    if isinstance(value, str) and re.fullmatch(r"[a-z][a-z0-9_.-]*", value) and value not in ("true", "false", "null"):
        return value  # ids, package and platform names: plain, as the database writes them
    return json.dumps(value)  # a double-quoted YAML string


def _pythons(wheels: Iterable[str]) -> list[str]:
    """The CPython minors of the wheels, where each is for one (none where one is pure: it installs on any)."""
    from envpin.refresh.wheels import sort_pythons, wheel_tags  # noqa: PLC0415 - only the recorder and its test

    found: set[str] = set()
    for wheel in wheels:
        tags = wheel_tags(wheel)
        if tags is None:
            continue
        if tags.pure or tags.per_platform_pure:
            return []
        found.update(p for p in tags.pythons if p.startswith("3."))  # Python 2 wheels install on no target
    return list(sort_pythons(found))


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
