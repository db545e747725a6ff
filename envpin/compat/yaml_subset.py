"""A reader for the plain YAML the database is written in, that gives exactly what `yaml.safe_load` gives.

A solve after a database edit (or with ENVPIN_NO_CACHE) parses the YAML. Measured against PyYAML's C loader
(`yaml.CSafeLoader`: libyaml's parser, PyYAML's constructor and resolver in Python) on 2026-12-02, database of 13
files, 533 KB, callgrind instruction counts of fresh processes (baseline `python -c "import yaml"` 163 M):

| | this reader | CSafeLoader |
| --- | --- | --- |
| import | 32 M | 98 M |
| every database file, whole | 311 M | 804 M |
| `envpin solve` (RTX 3090) without the cache | 586 M (3.6x the baseline) | 1,203 M (7.4x) |

On the database of 635 KB (same day), before and after flow collections were converted once per distinct text and
a mapping's loop read a value ending with its line without a call per line: import 33 M (unchanged), every
database file whole 376 M -> 297 M, torch.yaml 112 M -> ~79 M, the solve without the cache 601 M -> 540 M (that with
the schema's changes; docs/performance.md).

On the database of 681 KB (13 files, 2026-12-02), before and after a flow collection over several lines (gpus.yaml's
lists of names) was read with the others and what a `key: value` line holds was read once per distinct line, each
figure a fresh process that reads the 13 texts and loads each with `load`, less the same process that only reads
them (85 M): import 34 M (unchanged; PyYAML's 98 M), every database file whole 399 M -> 275 M (CSafeLoader, its
import included as here: 1,099 M), torch.yaml in-process 79 M -> 61 M, gpus.yaml 20 M -> 12 M.

(in-process wall time for every file: ~75 ms against ~265 ms.) The solve gains more than the parse: a torch solve
reads torch.yaml and the base files whole but only the `sources:` of the others (`Sections`), which a
whole-document loader cannot do. So this reader stays. It reads only a subset of YAML, the one the database
files use:

- block mappings with plain keys, and block sequences (`- item`, `- key: value ...`);
- flow sequences and mappings (`[a, "b"]`, `{linux-x86_64: ["3.11"]}`), over several lines too;
- plain scalars (resolved as PyYAML's YAML 1.1 rules resolve them: str, int, bool, null), single- and
  double-quoted scalars, in block context over several lines too (folded as YAML folds them: what PyYAML
  writes for a long string), folded and literal block scalars (`>-`, `|`) of even indentation;
- comments.

Anything else, and anything it is not sure of (anchors, tags, a plain scalar over several lines inside
a flow collection, a float, a date, a tab, an odd character, a malformed document), raises `Unsupported`:
the loader then hands the
text to PyYAML, which reads it, or reports the problem, as it always did. So this reader either returns
what `yaml.safe_load` would return, or nothing (tests/fuzz/test_fuzz_database.py checks it on mutated
documents).
"""

from __future__ import annotations

import json
import re
from typing import Any


class Unsupported(Exception):
    """The text is outside the subset this reader is sure of: let PyYAML read it."""


