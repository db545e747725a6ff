"""A PEP 503 / PEP 691 package index on 127.0.0.1 (http.server in a thread), and a wheel builder.

`Index.add(index_path, wheel)` publishes a wheel under an index (`simple` = the default index, `whl/cpu` = an
accelerator index); project pages are generated from the files (HTML, or JSON when the client asks for
`application/vnd.pypi.simple.v1+json`), each link carrying the file's sha256. Files can be served slowly
(a trickle, to kill an install mid-download) or as another valid wheel than the one hashed (a tampered mirror).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Index:
    root: Path
    projects: dict[str, dict[str, list[Path]]] = field(default_factory=dict)  # index path -> project -> files
    hashes: dict[Path, str] = field(default_factory=dict)
    slow: set[str] = field(default_factory=set)  # file names served at a trickle
    corrupted: dict[str, Path] = field(default_factory=dict)  # file name -> other bytes served under it
    requests: list[str] = field(default_factory=list)
    url: str = ""

    def add(self, index_path: str, wheel: Path) -> None:
        """Publish a wheel (linked, not copied: the real torch wheel is 192 MB)."""
        files = self.root / "files" / index_path.replace("/", "-")  # one folder per index: names may repeat
        files.mkdir(parents=True, exist_ok=True)
        served = files / wheel.name
        if not served.exists():
            served.symlink_to(wheel.resolve())
        project = canonical(wheel.name.split("-")[0])
        self.projects.setdefault(index_path, {}).setdefault(project, []).append(served)
        self.hashes[served] = sha256_of(served)

    def file_url(self, index_path: str, name: str) -> str:
        return f"{self.url}/files/{index_path.replace('/', '-')}/{quote(name)}"

    def start(self) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server


def _handler(index: Index):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_HEAD(self):  # uv asks before a range request; no ranges here, so it downloads whole files
            path = unquote(self.path.split("?")[0])
            file = index.root / "files" / path[len("/files/"):]
            if not path.startswith("/files/") or not file.is_file():
                return self.send_error(404)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(file.stat().st_size))
            self.end_headers()

        def handle_one_request(self):  # a client killed mid-download is a test's doing, not an error
            try:
                super().handle_one_request()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def do_GET(self):
            path = unquote(self.path.split("?")[0])
            index.requests.append(path)
            if path.startswith("/files/"):
                return self._file(index.root / "files" / path[len("/files/"):])
            found = re.fullmatch(r"/(.+)/([^/]+)/?", path)
            if found and found[1] in index.projects and found[2] in index.projects[found[1]]:
                return self._page(found[1], found[2])
            self.send_error(404)

        def _page(self, index_path: str, project: str):
            files = index.projects[index_path][project]
            depth = "../" * (index_path.count("/") + 2)
            if JSON_TYPE in self.headers.get("Accept", ""):
                body = json.dumps({"meta": {"api-version": "1.0"}, "name": project, "files": [
                    {"filename": f.name, "url": f"{depth}files/{f.parent.name}/{quote(f.name)}", "hashes": {"sha256": index.hashes[f]}}
                    for f in files]}).encode()
                content_type = JSON_TYPE
            else:
                links = "".join(f'<a href="{depth}files/{f.parent.name}/{quote(f.name)}#sha256={index.hashes[f]}">{html.escape(f.name)}</a>\n'
                                for f in files)
                body = f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode()
                content_type = "text/html"
            self._send(body, content_type)

        def _file(self, path: Path):
            if not path.is_file():
                return self.send_error(404)
            if path.name in index.corrupted:  # a tampered mirror: a valid wheel, but not the one hashed
                return self._send(index.corrupted[path.name].read_bytes(), "application/octet-stream")
            size = path.stat().st_size
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            with open(path, "rb") as handle:
                if path.name in index.slow:
                    for block in iter(lambda: handle.read(256), b""):
                        self.wfile.write(block)
                        self.wfile.flush()
                        time.sleep(0.5)
                else:
                    shutil.copyfileobj(handle, self.wfile, 1 << 20)

        def _send(self, body: bytes, content_type: str):
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def build_wheel(directory: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = (),
                scripts: dict[str, str] | None = None, tag: str = "py3-none-any") -> Path:
    """A real wheel (zip, METADATA, WHEEL, RECORD with hashes) that pip and uv install."""
    directory.mkdir(parents=True, exist_ok=True)
    distribution = re.sub(r"[-.]+", "_", name)
    info = f"{distribution}-{version}.dist-info"
    metadata = "".join([f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                        *(f"Requires-Dist: {r}\n" for r in requires)])
    contents = dict(files)
    contents[f"{info}/METADATA"] = metadata
    contents[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: envpin-tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
    if scripts:
        contents[f"{info}/entry_points.txt"] = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = "\n".join(record) + "\n"
    wheel = directory / f"{distribution}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), text)
    return wheel
