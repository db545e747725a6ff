"""Database cache entries as the tests write and alter them: from and to their records in one JSON document,
{"shared": [[class name, record], ...], "fields": {field: value, ...}}, signed as envpin.compat.cache signs an
entry (each record a blob of its own, with its digest), so that a test can make an entry of any shape, or alter
one and sign it again (what only someone who can write the file as the user could do)."""

from __future__ import annotations

import json
from typing import Any

from envpin.compat import cache


def entry_of(document: Any, stamps: str, part: str) -> bytes:
    """A signed entry holding `document`. Where it is not of the document form, it is the index itself."""
    blobs: list[bytes] = []

    def blob(value: Any) -> int:
        blobs.append(json.dumps(value, separators=(",", ":")).encode())
        return len(blobs) - 1

    index = document
    if isinstance(document, dict) and isinstance(document.get("fields"), dict) and isinstance(document.get("shared"), list):
        codecs = cache._Codecs()
        kinds = dict(codecs.part_fields(part))
        shared = [[item[0], blob(item[1])] if isinstance(item, list) and len(item) == 2 else item
                  for item in document["shared"]]

        def layout(kind: tuple | None, value: Any) -> dict[str, Any]:
            lazy = cache._lazy(codecs, kind) if kind is not None else None
            if kind is not None and lazy == "record" and isinstance(value, list):  # a record's fields in order, each laid out on its own
                inner = codecs._fields(kind[0])
                return {"record": {field: layout(of, item) for (field, of), item in zip(inner, value, strict=True)}}
            if lazy == "items" and isinstance(value, list):
                return {"items": [blob(item) for item in value]}
            if lazy == "entries" and isinstance(value, dict):
                return {"entries": {key: blob(item) for key, item in value.items()}}
            return {"value": blob(value)}

        fields = {name: layout(kinds.get(name), value) for name, value in document["fields"].items()}
        index = {**document, "shared": shared, "fields": fields, "blobs": len(blobs)}
    key = cache._digest_key(stamps, part)
    line = json.dumps(index, separators=(",", ":")).encode()
    header = {"format": cache.FORMAT, "version": cache.FORMAT_VERSION, "stamps": stamps, "part": part,
              "digest": cache._key_of(key, line)}
    return b"\n".join([json.dumps(header).encode(), line, *(cache._key_of(key, b).encode() + b" " + b for b in blobs)])


def document_of(data: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the header, the document) of an entry, its records read back into the document form (name keys left out)."""
    lines = data.split(b"\n")
    header, index = json.loads(lines[0]), json.loads(lines[1])

    def blob(number: int) -> Any:
        return json.loads(lines[2 + number].partition(b" ")[2])

    def value(layout: dict[str, Any]) -> Any:
        if "record" in layout:
            return [value(inner) for inner in layout["record"].values()]
        if "items" in layout:
            return [blob(number) for number in layout["items"]]
        if "entries" in layout:
            return {key: blob(number) for key, number in layout["entries"].items()}
        return blob(layout["value"])

    fields = {name: value(layout) for name, layout in index["fields"].items()}
    return header, {"shared": [[name, blob(number)] for name, number in index["shared"]], "fields": fields}
