"""PyPI's API documents -> a package's releases and wheel files (pure).

Either document is enough: the PEP 691 simple API gives each file's absolute URL, hashes and PEP 658 flag; the
JSON API gives the same files with upload times. When both were read, files come from the simple API and
upload dates from whichever says earlier; when one failed, the other is used alone. Entries that are not
what PyPI documents (no file name, a version that does not parse) are skipped and counted, never guessed at.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from packaging.version import InvalidVersion, Version

from envpin.base.record import Record, record
from envpin.refresh.wheels import WheelTags, wheel_tags


@record
class WheelFile(Record):
    filename: str
    url: str
    version: Version
    tags: WheelTags
    size: int | None
    uploaded: str | None  # ISO 8601 date-time as PyPI gives it
    yanked: bool
    core_metadata: Any = None  # PEP 658/714: True or {"sha256": ...} when a .metadata file is declared


@record
class Release(Record):
    version: Version
    uploaded: str | None  # YYYY-MM-DD of the first file
    yanked: bool  # every file is yanked
    wheels: tuple[WheelFile, ...]
    files: int  # wheels and sdists

    @property
    def final(self) -> bool:
        return not (self.version.is_prerelease or self.version.is_devrelease)


@record
class PackageIndex(Record):
    name: str
    releases: Mapping[Version, Release]  # oldest first
    read_from: tuple[str, ...]  # the document URLs
    notes: tuple[str, ...] = ()

    def finals(self) -> list[Release]:
        """Final releases with at least one file that is not yanked: what the database may list."""
        return [r for r in self.releases.values() if r.final and r.files and not r.yanked]

    def release(self, version: str | Version) -> Release | None:
        try:
            return self.releases.get(Version(str(version)))
        except ValueError:  # InvalidVersion, or a number too long for int()
            return None


@record
class _File(Record):
    version: Version
    filename: str
    url: str
    size: int | None
    uploaded: str | None
    yanked: bool
    core_metadata: Any


def index_from_documents(name: str, json_doc: tuple[str, dict] | None, simple_doc: tuple[str, dict] | None) -> PackageIndex:
    """Build the index from the (url, document) pairs that could be read (at least one)."""
    notes: list[str] = []
    json_files = _json_api_files(*json_doc, notes) if json_doc else None
    simple_files = _simple_api_files(*simple_doc, notes) if simple_doc else None
    files = simple_files if simple_files is not None else json_files or []
    uploads: dict[Version, list[str]] = {}
    for file in (json_files or []) + (simple_files or []):
        if file.uploaded:
            uploads.setdefault(file.version, []).append(file.uploaded)
    by_version: dict[Version, list[_File]] = {}
    for file in files:
        by_version.setdefault(file.version, []).append(file)
    if json_doc:  # releases listed with no files at all are still releases (all deleted): keep them visible
        for key in json_doc[1]["releases"]:
            version = _version(key)
            if version is not None:
                by_version.setdefault(version, [])
    releases = {}
    for version in sorted(by_version):
        entries = by_version[version]
        wheels = []
        for entry in entries:
            tags = wheel_tags(entry.filename)
            if tags is not None:
                wheels.append(WheelFile(entry.filename, entry.url, version, tags, entry.size, entry.uploaded,
                                        entry.yanked, entry.core_metadata))
        dates = sorted(uploads.get(version, []))
        releases[version] = Release(
            version=version,
            uploaded=dates[0][:10] if dates else None,
            yanked=bool(entries) and all(entry.yanked for entry in entries),
            wheels=tuple(wheels),
            files=len(entries),
        )
    read_from = tuple(doc[0] for doc in (json_doc, simple_doc) if doc)
    return PackageIndex(name=name, releases=releases, read_from=read_from, notes=tuple(notes))


def _json_api_files(url: str, document: dict, notes: list[str]) -> list[_File]:
    files, skipped = [], 0
    for key, entries in document["releases"].items():
        version = _version(key)
        if version is None or not isinstance(entries, list):
            skipped += 1
            continue
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str) or not entry.get("url"):
                skipped += 1
                continue
            files.append(_File(
                version=version,
                filename=entry["filename"],
                url=urljoin(url, str(entry["url"])),
                size=entry.get("size") if isinstance(entry.get("size"), int) else None,
                uploaded=_text(entry.get("upload_time_iso_8601") or entry.get("upload_time")),
                yanked=bool(entry.get("yanked")),
                core_metadata=entry.get("core-metadata") or entry.get("data-dist-info-metadata") or None,
            ))
    if skipped:
        notes.append(f"{url}: {skipped} malformed release or file entries skipped")
    return files


def _simple_api_files(url: str, document: dict, notes: list[str]) -> list[_File]:
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a Simple API page needs it

    files, skipped = [], 0
    for entry in document["files"]:
        filename = entry.get("filename") if isinstance(entry, dict) else None
        if not isinstance(filename, str) or not entry.get("url"):
            skipped += 1
            continue
        try:
            if filename.endswith(".whl"):
                version = parse_wheel_filename(filename)[1]
            else:
                version = parse_sdist_filename(filename)[1]
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            skipped += 1
            continue
        files.append(_File(
            version=version,
            filename=filename,
            url=urljoin(url, str(entry["url"])),
            size=entry.get("size") if isinstance(entry.get("size"), int) else None,
            uploaded=_text(entry.get("upload-time")),
            yanked=bool(entry.get("yanked")),  # False, or the reason string
            core_metadata=entry.get("core-metadata") or entry.get("data-dist-info-metadata") or None,
        ))
    if skipped:
        notes.append(f"{url}: {skipped} file entries that are not wheels or sdists of this project skipped")
    return files


def _version(text: Any) -> Version | None:
    try:
        return Version(str(text))
    except ValueError:  # InvalidVersion, or a number too long for int()
        return None


def _text(value: Any) -> str | None:
    return str(value) if value else None


def representative_wheels(release: Release) -> dict[str, WheelFile]:
    """One wheel per platform whose METADATA stands for the release there: the newest GIL CPython build
    (a pure wheel for every platform it serves), the first file name on a tie. Deterministic, so the
    recorded fixtures and a live run read the same files."""
    chosen: dict[str, WheelFile] = {}
    for wheel in sorted((w for w in release.wheels if not w.yanked), key=lambda w: w.filename):
        for platform in wheel.tags.platforms:
            best = chosen.get(platform)
            if best is None or _newest_python(wheel) > _newest_python(best):
                chosen[platform] = wheel
    return {platform: chosen[platform] for platform in sorted(chosen)}


def _newest_python(wheel: WheelFile) -> tuple[int, ...]:
    return max((tuple(int(p) for p in v.split(".")) for v in wheel.tags.pythons), default=(0,))
