"""The recorded snapshot of download.pytorch.org that scripts/audit-plans resolves PyTorch-index plans against.

tests/fixtures/torch_index/snapshot.json holds, per index (`whl/cu124`) and project, the wheel files recorded
from a public source that lists them (each row names its source; the sources say where each list came from and
how complete it is). `serve_snapshot` serves them on 127.0.0.1 as a PEP 691 JSON / PEP 503 HTML simple index
(`/whl/cu124/torch/`), each link pointing at the file's real download.pytorch.org URL with its sha256: enough
for a resolver to see which versions exist for which platforms and Pythons (file names), never a download.

`--record` re-reads the same pages from download.pytorch.org (PEP 691 JSON) where it is reachable, and keeps
the files of the versions the snapshot already lists for each page; scripts/refresh runs it after a refresh.
"""

from __future__ import annotations

import contextlib
import datetime
import html
import json
import sys
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = REPO / "tests" / "fixtures" / "torch_index" / "snapshot.json"
UPSTREAM = "https://download.pytorch.org"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def load(path: Path = SNAPSHOT) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def file_url(index: str, filename: str) -> str:
    return f"{UPSTREAM}/{index}/{quote(filename)}"


def _page(document: dict, path: str) -> tuple[str, list[dict]] | None:
    """The (project, files) of `/whl/cu124/torch/`, or None."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if len(parts) < 2:
        return None
    index, project = "/".join(parts[:-1]), parts[-1]
    files = document["indexes"].get(index, {}).get(project)
    return None if files is None else (index, files)


@contextlib.contextmanager
def serve_snapshot(path: Path = SNAPSHOT) -> Iterator[str]:
    """Serve the snapshot on 127.0.0.1 while the block runs; yields the base URL (`http://127.0.0.1:PORT`)."""
    document = load(path)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):
            found = _page(document, self.path)
            if found is None:
                self.send_error(404)
                return
            index, files = found
            project = self.path.rstrip("/").split("/")[-1]
            if JSON_TYPE in (self.headers.get("Accept") or ""):
                body = json.dumps({"meta": {"api-version": "1.0"}, "name": project, "files": [
                    {"filename": f["filename"], "url": file_url(index, f["filename"]), "hashes": {"sha256": f["sha256"]}}
                    for f in files]}).encode()
                kind = JSON_TYPE
            else:
                links = "".join(f'<a href="{html.escape(file_url(index, f["filename"]))}#sha256={f["sha256"]}">'
                                f'{html.escape(f["filename"])}</a><br/>\n' for f in files)
                body = f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode()
                kind = "text/html"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _version_of(filename: str) -> str:
    return filename.split("-")[1].split("+")[0]


def record(path: Path = SNAPSHOT, base: str = UPSTREAM, timeout: float = 20) -> list[str]:
    """Re-read every page of the snapshot from `base`; returns what was read (raises OSError when unreachable)."""
    document = load(path)
    today = datetime.date.today().isoformat()
    read = []
    for index, projects in document["indexes"].items():
        for project, files in projects.items():
            versions = {_version_of(f["filename"]) for f in files}
            request = urllib.request.Request(f"{base}/{index}/{project}/", headers={"Accept": JSON_TYPE})
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - https or loopback only
                page = json.load(response)
            source = f"{base}/{index}/{project}/ read {today}"
            document["sources"].setdefault(source, {"title": f"PEP 691 page {index}/{project} of {base}",
                                                    "url": f"{base}/{index}/{project}/",
                                                    "grade": "primary", "read": today,
                                                    "complete_for": {f"{index}/{project}": sorted(versions)}})
            projects[project] = [{"filename": f["filename"], "sha256": f["hashes"]["sha256"], "source": source}
                                 for f in page["files"] if _version_of(f["filename"]) in versions
                                 and f["filename"].endswith(".whl") and "sha256" in f.get("hashes", {})]
            read.append(f"{index}/{project}: {len(projects[project])} files of {', '.join(sorted(versions))}")
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return read


def main(argv: list[str]) -> int:
    if argv[:1] != ["--record"]:
        print(__doc__.strip().split("\n\n")[0])
        print("usage: scripts/torch_index_snapshot.py --record [BASE_URL]")
        return 2
    base = argv[1] if len(argv) > 1 else UPSTREAM
    try:
        for line in record(SNAPSHOT, base):
            print(line)
    except (OSError, ValueError, KeyError) as error:
        print(f"torch index snapshot: {base} not read ({error.__class__.__name__}: {error}); the recorded snapshot is kept",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
