"""Read the compatibility database from disk, once per process.

Parsing YAML is the slow part of a solve, so the parsed documents are cached as JSON under the user's cache
directory, keyed by each file's size and modification time; validation (envpin.compat.schema) runs on
every load all the same, so a cache can never smuggle in an invalid database.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from envpin import __version__
from envpin.compat.model import Database
from envpin.compat.schema import FILES, OPTIONAL_FILES, build_database
from envpin.errors import DatabaseError

_LOADED: dict[str, Database] = {}


def default_database_path() -> Path:
    """The database in a source checkout (data/compat_matrix) or inside the installed wheel."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package.parent / "data" / "compat_matrix", package / "data" / "compat_matrix"):
        if (candidate / "VERSION").is_file():
            return candidate
    raise DatabaseError("the compatibility database is missing from this installation (no data/compat_matrix/VERSION)")


def load_database(path: str | os.PathLike[str] | None = None) -> Database:
    directory = Path(path) if path is not None else default_database_path()
    key = str(directory.resolve())
    if key not in _LOADED:
        _LOADED[key] = _load(directory)
    return _LOADED[key]


def _load(directory: Path) -> Database:
    if not directory.is_dir():
        raise DatabaseError(f"database {directory}: not a directory")
    version = _read_text(directory / "VERSION").strip()
    documents = _read_documents(directory)
    database, problems = build_database(version, documents)
    if database is None:
        more = f" (and {len(problems) - 1} more; run `envpin db validate {directory}`)" if len(problems) > 1 else ""
        raise DatabaseError(f"database {directory}: {problems[0]}{more}")
    return database


def validate_database(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every schema problem of a database directory (empty when it is valid)."""
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
    stamps = _stamps(directory)
    cache_file = _cache_file(stamps)
    cached = _read_cache(cache_file)
    if cached is not None:
        return cached
    documents = {name: _parse_yaml(directory / name) for name in FILES if (directory / name).exists()}
    _write_cache(cache_file, documents)
    return documents


def _stamps(directory: Path) -> str:
    parts = [__version__, str(directory.resolve())]
    for name in FILES:
        try:
            stat = (directory / name).stat()
        except OSError:
            if name in OPTIONAL_FILES:
                parts.append(f"{name}:absent")
                continue
            raise DatabaseError(f"database {directory}: {name} is missing") from None
        parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(parts)


def _parse_yaml(path: Path) -> Any:
    import yaml  # only when the cache misses: importing and parsing YAML is most of a cold solve

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(_read_text(path), Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise DatabaseError(f"database file {path}{where}: malformed YAML ({problem})") from None


def _cache_dir() -> Path | None:
    if os.environ.get("ENVPIN_NO_CACHE"):
        return None
    if os.environ.get("ENVPIN_CACHE_DIR"):
        return Path(os.environ["ENVPIN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "envpin"


def _cache_file(stamps: str) -> Path | None:
    directory = _cache_dir()
    if directory is None:
        return None
    return directory / f"db-{hashlib.sha256(stamps.encode()).hexdigest()[:24]}.json"


def _read_cache(cache_file: Path | None) -> dict[str, Any] | None:
    if cache_file is None:
        return None
    try:
        with open(cache_file, encoding="utf-8") as handle:
            documents = json.load(handle)
    except (OSError, ValueError):
        return None
    return documents if isinstance(documents, dict) and set(FILES) - set(OPTIONAL_FILES) <= set(documents) else None


def _write_cache(cache_file: Path | None, documents: dict[str, Any]) -> None:
    """Best effort and atomic: a read-only home or a full disk only costs speed, never a half-written cache."""
    if cache_file is None:
        return
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache_file.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(documents, default=str), encoding="utf-8")
        os.replace(temporary, cache_file)
    except OSError:
        pass