# PyYAML's YAML 1.1 implicit resolvers (yaml/resolver.py), by the first character of a plain scalar, in
# PyYAML's order: the first that matches decides the type.
_RESOLVER_SOURCES = {
    "bool": (r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""", "yYnNtTfFoO"),
    "float": (r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", "-+0123456789."),
    "int": (r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", "-+0123456789"),
    "merge": (r"^(?:<<)$", "<"),
    "null": (r"""^(?: ~
                    |null|Null|NULL
                    | )$""", "~nN"),
    "timestamp": (r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", "0123456789"),
    "value": (r"^(?:=)$", "="),
}
_RESOLVERS: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
# What PyYAML's bool and null resolvers match (the regexes above spelled out), and their values.
_WORDS: dict[str, Any] = {
    **{word: True for word in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{word: False for word in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{word: None for word in ("~", "null", "Null", "NULL", "")},
}
_WORDS_JSON = {word: "null" if value is None else "true" if value else "false" for word, value in _WORDS.items()}
_NUMERIC_FIRST = frozenset("-+0123456789.<=")  # where the float, int, merge, timestamp and value resolvers apply

# Characters PyYAML refuses (yaml/reader.py NON_PRINTABLE) or reads as line breaks (NEL, LS, PS), a BOM,
# tabs and carriage returns: none is in the database; a text with any goes to PyYAML.
_DECLINED_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff\u2028\u2029\t]")
_PLAIN_ASCII = bytes(range(0x20, 0x7F)) + b"\n"  # the ASCII characters _DECLINED_CHARACTERS does not match
_INDICATORS = "-?:,[]{}#&*!|>'\"%@`"
_KEY = re.compile(r"([^\s" + re.escape(_INDICATORS) + r"][^:#]*?)[ ]*:(?: +|$)")
# PyYAML takes a key without `?` (a "simple key") only when its `:` follows within 1024 characters, on the
# same line; well inside that, nothing here needs to count.
_LONGEST_KEY = 1000


def load(text: str) -> Any:
    """What `yaml.safe_load(text)` returns, or `Unsupported`."""
    if _declined(text):
        raise Unsupported("a character outside the subset")
    return _Reader(text).document()


def _declined(text: str) -> bool:
    """Whether the text has a character _DECLINED_CHARACTERS matches. An ASCII text (the database's files, but
    for a few names) is checked by bytes.translate, a tenth of what the regular expression costs per character."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _PLAIN_ASCII))
    return _DECLINED_CHARACTERS.search(text) is not None


_TOP_LEVEL = re.compile(r"\n[^ \n#-]")  # a line that may start with a top-level key, after its line break


class Sections:
    """A document read by top-level section, each section when first asked for and once: a reader that needs
    one key of a large file reads only the lines up to the end of that key's section.

    A section is the text from a `key:` line at a line's first column up to the next: what `load` reads as
    `{key: value}`. Nothing but a sequence's `- ` entries goes on at the first column, in the subset, so the
    sections read together are the document; and a section read alone is what the whole document holds under
    its key once every section before it reads too (each then closes the quotes and brackets it opens, where
    PyYAML could otherwise read on). So `value(key)` reads the sections up to `key`'s; Unsupported, as `load`
    raises it, where one of them is outside the subset, or where the text does not split so (what precedes the
    first key is not only blank lines and comments, a key is written twice, a character outside the subset)."""

    def __init__(self, text: str):
        self.texts = _sections(text)
        self.read: dict[str, dict[Any, Any]] = {}

    def value(self, key: str) -> dict[Any, Any]:
        """`{key: value}` as the whole document has it, or {} where it has no such key."""
        if self.texts is None:
            raise Unsupported("a text that does not split into top-level sections")
        if key not in self.texts:
            return {}
        for earlier in self.texts:
            found = self._section(earlier)
            if earlier == key:
                return found
        raise AssertionError("unreachable: key is one of the sections")

    def document(self) -> dict[Any, Any]:
        if self.texts is None:
            raise Unsupported("a text that does not split into top-level sections")
        document: dict[Any, Any] = {}
        for key in self.texts:
            document.update(self._section(key))
        return document

    def _section(self, key: str) -> dict[Any, Any]:
        if key not in self.read:
            assert self.texts is not None
            value = _Reader(self.texts[key]).document()  # `load`, whose check of the characters _sections made
            if type(value) is not dict or len(value) != 1:
                raise Unsupported("a section that is not one key")
            self.read[key] = value
        return self.read[key]


def _sections(text: str) -> dict[str, str] | None:
    """The texts of the document's top-level sections by key as written, or None (see Sections)."""
    if _declined(text):
        return None
    found: dict[str, str] = {}
    key, start = None, 0
    lines = [0] if text[:1] not in ("", " ", "\n", "#", "-") else []
    lines += [match.start() + 1 for match in _TOP_LEVEL.finditer(text)]
    for at in lines:
        end = text.find("\n", at)
        line = text[at:] if end < 0 else text[at:end]
        matched = _KEY.match(line)
        if matched is None:
            continue  # not a key: read as the end of the section above, where `load` reads it too
        if key is None:
            if any(part.strip(" ") and not part.lstrip(" ").startswith("#") for part in text[:at].split("\n")):
                return None
        elif key in found:
            return None
        else:
            found[key] = text[start:at]
        key, start = matched.group(1), at
    if key is None or key in found:
        return None
    found[key] = text[start:]
    return found


def _resolve(value: str) -> Any:
    """A plain scalar's value under PyYAML's implicit resolvers; Unsupported for float, timestamp and the rest."""
    first = value[:1]
    if first not in _NUMERIC_FIRST:  # only the bool and null resolvers can apply: both are whole words
        return _WORDS.get(value, value) if first in "yYnNtTfFoO~" or not first else value
    if value.isdigit() and value.isascii() and (first != "0" or value == "0") and len(value) < 300:
        return int(value)  # what the resolvers below make of a decimal integer, without compiling them
    for tag, pattern in _resolvers_for(first):
        if pattern.match(value):
            if tag == "int" and _DECIMAL.fullmatch(value) and len(value) < 300:  # int() refuses > 4300 digits
                return int(value)
            raise Unsupported(f"a plain {tag} scalar")
    return value


def _resolvers_for(first: str) -> list[tuple[str, re.Pattern[str]]]:
    if first not in _RESOLVERS:
        _RESOLVERS[first] = [(tag, re.compile(source, re.X)) for tag, (source, firsts) in _RESOLVER_SOURCES.items()
                             if first in firsts]
    return _RESOLVERS[first]


_SCALAR, _FLOW_ON_ITS_LINE, _FLOW = 1, 2, 3  # what a line's value is, if it ends with its line (_key_line)


def _key_line(line: str) -> tuple[Any, str, int, Any]:
    """What a mapping's `key: value` line holds, the line without its indentation: (key, the text after `key: `, what
    that text is if the value ends with the line, and then its value if a scalar). The kinds: a plain scalar
    (what _plain_on_its_line takes) or `"..."` with nothing after it (_SCALAR, with its value), a flow collection
    _flow leaves for _read_flows as it stands (_FLOW_ON_ITS_LINE) or another (_FLOW); 0: _value reads it."""
    match = _KEY.match(line)
    if match is None:
        raise Unsupported("not a `key: value` line")
    end = match.end()
    if end > _LONGEST_KEY:
        raise Unsupported("a key longer than PyYAML reads")
    key = match.group(1)
    if key[0] not in _STRING_FIRST:  # a string by its first letter is not resolved
        key = _resolve(key)
    text = line[end:]
    first = text[:1]
    if not first:
        return key, text, 0, None
    if first not in _INDICATORS and ": " not in text and " #" not in text and not text.rstrip(" ").endswith(":"):
        try:
            return key, text, _SCALAR, _resolve(text.rstrip(" "))
        except Unsupported:  # a float, say: declined by _value too, unless lines after it fold into it
            return key, text, 0, None
    if first == '"' and text.find('"', 1) == len(text) - 1 and "\\" not in text:
        return key, text, _SCALAR, text[1:-1]  # what _value makes of `"..."` and nothing after it
    if first in "[{":
        if len(text) <= _LONGEST_KEY and _plain_flow_line(text) and \
                text.count("[") + text.count("{") == text.count("]") + text.count("}"):
            return key, text, _FLOW_ON_ITS_LINE, None
        return key, text, _FLOW, None
    return key, text, 0, None


class _Pending:
    """Where a flow collection's value goes once _read_flows has read it."""

    __slots__ = ("index",)
    index: int  # its place in _Reader.flows


class _Reader:
    def __init__(self, text: str):
        self.lines = text.split("\n")
        self.indents = []  # each line's leading spaces
        self.content = []  # whether a line is neither blank nor only a comment
        for line in self.lines:
            stripped = line.lstrip(" ")
            self.indents.append(len(line) - len(stripped))
            self.content.append(bool(stripped) and stripped[0] != "#")
        self.at = 0  # the next line to read
        # Flow collections on one line are read together at the end (_read_flows): their texts, and the
        # (container, key, placeholder) where each value goes.
        self.flows: list[str] = []
        self.slots: list[tuple[Any, Any, _Pending]] = []
        # What each distinct `key: value` line holds (_key_line): torch.yaml's 2,400 lines are ~1,000 different.
        self.known: dict[str, tuple[Any, str, int, Any]] = {}

    # ---------------------------------------------------------------- lines

    def _next_content(self) -> int | None:
        """The index of the next line that is neither blank nor only a comment (skipping those), or None."""
        content, at = self.content, self.at
        while at < len(content):
            if content[at]:
                self.at = at
                return at
            at += 1
        self.at = at
        return None

    # ---------------------------------------------------------------- block structure

    def document(self) -> Any:
        index = self._next_content()
        if index is None:
            return None
        line = self.lines[index]
        if line.startswith(("---", "...", "%")):
            raise Unsupported("document markers and directives")
        if self.indents[index] != 0:
            raise Unsupported("an indented document")
        value = self._block(0)
        if self._next_content() is not None:
            raise Unsupported("content after the document's top-level collection")
        self._read_flows()
        return value

    def _block(self, indent: int) -> Any:
        """The mapping or sequence whose first line (the next content line) starts at `indent`."""
        content = self.lines[self.at][indent:]
        if content == "-" or content.startswith("- "):
            return self._sequence(indent)
        return self._mapping(indent)

    def _mapping(self, indent: int) -> dict:
        # The loop a database file spends most of its lines in: _next_content and _plain_on_its_line are
        # spelled out in it, and what a line holds is read once per distinct line (_key_line).
        mapping: dict = {}
        lines, indents, content, known = self.lines, self.indents, self.content, self.known
        count = len(lines)
        while True:
            index = self.at
            while index < count and not content[index]:
                index += 1
            self.at = index
            if index == count:
                return mapping
            found = indents[index]
            if found < indent:
                return mapping
            if found > indent:
                raise Unsupported("a line indented more than its mapping")
            line = lines[index]
            read = known.get(line)
            if read is None:
                read = known[line] = _key_line(line[indent:])
            key, text, kind, value = read
            after = self.at = index + 1
            # A value that ends with its line: the next is content not indented more (or there is none).
            if kind and (after == count or (content[after] and indents[after] <= indent)):
                if kind == _SCALAR:
                    mapping[key] = value
                    continue
                if kind == _FLOW_ON_ITS_LINE:  # what _flow leaves for _read_flows, as it would
                    value = mapping[key] = self._pending(text)
                else:
                    value = mapping[key] = self._flow(text, indent)  # _value's call, without its _no_continuation
                if type(value) is _Pending:
                    self.slots.append((mapping, key, value))
                continue
            value = mapping[key] = self._value(text, indent, in_mapping=True)
            if type(value) is _Pending:
                self.slots.append((mapping, key, value))

    def _sequence(self, indent: int) -> list:
        sequence: list[Any] = []
        while True:
            index = self._next_content()
            if index is None or self.indents[index] != indent:
                if index is not None and self.indents[index] > indent:
                    raise Unsupported("a line indented more than its sequence")
                return sequence
            content = self.lines[index][indent:]
            if content == "-":
                self.at = index + 1
                sequence.append(self._nested(indent, same_indent_sequence=False))
                continue
            if not content.startswith("- "):
                return sequence  # the mapping this sequence is a value of goes on
            rest = content[1:]
            column = indent + 1 + len(rest) - len(rest.lstrip(" "))
            item = self.lines[index][column:]
            if item.startswith("#"):
                self.at = index + 1
                sequence.append(self._nested(indent, same_indent_sequence=False))
            elif item == "-" or item.startswith("- "):
                raise Unsupported("a sequence inside a sequence entry")
            elif _KEY.match(item):
                self.lines[index] = " " * column + item  # the entry is a mapping starting at `column`
                self.indents[index] = column
                self.at = index
                sequence.append(self._mapping(column))
            elif self._plain_on_its_line(item, index + 1, indent):
                self.at = index + 1
                sequence.append(_resolve(item.rstrip(" ")))
            else:
                self.at = index + 1
                value = self._value(item, indent, in_mapping=False)
                if type(value) is _Pending:
                    self.slots.append((sequence, len(sequence), value))
                sequence.append(value)

    def _plain_on_its_line(self, text: str, after: int, indent: int) -> bool:
        """The common case, decided at once: a plain scalar that ends with its line (the next line is
        content not indented more than `indent`, or there is none) and that _value would take as it is."""
        return bool(text) and text[0] not in _INDICATORS and (
            after >= len(self.lines) or (self.content[after] and self.indents[after] <= indent)
        ) and ": " not in text and " #" not in text and not text.rstrip(" ").endswith(":")

    def _nested(self, indent: int, same_indent_sequence: bool) -> Any:
        """The value on the lines after `key:` (or a lone `-`): a block indented more, or null."""
        index = self._next_content()
        if index is None:
            return None
        found = self.indents[index]
        if found > indent:
            return self._block(found)
        if found == indent and same_indent_sequence:
            content = self.lines[index][indent:]
            if content == "-" or content.startswith("- "):
                return self._sequence(indent)
        return None

    def _value(self, text: str, indent: int, in_mapping: bool) -> Any:
        """The value that follows `key: ` (or `- `) on its line; `self.at` is the line after it."""
        if text == "" or text.startswith("#"):
            return self._nested(indent, same_indent_sequence=in_mapping)
        first = text[0]
        if first in "[{":
            value = self._flow(text, indent)
        elif first in "\"'":
            value, rest = self._quoted(text, indent)
            self._end_of_line(rest)
        elif first in ">|":
            return self._block_scalar(text, indent)
        elif first in _INDICATORS and (first not in "-?:" or len(text) == 1 or text[1] == " "):
            raise Unsupported(f"a value starting with {first!r}")
        else:
            value = self._plain(text, indent)
        self._no_continuation(indent)
        return value

    def _plain(self, text: str, indent: int) -> Any:
        """A plain scalar in block context, with the lines after it indented more than `indent` (folded)."""
        parts, blanks = [_plain_block(text)], 0
        lines, indents, at = self.lines, self.indents, self.at
        while at < len(lines):
            stripped = lines[at].strip(" ")
            if not stripped:
                blanks += 1
                at += 1
                continue
            if indents[at] <= indent or stripped[0] == "#":
                break
            if ": " in stripped or stripped.endswith(":") or " #" in stripped:  # any first character is text here
                raise Unsupported("a plain scalar's next line that PyYAML may read otherwise")
            parts.append("\n" * blanks if blanks else " ")
            parts.append(stripped)
            blanks = 0
            at += 1
        if len(parts) == 1:
            return _resolve(parts[0])
        self.at = at
        return _resolve("".join(parts))

    def _quoted(self, text: str, indent: int) -> tuple[str, str]:
        """A single- or double-quoted scalar, on its line or over the lines after it (folded): (value, rest)."""
        double = text[0] == '"'
        try:
            return _double_quoted(text) if double else _single_quoted(text)
        except _Open:
            pass
        segments, at = [text[1:]], self.at
        if double and "\\" in text:
            raise Unsupported("an escape in a double-quoted scalar over several lines")
        while True:
            if at >= len(self.lines):
                raise Unsupported("a quoted scalar that does not close")
            line = self.lines[at]
            if line.strip(" ") and self.indents[at] <= indent:
                raise Unsupported("a quoted scalar continued at its parent's indentation")
            at += 1
            if double and "\\" in line:
                raise Unsupported("an escape in a double-quoted scalar over several lines")
            close = line.find('"') if double else _closing_single_quote(line)
            if close >= 0:
                segments.append(line[:close])
                rest = line[close + 1:]
                break
            segments.append(line)
        self.at = at
        if not double:
            segments = [segment.replace("''", "'") for segment in segments]
        folded, blanks = [segments[0].rstrip(" ")], 0
        for segment in segments[1:-1]:
            stripped = segment.strip(" ")
            if not stripped:
                blanks += 1
                continue
            folded += ["\n" * blanks if blanks else " ", stripped]
            blanks = 0
        folded += ["\n" * blanks if blanks else " ", segments[-1].lstrip(" ")]
        return "".join(folded), rest

    def _flow(self, text: str, indent: int) -> Any:
        """A flow collection: one that closes on its line and has no comment, single quote, escape or `:`
        without a space is left for _read_flows (a placeholder now); any other is read here."""
        if len(text) > _LONGEST_KEY:
            raise Unsupported("a flow collection long enough to hold a key longer than PyYAML reads")
        if _plain_flow_line(text):
            opened = text.count("[") + text.count("{") - text.count("]") - text.count("}")
            if opened == 0:
                return self._pending(text)
            if opened > 0:
                gathered = self._flow_lines(text, opened, indent)
                if gathered is not None:
                    return self._pending(gathered)
        return _Flow(self, text, indent).value()

    def _pending(self, text: str) -> _Pending:
        pending = _Pending()
        pending.index = len(self.flows)
        self.flows.append(text)
        return pending

    def _flow_lines(self, text: str, opened: int, indent: int) -> str | None:
        """A flow collection over several lines (gpus.yaml's lists of names) whose every line _read_flows reads as
        it reads one line: the lines up to the one that closes it, joined as _Flow._more joins them, and `self.at`
        after them. None, with `self.at` where it was, where one of them is not such a line: _Flow then reads
        them, or says what it does not support (a line at the parent's indentation, a missing bracket)."""
        lines, indents, at = self.lines, self.indents, self.at
        taken = [text]
        while opened > 0:
            if at >= len(lines):
                return None
            line = lines[at]
            if (line.strip(" ") and indents[at] <= indent) or not _plain_flow_line(line):
                return None
            opened += line.count("[") + line.count("{") - line.count("]") - line.count("}")
            taken.append(line)
            at += 1
        gathered = "\n".join(taken)
        if opened < 0 or _flow_keys_unsure(gathered):
            return None
        self.at = at
        return gathered

    def _read_flows(self) -> None:
        """Every flow collection left for later, as one JSON document: quoted strings are JSON as they
        stand (no escapes, no quote inside), the plain scalars between them are rewritten as JSON."""
        if not self.flows:
            return
        # Each distinct text is rewritten once (torch.yaml repeats two thirds of its flow collections: the same
        # sources, platforms and Pythons), then all of them are decoded together, so that each value is an object
        # of its own as PyYAML makes it. \x01 and \x00 separate texts and pieces: no text this reader reads has them.
        distinct = list(dict.fromkeys(self.flows))
        pieces = _FLOW_DQ_SPLIT.split("\x01".join(distinct))  # outside, quoted, outside, ...
        outside = "\x00".join(pieces[::2])
        # A split and a list comprehension over the scalars, not a substitution calling back for each one (a
        # function call per scalar), the common case decided by its first letter.
        parts = _FLOW_PLAIN.split(outside)  # between, plain scalar, between, ..., between
        parts[1::2] = ['"' + plain + '"' if plain[0] in _STRING_FIRST else _plain_as_json_text(plain)
                       for plain in parts[1::2]]
        pieces[::2] = "".join(parts).split("\x00")
        as_json = "".join(pieces).split("\x01")
        values = None
        if len(as_json) == len(distinct):
            of_text = dict(zip(distinct, as_json, strict=True))
            try:
                values = json.loads("[" + ",".join([of_text[text] for text in self.flows]) + "]")
            except ValueError:
                pass
        if values is None or len(values) != len(self.flows):
            # Something in one of them JSON refuses, or one is two: read each alone to say which.
            values = [_Flow(self, text, 0).value() for text in self.flows]
        for container, key, placeholder in self.slots:
            if container[key] is placeholder:
                container[key] = values[placeholder.index]

    def _end_of_line(self, rest: str) -> None:
        stripped = rest.lstrip(" ")
        if stripped and not (stripped.startswith("#") and len(stripped) < len(rest)):
            raise Unsupported("text after a quoted scalar")

    def _no_continuation(self, indent: int) -> None:
        """After a scalar, a line indented more would continue it (or be an error): not for this reader."""
        index = self._next_content()
        if index is not None and self.indents[index] > indent:
            raise Unsupported("a scalar continued on the next line")

    def _block_scalar(self, header: str, indent: int) -> str:
        style, chomping, comment = header[0], header[1:2], header[1:]
        if chomping == "-":
            comment = header[2:]
        elif chomping not in ("", " "):
            raise Unsupported("block scalar indicators other than `-`")
        if comment.strip(" ") and not comment.lstrip(" ").startswith("#") or (comment and not comment.startswith(" ")):
            raise Unsupported("text after a block scalar's header")
        lines, start = self.lines, self.at
        if start >= len(lines) or not lines[start].strip(" "):
            raise Unsupported("a block scalar that starts with a blank line, or is empty")
        width = self.indents[start]
        if width <= indent:
            raise Unsupported("an empty block scalar")
        end = start
        while end < len(lines) and (not lines[end].strip(" ") or self.indents[end] >= width):
            end += 1
        while end > start and not lines[end - 1].strip(" "):
            end -= 1  # trailing blank lines: chomped (`-`) or clipped to one line break
        body = []
        for line in lines[start:end]:
            if line.strip(" ") and self._indent_of(line) != width:
                raise Unsupported("a block scalar with lines indented more than its first")
            body.append(line[width:] if line.strip(" ") else "")
        self.at = end
        if style == "|":
            text = "\n".join(body)
        else:
            parts: list[str] = []
            blanks = 0
            for line in body:
                if not line:
                    blanks += 1
                    continue
                if parts:
                    parts.append("\n" * blanks if blanks else " ")
                parts.append(line)
                blanks = 0
            text = "".join(parts)
        return text if chomping == "-" else text + "\n"

    @staticmethod
    def _indent_of(line: str) -> int:
        return len(line) - len(line.lstrip(" "))


def _plain_block(text: str) -> str:
    """A plain scalar that runs to the end of its line (or to a comment) in block context."""
    cut = text.find(" #")
    value = (text if cut < 0 else text[:cut]).rstrip(" ")
    if ": " in value or value.endswith(":") or value.startswith(("&", "*", "!", "%", "@", "`", "|", ">")):
        raise Unsupported("a plain scalar PyYAML reads otherwise")
    return value


_ESCAPES = {"0": "\0", "a": "\x07", "b": "\x08", "t": "\x09", "n": "\x0a", "v": "\x0b", "f": "\x0c", "r": "\x0d",
            "e": "\x1b", " ": " ", '"': '"', "\\": "\\", "/": "/", "N": "\x85", "_": "\xa0", "L": "\u2028",
            "P": "\u2029"}
_DOUBLE_PLAIN = re.compile(r'[^"\\]*')


class _Open(Unsupported):
    """A quoted scalar that does not close on its line."""


def _closing_single_quote(line: str) -> int:
    """Where a single-quoted scalar closes in `line` (a `'` that is not half of `''`), or -1."""
    position = 0
    while True:
        found = line.find("'", position)
        if found < 0 or line[found + 1:found + 2] != "'":
            return found
        position = found + 2


def _double_quoted(text: str) -> tuple[str, str]:
    """A double-quoted scalar that closes on its line: (value, the text after it)."""
    close = text.find('"', 1)
    if close > 0 and "\\" not in text[1:close]:
        return text[1:close], text[close + 1:]
    chunks, position = [], 1
    while True:
        found = _DOUBLE_PLAIN.match(text, position)
        assert found is not None  # a `*` pattern matches anywhere, if only the empty string
        run = found.group()
        chunks.append(run)
        position += len(run)
        if position >= len(text):
            raise _Open("a double-quoted scalar over several lines")
        if text[position] == '"':
            return "".join(chunks), text[position + 1:]
        escaped = text[position + 1:position + 2]
        if escaped not in _ESCAPES:
            raise Unsupported("an escape this reader does not decode")
        chunks.append(_ESCAPES[escaped])
        position += 2


def _single_quoted(text: str) -> tuple[str, str]:
    chunks, position = [], 1
    while True:
        close = text.find("'", position)
        if close < 0:
            raise _Open("a single-quoted scalar over several lines")
        chunks.append(text[position:close])
        if text[close + 1:close + 2] == "'":
            chunks.append("'")
            position = close + 2
            continue
        return "".join(chunks), text[close + 1:]


_FLOW_TOKEN = re.compile(r"""
    (?P<dq>"[^"\\\n]*")
  | (?P<comma>,)
  | (?P<space>[ \n]+)
  | (?P<open>[\[{])
  | (?P<close>[\]}])
  | (?P<colon>:(?=[ \n]))
  | (?P<plain>[^,\[\]{}\#:\n"' ]+(?:[ ]+[^,\[\]{}\#:\n"' ]+)*)
  | (?P<escaped>"(?:[^"\\\n]|\\.)*")
  | (?P<sq>'(?:[^'\n]|'')*')
  | (?P<comment>(?<=[ \n])\#[^\n]*)
""", re.X)


_FLOW_KEY_ACROSS_LINES = re.compile(r"\n *:")


def _flow_keys_unsure(text: str) -> bool:
    """A `:` at the start of a line (a key on the line before), or a line long enough for a key PyYAML
    would not take as one: where PyYAML's rules for keys might read the text otherwise than JSON does."""
    return bool(_FLOW_KEY_ACROSS_LINES.search(text)) or max(map(len, text.split("\n"))) > _LONGEST_KEY


_FLOW_RISKY = re.compile(r"[#'\\]|:(?![ \n])")
_FLOW_DQ = re.compile(r'"[^"\n]*"')
# A run of what JSON reads as it stands (quoted strings, brackets, commas, `: `, spaces), then a plain
# scalar, if any. Once _FLOW_RISKY found nothing and every quote closes, each character is in one or the
# other, so the substitution walks the text from match to match and never starts inside a quoted string.
_FLOW_PLAIN_RUN = re.compile(r"""((?:"[^"\n]*"|[ \n,\[\]{}]|:(?=[ \n]))*)([^,\[\]{}#:\n"' ]+(?:[ ]+[^,\[\]{}#:\n"' ]+)*)?""")


_FLOW_DQ_SPLIT = re.compile(r'("[^"\n]*")')
# A group: split keeps the scalars. A line break is between them (a collection over several lines): JSON reads it as
# a space, and a plain scalar that goes on over it is two scalars without a comma, which JSON refuses.
_FLOW_PLAIN = re.compile(r"([^\x00\x01 \n,\[\]{}:]+(?: +[^\x00\x01 \n,\[\]{}:]+)*)")


def _plain_flow_line(text: str) -> bool:
    """Whether a line of a flow collection is one _read_flows reads: no escape, its double quotes in pairs (each
    quoted string closes on its line) and, outside them, no comment or single quote and a `:` only before a space.
    (Inside a double-quoted string without escapes, `'`, `#` and `:` are text to JSON as to YAML.)"""
    if "\\" in text or text.count('"') % 2:
        return False
    if "#" in text or "'" in text or text.count(":") != text.count(": "):
        bare = _FLOW_DQ.sub("", text)
        return '"' not in bare and "#" not in bare and "'" not in bare and bare.count(":") == bare.count(": ")
    return True


# A plain scalar starting with one of these is a string whatever follows: no bool or null word starts so
# (_WORDS), nor a number (_NUMERIC_FIRST), nor an indicator; _plain_as_json_text would quote it as it stands.
_STRING_FIRST = frozenset("abcdeghijklmpqrsuvwxzABCDEGHIJKLMPQRSUVWXZ")


def _plain_as_json_text(plain: str) -> str:
    """A plain scalar of a flow collection (no quote or backslash in it) as JSON."""
    word = _WORDS_JSON.get(plain)
    if word is not None:
        return word
    first = plain[0]
    if first in _INDICATORS and not _dash_plain(plain):
        raise Unsupported(f"a flow scalar starting with {first!r}")
    if first in _NUMERIC_FIRST:
        return _json_scalar(_resolve(plain))
    return '"' + plain + '"'  # no quote or backslash here: the text outside quoted strings has none


def _plain_as_json(match: re.Match[str]) -> str:
    plain = match.group(2)
    if plain is None:
        return match.group(1)
    if plain[0] in _INDICATORS and not _dash_plain(plain):
        raise Unsupported(f"a flow scalar starting with {plain[0]!r}")
    return match.group(1) + _json_scalar(_resolve(plain))


def _dash_plain(plain: str) -> bool:
    """`-x`: in flow context PyYAML starts a plain scalar with `-` (not `?` or `:`) when no space follows."""
    return plain[0] == "-" and len(plain) > 1 and plain[1] != " "


def _json_scalar(value: Any) -> str:
    if type(value) is str:
        return '"' + value + '"' if '"' not in value and "\\" not in value else _json_dumps(value)
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def _json_dumps(value: str) -> str:
    return json.dumps(value)


_JSON = json.JSONDecoder()


class _Flow:
    """A flow collection (`[...]`, `{...}`) starting on one line, reading the lines after it as needed.

    Its tokens are written out as JSON (each scalar resolved as PyYAML resolves it), which json.loads then
    reads: a structure JSON refuses (a missing or trailing comma, `[a: b]`, an empty value, a key that is
    not a string) is Unsupported here, and PyYAML decides."""

    def __init__(self, reader: _Reader, text: str, indent: int):
        self.reader = reader
        self.text = text
        self.indent = indent

    def value(self) -> Any:
        text = self.text
        while not _FLOW_RISKY.search(text):
            if _flow_keys_unsure(text):
                raise Unsupported("a flow collection whose keys PyYAML may read otherwise")
            # The common case, at C speed: no comment, single quote, escape or `:` without a space. Quoted
            # strings are JSON as they stand; the plain scalars between them are rewritten as JSON.
            bare = _FLOW_DQ.sub("", text)
            if '"' in bare:  # a quote that does not close on its line
                break
            if bare.count("[") + bare.count("{") > bare.count("]") + bare.count("}"):
                text = self._more(text)  # not closed yet
                continue
            converted = _FLOW_PLAIN_RUN.sub(_plain_as_json, text)
            try:
                value, end = _JSON.raw_decode(converted)
            except ValueError:
                raise Unsupported("a flow collection JSON cannot read") from None
            if converted[end:].strip(" "):
                raise Unsupported("text after a flow collection")
            return value
        self.text = text
        return self._tokens()

    def _tokens(self) -> Any:
        """Token by token: flow collections with comments, single quotes or escapes."""
        text, position, depth = self.text, 0, 0
        pieces: list[str] = []
        key_ready = False  # the last piece is a string, which a `:` may follow
        match_token = _FLOW_TOKEN.match
        while True:
            match = match_token(text, position)
            if match is None:
                if position < len(text):
                    raise Unsupported("a flow token this reader does not know")
                text = self._more(text)
                continue
            kind, token, position = match.lastgroup, match.group(), match.end()
            if kind == "dq":
                pieces.append(token)
                key_ready = True
            elif kind == "comma":
                pieces.append(",")
                key_ready = False
            elif kind == "space" or kind == "comment":
                continue
            elif kind == "open":
                depth += 1
                pieces.append(token)
                key_ready = False
            elif kind == "close":
                depth -= 1
                pieces.append(token)
                key_ready = False
                if depth == 0:
                    break
            elif kind == "colon":
                if not key_ready:
                    raise Unsupported("a flow mapping key that is not a string")
                pieces.append(":")
                key_ready = False
            else:
                if kind == "plain":
                    if token[0] in _INDICATORS and not _dash_plain(token):
                        raise Unsupported(f"a flow scalar starting with {token[0]!r}")
                    value = _resolve(token)
                elif kind == "escaped":
                    value = _double_quoted(token)[0]
                else:
                    value = _single_quoted(token)[0]
                pieces.append(_json_scalar(value))
                key_ready = isinstance(value, str)
        rest = text[position:].lstrip(" ")
        if rest and not (rest.startswith("#") and position < len(text) and text[position] == " "):
            raise Unsupported("text after a flow collection")
        if _flow_keys_unsure(text):
            raise Unsupported("a flow collection whose keys PyYAML may read otherwise")
        try:
            return _JSON.decode("".join(pieces))
        except ValueError:
            raise Unsupported("a flow collection JSON cannot read") from None

    def _more(self, text: str) -> str:
        """The text with the next line appended (a flow collection may go on over several lines)."""
        reader = self.reader
        if reader.at >= len(reader.lines):
            raise Unsupported("a flow collection that does not close")
        line = reader.lines[reader.at]
        if line.strip(" ") and reader._indent_of(line) <= self.indent:
            raise Unsupported("a flow collection continued at its parent's indentation")
        reader.at += 1
        return text + "\n" + line
