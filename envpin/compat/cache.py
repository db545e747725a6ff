"""The cache of the validated database: plain JSON, checked before use, in a directory only the user can write.

A solve after the first reads the database from here instead of parsing and validating the YAML again. There is
one entry per part of a database (`envpin.compat.files.PARTS`: `db-<database>-<part>.json`), written when that
part was validated, so a command reads the entries of the parts it uses and no other. Nothing in an entry can
run code: it is JSON, and reading it only builds the database model's own classes (`envpin.compat.model`),
`packaging.version.Version` and tuples, dicts, strings, numbers, booleans, each where the model's annotations
put it. An entry is used only when

- the cache directory and the entry are owned by the user and writable by nobody else (POSIX; the
  directory is created 0700, an entry 0600), and the entry is a regular file, not a symbolic link;
- its header names this database exactly (`stamps`: envpin's version, the database directory, the size
  and modification time of every database file and of the code that shapes the model) and this part;
- its digest matches: BLAKE2b of the content, keyed by the stamps and the part, so a damaged or foreign
  entry is never taken for this database;
- it holds exactly the part's fields of `Database`, every value of the type the model's annotation gives it.

Anything else is a miss: the part's YAML is validated again and the entry rewritten (atomically). Old entries
are pruned when one is written: the entries of the `MAX_DATABASES` databases used last are kept, entries unused
for `MAX_AGE_DAYS`, stale temporary files and the pickles of envpin 0.1 (`db-*.pickle`, never opened) are
removed.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:  # hashlib.blake2b is this very type; importing hashlib would also load OpenSSL (3 ms of every solve)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without its own BLAKE2
    from hashlib import blake2b

from packaging.version import Version

from envpin.base.record import Record
from envpin.compat import model
from envpin.compat.files import PARTS
from envpin.compat.model import ComputeCapability

FORMAT = "envpin-database-cache"
FORMAT_VERSION = 2  # 2: one entry per part of the database
MAX_DATABASES = 8
MAX_AGE_DAYS = 30
MAX_BYTES = 256 * 1024 * 1024  # far beyond a real database (the real one is ~0.2 MB, 10x it ~2 MB)
_TOUCH_AFTER_S = 24 * 3600  # a hit older than this marks the entry used (its mtime) for the pruning
_CHECKS_OWNER = hasattr(os, "getuid")


class CacheMiss(Exception):
    """The entry cannot be used: absent, unsafe, foreign, damaged or of another shape."""


# ---------------------------------------------------------------- where


def cache_directory() -> Path | None:
    if os.environ.get("ENVPIN_NO_CACHE"):
        return None
    if os.environ.get("ENVPIN_CACHE_DIR"):
        return Path(os.environ["ENVPIN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "envpin"


def entry_path(directory: Path, stamps: str, part: str) -> Path:
    # The name only spreads entries out and groups a database's parts (for the pruning); the stamps and the part
    # in the header decide whether an entry is this part of this database.
    return directory / f"db-{blake2b(stamps.encode(), digest_size=8).hexdigest()}-{part}.json"


def _database_of(name: str) -> str:
    """The database an entry's name is of: `db-<database>-<part>.json` (or envpin 0.2's `db-<database>.json`)."""
    return name[3:].removesuffix(".json").split("-", 1)[0]


# ---------------------------------------------------------------- read


def read(stamps: str, part: str) -> dict[str, Any] | None:
    """The cached fields of one part of the database these stamps name, or None (a miss, whatever the reason:
    never an exception)."""
    directory = cache_directory()
    if directory is None:
        return None
    path = entry_path(directory, stamps, part)
    try:
        _check_directory(directory, create=False)
        data, modified = _read_entry(path)
        fields = decode(data, stamps, part)
    except Exception:  # noqa: BLE001 - an unusable entry of any kind is only a miss
        return None
    if time.time() - modified > _TOUCH_AFTER_S:
        try:
            os.utime(path)
        except OSError:
            pass
    return fields


def _check_directory(directory: Path, create: bool) -> None:
    """The directory exists (made 0700 if `create`), is the user's and nobody else can write to it."""
    if create:
        directory.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
    info = os.stat(directory)
    if not stat.S_ISDIR(info.st_mode):
        raise CacheMiss(f"{directory} is not a directory")
    if not _CHECKS_OWNER:
        return
    if info.st_uid != os.getuid():
        raise CacheMiss(f"{directory} belongs to another user")
    if info.st_mode & 0o022:
        # Ours, but others may write into it (an old envpin made it with the umask's mode): close it first.
        os.chmod(directory, 0o700)
        if os.stat(directory).st_mode & 0o022:
            raise CacheMiss(f"{directory} is writable by others")


