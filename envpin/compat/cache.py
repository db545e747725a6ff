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
from collections.abc import Callable, Iterator, Mapping, Sequence
from json.decoder import JSONDecoder
from json.scanner import make_scanner
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
FORMAT_VERSION = 3  # 2: one entry per part of the database; 3: a record a line, each decoded when first used
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


def read(stamps: str, part: str, validated: Callable[[], Mapping[str, Any]] | None = None) -> dict[str, Any] | None:
    """The cached fields of one part of the database these stamps name, or None (a miss, whatever the reason:
    never an exception). Its records are decoded when first used; one that fails its check then is taken from
    `validated()`, the part's fields validated from its YAML (see `decode`)."""
    directory = cache_directory()
    if directory is None:
        return None
    path = entry_path(directory, stamps, part)
    try:
        _check_directory(directory, create=False)
        data, modified = _read_entry(path)
        fields = decode(data, stamps, part, validated)
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
# One JSON text a line, so that a record is read only when it is used:
# line 1, the header: {"format": FORMAT, "version": FORMAT_VERSION, "stamps": ..., "part": ..., "digest": ...},
#   the digest that of line 2;
# line 2, the index: {"shared": [[class name, blob], ...], "fields": {field: layout, ...}, "blobs": how many};
# then the blobs, blob n on line 3 + n: its digest (BLAKE2b keyed by the stamps and the part), a space, its JSON.
# A field's layout is {"value": blob}, or for a tuple of records {"items": [blob, ...]} (the GPUs also with
# "keys": {name key: item}, envpin.compat.gpus's lookup), or for a mapping to records {"entries": {key: blob}}, or
# for the accelerator tables (_TABLES) {"record": {field: layout, ...}}, each table laid out so.
# A record is a JSON list of its fields in order; a ComputeCapability is its text ("8.6"); a Version its text;
# a tuple a list; a dict an object (int keys as text). A record the part holds more than once (an arch set shared
# by many builds) is a blob of its own, in "shared", and where it is used its place there (an integer) stands for
# it. Reading an entry parses lines 1 and 2; each blob is checked and decoded when its record is first used, so
# a solve's cost does not grow with the records it does not touch.

_SCAN = make_scanner(JSONDecoder())  # type: ignore[arg-type]  # typeshed types the C scanner as its own class
_LAZY_KEYS = {"gpus": "names"}  # a tuple field whose records a solve finds by a key -> the key's record field


def _key_of(digest_key: bytes, text: bytes) -> str:
    return blake2b(text, key=digest_key, digest_size=16).hexdigest()


def _digest_key(stamps: str, part: str) -> bytes:
    return blake2b(f"{stamps}\n{part}".encode(), digest_size=32).digest()


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode(fields: Mapping[str, Any], stamps: str, part: str) -> bytes:
    """An entry for one part of a database: `fields`, the part's fields of Database (envpin.compat.files.PARTS)."""
    codecs = _Codecs()
    kinds = codecs.part_fields(part)
    if set(fields) != {name for name, _ in kinds}:
        raise CacheMiss(f"not the fields of the {part} part")
    encoding = _Encoding(list(fields.values()))
    layouts = {name: _layout(codecs, encoding, name, kind, fields[name]) for name, kind in kinds}
    key = _digest_key(stamps, part)
    index = _json({"shared": encoding.shared, "fields": layouts, "blobs": len(encoding.blobs)})
    header = {"format": FORMAT, "version": FORMAT_VERSION, "stamps": stamps, "part": part, "digest": _key_of(key, index)}
    blobs = [_key_of(key, blob).encode() + b" " + blob for blob in encoding.blobs]
    return b"\n".join([_json(header), index, *blobs])


