import os
import shutil
from pathlib import Path

import pytest

from envpin.base.escapes import forget_expanded
from envpin.compat.loader import DATABASE_VARIABLE, load_database

REPO = Path(__file__).resolve().parent.parent
# The database as it ships: what refreshes change. Only tests of the database itself read it (schema, invariants).
LIVE_DB_DIR = REPO / "data" / "compat_matrix"


def _frozen_database() -> Path:
    """The dated copy of the database that tests pinning exact answers read (tests/fixtures/compat_db/README.md)."""
    copies = [p for p in (REPO / "tests" / "fixtures" / "compat_db").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(copies) == 1, f"expected one frozen database under tests/fixtures/compat_db, found {copies}"
    return copies[0]


# The database every test reads unless it names another: the frozen copy. Set before any test module is
# imported (some read the database at import), and inherited by every `envpin` process a test starts.
DB_DIR = _frozen_database()
os.environ[DATABASE_VARIABLE] = str(DB_DIR)


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Keep the database cache of the test run out of the user's home."""
    os.environ["ENVPIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("envpin-cache"))


@pytest.fixture(autouse=True)
def _nothing_expanded():
    """Each test starts as a run does, with no `${VAR}` value remembered (envpin.base.escapes.expanded): a test that
    reads a requirements line in-process must not hide a value in the next test's output."""
    yield
    forget_expanded()


@pytest.fixture(scope="session")
def database():
    """The frozen database: for tests that expect exact answers."""
    return load_database(DB_DIR)


@pytest.fixture(scope="session")
def live_database():
    """The database as it ships: for invariants that must hold after any refresh."""
    return load_database(LIVE_DB_DIR)


@pytest.fixture
def db_copy(tmp_path):
    """A writable copy of the frozen database, for corrupting."""
    target = tmp_path / "db"
    shutil.copytree(DB_DIR, target)
    return target
