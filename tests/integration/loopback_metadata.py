"""A package index on 127.0.0.1 that serves recorded file lists and METADATA, not wheels (http.server in a thread).

Each index path (`simple`, `whl/cu118`) lists its projects' files as PEP 691 JSON, each with its recorded sha256
and requires-python and `core-metadata: true`, and serves each wheel's METADATA as its PEP 658 `<file>.metadata`.
A resolver (uv) needs nothing else to resolve and hash a lock: the wheels themselves (hundreds of MB for torch
and tensorflow) are never fetched, and a request for one is a 404 the test would see.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class MetadataIndex:
    def __init__(self) -> None:
        self.files: dict[str, dict[str, list[dict]]] = {}  # index path -> project -> recorded files
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, index_path: str, project: str, recorded: dict) -> None:
        """A recorded file (filename, sha256, requires_python, metadata) under an index path."""
        self.files.setdefault(index_path, {}).setdefault(canonical(project), []).append(recorded)

    def __enter__(self) -> MetadataIndex:
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(index: MetadataIndex):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):  # noqa: N802 - http.server's name
            path = unquote(self.path.split("?")[0])
            index.requests.append(path)
            served = re.fullmatch(r"/files/(.+)/([^/]+)\.metadata", path)
            if served:
                for projects in (p for i, p in index.files.items() if i.replace("/", "-") == served[1]):
                    for recorded in (f for files in projects.values() for f in files):
                        if recorded["filename"] == served[2] and recorded.get("metadata"):
                            return self._send(recorded["metadata"].encode(), "text/plain")
                return self.send_error(404)
            page = re.fullmatch(r"/(.+)/([^/]+)/?", path)
            if page and page[1] in index.files and canonical(page[2]) in index.files[page[1]]:
                return self._page(page[1], canonical(page[2]))
            self.send_error(404)

        def _page(self, index_path: str, project: str):
            folder = index_path.replace("/", "-")
            files = [{"filename": f["filename"], "url": f"{index.url}/files/{folder}/{quote(f['filename'])}",
                      "hashes": {"sha256": f["sha256"]}, "requires-python": f.get("requires_python"),
                      **({"core-metadata": True} if f.get("metadata") else {})}
                     for f in index.files[index_path][project]]
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files}).encode()
            self._send(body, JSON_TYPE)

        def _send(self, body: bytes, content_type: str):
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