def _layout(codecs: _Codecs, encoding: _Encoding, name: str, kind: tuple, value: Any) -> dict[str, Any]:
    """How one field is written: record by record, a record of tables (the accelerator tables) table by table, or
    whole."""
    layout: dict[str, Any]
    lazy = _lazy(codecs, kind)
    if lazy == "record":
        if type(value) is not codecs.classes[kind[0]]:
            raise CacheMiss(f"expected a {kind[0]}")
        return {"record": {field: _layout(codecs, encoding, field, inner, getattr(value, field))
                           for field, inner in codecs._fields(kind[0])}}
    if lazy == "items":
        item = codecs._encode_kind(kind[1])
        if type(value) is not tuple:
            raise CacheMiss("expected a tuple")
        layout = {"items": [encoding.blob(item(element, encoding)) for element in value]}
        if name in _LAZY_KEYS:
            from envpin.compat.gpus import gpu_name_key  # noqa: PLC0415 - only when writing an entry

            layout["keys"] = {gpu_name_key(key): position for position, element in enumerate(value)
                              for key in getattr(element, _LAZY_KEYS[name])}
        return layout
    if lazy == "entries":
        item = codecs._encode_kind(kind[2])
        if type(value) is not dict or any(type(key) is not (str if kind[1] == ("str",) else int) for key in value):
            raise CacheMiss("expected a dict")
        return {"entries": {str(key): encoding.blob(item(element, encoding)) for key, element in value.items()}}
    return {"value": encoding.blob(codecs._encode_kind(kind)(value, encoding))}


