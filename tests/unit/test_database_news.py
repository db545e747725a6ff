"""`added:` on database records, and database_news(): what a newer database knows about older pins."""

from __future__ import annotations

import re
import shutil

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.compat.loader import load_database, validate_database
from envpin.compat.news import database_news
from tests.conftest import DB_DIR


def _release_block(text: str, version: str) -> tuple[int, int]:
    start = text.index(f'  - version: "{version}"\n')
    following = re.search(r"^  - version: ", text[start + 1:], re.M)
    return start, start + 1 + following.start() if following else len(text)


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """A copy of the database at 2026.12.22 that learned three things since 2026.11.29 about torch 2.5.1:
    a known issue, a cu126 build, and a 2.5.2 release."""
    db_copy = tmp_path_factory.mktemp("news") / "db"
    shutil.copytree(DB_DIR, db_copy)
    path = db_copy / "torch.yaml"
    text = path.read_text()
    start, end = _release_block(text, "2.5.1")
    block = text[start:end]
    issue = ('    known_issues:\n      - {platforms: [linux-x86_64], text: "segfaults with cuDNN 9.1 on sm_90", '
             'sources: [pypi-torch], added: "2026.12.22"}\n')
    build = ('      cu126:\n        cuda: "12.6"\n        platforms: [linux-x86_64]\n'
             '        archs: {linux-x86_64: maxwell-to-hopper}\n        sources: [pypi-torch]\n'
             '        added: "2026.12.22"\n')
    changed = block.replace("    variants:\n", "    variants:\n" + build, 1)
    release_sources = "\n    sources: [pypi-torch, pytorch-release-md"
    assert "known_issues" not in block and block.count(release_sources) == 1
    changed = changed.replace(release_sources, "\n" + issue.rstrip("\n") + release_sources)
    newer = block.replace('version: "2.5.1"', 'version: "2.5.2"', 1).rstrip("\n") + '\n    added: "2026.12.22"\n'
    path.write_text(text[:start] + changed + newer + text[end:])
    (db_copy / "VERSION").write_text("2026.12.22\n")
    assert validate_database(db_copy) == []
    return load_database(db_copy)


def test_news_for_a_pin_made_with_the_older_database(learned):
    news = database_news(learned, "2026.11.29", {"torch": "2.5.1+cu124", "torchvision": "0.20.1+cu124"})
    assert news == [
        "torch 2.5.1: a known issue was recorded in database 2026.12.22 (linux-x86_64): segfaults with cuDNN 9.1 on sm_90",
        "torch 2.5.1: database 2026.12.22 added the cu126 build (CUDA 12.6), newer than the pinned +cu124",
        "torch 2.5.2 (added in database 2026.12.22) is a newer release of the 2.5 series than the pinned 2.5.1",
    ]


def test_no_news_for_a_file_made_with_the_current_database(learned):
    assert database_news(learned, "2026.12.22", {"torch": "2.5.1+cu124"}) == []


def test_platform_and_variant_filter_the_news(learned):
    news = database_news(learned, "2026.11.29", [("torch", "==2.5.1")], platform="windows-x86_64")
    assert news == [
        "torch 2.5.1: database 2026.12.22 added the cu126 build",
        "torch 2.5.2 (added in database 2026.12.22) is a newer release of the 2.5 series than the pinned 2.5.1",
    ]


def test_a_file_from_a_newer_database_is_said_so(database):
    news = database_news(database, "2099.01.01", {"torch": "2.5.1"})
    assert len(news) == 1 and "newer than this envpin's" in news[0]


def test_the_shipped_database_has_no_news_for_any_pin(database):
    assert database_news(database, "2020.01.01", {"torch": "2.5.1+cu124", "tensorflow": "2.17.0",
                                                  "jax": "0.6.2", "numpy": "2.0"}) == []


def test_a_malformed_database_version_is_bad_input(database):
    with pytest.raises(EnvpinInputError, match="not a compatibility database version"):
        database_news(database, "v1", {"torch": "2.5.1"})


def test_added_must_be_a_version_not_after_the_database(db_copy):
    path = db_copy / "jax.yaml"
    text = path.read_text()
    start, _ = _release_block(text, "0.12.0.1")
    marker = "    sources: [pypi-jax-2026-11-29, pypi-jaxlib-2026-11-29]\n"
    at = text.index(marker, start) + len(marker)
    path.write_text(text[:at] + '    added: "2027.01.01"\n' + text[at:])
    version = (db_copy / "VERSION").read_text().strip()
    assert validate_database(db_copy) == [
        f"jax.yaml: 0.12.0.1: added 2027.01.01 is after the database version {version}"]
    path.write_text(text[:at] + "    added: yesterday\n" + text[at:])
    assert any("'yesterday' is not a database version" in p for p in validate_database(db_copy))
