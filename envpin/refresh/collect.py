"""The refresh's I/O: read the API documents of each package, then the METADATA plan.py asks for, in rounds.

Nothing here decides anything: a failure becomes a Problem (one line naming the URL and the reason) and the
package or file is simply absent from the Observations, so diff.py holds back every record that needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from envpin.compat.model import Database
from envpin.refresh.client import FetchError, PyPIClient
from envpin.refresh.index import index_from_documents
from envpin.refresh.metadata import parse_metadata
from envpin.refresh.plan import (
    PACKAGES,
    MemberRead,
    MetadataRead,
    Observations,
    Problem,
    members_wanted,
    metadata_wanted,
)

MAX_ROUNDS = 4  # jax needs two (its own METADATA, then its plugins'); more would mean a planning loop


def collect(
    client: PyPIClient,
    database: Database,
    packages: Iterable[str] = PACKAGES,
    recheck: int = 1,
    progress: Callable[[str], None] = lambda line: None,
) -> Observations:
    packages = tuple(packages)
    indexes, problems = {}, []
    for package in packages:
        documents: list[tuple[str, Any] | None] = []
        for read in (client.project_json, client.simple_project):
            try:
                fetched = read(package)
                documents.append((fetched.url, fetched.data))
            except FetchError as error:
                problems.append(Problem(package, str(error)))
                documents.append(None)
        if any(documents):
            indexes[package] = index_from_documents(package, documents[0], documents[1])
        progress(f"{package}: {'read' if any(documents) else 'could not be read'}")
    metadata: dict[str, MetadataRead] = {}
    failed: dict[str, str] = {}
    for _ in range(MAX_ROUNDS):
        observed = Observations(indexes, metadata, tuple(problems), failed, packages)
        wanted = metadata_wanted(database, observed, recheck)
        if not wanted:
            break
        for wheel in wanted:
            try:
                text, how = client.wheel_metadata(wheel.url, wheel.core_metadata)
                metadata[wheel.filename] = MetadataRead(parse_metadata(text), how, wheel.url)
                progress(f"{wheel.filename}: METADATA ({how})")
            except FetchError as error:
                failed[wheel.filename] = error.reason
                problems.append(Problem(_project_of(wheel.filename), str(error)))
    members: dict[tuple[str, str], MemberRead] = {}
    failed_members: dict[tuple[str, str], str] = {}
    observed = Observations(indexes, metadata, tuple(problems), failed, packages)
    for wanted_member in members_wanted(database, observed, recheck):
        key = (wanted_member.wheel.filename, wanted_member.member)
        try:
            members[key] = MemberRead(client.wheel_member(wanted_member.wheel.url, wanted_member.member),
                                      wanted_member.wheel.url)
            progress(f"{key[0]}: {key[1]} (range)")
        except FetchError as error:
            failed_members[key] = error.reason
            problems.append(Problem(_project_of(key[0]), str(error)))
    return Observations(indexes, metadata, tuple(problems), failed, packages, members, failed_members)


def _project_of(filename: str) -> str:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a failed wheel's report needs it

    return canonicalize_name(filename.split("-", 1)[0])
