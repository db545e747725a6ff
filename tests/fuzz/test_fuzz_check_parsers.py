"""Fuzz `envpin check`'s readers: requirements, environment.yml, pylock.toml, conda-lock, @EXPLICIT, uv.lock.

Seeds are the real files under tests/fixtures/check/ and conda-lock's environment.yml in
tests/fixtures/conda/conda-lock-pip/ (see the SOURCES.md there), edited by the mutators. Properties:
- each format's `parse(text)` returns Contents or raises `MalformedFile` (the documented "not this format
  at all", exit 2) — never another exception, never a hang;
- `check_text` (kind detection, parsing, rules) always returns a FileReport.
"""

from __future__ import annotations

import functools
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envpin import check
from envpin.check.formats import READERS
from envpin.compat.loader import load_database
from envpin.readers.model import Contents, FileReport, MalformedFile
from tests.fuzz.support import FIXTURES, Samples, mutated_text, outcome, slow_examples, tokens_text

CONDA = FIXTURES / "conda"
FIXTURE_DIRS = {"requirements": "requirements", "environment.yml": "environment", "pylock": "pylock",
                "conda-lock": "conda-lock", "explicit": "explicit", "uv.lock": "uv-lock", "conda-specs": "conda-specs"}
# conda-lock's conda-lock.yml is in the corpus already (check/conda-lock/); the environment.yml it came from is not;
# a `conda list --export` spec list is in the real repositories' corpus
EXTRA_SEEDS = {"environment.yml": [CONDA / "conda-lock-pip" / "environment.yml"],
               "conda-specs": [FIXTURES / "repos" / "wgcban--ChangeFormer" / "requirements.txt"]}
FILE_NAMES = {"requirements": "requirements.txt", "conda-specs": "requirements.txt", "environment.yml": "environment.yml", "pylock": "pylock.toml",
              "conda-lock": "conda-lock.yml", "explicit": "conda-linux-64.lock", "uv.lock": "uv.lock",
              "pyproject.toml": "pyproject.toml", "pixi.toml": "pixi.toml", "setup.py": "setup.py",
              "setup.cfg": "setup.cfg", "pixi.lock": "pixi.lock", "poetry.lock": "poetry.lock",
              "Pipfile.lock": "Pipfile.lock", "pdm.lock": "pdm.lock"}
# manifests: the projects' pyproject.toml files and the real repositories' manifests, found by their file name
# (and the real pixi.lock files, one per lock version)
MANIFEST_SEEDS = {"pyproject.toml": ("projects", "repos"), "pixi.toml": ("repos",), "setup.py": ("repos",),
                  "setup.cfg": ("projects",), "pixi.lock": ("locks", "conda"), "poetry.lock": ("locks",),
                  "Pipfile.lock": ("locks",), "pdm.lock": ("locks",)}

# What the formats are made of: requirement syntax, YAML and TOML punctuation, hashes, URLs, conda specs.
FORMAT_TOKENS = ("==", ">=", "~=", "!=", "===", "@", ";", " ; python_version < '3.9'", "[", "]", "[cuda12]", "#",
                 "--hash=sha256:", "--index-url ", "--extra-index-url ", "-r ", "-c ", "-e ", "\\\n", "+cu124",
                 "torch", "torchvision", "pytorch", "pytorch-cuda", "nvidia-cudnn-cu12", "2.5.1", "=2.5.1=py3.11_cuda12.1_0",
                 ": ", "- ", "{", "}", "&a ", "*a", "!!binary ", "[[package]]", "[[packages]]", "= ", '"', "'''",
                 "sha256:", "md5:", "#sha256=", "https://download.pytorch.org/whl/cu124/", "file:///tmp/x.whl",
                 "@EXPLICIT\n", "<<<<<<< HEAD\n", "=======\n", ">>>>>>> branch\n", "\x00", "\ufeff", "\t", "\r\n")
format_inserts = st.lists(st.one_of(st.sampled_from(FORMAT_TOKENS), tokens_text), max_size=6).map("".join)


def seeds(kind: str) -> Samples:
    if kind in MANIFEST_SEEDS:
        found = sorted(p for d in MANIFEST_SEEDS[kind] for p in (FIXTURES / d).rglob(kind))
        return Samples(p.read_text(encoding="utf-8", errors="replace") for p in found)
    directory = FIXTURES / "check" / FIXTURE_DIRS[kind]
    pattern = "uv.lock" if kind == "uv.lock" else "*"  # uv.lock cases are projects: a directory each
    paths = sorted(p for p in directory.rglob(pattern) if p.is_file() and p.suffix != ".md") if directory.is_dir() else []
    paths += EXTRA_SEEDS.get(kind, [])  # in the repository: a missing one is an error, not a smaller corpus
    return Samples(p.read_text(encoding="utf-8", errors="replace") for p in paths)


SEEDS = {kind: seeds(kind) for kind in READERS}


def texts_for(kind: str):
    found = SEEDS[kind]
    edited = [mutated_text(found, insert=format_inserts)] if found else []
    return st.one_of(*edited, format_inserts, st.text())


@pytest.mark.parametrize("kind", list(READERS))
def test_format_parse(kind):
    module, _, function = READERS[kind].partition(":")
    parse = getattr(importlib.import_module(module), function or "parse")

    @settings(max_examples=slow_examples(2))
    @given(text=texts_for(kind))
    def parses_or_says_malformed(text):
        contents, error = outcome(f"check.{module.rsplit('.', 1)[1]}.{function or 'parse'}", parse, text,
                                  allowed=(MalformedFile,))
        assert contents is None or isinstance(contents, Contents)
        if error is not None:
            assert isinstance(error, MalformedFile)
            assert "\n" not in error.message.strip(), "a one-line message"

    parses_or_says_malformed()


def test_every_kind_has_real_seeds():
    # Fuzzing from nothing but random text would hardly get past the first syntax check.
    assert [kind for kind, found in SEEDS.items() if not found] == []


@settings(max_examples=slow_examples(2))
@given(kind=st.sampled_from(list(READERS)), data=st.data())
def test_check_text_always_reports(kind, data):
    text = data.draw(texts_for(kind))
    name = data.draw(st.sampled_from([FILE_NAMES[kind], "requirements-gpu.txt", "env.yaml", "pylock.dev.toml", "x.lock"]))
    check_file = functools.partial(check.check_text, load_database=load_database)
    report, _ = outcome("check.check_text", check_file, name, text)
    assert isinstance(report, FileReport)
