"""What every fuzz test shares: the property check, a hang watchdog, input counts, input generators.

The property (issue 9): a parser given any input returns a value or raises envpin's own error type for
that parser — never another exception, never a hang. `outcome` checks exactly that and counts the
inputs each parser saw, so a long run can report how many inputs ran per parser.
"""

from __future__ import annotations

import collections
import copy
import signal
import sys
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOST_FIXTURES = FIXTURES / "host"

# Inputs run per parser in this process (hypothesis' generation, replay and shrinking all count).
COUNTS: collections.Counter[str] = collections.Counter()

# A parser that takes longer than this on one input is hung: small inputs parse in milliseconds.
HANG_SECONDS = 10.0


def slow_examples(fraction: int = 4) -> int:
    """Example count for a test whose single input costs tens of milliseconds (the database build):
    a fraction of the loaded profile's count (conftest loads the profile before test modules import)."""
    assert settings.default is not None  # conftest loads a profile
    return max(10, settings.default.max_examples // fraction)


class Hang(BaseException):
    """Raised by the watchdog; a BaseException so that no `except Exception` in a parser can swallow it."""


@contextmanager
def watchdog(seconds: float = HANG_SECONDS):
    """Interrupt the body after `seconds` (hypothesis' deadline only judges calls that do return)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise Hang(f"no answer after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outcome(name: str, parse: Callable[..., Any], *args: Any, allowed: tuple[type[BaseException], ...] = ()) -> tuple[Any, BaseException | None]:
    """Run one parser on one input: (value, None), or (None, error) when the error is one of `allowed`.

    Anything else — another exception type, or a hang — fails the test with the parser's name.
    """
    COUNTS[name] += 1
    try:
        with watchdog():
            return parse(*args), None
    except allowed as error:
        assert str(error).strip(), f"{name} raised {type(error).__name__} with an empty message"
        return None, error


# ---------------------------------------------------------------- text generation

# Pieces the real outputs are made of, so random text hits the parsers' branches rather than only their
# first regex: separators, the unavailable markers, units, and digits that are digits to `str.isdigit`
# but not to `int` (superscripts), digits outside ASCII that `int` accepts, and runs longer than `int`
# converts (Python refuses more than 4300 digits).
TOKENS = (
    ",", ", ", "\n", "\r\n", "\r", "\t", " ", "|", "+", "=", "-", ".", ":", '"', "'", "[", "]", "<", ">", "/",
    "\x00", "\ufeff", "\u00a0", "N/A", "[N/A]", "[Not Supported]", "Unknown Error", "ERR!", "MiB", " MiB",
    "0", "1", "8.6", "12.0", "535.104.05", "610.43.02", "99999999999999999999", "²", "٣", "８", "9" * 5000,
    "NVIDIA-SMI", "Driver Version:", "KMD Version:", "CUDA Version:", "CUDA UMD Version:", "On", "Off", "WDDM",
    "NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-32GB", "|====", "NVRM version: NVIDIA UNIX x86_64 Kernel Module ",
    "release ", "V13.0.88", "CUDA Version ", "compute_cap", 'Field "compute_cap" is not a valid field to query.',
)

tokens_text = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=40).map("".join)


@st.composite
def mutated_text(draw, samples: list[str], max_mutations: int = 4, insert: st.SearchStrategy[str] | None = None) -> str:
    """A real recorded output with a few edits: insertions, deletions, swapped lines, truncation."""
    insert = tokens_text if insert is None else insert
    text = samples[draw(st.integers(0, len(samples) - 1))]
    for _ in range(draw(st.integers(0, max_mutations))):
        kind = draw(st.sampled_from(("insert", "delete", "replace", "truncate", "duplicate_line", "drop_line",
                                     "swap_lines", "bloat_number")))
        position = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:position] + draw(insert) + text[position:]
        elif kind == "delete":
            text = text[:position] + text[position + draw(st.integers(1, 200)):]
        elif kind == "replace":
            text = text[:position] + draw(insert) + text[position + draw(st.integers(1, 40)):]
        elif kind == "truncate":
            text = text[:position]
        elif kind == "bloat_number":
            text = _bloat_number(text, position, draw(st.sampled_from(("9" * 5000, "²", "٣٣٣", "０", "-1", "1e9"))))
        else:
            lines = text.splitlines(keepends=True)
            if lines:
                index = draw(st.integers(0, len(lines) - 1))
                if kind == "duplicate_line":
                    lines.insert(index, lines[index])
                elif kind == "drop_line":
                    del lines[index]
                else:
                    other = draw(st.integers(0, len(lines) - 1))
                    lines[index], lines[other] = lines[other], lines[index]
                text = "".join(lines)
    return text


def _bloat_number(text: str, position: int, replacement: str) -> str:
    """Replace the run of digits at or after `position` (the numbers are what parsers convert)."""
    start = next((i for i in range(position, len(text)) if text[i].isdigit()), None)
    if start is None:
        return text
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return text[:start] + replacement + text[end:]


def parser_text(samples: list[str]) -> st.SearchStrategy[str]:
    """Mostly edited real outputs, some token soup, some arbitrary text."""
    return st.one_of(mutated_text(samples), tokens_text, st.text())


class Samples(list):
    """Seed texts; a short repr, because hypothesis prints a strategy's arguments when it reports."""

    def __repr__(self) -> str:
        return f"<{len(self)} samples>"


def fixture_texts(*patterns: str) -> Samples:
    texts = Samples()
    for pattern in patterns:
        texts.extend(path.read_text(encoding="utf-8", errors="replace") for path in sorted(HOST_FIXTURES.glob(pattern)))
    assert texts, f"no fixtures match {patterns}"
    return texts


# ---------------------------------------------------------------- structured documents (JSON / YAML)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**20, max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(("", " ", "8.6", "535.104.05", "none", "3.11", "linux", "x86_64", "cu124", "12.4", "１２.４")),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)


def paths_of(document: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys and indexes) to a value inside a JSON/YAML document, the root included."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found.extend(paths_of(value, prefix + (key,)))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(paths_of(value, prefix + (index,)))
    return found


def replaced(document: Any, path: tuple, change: Callable[[Any], Any]) -> Any:
    """A copy of `document` with the value at `path` changed; only the containers on the path are copied.

    A path that an earlier edit removed leaves the document as it is.
    """
    if not path:
        return change(document)
    head, rest = path[0], path[1:]
    present = (isinstance(document, dict) and head in document) or (
        isinstance(document, list) and isinstance(head, int) and 0 <= head < len(document)
    )
    if not present:
        return document
    container = copy.copy(document)
    container[head] = replaced(document[head], rest, change)
    return container


_DELETE = object()
_KEYS = st.text(max_size=8)  # a strategy is an immutable value: one serves every call


@st.composite
def mutated_document(draw, document: Any, paths: list[tuple], value_strategy=json_values, key_strategy=_KEYS, max_mutations: int = 3) -> Any:
    """A real document with 1..n edits: a value replaced by one of another type, a key deleted, renamed or
    added, a list element dropped or repeated, a container emptied. A dict result shows only its edits
    when printed (hypothesis prints a failing input; the whole database would be 300 kB)."""
    edits = []
    for _ in range(draw(st.integers(1, max_mutations))):
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(("value", "value", "delete", "rename", "add", "duplicate", "empty")))
        edits.append(f"{kind} at {_path_text(path)}")
        if kind == "value" or not path:
            new_value = draw(value_strategy)
            edits[-1] += f": {_short(new_value)}"
            document = replaced(document, path, partial(_replacement, new_value))
            continue
        parent_path, key = path[:-1], path[-1]
        if kind == "delete":
            document = replaced(document, parent_path, partial(_without, key=key))
        elif kind == "rename" and isinstance(key, str):
            new_key = draw(key_strategy)
            edits[-1] += f" -> {new_key!r}"
            document = replaced(document, parent_path, partial(_renamed, key=key, new_key=new_key))
        elif kind == "add":
            new_key, new_value = draw(key_strategy), draw(value_strategy)
            edits[-1] += f": {new_key!r}: {_short(new_value)}"
            document = replaced(document, parent_path, partial(_added, key=new_key, value=new_value))
        elif kind == "duplicate":
            document = replaced(document, parent_path, partial(_duplicated, key=key))
        else:
            document = replaced(document, path, lambda old: type(old)() if isinstance(old, (dict, list)) else old)
    return Mutated(document, edits) if isinstance(document, dict) else document


