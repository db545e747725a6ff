"""Read the compatibility database from disk, once per process, in parts.

Parsing and validating the YAML is most of a solve's time, so the database is read in the parts of
`envpin.compat.files.PARTS`: the base (sources, CUDA, GPUs) at once, each other part (torch, tensorflow, jax,
conda) when a command first asks for one of its fields, so that a torch solve never reads jax.yaml. Each part
is validated whole before it is used, cross-file checks included (against the base), and cached under the
user's cache directory (`envpin.compat.cache`: plain JSON, checked before use), keyed by envpin's version and
each file's path, size and modification time: any edit to the database, or a new envpin, misses the cache and
validates again. Only a part that passed validation is ever written to the cache. `envpin db validate` reads
and checks every file, never the cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from envpin import __version__
from envpin.base.errors import DatabaseError
from envpin.compat import cache
from envpin.compat.files import BASE, FILES, OPTIONAL_FILES, OWN_SOURCES, PARTS  # noqa: F401 - importable from here, as before
from envpin.compat.model import Database, in_parts

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
    """The database in a directory, validated. Its base part (envpin.compat.files.PARTS) is read now, each other
    part when a command first asks for one of its fields: a DatabaseError then, where that part has problems."""
    directory = Path(path) if path is not None else default_database_path()
    key = str(directory.resolve())
    if key not in _LOADED:
        if not directory.is_dir():
            raise DatabaseError(f"database {directory}: not a directory")
        parts = _Parts(directory, _stamps(directory, key))
        _LOADED[key] = in_parts(parts.read(BASE), parts.read)
    return _LOADED[key]


class _Parts:
    """The parts of one database directory, each from its cache entry or, on a miss, validated from its YAML
    (then cached: only a part that passed validation is written)."""

    def __init__(self, directory: Path, stamps: str):
        self.directory = directory
        self.stamps = stamps
        self.documents: _Documents | None = None  # made on the first miss
        self.base: dict[str, Any] | None = None
        self.validated: dict[str, dict[str, Any]] = {}

    def read(self, part: str) -> dict[str, Any]:
        fields = cache.read(self.stamps, part, lambda: self._validated(part))
        if fields is None:
            fields = self._validated(part)
        if part == BASE:
            self.base = fields
        return fields

    def _validated(self, part: str) -> dict[str, Any]:
        """The part validated from its YAML, and cached: on a miss, or when a cached record fails its check as it is
        first used (then the rest of that field is read from here, and the damaged entry is replaced)."""
        if part not in self.validated:
            self.validated[part] = self._validate(part)
            cache.write(self.stamps, part, self.validated[part])
        return self.validated[part]

    def _validate(self, part: str) -> dict[str, Any]:
        # Only a miss validates: envpin.compat.schema and envpin.compat.yaml_subset cost ~4 ms of imports together
        # (python -X importtime), which a solve with the cache warm does not pay.
        from envpin.compat.schema import build_part  # noqa: PLC0415 - see above

        if self.documents is None:
            self.documents = _Documents(self.directory)
        if part == BASE:
            version = _read_text(self.directory / "VERSION").strip()
        else:
            assert self.base is not None, "the base part is read first"
            version = self.base["version"]
        fields, problems = build_part(part, version, self.documents.read_part(part), self.base)
        if fields is None:
            more = f" (and {len(problems) - 1} more; run `envpin db validate {self.directory}`)" if len(problems) > 1 else ""
            raise DatabaseError(f"database {self.directory}: {problems[0]}{more}")
        return fields


class _Documents:
    """The database's files as read so far, each by top-level section (`yaml_subset.Sections`): a part reads its
    own files whole, the base part also the `sources:` of every other file, and no section is read twice."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.texts: dict[str, str] = {}
        self.sections: dict[str, Any] = {}  # file -> its yaml_subset.Sections
        self.whole: dict[str, Any] = {}  # file -> the document, once read whole

    def read_part(self, part: str) -> dict[str, Any]:
        """The documents a part is validated from (envpin.compat.schema.build_part): its files (those that exist)
        and, for the base part, the `sources:` of the others."""
        own = PARTS[part][0]
        documents = {name: self.document(name) for name in own if (self.directory / name).exists()}
        if part == BASE:
            for name in FILES:
                if name not in own and name not in OWN_SOURCES and (self.directory / name).exists():
                    documents[name] = self.section(name, "sources")
        return documents

    def document(self, name: str) -> Any:
        """What yaml.safe_load gives for the file."""
        from envpin.compat import yaml_subset  # noqa: PLC0415 - only when the cache misses (see _Parts)

        if name not in self.whole:
            try:
                self.whole[name] = self._sections(name).document()
            except yaml_subset.Unsupported:
                self.whole[name] = _parse_yaml(self.directory / name, self._text(name))
        return self.whole[name]

    def section(self, name: str, key: str) -> Any:
        """`{key: value}` as the file has it ({} without one), where the file is a mapping; the whole document
        otherwise (which the file's own part reports)."""
        from envpin.compat import yaml_subset  # noqa: PLC0415 - only when the cache misses (see _Parts)

        if name not in self.whole:
            try:
                return self._sections(name).value(key)
            except yaml_subset.Unsupported:
                pass
        document = self.document(name)
        if not isinstance(document, dict):
            return document
        return {key: document[key]} if key in document else {}

    def _text(self, name: str) -> str:
        if name not in self.texts:
            self.texts[name] = _read_text(self.directory / name)
        return self.texts[name]

    def _sections(self, name: str) -> Any:
        from envpin.compat import yaml_subset  # noqa: PLC0415 - only when the cache misses (see _Parts)

        if name not in self.sections:
            self.sections[name] = yaml_subset.Sections(self._text(name))
        return self.sections[name]


