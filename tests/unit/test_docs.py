"""The docs: a short README whose links resolve, a site that mkdocs builds with no warning (`--strict`: no broken
link), and one page per command that matches its `--help` (docs/commands/, written by scripts/docs_commands.py)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envpin.cli import build_parser
from envpin.commands import COMMANDS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _writer():
    spec = importlib.util.spec_from_file_location("docs_commands", REPO / "scripts" / "docs_commands.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOCS_COMMANDS = _writer()


def test_the_readme_is_short_and_its_links_resolve():
    assert len(README.splitlines()) < 250
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local, "the README links into docs/"
    assert [link for link in local if not (REPO / link).exists()] == []
    for use in ("### 1. Pick and pin", "### 2. Check committed", "### 3. Verify and diagnose"):
        assert use in README


def test_every_command_has_a_page_linked_from_the_site():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert (REPO / "docs" / "commands" / f"{name}.md").exists(), name
        assert f"commands/{name}.md" in nav


def options_and_commands(help_text: str) -> tuple[set[str], set[str]]:
    """The option strings and the `## envpin …` sections of a page or a help text: what does not depend on how
    the Python at hand words argparse's help."""
    options = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", help_text))
    sections = set(re.findall(r"^## (envpin .+)$", help_text, re.M))
    return options, sections


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_page_matches_its_help(name, monkeypatch):
    monkeypatch.setenv("COLUMNS", DOCS_COMMANDS.COLUMNS)
    expected = DOCS_COMMANDS.pages()[f"{name}.md"]
    page = (REPO / "docs" / "commands" / f"{name}.md").read_text(encoding="utf-8")
    written_on = re.search(r"on Python (\d+\.\d+);", page)
    assert written_on, "the page says the Python it was written on"
    if written_on.group(1) == DOCS_COMMANDS.PYTHON:
        assert page == expected, f"docs/commands/{name}.md is out of date: run scripts/docs_commands.py"
    else:  # another Python words the help differently; what it offers must still be the same
        assert options_and_commands(page) == options_and_commands(expected)


def test_the_comparison_sees_a_missing_option():
    page = "usage: envpin x [--format F]\n\n## envpin x y\n"
    assert options_and_commands(page) != options_and_commands(page.replace("--format", "--output"))
    assert options_and_commands(page)[1] == {"envpin x y"}


def test_the_help_of_every_parser_is_on_its_page():
    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]):
        yield words
        for action in parser._actions:  # noqa: SLF001
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for word, sub in action.choices.items():
                    yield from walk(sub, (*words, word))

    paths = [words for words in walk(build_parser(), ()) if words]
    for words in paths:
        page = (REPO / "docs" / "commands" / f"{words[0]}.md").read_text(encoding="utf-8")
        assert f"usage: envpin {' '.join(words)} " in page, words


def test_the_docs_site_builds_with_no_warning(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    assert mkdocs.exists(), "mkdocs comes with the dependency group `docs` (scripts/test installs it)"
    result = subprocess.run([mkdocs, "build", "--strict", "--site-dir", tmp_path / "site"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    assert (tmp_path / "site" / "commands" / "solve" / "index.html").exists()
    assert (tmp_path / "site" / "solving" / "index.html").exists()


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The build above is not passing by being lenient: a page with a dead link fails it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\n[gone](nowhere.md)\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text((REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[0] + "\n")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run([mkdocs, "build", "--strict", "-f", config, "--site-dir", tmp_path / "site"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0 and "nowhere.md" in result.stderr
