"""Lock files from a conda solve, as text (pure). `pixi.lock` is written by rattler itself
(`rattler_solve.write_pixi_lock`); the two formats here are the ones conda users install from:

- `conda-lock.yml` (conda-lock's version 1 format: `conda-lock install`, micromamba `create -f`), one entry per
  package and platform with its URL, md5 and sha256;
- `@EXPLICIT` (`conda create --file`, `micromamba create -f`): one URL per line with its md5.

Records are the plain `LockedRecord` values `rattler_solve.locked_records` makes from a solve.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envpin.base.record import Record, replace
from envpin.base.record import record as frozen_record

if TYPE_CHECKING:
    from envpin.conda.rattler_solve import Solution


@frozen_record
class LockedRecord(Record):
    name: str
    version: str
    build: str
    subdir: str  # the package's own subdir: linux-64, noarch …
    url: str
    md5: str | None
    sha256: str | None
    depends: tuple[str, ...] = ()
    channel: str | None = None

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[-1]


def relocate(records: tuple[LockedRecord, ...], bases: Mapping[str, str]) -> tuple[LockedRecord, ...]:
    """Point records solved against a local mirror at the public channel: every URL that starts with a key of
    `bases` ("file:///mirror/conda-forge/") gets that value ("https://conda.anaconda.org/conda-forge/") instead."""
    moved = []
    for record in records:
        for local, public in bases.items():
            if record.url.startswith(local):
                record = replace(record, url=public + record.url[len(local):], channel=public)
                break
        moved.append(record)
    return tuple(moved)


def input_hash(channels: tuple[str, ...], specs: tuple[str, ...], virtual_packages: tuple[str, ...], subdir: str) -> str:
    """A sha256 of what was solved: the same inputs give the same hash, any change a different one. (envpin's own
    hash: conda-lock's `--check-input-hash` computes its own and will re-lock once.)"""
    payload = json.dumps({"channels": channels, "specs": specs, "virtual_packages": virtual_packages, "subdir": subdir},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def public_bases(channels: tuple[str, ...]) -> dict[str, str]:
    """file:// URL of each local channel folder -> https://conda.anaconda.org/<folder name>/: a lock solved against a
    local mirror of a public channel, recorded at the public channel (where another machine fetches it)."""
    bases = {}
    for channel in channels:
        if "://" in channel:
            continue
        path = Path(channel)
        bases[path.as_uri().rstrip("/") + "/"] = f"https://conda.anaconda.org/{path.name}/"
    return bases


def public_name(channel: str, bases: Mapping[str, str]) -> str:
    if "://" in channel:
        return channel
    url = Path(channel).as_uri().rstrip("/") + "/"
    return bases.get(url, url)


def conda_lock_of(solution: Solution, source: str, header: list[str], bases: Mapping[str, str]) -> str:
    """The conda-lock.yml of a solve, its URLs moved to `bases` (public_bases, or {} to keep them)."""
    digest = input_hash(solution.channels, solution.specs, tuple(str(p) for p in solution.virtual_packages),
                        solution.subdir)
    channels = tuple(public_name(c, bases) for c in solution.channels)
    return conda_lock_yml(relocate(solution.records, bases), solution.subdir, channels, digest, header, source)


def conda_lock_yml(
    records: tuple[LockedRecord, ...],
    subdir: str,
    channels: tuple[str, ...],
    content_hash: str,
    header: list[str],
    source: str = "environment.yml",
) -> str:
    """conda-lock's version 1 lock for one platform."""
    import yaml  # noqa: PLC0415 - PyYAML is heavy, and only this lock's text needs it

    document = {
        "version": 1,
        "metadata": {
            "content_hash": {subdir: content_hash},
            "channels": [{"url": channel, "used_env_vars": []} for channel in channels],
            "platforms": [subdir],
            "sources": [source],
        },
        "package": [_conda_lock_package(record, subdir) for record in sorted(records, key=lambda r: r.name)],
    }
    body = yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=1000)
    return "".join(f"# {line}\n" for line in header) + body


def _conda_lock_package(record: LockedRecord, subdir: str) -> dict:
    hashes = {}
    if record.md5:
        hashes["md5"] = record.md5
    if record.sha256:
        hashes["sha256"] = record.sha256
    return {
        "name": record.name,
        "version": record.version,
        "manager": "conda",
        "platform": subdir,
        "dependencies": _dependencies(record.depends),
        "url": record.url,
        "hash": hashes,
        "category": "main",
        "optional": False,
    }


def _dependencies(depends: tuple[str, ...]) -> dict[str, str]:
    """`"libgcc-ng >=12"` -> `{"libgcc-ng": ">=12"}`, as conda-lock writes them: the version part only (a build
    string after it is dropped), `""` for a bare name, and a name listed twice keeps its last spec."""
    found: dict[str, str] = {}
    for text in depends:
        words = text.split()
        if words:
            found[words[0]] = words[1] if len(words) > 1 else ""
    return found


def explicit(records: tuple[LockedRecord, ...], subdir: str, header: list[str]) -> str:
    """An `@EXPLICIT` file: conda installs exactly these URLs and checks each md5. The order is kept (rattler's
    topological order of the solve), as conda links the lines in the order given."""
    lines = [f"# {line}" for line in header]
    lines += [f"# platform: {subdir}", "@EXPLICIT"]
    for record in records:
        lines.append(f"{record.url}#{record.md5}" if record.md5 else record.url)
    return "\n".join(lines) + "\n"