def _read_entry(path: Path) -> tuple[bytes, float]:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise CacheMiss("not a regular file")
        if _CHECKS_OWNER and (info.st_uid != os.getuid() or info.st_mode & 0o022):
            raise CacheMiss("owned by another user, or writable by others")
        if info.st_size > MAX_BYTES:
            raise CacheMiss("too large")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read(), info.st_mtime
    finally:
        os.close(descriptor)


# ---------------------------------------------------------------- write


def write(stamps: str, part: str, fields: Mapping[str, Any]) -> None:
    """Best effort and atomic: a read-only home or a full disk only costs speed, never a half-written entry."""
    directory = cache_directory()
    if directory is None:
        return
    try:
        data = encode(fields, stamps, part)
    except Exception:  # noqa: BLE001 - a model this codec cannot write (a test checks the real one): no cache
        return
    path = entry_path(directory, stamps, part)
    temporary = directory / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        _check_directory(directory, create=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        descriptor = os.open(temporary, flags, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except (OSError, CacheMiss):
        try:
            temporary.unlink()
        except OSError:
            pass
        return
    prune(directory, keep=path)


def prune(directory: Path, keep: Path | None = None, now: float | None = None) -> list[str]:
    """Remove old entries: all but those of the MAX_DATABASES databases used last (`keep`'s among them), those
    unused for MAX_AGE_DAYS, temporary files older than an hour and envpin 0.1's pickles (removed unread).
    Returns the names removed."""
    now = time.time() if now is None else now
    removed: list[str] = []
    databases: dict[str, list[tuple[float, str]]] = {}  # database -> (last used, name) of each of its entries
    if keep is not None:
        databases[_database_of(keep.name)] = [(float("inf"), "")]
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        kind = _kind(name)
        if kind is None or (keep is not None and name == keep.name):
            continue
        path = directory / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if _CHECKS_OWNER and info.st_uid != os.getuid():
            continue
        age = now - info.st_mtime
        if kind == "entry" and age < MAX_AGE_DAYS * 86400:
            databases.setdefault(_database_of(name), []).append((info.st_mtime, name))
            continue
        if kind == "temporary" and age < 3600:
            continue
        if _remove(path):
            removed.append(name)
    used_last = sorted(databases.values(), key=max, reverse=True)
    for entries in used_last[MAX_DATABASES:]:
        for _, name in entries:
            if _remove(directory / name):
                removed.append(name)
    return removed


def _kind(name: str) -> str | None:
    if not name.startswith(("db-", ".db-")):
        return None
    if name.endswith(".tmp"):
        return "temporary"
    if name.startswith("db-") and name.endswith(".json"):
        return "entry"
    if name.startswith("db-") and name.endswith(".pickle"):
        return "legacy"
    return None


def _remove(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except OSError:
        return False


# ---------------------------------------------------------------- the format
#
# Line 1, the header: {"format": FORMAT, "version": FORMAT_VERSION, "stamps": ..., "digest": ...}.
# The rest, the body: {"shared": [[class name, record], ...], "database": record}.
# A record is a JSON list of its fields in order; a ComputeCapability is its text ("8.6"); a Version its
# text; a tuple a list; a dict an object (int keys as text). A record the database holds more than once
# (an arch set shared by many builds) is written once in "shared", ahead of what uses it, and where it is
# used its place in "shared" (an integer) stands for it.


def _digest(stamps: str, part: str, body: bytes) -> str:
    key = blake2b(f"{stamps}\n{part}".encode(), digest_size=32).digest()
    return blake2b(body, key=key, digest_size=32).hexdigest()


def encode(fields: Mapping[str, Any], stamps: str, part: str) -> bytes:
    """An entry for one part of a database: `fields`, the part's fields of Database (envpin.compat.files.PARTS)."""
    codecs = _Codecs()
    kinds = codecs.part_fields(part)
    if set(fields) != {name for name, _ in kinds}:
        raise CacheMiss(f"not the fields of the {part} part")
    shared: list[list[Any]] = []
    encoding = _Encoding(list(fields.values()), shared)
    encoded = {name: codecs._encode_kind(kind)(fields[name], encoding) for name, kind in kinds}
    data = json.dumps({"shared": shared, "fields": encoded}, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    header = {"format": FORMAT, "version": FORMAT_VERSION, "stamps": stamps, "part": part,
              "digest": _digest(stamps, part, data)}
    return json.dumps(header, separators=(",", ":")).encode("utf-8") + b"\n" + data


def decode(data: bytes, stamps: str, part: str) -> dict[str, Any]:
    """The fields of one part of a database, from its entry."""
    end = data.find(b"\n")
    if end < 0:
        raise CacheMiss("no header")
    header = json.loads(data[:end])
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
        raise CacheMiss("not an envpin database cache of this format")
    if header.get("stamps") != stamps or header.get("part") != part:
        raise CacheMiss("another database, another version of it, or another part")
    body = data[end + 1:]
    if header.get("digest") != _digest(stamps, part, body):
        raise CacheMiss("the digest does not match: a damaged or altered entry")
    document = json.loads(body)
    if not isinstance(document, dict) or document.keys() != {"shared", "fields"} or type(document["shared"]) is not list:
        raise CacheMiss("unexpected layout")
    decoding = _Decoding()
    codecs = _Codecs()
    for item in document["shared"]:
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str or item[0] not in codecs.classes:
            raise CacheMiss("unexpected shared record")
        decoding.shared.append(codecs.decoder(item[0])(item[1], decoding))
    kinds = codecs.part_fields(part)
    encoded = document["fields"]
    if type(encoded) is not dict or encoded.keys() != {name for name, _ in kinds}:
        raise CacheMiss(f"not the fields of the {part} part")
    return {name: codecs.field_decoder(kind)(encoded[name], decoding) for name, kind in kinds}


class _Encoding:
    def __init__(self, values: list[Any], shared: list[list[Any]]):
        self.shared = shared
        self.index: dict[Any, int] = {}  # _key(record) -> its place in `shared`
        self.keep: list[Any] = []  # holds the records `index` names by id, so that no id is reused meanwhile
        self.repeated = _repeated_records(values)


class _Decoding:
    def __init__(self) -> None:
        self.shared: list[Any] = []
        self.capabilities: dict[str, ComputeCapability] = {}


def _key(value: Record) -> Any:
    try:
        hash(value)
    except TypeError:  # a record with a dict field
        return id(value)
    return (value.__class__, value)


def _repeated_records(values: list[Any]) -> set[Any]:
    """The keys (`_key`) of the records `values` hold more than once."""
    seen: set[Any] = set()
    repeated: set[Any] = set()
    pending: list[Any] = list(values)
    while pending:
        value = pending.pop()
        if isinstance(value, Record):
            key = _key(value)
            if key in seen:
                repeated.add(key)
                continue
            seen.add(key)
            pending.extend(value._values(value))
        elif isinstance(value, (tuple, list)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    return repeated


class _Codecs:
    """Encoders and decoders for the model's classes, made from their annotations (strings)."""

    def __init__(self) -> None:
        self.classes = {
            name: value for name, value in vars(model).items()
            if isinstance(value, type) and issubclass(value, Record) and value is not Record and value.__module__ == model.__name__
        }
        self._encoders: dict[str, Any] = {}
        self._decoders: dict[str, Any] = {}

    # -- annotations: NAME, X | None, tuple[X, ...], Mapping[K, V] (a dict)

    def _parse(self, text: str) -> tuple:
        tokens = text.replace("[", " [ ").replace("]", " ] ").replace(",", " , ").replace("|", " | ").split()
        kind, rest = self._union(tokens)
        if rest:
            raise CacheMiss(f"cannot read the annotation {text!r}")
        return kind

    def _union(self, tokens: list[str]) -> tuple[tuple, list[str]]:
        first, rest = self._primary(tokens)
        options = [first]
        while rest and rest[0] == "|":
            option, rest = self._primary(rest[1:])
            options.append(option)
        if len(options) == 1:
            return first, rest
        others = [o for o in options if o != ("None",)]
        if len(options) != 2 or len(others) != 1:
            raise CacheMiss(f"unsupported union {tokens!r}")
        return ("optional", others[0]), rest

    def _primary(self, tokens: list[str]) -> tuple[tuple, list[str]]:
        if not tokens:
            raise CacheMiss("annotation ends early")
        name, rest = tokens[0], tokens[1:]
        if name in ("str", "int", "bool", "None", "Version") or name in self.classes:
            if rest and rest[0] == "[":
                raise CacheMiss(f"{name} takes no parameters")
            return (name,), rest
        if name == "tuple" and rest[:1] == ["["]:
            item, rest = self._union(rest[1:])
            if rest[:3] != [",", "...", "]"]:
                raise CacheMiss("only tuple[X, ...] is supported")
            return ("tuple", item), rest[3:]
        if name == "Mapping" and rest[:1] == ["["]:  # held as a dict
            key, rest = self._union(rest[1:])
            if rest[:1] != [","] or key not in (("str",), ("int",)):
                raise CacheMiss("only Mapping[str, V] and Mapping[int, V] are supported")
            value, rest = self._union(rest[1:])
            if rest[:1] != ["]"]:
                raise CacheMiss("Mapping takes two parameters")
            return ("dict", key, value), rest[1:]
        raise CacheMiss(f"unsupported annotation {name!r}")

    def part_fields(self, part: str) -> list[tuple[str, tuple]]:
        """The kinds of one part's fields of Database, in the part's order (only those are parsed: a warm solve
        decodes two parts of six)."""
        cls = self.classes["Database"]
        annotations = cls.__dict__.get("__annotations__", {})
        if tuple(annotations) != cls._fields:
            raise CacheMiss("Database: fields and annotations differ")
        return [(name, self._parse(annotations[name])) for name in PARTS[part][1]]

    def _fields(self, name: str) -> list[tuple[str, tuple]]:
        cls = self.classes[name]
        annotations = cls.__dict__.get("__annotations__", {})
        if tuple(annotations) != cls._fields:
            raise CacheMiss(f"{name}: fields and annotations differ")
        return [(field, self._parse(annotations[field])) for field in cls._fields]

    # -- encoding

    def encoder(self, name: str):
        if name not in self._encoders:
            cls = self.classes[name]
            if cls is ComputeCapability:
                def encode_capability(value, encoding):
                    if type(value) is not ComputeCapability:
                        raise CacheMiss("expected a ComputeCapability")
                    return f"{value.major}.{value.minor}"
                self._encoders[name] = encode_capability
            else:
                fields = [(field, self._encode_kind(kind)) for field, kind in self._fields(name)]

                def encode_record(value, encoding, cls=cls, fields=fields):
                    if type(value) is not cls:
                        raise CacheMiss(f"expected a {cls.__name__}")
                    key = _key(value)
                    if key in encoding.index:
                        return encoding.index[key]
                    encoded = [encode(getattr(value, field), encoding) for field, encode in fields]
                    if key not in encoding.repeated:
                        return encoded
                    encoding.shared.append([cls.__name__, encoded])
                    encoding.keep.append(value)
                    encoding.index[key] = len(encoding.shared) - 1
                    return encoding.index[key]
                self._encoders[name] = encode_record
        return self._encoders[name]

    def _encode_kind(self, kind: tuple):
        head = kind[0]
        if head in ("str", "int", "bool", "None"):
            wanted = {"str": str, "int": int, "bool": bool, "None": type(None)}[head]

            def plain(value, encoding):
                if type(value) is not wanted:
                    raise CacheMiss(f"expected {head}, got {type(value).__name__}")
                return value
            return plain
        if head == "Version":
            def version(value, encoding):
                if type(value) is not Version:
                    raise CacheMiss("expected a Version")
                return str(value)
            return version
        if head == "optional":
            inner = self._encode_kind(kind[1])
            return lambda value, encoding: None if value is None else inner(value, encoding)
        if head == "tuple":
            item = self._encode_kind(kind[1])

            def sequence(value, encoding):
                if type(value) is not tuple:
                    raise CacheMiss("expected a tuple")
                return [item(element, encoding) for element in value]
            return sequence
        if head == "dict":
            key_type = str if kind[1] == ("str",) else int
            item = self._encode_kind(kind[2])

            def mapping(value, encoding):
                if type(value) is not dict or any(type(key) is not key_type for key in value):
                    raise CacheMiss("expected a dict")
                return {str(key): item(element, encoding) for key, element in value.items()}
            return mapping
        return self.encoder(head)  # made now: the model's classes refer to each other without cycles

    # -- decoding

    def decoder(self, name: str):
        if name not in self._decoders:
            cls = self.classes[name]
            if cls is ComputeCapability:
                self._decoders[name] = _decode_capability
            else:
                self._decoders[name] = self._record_decoder(cls, self._fields(name))
        return self._decoders[name]

    def _record_decoder(self, cls: type[Record], fields: list[tuple[str, tuple]]):
        names = tuple(field for field, _ in fields)
        size = len(names)
        plain: list[tuple[int, tuple[type, ...]]] = []  # fields whose JSON value is the value: check the type
        converted: list[tuple[int, Any]] = []  # fields whose value is made from the JSON value
        for position, (_, kind) in enumerate(fields):
            types = _plain_types(kind)
            if types is not None:
                plain.append((position, types))
            else:
                converted.append((position, self._decode_kind(kind)))
        new = object.__new__

        def decode_record(value, decoding):
            if type(value) is int:
                if not 0 <= value < len(decoding.shared) or type(decoding.shared[value]) is not cls:
                    raise CacheMiss("a reference to a missing or different shared record")
                return decoding.shared[value]
            if type(value) is not list or len(value) != size:
                raise CacheMiss(f"expected {cls.__name__}")
            for position, types in plain:
                if type(value[position]) not in types:
                    raise CacheMiss(f"{cls.__name__}.{names[position]}: wrong type")
            for position, convert in converted:
                value[position] = convert(value[position], decoding)
            instance = new(cls)
            instance.__dict__.update(zip(names, value, strict=True))
            return instance
        return decode_record

    def field_decoder(self, kind: tuple):
        """A decoder for a value of this kind, plain ones included (a record's decoder checks those in place)."""
        types = _plain_types(kind)
        if types is None:
            return self._decode_kind(kind)

        def plain(value, decoding):
            if type(value) not in types:
                raise CacheMiss("wrong type")
            return value
        return plain

    def _decode_kind(self, kind: tuple):
        head = kind[0]
        if head == "Version":
            def version(value, decoding):
                if type(value) is not str:
                    raise CacheMiss("expected a version")
                return Version(value)
            return version
        if head == "optional":  # of a kind that is not plain (_plain_types covers those)
            inner = self._decode_kind(kind[1])
            return lambda value, decoding: None if value is None else inner(value, decoding)
        if head == "tuple":
            element_types = _plain_types(kind[1])
            if element_types is not None:
                def plain_sequence(value, decoding):
                    if type(value) is not list:
                        raise CacheMiss("expected a list")
                    for element in value:
                        if type(element) not in element_types:
                            raise CacheMiss("wrong type in a list")
                    return tuple(value)
                return plain_sequence
            item = self._decode_kind(kind[1])

            def sequence(value, decoding):
                if type(value) is not list:
                    raise CacheMiss("expected a list")
                return tuple([item(element, decoding) for element in value])
            return sequence
        if head == "dict":
            int_keys = kind[1] == ("int",)
            value_types = _plain_types(kind[2])
            if value_types is not None:
                def plain_mapping(value, decoding):
                    if type(value) is not dict:
                        raise CacheMiss("expected an object")
                    for element in value.values():
                        if type(element) not in value_types:
                            raise CacheMiss("wrong type in an object")
                    return {int(key): element for key, element in value.items()} if int_keys else value
                return plain_mapping
            item = self._decode_kind(kind[2])

            def mapping(value, decoding):
                if type(value) is not dict:
                    raise CacheMiss("expected an object")
                result = {key: item(element, decoding) for key, element in value.items()}
                return {int(key): element for key, element in result.items()} if int_keys else result
            return mapping
        if head in self.classes:
            return self.decoder(head)  # made now: the model's classes refer to each other without cycles
        raise CacheMiss(f"no decoder for {kind!r}")


_PLAIN = {"str": (str,), "int": (int,), "bool": (bool,), "None": (type(None),)}


def _plain_types(kind: tuple) -> tuple[type, ...] | None:
    """The JSON types of a kind stored as itself (str, int, bool, None, optionally None), else None."""
    if kind[0] in _PLAIN:
        return _PLAIN[kind[0]]
    if kind[0] == "optional" and kind[1][0] in _PLAIN:
        return _PLAIN[kind[1][0]] + (type(None),)
    return None


def _decode_capability(value, decoding: _Decoding) -> ComputeCapability:
    found = decoding.capabilities.get(value) if type(value) is str else None
    if found is None:
        if type(value) is not str:
            raise CacheMiss("expected a compute capability")
        major, dot, minor = value.partition(".")
        if not (dot and major.isdigit() and minor.isdigit() and major.isascii() and minor.isascii()):
            raise CacheMiss("expected a compute capability")
        found = decoding.capabilities[value] = ComputeCapability(int(major), int(minor))
    return found