def decode(data: bytes, stamps: str, part: str,
           validated: Callable[[], Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The fields of one part of a database, from its entry: a tuple or mapping of records is a `CachedRecords`
    or `CachedMapping` that decodes each record when it is first used. A record that fails its check then (a
    damaged or altered blob) is a miss of that field: it is taken from `validated()`, the part's fields as the YAML
    gives them, or, without it, the CacheMiss is raised there."""
    lines = data.split(b"\n")
    if len(lines) < 2:
        raise CacheMiss("no header")
    header = json.loads(lines[0])
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
        raise CacheMiss("not an envpin database cache of this format")
    if header.get("stamps") != stamps or header.get("part") != part:
        raise CacheMiss("another database, another version of it, or another part")
    key = _digest_key(stamps, part)
    if header.get("digest") != _key_of(key, lines[1]):
        raise CacheMiss("the digest does not match: a damaged or altered entry")
    index = json.loads(lines[1])
    if not isinstance(index, dict) or index.keys() != {"shared", "fields", "blobs"} or type(index["shared"]) is not list:
        raise CacheMiss("unexpected layout")
    if index["blobs"] != len(lines) - 2:  # a truncated entry is a miss now, not when a solve reaches what it lost
        raise CacheMiss("the entry does not hold all its records")
    codecs = _Codecs()
    for item in index["shared"]:
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str or item[0] not in codecs.classes:
            raise CacheMiss("unexpected shared record")
    decoding = _Decoding(lines[2:], key, index["shared"], codecs)
    kinds = codecs.part_fields(part)
    layouts = index["fields"]
    if type(layouts) is not dict or layouts.keys() != {name for name, _ in kinds}:
        raise CacheMiss(f"not the fields of the {part} part")
    fields: dict[str, Any] = {}
    for name, kind in kinds:
        whole = (lambda name=name: validated()[name]) if validated is not None else None
        fields[name] = _field(codecs, decoding, name, kind, layouts[name], whole)
    return fields


def _field(codecs: _Codecs, decoding: _Decoding, name: str, kind: tuple, layout: Any,
           fallback: Callable[[], Any] | None) -> Any:
    """One field from its layout (see `_layout`); `fallback()`: the field as validated from the YAML."""
    lazy = _lazy(codecs, kind)
    if type(layout) is not dict:
        raise CacheMiss("unexpected layout")
    if lazy == "record" and layout.keys() == {"record"} and type(layout["record"]) is dict:
        cls, inner = codecs.classes[kind[0]], codecs._fields(kind[0])
        if layout["record"].keys() != {field for field, _ in inner}:
            raise CacheMiss(f"unexpected layout of {name}")
        def table(field: str) -> Callable[[], Any] | None:
            return None if fallback is None else lambda: getattr(fallback(), field)

        instance = object.__new__(cls)
        instance.__dict__.update({field: _field(codecs, decoding, field, of, layout["record"][field], table(field))
                                  for field, of in inner})
        return instance
    if lazy == "items" and type(layout.get("items")) is list and layout.keys() <= {"items", "keys"}:
        keys = layout.get("keys")
        if keys is not None and type(keys) is not dict:
            raise CacheMiss("unexpected layout")
        return CachedRecords(decoding, codecs._decode_kind(kind[1]), layout["items"], keys, fallback)
    if lazy == "entries" and layout.keys() == {"entries"} and type(layout["entries"]) is dict:
        return CachedMapping(decoding, codecs._decode_kind(kind[2]), layout["entries"], kind[1] == ("int",), fallback)
    if lazy is None and layout.keys() == {"value"}:
        return codecs.field_decoder(kind)(decoding.blob(layout["value"]), decoding)
    raise CacheMiss(f"unexpected layout of {name}")


# A field of Database that is one record of tables: written table by table, each record by record.
_TABLES = ("AcceleratorTables",)


def _lazy(codecs: _Codecs, kind: tuple) -> str | None:
    """How a field of this kind is cached: record by record ("items", "entries"), table by table ("record") or
    whole (None)."""
    if kind[0] in _TABLES:
        return "record"
    if kind[0] == "tuple" and kind[1][0] in codecs.classes:
        return "items"
    if kind[0] == "dict" and kind[2][0] in codecs.classes:
        return "entries"
    return None


class _Encoding:
    def __init__(self, values: list[Any]):
        self.blobs: list[bytes] = []
        self.shared: list[list[Any]] = []  # [class name, blob]
        self.index: dict[Any, int] = {}  # _key(record) -> its place in `shared`
        self.keep: list[Any] = []  # holds the records `index` names by id, so that no id is reused meanwhile
        self.repeated = _repeated_records(values)

    def blob(self, encoded: Any) -> int:
        self.blobs.append(_json(encoded))
        return len(self.blobs) - 1


class _Decoding:
    """One entry's blobs, each checked and parsed when asked for, and its shared records, each decoded once."""

    def __init__(self, lines: list[bytes], key: bytes, shared: list[list[Any]], codecs: _Codecs) -> None:
        self.lines, self.key, self.layout, self.codecs = lines, key, shared, codecs
        self.shared: dict[int, Any] = {}
        self.capabilities: dict[str, ComputeCapability] = {}

    def blob(self, number: Any) -> Any:
        if type(number) is not int or not 0 <= number < len(self.lines):
            raise CacheMiss("a reference to a missing blob")
        digest, _, text = self.lines[number].partition(b" ")
        if digest != _key_of(self.key, text).encode():
            raise CacheMiss("the digest does not match: a damaged or altered record")
        string = text.decode("utf-8")
        try:
            # json's own scanner, without json.loads's checks and conversions around it: a blob is one JSON text
            # as json.dumps wrote it, and a solve reads a hundred of them
            value, end = _SCAN(string, 0)
        except StopIteration:
            raise CacheMiss("not JSON") from None
        if end != len(string):
            raise CacheMiss("not one JSON text")
        return value

    def shared_record(self, position: int, cls: type) -> Any:
        found = self.shared.get(position)
        if found is None:
            if not 0 <= position < len(self.layout) or self.layout[position][0] != cls.__name__:
                raise CacheMiss("a reference to a missing or different shared record")
            name, number = self.layout[position]
            found = self.shared[position] = self.codecs.decoder(name)(self.blob(number), self)
        return found


class CachedRecords(Sequence[Any]):
    """A tuple field of the database as its cache entry holds it: each record decoded when first used, newest
    first as the tuple is. Equal to the tuple, and as immutable (iterating decodes only as far as it goes)."""

    __slots__ = ("_decode", "_decoded", "_decoding", "_fallback", "_keys", "_numbers", "_whole")

    def __init__(self, decoding: _Decoding, decode_item, numbers: list[Any], keys: dict[str, Any] | None,
                 fallback: Callable[[], tuple] | None) -> None:
        self._decoding, self._decode, self._numbers, self._keys = decoding, decode_item, numbers, keys
        self._fallback = fallback
        self._decoded: dict[int, Any] = {}
        self._whole: tuple | None = None  # the validated tuple, once a record failed its check

    def _item(self, position: int) -> Any:
        if self._whole is not None:
            return self._whole[position]
        found = self._decoded.get(position)
        if found is None:
            try:
                found = self._decoded[position] = self._decode(self._decoding.blob(self._numbers[position]),
                                                               self._decoding)
            except (CacheMiss, ValueError, TypeError, KeyError, IndexError):
                if self._fallback is None:
                    raise CacheMiss("a damaged record") from None
                self._whole = tuple(self._fallback())
                return self._whole[position]
        return found

    def __len__(self) -> int:
        return len(self._numbers) if self._whole is None else len(self._whole)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self._item(position) for position in range(len(self))[index])
        return self._item(range(len(self))[index])

    def __iter__(self) -> Iterator[Any]:
        return (self._item(position) for position in range(len(self)))

    def keyed(self, key: str) -> Any:
        """The record whose name key (envpin.compat.gpus.gpu_name_key) is `key`, or None; None too where the entry
        has no such index (then the caller indexes the records itself)."""
        if self._keys is None or self._whole is not None:
            raise LookupError("no index")
        position = self._keys.get(key)
        if position is None:
            return None
        if type(position) is not int or not 0 <= position < len(self._numbers):
            raise LookupError("a damaged index")
        return self._item(position)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, CachedRecords)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


