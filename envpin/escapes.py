"""Text from elsewhere (a GPU name from a facts file, a tool's output, a user's value) shown or written by envpin:
control characters escaped, so nothing starts a new line in a committed file or drives the user's terminal."""

from __future__ import annotations

import os
import signal
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def has_control(text: str) -> bool:
    return any(_is_control(c) for c in text)


def printable(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`, `\\u2028`)."""
    if not has_control(text):
        return text
    return "".join(_escape(c) if _is_control(c) else c for c in text)


def shown(text: str, limit: int = 120) -> str:
    """A value quoted in a one-line message: printable, and cut to `limit` characters (a 64 MiB line is not
    a message)."""
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exit_status(code: int | None) -> str:
    """A child's exit status in words: "killed by SIGSEGV", not "status -11" (subprocess reports a signal as a
    negative code)."""
    if code is None:
        return "did not finish"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if os.name == "nt" and code > 0x7FFFFFFF:  # an NTSTATUS such as 0xC0000005, an access violation
        return f"ended with status 0x{code:08X}"
    return f"exit status {code}"


def _is_control(character: str) -> bool:
    # Cc: C0/C1 controls (line breaks, ESC); Cf: format characters (bidi overrides); Zl/Zp: U+2028/U+2029
    return unicodedata.category(character) in ("Cc", "Cf", "Zl", "Zp")


def _escape(character: str) -> str:
    if character in _NAMED:
        return _NAMED[character]
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