def validate_database(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Every schema problem of a database directory (empty when it is valid); never uses the cache."""
    from envpin.compat.schema import build_database  # noqa: PLC0415 - kept off a cached solve's path, as in _Parts

    directory = Path(path) if path is not None else default_database_path()
    try:
        version = _read_text(directory / "VERSION").strip()
        _, problems = build_database(version, _read_documents(directory))
    except DatabaseError as error:
        return [str(error)]
    return problems


def _read_text(path: Path) -> str:
    from envpin.base.userfiles import UnreadableFile, open_regular  # noqa: PLC0415 - only when the cache misses

    try:
        with open_regular(path) as handle:  # a FIFO in a --db directory would block, a device never ends
            return handle.read().decode("utf-8")
    except UnreadableFile as error:
        raise DatabaseError(f"database file {path}: cannot be read ({error.reason})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DatabaseError(f"database file {path}: cannot be read ({error.__class__.__name__}: {error})") from None


def _read_documents(directory: Path) -> dict[str, Any]:
    """Every file's document, read whole (`envpin db validate`)."""
    return {name: _parse_yaml(directory / name) for name in FILES if (directory / name).exists()}


_HERE = Path(__file__).parent
# The code that shapes the cached objects is part of the key too: an edited schema, model or cache format (a
# development checkout, an upgrade that kept the version number) must not meet an old entry. The validation reads
# names and tags through compat.gpus and the vocabulary, so they count as well.
CODE_FILES = tuple(_HERE / name for name in ("model.py", "schema.py", "accelerator_schema.py", "files.py", "cache.py",
                                             "yaml_subset.py", "gpus.py")) + (
    _HERE.parent / "base" / "record.py", _HERE.parent / "vocabulary" / "platforms.py", _HERE.parent / "vocabulary" / "variants.py",
    _HERE.parent / "base" / "escapes.py")


def _stamps(directory: Path, resolved: str) -> str:
    parts = [__version__, resolved]
    for path in CODE_FILES:
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


def _parse_yaml(path: Path, text: str | None = None) -> Any:
    from envpin.compat import yaml_subset  # noqa: PLC0415 - only when the cache misses (~3 ms of imports; see _Parts)

    if text is None:
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
