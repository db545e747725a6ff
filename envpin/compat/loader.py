"""Read the compatibility database from disk, once per process.

Parsing and validating the YAML is most of a solve's time, so the validated database is cached (pickled)
under the user's cache directory, keyed by envpin's version and each file's path, size and modification
time: any edit to the database, or a new envpin, misses the cache and validates again. Only a database
that passed validation is ever written to the cache.
"""

from __future__ import annotations

import os
import pickle
import zlib
from pathlib import Path
from typing import Any

from envpin import __version__
from envpin.compat.model import Database
from envpin.errors import DatabaseError

# Kept here rather than imported from the schema module, which a cache hit never needs to load.
FILES = ("sources.yaml", "cuda.yaml", "gpus.yaml", "torch.yaml", "tensorflow.yaml", "jax.yaml", "conda.yaml")
OPTIONAL_FILES = ("tensorflow.yaml", "jax.yaml", "conda.yaml")  # a torch-only database (a team's fork) may leave them out

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
    stamps = _stamps(directory)
    cache_file = _cache_file(stamps)
    cached = _read_cache(cache_file, stamps)
    if cached is not None:
        return cached
    from envpin.compat.schema import build_database

    version = _read_text(directory / "VERSION").strip()
    database, problems = build_database(version, _read_documents(directory))
    if database is None:
        more = f" (and {len(problems) - 1} more; run `envpin db validate {directory}`)" if len(problems) > 1 else ""
        raise DatabaseError(f"database {directory}: {problems[0]}{more}")
    _write_cache(cache_file, stamps, database)
    return database


def validate_database(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every schema problem of a database directory (empty when it is valid); never uses the cache."""
    from envpin.compat.schema import build_database

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


def _stamps(directory: Path) -> str:
    # The code that shapes the cached objects is part of the key too: an edited schema or model (a
    # development checkout, an upgrade that kept the version number) must not meet an old pickle.
    code = [Path(__file__).with_name(name) for name in ("model.py", "schema.py")]
    parts = [__version__, str(directory.resolve())]
    parts += [f"{path.name}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for path in code]
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
    import yaml  # only when the cache misses

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
    # The name only spreads entries out; the stamps stored inside decide whether an entry is this database.
    return directory / f"db-{zlib.crc32(stamps.encode()):08x}.pickle"


def _read_cache(cache_file: Path | None, stamps: str) -> Database | None:
    if cache_file is None:
        return None
    try:
        with open(cache_file, "rb") as handle:
            cached_stamps, database = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a damaged or foreign cache is only a miss
        return None
    return database if cached_stamps == stamps and isinstance(database, Database) else None


def _write_cache(cache_file: Path | None, stamps: str, database: Database) -> None:
    """Best effort and atomic: a read-only home or a full disk only costs speed, never a half-written cache."""
    if cache_file is None:
        return
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache_file.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(pickle.dumps((stamps, database), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temporary, cache_file)
    except OSError:
        pass
