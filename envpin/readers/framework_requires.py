"""What a framework release requires of the packages installed beside it, as its wheel's Requires-Dist says.

pip installs one version of each package for the whole environment: a project line that leaves none of the versions
a release requires makes that release uninstallable beside it. tensorflow 2.20.0 requires `protobuf>=5.28.0`, so
beside `protobuf==4.25.1` pip can install TensorFlow 2.17.1 at the newest; torch 2.5.1 requires `sympy==1.13.1` on
Python 3.9 and later, so `sympy==1.12` holds torch below 2.5. A project solve asks, for each of its lines with a
version bound on a package its framework's releases require, which releases leave room for that line, and solves
the framework within them (the question the tied packages ask, envpin.readers.tied, the other way round).

The facts are the database's requires.yaml (`Database.framework_requires`: one record per release, the Requires-Dist
lines of its Linux x86_64 wheel, each record citing that wheel), written by scripts/record-framework-requires from
PyPI through `requires_yaml`, which derives it from the recorded snapshot, so the tests check it offline. A line's
marker is evaluated for the target (`sympy==1.13.1; python_version >= "3.9"`); lines of an extra are not recorded.
numpy has its own field (envpin.resolver.numpy_fit), the `nvidia-*` CUDA pins theirs (the variants), triton the
tied packages'. Nothing is read for a project without a bounded line on a package some release requires.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from envpin.compat.model import Database, FrameworkRequires
from envpin.vocabulary.names import canonical_name

SNAPSHOT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "pypi-metadata" / "framework-requires.json"
FRAMEWORKS = ("torch", "tensorflow")
# recorded elsewhere in the database, or each CUDA variant's own: not this module's to judge
_ELSEWHERE = re.compile(r"^(numpy|triton|nvidia-[a-z0-9-]+|cuda-[a-z0-9-]+|tensorrt[a-z0-9-]*)$")


def kept_line(line: str) -> bool:
    """Whether a Requires-Dist line is recorded: not one of an extra, nor one the database records elsewhere."""
    from packaging.requirements import Requirement  # noqa: PLC0415 - the recorder and its test only

    requirement = Requirement(line)
    if requirement.marker is not None and "extra" in str(requirement.marker):
        return False
    return not _ELSEWHERE.match(canonical_name(requirement.name))


def framework_bound(database: Database, framework: str, name: str, specifier: str, releases: Sequence[str],
                    python: str, platform: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(the releases of `framework` whose own requirement on `name` leaves room for `specifier`, the releases it
    rules out with the requirement that does it), among `releases` (the database's, any order). A release not
    recorded, or that requires nothing of `name`, is allowed."""
    from envpin.resolver.numpy_fit import meet  # noqa: PLC0415 - project solves with such a line only

    name = canonical_name(name)
    if name not in requires_names(database, framework):
        return list(releases), []
    by_version = _records(database, framework)
    allowed, ruled_out = [], []
    for version in releases:
        record = by_version.get(version)
        needed = record.on(name, python, platform) if record is not None else None
        if needed is None or meet(needed, specifier):
            allowed.append(version)
        else:
            ruled_out.append((version, needed))
    return allowed, ruled_out


def needed_by(database: Database, framework: str, version: str, name: str, python: str, platform: str) -> str | None:
    """What that release requires of `name` on the target (None: not recorded, or nothing)."""
    record = _records(database, framework).get(version)
    return record.on(canonical_name(name), python, platform) if record is not None else None


def requires_names(database: Database, framework: str) -> frozenset[str]:
    """The packages some recorded release of `framework` requires (canonical names), worked out once a database."""
    memo = database.memo("framework_requires_names")
    if framework not in memo:
        memo[framework] = frozenset(name for record in _records(database, framework).values() for name in record.names)
    return memo[framework]


def _records(database: Database, framework: str) -> Mapping[str, FrameworkRequires]:
    """version -> the framework's record, once a database (a fleet's machines ask the same)."""
    memo = database.memo("framework_requires")
    if framework not in memo:
        memo[framework] = {r.version: r for r in database.framework_requires if r.framework == framework}
    return memo[framework]


# ---------------------------------------------------------------- the recorded snapshot -> the facts (pure)


def requires_yaml(snapshot: Mapping) -> str:
    """What scripts/record-framework-requires read on PyPI (tests/fixtures/pypi-metadata/framework-requires.json) as
    the database's requires.yaml: one record per release read, its kept Requires-Dist lines in the wheel's order, and
    one source per wheel."""
    from packaging.version import Version  # noqa: PLC0415 - the recorder and its test only

    read, projects = snapshot["read"], snapshot["projects"]
    sources: list[str] = []
    records: list[str] = []
    for framework in FRAMEWORKS:
        releases = projects.get(framework, {}).get("releases", {})
        for version, release in sorted(releases.items(), key=lambda item: Version(item[0])):
            sid = f"pypi-wheel-{framework}-{version}-requires"
            url = release["url"]
            sources += [f"  {sid}:",
                        f"    title: {json.dumps(url.rsplit('/', 1)[-1] + ': its METADATA, Requires-Dist (PEP 658 .metadata)')}",
                        f"    url: {json.dumps(url)}", "    grade: pypi", f"    read: {json.dumps(read)}"]
            lines = ", ".join(json.dumps(line) for line in release["requires_dist"] if kept_line(line))
            records.append(f"  - {{framework: {framework}, version: {json.dumps(version)}, requires: [{lines}], "
                           f"sources: [{sid}]}}")
    return "\n".join([_HEADER.rstrip("\n"), "sources:", *sources, "releases:", *records]) + "\n"


_HEADER = """\
# What each torch and TensorFlow release requires of the packages installed beside it, as the Requires-Dist of its
# Linux x86_64 wheel (the newest CPython) on PyPI says (envpin/readers/framework_requires.py; SCHEMA.md
# "requires.yaml"). Written by scripts/record-framework-requires from what it read (tests/fixtures/pypi-metadata/
# framework-requires.json, envpin.readers.framework_requires.requires_yaml): edit by re-recording, not by hand.
# Not here: numpy (the releases' own `numpy:`), the nvidia-* CUDA pins (the variants), triton (tied.yaml), extras.
"""


def described(ruled_out: Iterable[tuple[str, str]], framework: str, name: str) -> str:
    """`tensorflow 2.18.0-2.21.0, which require protobuf>=5.28.0` (consecutive releases with one requirement
    together)."""
    groups: list[tuple[list[str], str]] = []
    for version, needed in ruled_out:
        if groups and groups[-1][1] == needed:
            groups[-1][0].append(version)
        else:
            groups.append(([version], needed))
    parts = [f"{framework} {versions[0]}" + (f"-{versions[-1]}" if len(versions) > 1 else "")
             + f", which require{'s' if len(versions) == 1 else ''} {name}{needed}" for versions, needed in groups]
    return "; ".join(parts)
