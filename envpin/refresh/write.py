"""Put a proposal into a database directory: text edits in a staged copy, validated, then moved into place.

The YAML files are edited as text, not re-dumped, so their comments, layout and every curated record stay
byte for byte as they were and `git diff` shows only the proposal: new release records are inserted into the
`releases:` list in version order, new source entries at the end of the file's `sources:` mapping, the new
version into VERSION and a section into CHANGELOG.md. The staged copy must pass the same validation as
`envpin db validate`; if it does not, nothing is written. Writing into the database itself replaces each
changed file with os.replace; writing to another directory moves the whole staged copy there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.version import Version

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record
from envpin.base.record import record as frozen_record
from envpin.compat.loader import validate_database
from envpin.refresh.diff import Proposal

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]*$")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
_ITEM = re.compile(r'^  - version: "?([^"\s]+)"?\s*$')


@frozen_record
class WriteResult(Record):
    written: tuple[str, ...]  # file names changed (or that would change, in a dry run)
    problems: tuple[str, ...]  # validation problems of the staged copy: then nothing was written
    destination: str | None  # None in a dry run or when validation failed


def check_output(database_dir: Path, output_dir: Path) -> None:
    """Refuse, before any network traffic, an output that is neither the database nor an empty place."""
    if _same(database_dir, output_dir):
        return
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())):
        raise EnvpinInputError(f"--output {output_dir}: exists and is not empty (nor the database itself); "
                               "choose a new directory")
    if not output_dir.parent.is_dir():
        raise EnvpinInputError(f"--output {output_dir}: the directory {output_dir.parent} does not exist")


def write_proposal(proposal: Proposal, database_dir: Path, output_dir: Path | None) -> WriteResult:
    """Stage, validate, then write to output_dir (None: a dry run that only validates)."""
    parent = output_dir.parent if output_dir is not None else None
    staging = Path(tempfile.mkdtemp(prefix=".envpin-refresh-", dir=parent))
    try:
        staged = staging / "db"
        shutil.copytree(database_dir, staged)
        changed = apply_proposal(proposal, staged)
        problems = tuple(validate_database(staged)) if changed else ()
        if problems or output_dir is None:
            return WriteResult(tuple(changed), problems, None)
        if _same(database_dir, output_dir):
            for name in changed:
                os.replace(staged / name, output_dir / name)
        else:
            if output_dir.exists():
                output_dir.rmdir()  # empty, as check_output made sure
            os.replace(staged, output_dir)
        return WriteResult(tuple(changed), (), str(output_dir))
    except OSError as error:
        raise EnvpinInputError(f"cannot write the proposal ({error.strerror or error}: {error.filename})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def apply_proposal(proposal: Proposal, directory: Path) -> list[str]:
    """Edit the database files in `directory`; returns the names of the files changed."""
    if not proposal.changes:
        return []
    changed = []
    by_file: dict[str, list] = {}
    for record in proposal.records:
        by_file.setdefault(record.file, []).append(record)
    for name, records in by_file.items():
        path = directory / name
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        text = insert_sources(text, proposal.sources.get(name, {}))
        text = insert_records(text, [(Version(r.version), render_record(r.record)) for r in records])
        path.write_text(text, encoding="utf-8")
        changed.append(name)
    if proposal.new_version != proposal.database_version:
        (directory / "VERSION").write_text(proposal.new_version + "\n", encoding="utf-8")
        changed.append("VERSION")
    changelog = directory / "CHANGELOG.md"
    old = changelog.read_text(encoding="utf-8") if changelog.exists() else "# Compatibility database changelog\n"
    changelog.write_text(insert_changelog(old, proposal), encoding="utf-8")
    changed.append("CHANGELOG.md")
    return changed


# ---------------------------------------------------------------- YAML text


def render_record(record: Mapping[str, Any]) -> str:
    """A release record as a `releases:` list item, in the layout the database files use."""
    lines = _block(record, 4)
    lines[0] = "  - " + lines[0][4:]
    return "\n".join(lines) + "\n"


def _block(mapping: Mapping[str, Any], indent: int) -> list[str]:
    lines, pad = [], " " * indent
    for key, value in mapping.items():
        if isinstance(value, dict) and value and _needs_block(value):
            lines.append(f"{pad}{_key(key)}:")
            lines += _block(value, indent + 2)
        else:
            lines.append(f"{pad}{_key(key)}: {_flow(value)}")
    return lines


def _needs_block(mapping: dict[str, Any]) -> bool:
    values = list(mapping.values())
    return any(isinstance(v, dict) for v in values) or all(isinstance(v, list) for v in values)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _scalar(str(value))


def _scalar(text: str) -> str:
    """Plain when YAML reads it back as the same string, double-quoted (JSON escapes) otherwise."""
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


_key = _scalar


def _top_level_block(lines: list[str], key: str) -> tuple[int, int] | None:
    """(index of `key:`, index just past its block) for a top-level key, or None."""
    start = next((i for i, line in enumerate(lines) if re.match(rf"^{re.escape(key)}:\s*(#.*)?$", line)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " #\t"):
        end += 1
    while end - 1 > start and not lines[end - 1].strip():  # leave blank lines after the block in place
        end -= 1
    return start, end


def insert_records(text: str, records: list[tuple[Version, str]]) -> str:
    lines = text.splitlines()
    block = _top_level_block(lines, "releases")
    if block is None:
        lines += ["releases:"]
        block = (len(lines) - 1, len(lines))
    start, end = block
    for version, rendered in sorted(records, key=lambda item: item[0], reverse=True):
        position = end
        for index in range(start + 1, end):
            match = _ITEM.match(lines[index])
            if match and (listed := _version(match.group(1))) is not None and listed > version:
                position = index
                break
        new = rendered.rstrip("\n").splitlines()
        lines[position:position] = new
        end += len(new)
    return "\n".join(lines) + "\n"


def insert_sources(text: str, sources: Mapping[str, Mapping[str, str]]) -> str:
    if not sources:
        return text
    lines = text.splitlines()
    entries = []
    for source_id, fields in sources.items():
        entries.append(f"  {_key(source_id)}:")
        entries += [f"    {key}: {_scalar(str(value))}" for key, value in fields.items()]
    block = _top_level_block(lines, "sources")
    if block is None:
        return "\n".join(["sources:"] + entries + [""] + lines) + "\n"
    lines[block[1]:block[1]] = entries
    return "\n".join(lines) + "\n"


def insert_changelog(text: str, proposal: Proposal) -> str:
    bullets = [f"- {record.file}: {record.family} {record.version} (`added: \"{proposal.new_version}\"`)"
               for record in proposal.records]
    section = [
        f"## {proposal.new_version}",
        "",
        f"Proposed by `envpin refresh` from PyPI (read {proposal.read_date}); each new record says in "
        "`unverified:` what a curator still has to check (see the refresh report).",
        "",
        *bullets,
        "",
    ]
    lines = text.splitlines()
    heading = f"## {proposal.new_version}"
    if heading in lines:  # a second refresh on the same day: add to that version's list
        at = lines.index(heading) + 1
        while at < len(lines) and not lines[at].startswith("## "):
            at += 1
        while not lines[at - 1].strip():
            at -= 1
        lines[at:at] = bullets
        return "\n".join(lines) + "\n"
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    at = 0 if title is None else title + 1
    while at < len(lines) and not lines[at].strip():
        at += 1
    lines[at:at] = section
    return "\n".join(lines) + "\n"


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number too long for int()
        return None


def _same(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:
        return False
