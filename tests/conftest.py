import os
import shutil
from pathlib import Path

import pytest

from envpin.compat.loader import load_database

REPO = Path(__file__).resolve().parent.parent
DB_DIR = REPO / "data" / "compat_matrix"


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Keep the database cache of the test run out of the user's home."""
    os.environ["ENVPIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("envpin-cache"))


@pytest.fixture(scope="session")
def database():
    return load_database(DB_DIR)


@pytest.fixture
def db_copy(tmp_path):
    """A writable copy of the real database, for corrupting."""
    target = tmp_path / "db"
    shutil.copytree(DB_DIR, target)
    return target
