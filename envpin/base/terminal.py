"""How envpin talks to a person at a terminal: colour or not, how much it says, and a progress line.

The front door sets these once per run from `--color`, `-q` and `-v` (envpin/commands/conventions.py); the library
asks here rather than reading flags. Colour follows uv and ruff: `--color always|never` wins; with `auto` (the
default) `NO_COLOR` in the environment turns it off (https://no-color.org; set to anything, even empty, as
envpin has always read it), a non-empty `FORCE_COLOR` other than `0` turns it on (https://force-color.org), and
otherwise it is on only on a terminal that is not `TERM=dumb`. Progress is for a person watching: one line,
rewritten, on stderr when stderr is a terminal, never on a pipe, a file or in CI logs, and never on stdout, so
JSON and files stay clean.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # typing is not imported at run time: `envpin --help` and `--version` never need it
if TYPE_CHECKING:
    from typing import TextIO

COLOR_MODES = ("auto", "always", "never")


class Presentation:
    """The run's choices, set by the front door: colour mode and verbosity (-1 quiet, 0 normal, 1+ verbose)."""

    color = "auto"
    verbosity = 0


def configure(color: str = "auto", verbosity: int = 0) -> None:
    Presentation.color = color if color in COLOR_MODES else "auto"
    Presentation.verbosity = verbosity


def quiet() -> bool:
    return Presentation.verbosity < 0


def verbose() -> bool:
    return Presentation.verbosity > 0


def wants_colour(stream: TextIO) -> bool:
    """Whether text for `stream` may carry ANSI colour (the rules in the module docstring)."""
    if Presentation.color != "auto":
        return Presentation.color == "always"
    if "NO_COLOR" in os.environ:
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    return os.environ.get("TERM") != "dumb" and is_terminal(stream)


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


def shows_progress(stream: TextIO | None = None) -> bool:
    """A progress line only for a person at a terminal: not quiet, stderr a TTY, not CI, not TERM=dumb."""
    stream = stream if stream is not None else sys.stderr
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return not quiet() and not in_ci and os.environ.get("TERM") != "dumb" and is_terminal(stream)


class StatusLine:
    """One line on stderr, rewritten in place (`\\r`, erase line), for long work: `update("reading torch")`,
    then `clear()` before the result is printed. On anything but a terminal it writes nothing at all."""

    def __init__(self, prefix: str, stream: TextIO | None = None, width: int = 100, interval: float = 0.1):
        self.stream = stream if stream is not None else sys.stderr
        self.prefix = prefix
        self.width = width
        self.interval = interval  # at most ten redraws a second: a slow terminal is not the bottleneck
        self.enabled = shows_progress(self.stream)
        self.count = 0
        self._drawn = 0.0
        self._shown = False

    def update(self, text: str) -> None:
        self.count += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._drawn < self.interval:
            return
        self._drawn = now
        line = f"{self.prefix} [{self.count}] {text}"
        self.stream.write("\r\x1b[2K" + line[: self.width])
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._shown = False
