"""Fuzz the compatibility database: the schema check over mutated real documents, and the loader over
garbled YAML files.

Seeds are the real documents (yaml.safe_load of data/compat_matrix/*.yaml). Properties:
- `build_database` returns a Database and no problems, or no Database and a non-empty list of problems,
  each naming its file (`torch.yaml: releases[3]...`) — never an exception;
- `load_database` on a directory with a garbled file returns a Database whose every part reads, or raises
  `DatabaseError` (at once, or when the garbled file's part is first read);
  `validate_database` returns a list of problems — never an exception;
- the loader's own YAML reader (envpin.compat.yaml_subset) returns exactly what `yaml.safe_load` returns
  (the same types: 1 is not True) or declines, on garbled files and on documents PyYAML writes; read by
  top-level section, it gives what PyYAML reads in the whole text.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from envpin.base.errors import DatabaseError
from envpin.compat import yaml_subset
from envpin.compat.loader import FILES, load_database, validate_database
from envpin.compat.model import Database
from envpin.compat.schema import build_database
from tests.fuzz.support import Samples, json_values, mutated_document, mutated_text, outcome, paths_of, slow_examples

DB_DIR = Path(__file__).resolve().parents[2] / "data" / "compat_matrix"
VERSION = (DB_DIR / "VERSION").read_text().strip()
DOCUMENTS = {name: yaml.safe_load((DB_DIR / name).read_text(encoding="utf-8")) for name in FILES}
PATHS = paths_of(DOCUMENTS)[1:]  # every value in every file, and each file itself; not the dict of files
TEXTS = Samples((DB_DIR / name).read_text(encoding="utf-8") for name in FILES)

# What safe_load can produce besides JSON's values: dates, binary, sets; keys need not be strings.
yaml_values = st.one_of(json_values, st.dates(), st.datetimes(), st.binary(max_size=4), st.sets(st.text(max_size=3), max_size=2))
yaml_keys = st.one_of(st.text(max_size=8), st.sampled_from(("version", "cuda", "sources", "variants", "linux-x86_64",
                                                            "cu124", "archs", "python", "pypi")),
                      st.integers(), st.none(), st.booleans(), st.dates())
versions = st.one_of(st.just(VERSION), st.text(max_size=12))


def check_built(database, problems) -> None:
    if database is not None:
        assert isinstance(database, Database) and problems == []
    else:
        assert problems, "no database and no problem to say why"
        for problem in problems:
            assert isinstance(problem, str) and "\n" not in problem
            assert problem.startswith((*FILES, "VERSION")), f"a problem that names no file: {problem!r}"


@settings(max_examples=slow_examples())
@given(documents=mutated_document(DOCUMENTS, PATHS, value_strategy=yaml_values, key_strategy=yaml_keys), version=versions)
@example(documents={**DOCUMENTS, "torch.yaml": None}, version=VERSION)
# a key with a line break, which the problem quoted raw: a problem is one line (found by a random run)
@example(documents={**DOCUMENTS, "cuda.yaml": {**DOCUMENTS["cuda.yaml"], "a\nb": 1}}, version=VERSION)
@example(documents={**DOCUMENTS, "jax.yaml": {"releases": [{"version": "0.6.0", "extras": {"cuda12": {"cuda": "１２"}}}]}},
         version=VERSION)
def test_build_database_on_mutated_documents(documents, version):
    built, _ = outcome("compat.schema.build_database", build_database, version, documents)
    check_built(*built)


def test_the_real_documents_build():
    # The seed itself must be valid, or every mutation above would only test the error path.
    database, problems = build_database(VERSION, DOCUMENTS)
    assert problems == [] and database is not None


YAML_TOKENS = (": ", "- ", "-", "&a ", "*a", "!!python/object:os.system ", "!!binary ", "!!set ", "{", "}", "[", "]",
               "---\n", "...\n", "\t", "%YAML 1.1\n", "'", '"', "#", "\n  ", "\x00", "\ufeff", "? ", "|", ">")
yaml_inserts = st.lists(st.one_of(st.sampled_from(YAML_TOKENS), st.text(max_size=6)), max_size=12).map("".join)


def read_every_part(directory: Path) -> Database:
    """The database, each of its parts read (a part is read when a command first asks for one of its fields)."""
    database = load_database(directory)
    for name in Database._fields:
        getattr(database, name)
    return database


@settings(max_examples=slow_examples(6))  # each input parses all six files twice (load, then validate)
@given(name=st.sampled_from(FILES), text=mutated_text(TEXTS, insert=yaml_inserts), raw=st.none() | st.binary(max_size=64))
@example(name="cuda.yaml", text="toolkits: [", raw=None)  # truncated
@example(name="gpus.yaml", text="", raw=b"\xff\xfe garbage \x00")  # not UTF-8
def test_load_database_with_a_garbled_file(name, text, raw):
    previous = os.environ.get("ENVPIN_NO_CACHE")
    os.environ["ENVPIN_NO_CACHE"] = "1"
    try:
        with tempfile.TemporaryDirectory() as scratch:
            directory = Path(scratch) / "db"
            shutil.copytree(DB_DIR, directory)
            (directory / name).write_bytes(raw if raw is not None else text.encode("utf-8", errors="surrogatepass"))
            database, error = outcome("compat.loader.load_database", read_every_part, directory, allowed=(DatabaseError,))
            assert database is None or isinstance(database, Database)
            if error is not None:
                assert "\n" not in str(error)
            problems, _ = outcome("compat.loader.validate_database", validate_database, directory)
            assert isinstance(problems, list) and (problems == []) == (database is not None)
    finally:
        if previous is None:
            os.environ.pop("ENVPIN_NO_CACHE", None)
        else:
            os.environ["ENVPIN_NO_CACHE"] = previous


# ---------------------------------------------------------------- the loader's YAML reader


def same(first, second) -> bool:
    """Equal, and of the same types all the way down (== takes 1 for True and 1 for 1.0)."""
    if type(first) is not type(second):
        return False
    if isinstance(first, dict):
        return len(first) == len(second) and all(
            same(k1, k2) and same(v1, v2) for (k1, v1), (k2, v2) in zip(first.items(), second.items(), strict=True))
    if isinstance(first, list):
        return len(first) == len(second) and all(same(a, b) for a, b in zip(first, second, strict=True))
    return first == second


def agrees_with_pyyaml(text: str) -> bool:
    """The reader's answer is PyYAML's; False when it declined (PyYAML then decides)."""
    read, declined = outcome("compat.yaml_subset.load", yaml_subset.load, text, allowed=(yaml_subset.Unsupported,))
    if declined is not None:
        return False
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except (yaml.YAMLError, ValueError) as error:
        raise AssertionError(f"the reader took a text PyYAML refuses ({error})") from None
    assert same(read, expected), (read, expected)
    return True


READER_TOKENS = YAML_TOKENS + (" #", "yes", "No", "~", "null", "1.5", "012", "0x1f", "2026-11-29", "<<", "=", "\\",
                               ",", "'a'", '"a\\"b"', "[a, b]", "{a: b}", ">-\n  x\n", "|\n  y\n", "- a\n",
                               "a: b\n", "1_000", "+1", "-0", "  ", "\n")
reader_inserts = st.lists(st.one_of(st.sampled_from(READER_TOKENS), st.text(max_size=6)), max_size=12).map("".join)


@settings(max_examples=slow_examples(1))
@given(text=mutated_text(TEXTS, insert=reader_inserts, max_mutations=6), start=st.integers(0, 1000))
@example(text="a: " + "9" * 5000, start=0)  # int() refuses it: the reader declines, PyYAML raises ValueError
@example(text="k" * 1100 + ": v", start=0)  # PyYAML takes no key longer than 1024 characters
@example(text="a: {b\n  : c}", start=0)
def test_the_yaml_reader_agrees_with_pyyaml_or_declines(text, start):
    agrees_with_pyyaml(text)
    lines = text.split("\n")  # a window near the mutation, as a document of its own
    agrees_with_pyyaml("\n".join(lines[start % max(1, len(lines)):][:30]))


def sections_agree_with_pyyaml(text: str) -> None:
    """What yaml_subset.Sections reads of a text is what PyYAML reads in the whole text: each key it reads (where
    PyYAML reads the text at all: a part reads the `sources:` of a file whose other sections may be broken, and
    that file's own part reports those), and the document, which PyYAML then reads too."""
    sections = yaml_subset.Sections(text)
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except (yaml.YAMLError, ValueError, RecursionError):
        expected = None
    for key in sections.texts or ():
        value, declined = outcome("compat.yaml_subset.Sections.value", sections.value, key,
                                  allowed=(yaml_subset.Unsupported,))
        if declined is None and expected is not None:
            [(read_key, read)] = value.items()
            assert isinstance(expected, dict) and read_key in expected and same(read, expected[read_key]), (key, text)
    document, declined = outcome("compat.yaml_subset.Sections.document", sections.document,
                                 allowed=(yaml_subset.Unsupported,))
    if declined is None:
        assert same(document, yaml.load(text, Loader=yaml.CSafeLoader))


@settings(max_examples=slow_examples(1))
@given(text=mutated_text(TEXTS, insert=reader_inserts, max_mutations=6))
@example(text="a: [1,\nsources: 2]\n")  # PyYAML reads on inside a bracket; the reader then declines `a`
@example(text="a: 'x\nsources: y'\n")
@example(text="sources: [a]\nsources: [b]\n")  # a key twice: read whole
@example(text="  x: 1\nsources: []\n")
def test_the_sections_of_a_text_are_what_pyyaml_reads_in_the_whole_text(text):
    sections_agree_with_pyyaml(text)
    sections_agree_with_pyyaml(text.replace("\n  ", "\n", 3))  # more lines at the first column


def test_every_real_file_reads_by_sections():
    for name in FILES:
        text = (DB_DIR / name).read_text(encoding="utf-8")
        assert same(yaml_subset.Sections(text).document(), yaml.load(text, Loader=yaml.CSafeLoader)), name
        sections_agree_with_pyyaml(text)


plain_keys = st.one_of(st.from_regex(r"[a-z][a-z0-9_.-]{0,8}", fullmatch=True), st.text(max_size=4))
words = st.one_of(st.from_regex(r"[A-Za-z0-9._/()-]{1,8}", fullmatch=True),
                 st.sampled_from(["'", '"', "a'b", "#", "a#b", "-", "- x", ":", "a:b", "[x]", "{y}", "%", "&", "yes", "12"]))
plain_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=10),
    st.from_regex(r"[A-Za-z0-9 ._/:#'\"-]{0,15}", fullmatch=True),
    st.sampled_from(["yes", "No", "~", "1.5", "012", "0x10", "2026-01-02", "a b", "a: b", "#x", "x #y", "-", "- a"]),
    st.lists(words, min_size=1, max_size=14).map(" ".join),  # long enough for PyYAML to fold over lines
)
documents = st.recursive(plain_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                               st.dictionaries(plain_keys, inner, max_size=4)),
                         max_leaves=20)


@settings(max_examples=slow_examples(1))
@given(document=st.dictionaries(plain_keys, documents, min_size=1, max_size=5), flow=st.sampled_from([None, False, True]),
       width=st.sampled_from([20, 40, 80, 10000]), unicode=st.booleans(), indent=st.sampled_from([2, 4]))
def test_the_yaml_reader_agrees_with_pyyaml_on_what_pyyaml_writes(document, flow, width, unicode, indent):
    agrees_with_pyyaml(yaml.safe_dump(document, default_flow_style=flow, width=width, allow_unicode=unicode,
                                      sort_keys=False, indent=indent))


def test_the_yaml_reader_reads_every_real_file_itself():
    # The point of the reader: the shipped database never needs PyYAML.
    for name in FILES:
        assert agrees_with_pyyaml((DB_DIR / name).read_text(encoding="utf-8")), f"{name} went to PyYAML"
