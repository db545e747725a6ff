"""Read the compatibility database from disk, once per process.

Parsing and validating the YAML is most of a solve's time, so the validated database is cached under the
user's cache directory (`envpin.compat.cache`: plain JSON, checked before use), keyed by envpin's version
and each file's path, size and modification time: any edit to the database, or a new envpin, misses the
cache and validates again. Only a database that passed validation is ever written to the cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from envpin import __version__
from envpin.compat import cache
from envpin.compat.files import FILES, OPTIONAL_FILES  # noqa: F401 - importable from here, as before
from envpin.compat.model import Database
from envpin.errors import DatabaseError

_LOADED: dict[str, Database] = {}


DATABASE_VARIABLE = "ENVPIN_DB"


def default_database_path() -> Path:
    """The database `--db` names when it is not given: `$ENVPIN_DB` (a team's fork, or the frozen copy a test
    suite pins its answers to), else the one in a source checkout (data/compat_matrix) or inside the wheel."""
    override = os.environ.get(DATABASE_VARIABLE)
    if override:  # an empty variable counts as unset, as shells do
        return Path(override)
    package = Path(__file__).resolve().parent.parent
    for candidate in (package.parent / "data" / "compat_matrix", package / "data" / "compat_matrix"):
        if (candidate / "VERSION").is_file():
            return candidate
    raise DatabaseError("the compatibility database is missing from this installation (no data/compat_matrix/VERSION)")


def load_database(path: str | os.PathLike[str] | None = None) -> Database:
    directory = Path(path) if path is not None else default_database_path()
    key = str(directory.resolve())
    if key not in _LOADED:
        _LOADED[key] = _load(directory, key)
    return _LOADED[key]


def _load(directory: Path, resolved: str) -> Database:
    if not directory.is_dir():
        raise DatabaseError(f"database {directory}: not a directory")
    stamps = _stamps(directory, resolved)
    cached = cache.read(stamps)
    if cached is not None:
        return cached
    # Only a cache miss validates: envpin.compat.schema and envpin.compat.yaml_subset (below) cost ~4 ms of imports
    # together (python -X importtime), which a solve with the cache warm does not pay.
    from envpin.compat.schema import build_database  # noqa: PLC0415 - see above

    version = _read_text(directory / "VERSION").strip()
    database, problems = build_database(version, _read_documents(directory))
    if database is None:
        more = f" (and {len(problems) - 1} more; run `envpin db validate {directory}`)" if len(problems) > 1 else ""
        raise DatabaseError(f"database {directory}: {problems[0]}{more}")
    cache.write(stamps, database)
    return database


def validate_database(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every schema problem of a database directory (empty when it is valid); never uses the cache."""
    from envpin.compat.schema import build_database  # noqa: PLC0415 - kept off a cached solve's path, as in _load

    directory = Path(path) if path is not None else default_database_path()
    try:
        version = _read_text(directory / "VERSION").strip()
        _, problems = build_database(version, _read_documents(directory))
    except DatabaseError as error:
        return [str(error)]
    return problems


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DatabaseError(f"database file {path}: cannot be read ({error.__class__.__name__}: {error})") from None


def _read_documents(directory: Path) -> dict[str, Any]:
    return {name: _parse_yaml(directory / name) for name in FILES if (directory / name).exists()}


def _stamps(directory: Path, resolved: str) -> str:
    # The code that shapes the cached objects is part of the key too: an edited schema, model or cache format
    # (a development checkout, an upgrade that kept the version number) must not meet an old entry.
    here = Path(__file__).parent
    parts = [__version__, resolved]
    for path in (here / "model.py", here.parent / "record.py", here / "schema.py", here / "cache.py",
                 here / "yaml_subset.py"):
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    for name in ("VERSION", *FILES):
        try:
            stat = (directory / name).stat()
        except OSError:
            if name in OPTIONAL_FILES or name == "VERSION":  # a missing VERSION is reported when it is read
                parts.append(f"{name}:absent")
                continue
            raise DatabaseError(f"database {directory}: {name} is missing") from None
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def _parse_yaml(path: Path) -> Any:
    from envpin.compat import yaml_subset  # noqa: PLC0415 - only when the cache misses (~3 ms of imports; see _load)

    text = _read_text(path)
    try:
        return yaml_subset.load(text)  # the plain YAML the database is written in, without PyYAML
    except yaml_subset.Unsupported:
        pass
    import yaml  # noqa: PLC0415 - only for a text outside that subset, and when the cache misses

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise DatabaseError(f"database file {path}{where}: malformed YAML ({problem})") from None
    except (ValueError, RecursionError) as error:  # an int over 4300 digits, a date like 2026-13-45, deep nesting
        problem = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DatabaseError(f"database file {path}: malformed YAML ({problem})") from None
