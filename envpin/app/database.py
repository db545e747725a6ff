"""The run's one database: every part of a run that needs the database of `--db` gets the same one.

Commands never load it themselves: they hand `--db`'s value down, and the library asks here. The loader keeps one
database per directory per process (`envpin.compat.loader.load_database`), so a run that reads the database in
several places (a check of several files and its targets, a conda command that solves and then locks) parses it
once.
"""

from __future__ import annotations

from envpin.compat.loader import load_database
from envpin.compat.model import Database


def run_database(directory: str | None) -> Database:
    """The database of `--db DIR` (None: ENVPIN_DB, else the one installed), loaded the first time it is asked for."""
    return load_database(directory)