class Mutated(dict):
    """A mutated document that prints as the list of its edits."""

    def __init__(self, document: dict, edits: list[str]):
        super().__init__(document)
        self.edits = edits

    def __repr__(self) -> str:
        return f"<real document with edits: {'; '.join(self.edits)}>"


def _path_text(path: tuple) -> str:
    return "".join(f"[{part!r}]" for part in path) or "the root"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def _holds(parent: Any, key: Any) -> bool:
    # Earlier edits may have removed the key or replaced the parent by a scalar.
    if isinstance(parent, dict):
        return key in parent
    return isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent)


def _replacement(value: Any, _old: Any) -> Any:
    return value


def _without(parent: Any, key: Any) -> Any:
    if not _holds(parent, key):
        return parent
    parent = copy.copy(parent)
    del parent[key]
    return parent


def _renamed(parent: Any, key: Any, new_key: str) -> Any:
    if not isinstance(parent, dict):
        return parent
    return {(new_key if k == key else k): v for k, v in parent.items()}


def _added(parent: Any, key: str, value: Any) -> Any:
    if isinstance(parent, dict):
        return {**parent, key: value}
    if isinstance(parent, list):
        return [*parent, value]
    return parent


def _duplicated(parent: Any, key: Any) -> Any:
    if isinstance(parent, list) and _holds(parent, key):
        return parent[: key + 1] + parent[key:]
    return parent


def python_recursion_limit_input(depth: int = sys.getrecursionlimit() * 2) -> str:
    """JSON nested deeper than Python's recursion limit: `json.loads` raises RecursionError, not ValueError."""
    return "[" * depth + "]" * depth
