"""What a refresh reads (pure): which PyPI releases are new to the database, and whose METADATA is needed.

A release is new when it is a final, not yanked release with files that the database does not list, and it
is either newer than every release the database lists for that package or was uploaded after the database
version's date. The second rule catches a patch release of an older series (tensorflow 2.20.1 after 2.21.0)
without re-proposing the releases a curator left out on purpose before (the database lists only some
TensorFlow patch releases, and no yanked jax).

METADATA reads happen in rounds, because some wants depend on what was read: the jax wheel's extras name the
plugin versions whose METADATA holds the NVIDIA pins. `metadata_wanted` is called until it asks for nothing new.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta

from packaging.version import Version

from envpin.base.record import Record, field
from envpin.base.record import record as frozen_record
from envpin.compat.model import Database
from envpin.refresh.index import PackageIndex, Release, WheelFile, representative_wheels
from envpin.refresh.metadata import Metadata, cuda_extras, extra_requirement, rocm_extras
from envpin.vocabulary.frameworks import COMPANIONS, TORCH_FAMILY
from envpin.vocabulary.platforms import LINUX_X86_64

FAMILIES = {
    "torch": TORCH_FAMILY,
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-rocm"),
    # the plugins' own dependency, jax-cudaNN-pjrt, decides whether an extra can install (jax 0.4.22 cannot)
    "jax": ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin", "jax-cuda12-pjrt", "jax-cuda13-pjrt",
            "jax-rocm7-plugin", "jax-rocm7-pjrt"),
}
PACKAGES = tuple(package for packages in FAMILIES.values() for package in packages)


@frozen_record
class MetadataRead(Record):
    metadata: Metadata
    how: str  # "PEP 658" or "range"
    url: str


@frozen_record
class MemberRead(Record):
    """A file inside a wheel other than METADATA (TensorFlow's build_info.py), read with HTTP range requests."""

    text: str
    url: str


@frozen_record
class MemberWanted(Record):
    wheel: WheelFile
    member: str  # its path inside the wheel


@frozen_record
class Problem(Record):
    package: str
    message: str  # one line: the URL and what went wrong


@frozen_record
class Observations(Record):
    """What the refresh read from PyPI; a package or file that failed is absent and has a Problem."""

    indexes: Mapping[str, PackageIndex] = field(default_factory=dict)
    metadata: Mapping[str, MetadataRead] = field(default_factory=dict)  # wheel file name -> METADATA
    problems: tuple[Problem, ...] = ()
    failed_metadata: Mapping[str, str] = field(default_factory=dict)  # wheel file name -> reason
    requested: tuple[str, ...] = ()  # the packages asked for
    members: Mapping[tuple[str, str], MemberRead] = field(default_factory=dict)  # (wheel file name, member) -> text
    failed_members: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (wheel file name, member) -> reason


def family_releases(database: Database, family: str):
    return {"torch": database.torch_releases, "tensorflow": database.tensorflow_releases,
            "jax": database.jax_releases}[family]


def database_date(database: Database) -> str:
    return database.version.replace(".", "-")


def new_releases(database: Database, family: str, index: PackageIndex) -> list[Release]:
    known = {record.version for record in family_releases(database, family)}
    newest = max(known, default=Version("0"))
    since = database_date(database)
    return [
        release
        for release in index.finals()
        if release.version not in known
        and release.wheels
        and (release.version > newest or (release.uploaded is not None and release.uploaded > since))
    ]


def known_releases(database: Database, family: str, index: PackageIndex, count: int) -> list[Release]:
    """The `count` newest releases the database lists that PyPI still serves: what `--recheck` re-reads."""
    found: list[Release] = []
    for record in family_releases(database, family):  # newest first
        release = index.releases.get(record.version)
        if len(found) < count and release is not None and release.wheels:
            found.append(release)
    return found


def targets(database: Database, family: str, observations: Observations, recheck: int) -> list[Release]:
    index = observations.indexes.get(family)
    if index is None:
        return []
    return new_releases(database, family, index) + known_releases(database, family, index, recheck)


def companion_candidates(database: Database, companion: PackageIndex, torch_release: Release) -> list[Release]:
    """Releases of torchvision/torchaudio that may pair with a new torch release: those no database record
    pairs yet, uploaded from the day before the torch release on, and the previous release's pair."""
    paired = {Version(c.version) for r in database.torch_releases for c in r.companions.values()
              if c.name == companion.name}
    since = _day_before(torch_release.uploaded)
    fresh = [r for r in companion.finals() if r.version not in paired and r.uploaded and since and r.uploaded >= since]
    previous = previous_companion(database, companion.name, torch_release.version)
    carried = [companion.releases[previous]] if previous is not None and previous in companion.releases else []
    return fresh + carried


def previous_companion(database: Database, name: str, version: Version) -> Version | None:
    for record in database.torch_releases:  # newest first
        if record.version < version and name in record.companions:
            return Version(record.companions[name].version)
    return None


def metadata_wanted(database: Database, observations: Observations, recheck: int = 1) -> list[WheelFile]:
    """The wheels whose METADATA the next round should read (none already read or failed)."""
    wanted: dict[str, WheelFile] = {}

    def want(wheel: WheelFile | None) -> None:
        if wheel is not None and wheel.filename not in observations.metadata \
                and wheel.filename not in observations.failed_metadata:
            wanted.setdefault(wheel.filename, wheel)

    indexes = observations.indexes
    for release in targets(database, "torch", observations, recheck):
        for wheel in representative_wheels(release).values():
            want(wheel)
    for release in targets(database, "torch", observations, 0):  # companions: only for new releases
        for name in COMPANIONS:
            if name in indexes:
                for candidate in companion_candidates(database, indexes[name], release):
                    want(linux_wheel(candidate))
    for release in targets(database, "tensorflow", observations, recheck):
        for wheel in representative_wheels(release).values():
            want(wheel)
    for release in targets(database, "jax", observations, recheck):
        wheels = representative_wheels(release)
        jax_wheel = next(iter(wheels.values()), None)
        want(jax_wheel)
        read = observations.metadata.get(jax_wheel.filename) if jax_wheel else None
        if read is None:
            continue
        extras = [(extra, f"jax-{extra}-plugin") for extra, _ in cuda_extras(read.metadata)]
        for extra, project in extras + rocm_extras(read.metadata):
            plugin = plugin_release(read.metadata, extra, indexes, project)
            if plugin is not None:
                want(linux_wheel(plugin[1]))
    return list(wanted.values())


def members_wanted(database: Database, observations: Observations, recheck: int = 1) -> list[MemberWanted]:
    """The wheel members to read besides METADATA: build_info.py of the Linux x86_64 tensorflow wheel of each new
    (and rechecked) release, for the GPU code compiled in."""
    from envpin.refresh.build_info import MEMBER  # noqa: PLC0415 - only a refresh that reaches tensorflow needs it

    wanted = []
    for release in targets(database, "tensorflow", observations, recheck):
        wheel = representative_wheels(release).get(LINUX_X86_64)
        if wheel is not None and (wheel.filename, MEMBER) not in observations.members \
                and (wheel.filename, MEMBER) not in observations.failed_members:
            wanted.append(MemberWanted(wheel, MEMBER))
    return wanted


def plugin_release(jax_metadata: Metadata, extra: str, indexes: Mapping[str, PackageIndex], project: str | None = None):
    """(plugin project name, the newest plugin release the extra allows) or None when there is none. The
    plugin is `jax-<extra>-plugin` for the CUDA extras, or `project` (jax[rocm7-local] -> jax-rocm7-plugin)."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a jax plugin's release needs it

    requirement = extra_requirement(jax_metadata, extra, project) if project else \
        next((r for r in _plugin_requirements(jax_metadata, extra)), None)
    if requirement is None:
        return None
    index = indexes.get(canonicalize_name(requirement.name))
    if index is None:
        return None
    allowed = [r for r in index.finals() if r.wheels and requirement.specifier.contains(r.version, prereleases=True)]
    return (index.name, allowed[-1]) if allowed else None


def _plugin_requirements(jax_metadata: Metadata, extra: str):
    for project in (f"jax-{extra}-plugin",):
        requirement = extra_requirement(jax_metadata, extra, project)
        if requirement is not None:
            yield requirement


def linux_wheel(release: Release) -> WheelFile | None:
    """The wheel whose METADATA stands for a release: Linux x86_64's, else any platform's."""
    wheels = representative_wheels(release)
    return wheels.get("linux-x86_64") or next(iter(wheels.values()), None)


def _day_before(day: str | None) -> str | None:
    if not day:
        return None
    return (date.fromisoformat(day) - timedelta(days=1)).isoformat()
