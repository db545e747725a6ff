"""Fuzz the compatibility database: the schema check over mutated real documents, and the loader over
garbled YAML files.

Seeds are the real documents (yaml.safe_load of data/compat_matrix/*.yaml). Properties:
- `build_database` returns a Database and no problems, or no Database and a non-empty list of problems,
  each naming its file (`torch.yaml: releases[3]...`) — never an exception;
- `load_database` on a directory with a garbled file returns a Database or raises `DatabaseError`;
  `validate_database` returns a list of problems — never an exception.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from envpin.compat.loader import FILES, load_database, validate_database
from envpin.compat.model import Database
from envpin.compat.schema import build_database
from envpin.errors import DatabaseError
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
            database, error = outcome("compat.loader.load_database", load_database, directory, allowed=(DatabaseError,))
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