class CachedMapping(Mapping[Any, Any]):
    """A mapping field of the database as its cache entry holds it: each value decoded when first asked for.
    Equal to the dict, and as immutable."""

    __slots__ = ("_decode", "_decoded", "_decoding", "_entries", "_fallback", "_whole")

    def __init__(self, decoding: _Decoding, decode_item, entries: dict[Any, Any], int_keys: bool,
                 fallback: Callable[[], Mapping[Any, Any]] | None) -> None:
        if int_keys:
            if not all(key.isascii() and key.isdigit() for key in entries):
                raise CacheMiss("expected integer keys")
            entries = {int(key): number for key, number in entries.items()}
        self._decoding, self._decode, self._entries, self._fallback = decoding, decode_item, entries, fallback
        self._decoded: dict[Any, Any] = {}
        self._whole: Mapping[Any, Any] | None = None

    def __getitem__(self, key: Any) -> Any:
        if self._whole is not None:
            return self._whole[key]
        found = self._decoded.get(key)
        if found is None:
            number = self._entries[key]  # KeyError, as a dict's
            try:
                found = self._decoded[key] = self._decode(self._decoding.blob(number), self._decoding)
            except (CacheMiss, ValueError, TypeError, KeyError, IndexError):
                if self._fallback is None:
                    raise CacheMiss("a damaged record") from None
                self._whole = self._fallback()
                return self._whole[key]
        return found

    def __iter__(self) -> Iterator[Any]:
        return iter(self._entries if self._whole is None else self._whole)

    def __len__(self) -> int:
        return len(self._entries if self._whole is None else self._whole)

    def __contains__(self, key: object) -> bool:
        return key in (self._entries if self._whole is None else self._whole)

    def __repr__(self) -> str:
        return repr(dict(self))


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
        if text not in _PARSED:
            _PARSED[text] = self._parse_text(text)
        return _PARSED[text]

    def _parse_text(self, text: str) -> tuple:
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
                    encoding.shared.append([cls.__name__, encoding.blob(encoded)])
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
                return decoding.shared_record(value, cls)
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
        if head in self.classes:  # made when first used: a solve decodes some of the model's classes only
            made: list[Any] = []

            def record(value, decoding, head=head):
                if not made:
                    made.append(self.decoder(head))
                return made[0](value, decoding)
            return record
        raise CacheMiss(f"no decoder for {kind!r}")


_PARSED: dict[str, tuple] = {}  # annotation text -> its kind: the model's classes are the same for every entry
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
