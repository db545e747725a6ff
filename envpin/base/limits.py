"""The most work one input may ask of envpin: each limit a number, each refusal one line naming it (exit 2).

`envpin check` runs on pull requests, on files a stranger wrote; a file that asks for unbounded work (a
million continuation lines, ten thousand `!=` clauses, TOML nested until Python's stack runs out) must get an
answer in bounded time, not hang the CI job. Each limit sits far above what real files hold (the figures beside
each) and is listed in docs/hardening.md ("Limits").
"""

from __future__ import annotations

from envpin.base.errors import EnvpinInputError

# One file envpin reads (a project file, a lock, a facts file, a database file): the largest real locks are a few
# MiB (a multi-platform conda-lock.yml of some hundred packages is ~2 MiB)
MAX_FILE_BYTES = 16 * 1024 * 1024
# Lines of one such file: a 16 MiB lock of short lines has ~400,000
MAX_LINES = 500_000
# Physical lines one requirement line may continue over with a trailing backslash (pip's `--hash` lists: a few dozen)
MAX_CONTINUATIONS = 1_000
# Entries naming one package in one file (a conda-lock.yml names a package once per platform; uv.lock once per fork)
MAX_ENTRIES_PER_PACKAGE = 1_000
# Version clauses in one requirement (`torch>=2,!=2.1.0,<3`: three); each is checked against every candidate
MAX_SPECIFIERS = 100
# Arrays and inline tables nested in a TOML file (pyproject.toml, pixi.toml, pylock.toml, uv.lock nest 4 or 5 deep)
MAX_TOML_DEPTH = 100


class LimitExceeded(EnvpinInputError):
    """An input past one of the limits above: the message names it and its number."""


def check_entries_per_package(names, where: str) -> None:
    """`names`: the package name of every entry of one file (or project)."""
    from collections import Counter  # noqa: PLC0415 - only a file with entries needs it

    counts = Counter(names)
    if counts:
        name, count = counts.most_common(1)[0]
        if count > MAX_ENTRIES_PER_PACKAGE:
            raise LimitExceeded(f"{where + ': ' if where else ''}{name} is listed {count:,} times, more than envpin compares "
                                f"({MAX_ENTRIES_PER_PACKAGE:,} entries of one package)")


def check_specifiers(count: int, where: str) -> None:
    if count > MAX_SPECIFIERS:
        raise LimitExceeded(f"{where}: {count:,} version clauses in one requirement, more than envpin takes "
                            f"({MAX_SPECIFIERS})")


def continuation_limit_message(start: int) -> str:
    return (f"line {start}: continues over more than {MAX_CONTINUATIONS:,} lines (a trailing backslash), more than "
            "envpin joins into one requirement")


def toml_depth(text: str) -> int:
    """How deep arrays and inline tables nest in a TOML text: one linear pass that skips strings and comments (a
    bracket inside a string is text), enough to refuse a document before the recursive reader overflows on it."""
    depth = deepest = 0
    position, end = 0, len(text)
    while position < end:
        character = text[position]
        if character in "[{":
            # a table header (`[x]`, `[[x]]`) opens at a line's start and closes on the same line: depth 1 or 2
            depth += 1
            deepest = max(deepest, depth)
        elif character in "]}":
            depth = max(0, depth - 1)
        elif character == "#":
            newline = text.find("\n", position)
            position = end if newline < 0 else newline
            continue
        elif character in "\"'":
            position = _string_end(text, position)
            continue
        position += 1
    return deepest


def _string_end(text: str, start: int) -> int:
    quote = text[start]
    if text.startswith(quote * 3, start):  # a multi-line string ends at the next three quotes
        close = text.find(quote * 3, start + 3)
        return len(text) if close < 0 else close + 3
    position = start + 1
    while position < len(text):
        character = text[position]
        if character == "\\" and quote == '"':
            position += 2
            continue
        if character == quote or character == "\n":
            return position + 1
        position += 1
    return position


def check_toml_depth(text: str, where: str = "") -> None:
    depth = toml_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise LimitExceeded(f"{where + ': ' if where else ''}arrays or tables nested {depth:,} deep, more than envpin "
                            f"reads ({MAX_TOML_DEPTH})")
