"""Progress of an install: steps, and downloads read from uv's and pip's output.

On a terminal one status line is rewritten in place; in CI logs (not a TTY, or CI=true) each step and
download is a plain line; with --quiet nothing but errors. `event_of` (pure) picks the lines worth showing.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO
from urllib.parse import unquote

from envpin.base.escapes import printable

# uv: "Downloading torch (182.9MiB)", " Downloaded torch", "Prepared 10 packages in 4.92s",
# "Installed 10 packages in 373ms". pip: "Collecting torch==2.13.0+cpu", "Downloading torch-…whl (191.8 MB)",
# "Installing collected packages: …", "Successfully installed …". (Recorded in tests/fixtures/provision/.)
EVENTS = (
    re.compile(r"^\s*(Downloading \S+ \([\d.]+ ?[kKMG]i?B\))"),
    re.compile(r"^\s*(Downloaded \S+)\s*$"),
    re.compile(r"^\s*((?:Prepared|Installed|Uninstalled|Resolved) \d+ packages? in \S+)"),
    re.compile(r"^\s*(Collecting \S+)"),
    re.compile(r"^\s*(Installing collected packages)"),
    re.compile(r"^\s*(Successfully installed)"),
)


def event_of(line: str) -> str | None:
    """The part of a tool's line worth showing, control characters escaped (a package name is the index's)."""
    for pattern in EVENTS:
        found = pattern.match(line)
        if found:
            return printable(_short_urls(found[1]))
    return None


def _short_urls(text: str) -> str:
    """pip names downloads by URL: keep the file name."""
    return re.sub(r"\S+", lambda m: _file_name(m[0]), text)


def _file_name(word: str) -> str:
    """A URL's last path segment (`https://host/a/torch-2.5.1.whl` -> `torch-2.5.1.whl`); another word as it is.
    String operations: a regex that looks for `://` inside every word backtracks quadratically on a long one."""
    scheme, separator, rest = word.partition("://")
    slash = rest.rfind("/", 1, len(rest) - 1)
    return unquote(rest[slash + 1:]) if scheme and separator and slash > 0 else word


class Progress:
    """Plain lines: what CI logs and pipes get."""

    def __init__(self, stream: TextIO | None = None, total: int = 0):
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.number = 0

    def step(self, title: str) -> None:
        self.number += 1
        self._write(f"[{self.number}/{self.total}] {title}")

    def output(self, line: str) -> None:
        event = event_of(line)
        if event:
            self._write(f"      {event}")

    def finish(self, message: str) -> None:
        self._write(message)

    def _write(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


class TerminalProgress(Progress):
    """One line, rewritten: the step and its latest download."""

    title = ""

    def step(self, title: str) -> None:
        self.number += 1
        self.title = f"[{self.number}/{self.total}] {title}"
        self._status(self.title)

    def output(self, line: str) -> None:
        event = event_of(line)
        if event:
            self._status(f"{self.title}: {event}")

    def finish(self, message: str) -> None:
        self._status(message)
        self.stream.write("\n")
        self.stream.flush()

    def _status(self, text: str) -> None:
        width = 120
        self.stream.write("\r\x1b[2K" + text[:width])
        self.stream.flush()


class QuietProgress(Progress):
    def _write(self, text: str) -> None:
        pass


def make_progress(quiet: bool, total: int, stream: TextIO | None = None) -> Progress:
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return QuietProgress(stream, total)
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if in_ci or not stream.isatty() or os.environ.get("TERM") == "dumb":
        return Progress(stream, total)
    return TerminalProgress(stream, total)
