"""Text from elsewhere (a GPU name from a facts file, a tool's output, a user's value) shown or written by envpin:
control characters escaped, so nothing starts a new line in a committed file or drives the user's terminal; and
the values of environment variables a requirements file names (`${AWS_SECRET_ACCESS_KEY}`) written back as the
`${NAME}` they were written as, so a CI job's secret never reaches a log or a generated file."""

from __future__ import annotations

import os
import signal
import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


# value -> "${NAME}": each value envpin expanded from the environment in this run (envpin.readers.requirements
# .expand_variables). A value this short is not hidden in every text: a "1" would hide every count envpin says;
# inside the line that named the variable it is hidden whatever its length (hidden(text, pairs)).
_EXPANDED: dict[str, str] = {}
MIN_HIDDEN = 8  # a secret is longer; a version (3.11, 2.5.1) is not hidden in texts it did not come from


def expanded(value: str, name: str) -> None:
    """Remember that `value` came from `${name}`: from now on `hidden` (and so `printable`, `shown`, `terminal`)
    writes it as `${name}`."""
    if value:
        _EXPANDED[value] = f"${{{name}}}"


def forget_expanded() -> None:
    """A new run (cli.main) starts with nothing expanded."""
    _EXPANDED.clear()


def hidden(text: str, pairs: dict[str, str] | None = None) -> str:
    """`text` with each expanded value written as its `${NAME}`: the values of this run at least MIN_HIDDEN long,
    or every value of `pairs` (value -> "${NAME}", a line's own variables). The longest is replaced first, so a
    value that holds another is hidden whole."""
    values = pairs if pairs is not None else {v: n for v, n in _EXPANDED.items() if len(v) >= MIN_HIDDEN}
    for value in sorted((v for v in values if v in text), key=len, reverse=True):
        text = text.replace(value, values[value])
    return text


def has_control(text: str) -> bool:
    # str.isprintable is false for every control _is_control names (and for more): one pass in C for the usual text
    return not text.isprintable() and any(_is_control(c) for c in text)


def printable(text: str) -> str:
    """`text` with every control character written as an escape (`\\n`, `\\x1b`, `\\u2028`), and every expanded
    value as its `${NAME}`."""
    if _EXPANDED:
        text = hidden(text)
    if not has_control(text):
        return text
    return "".join(_escape(c) if _is_control(c) else c for c in text)


def terminal(text: str) -> str:
    """A block of lines for the terminal (a command's text output, a generated file shown on stdout): as
    `printable`, but its own line breaks and tabs kept. A line break inside a value from elsewhere cannot be
    told from the block's own; an escape sequence, a NUL, a carriage return or a C1 control can, and is escaped."""
    if _EXPANDED:
        text = hidden(text)
    if text.replace("\n", "").replace("\t", "").isprintable() or not any(_is_control(c) and c not in "\n\t" for c in text):
        return text
    return "".join(_escape(c) if _is_control(c) and c not in "\n\t" else c for c in text)


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
