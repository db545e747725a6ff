"""A PyPI on 127.0.0.1 for the refresh tests: real HTTP (http.server in a thread), real Range answers.

Routes: `/pypi/<name>/json` (JSON API), `/simple/<name>/` (PEP 691 JSON), `/files/<file>` (wheels, with
`Range: bytes=a-b` and `bytes=-n` answered by 206 as RFC 9110 says), `/files/<file>.metadata` (PEP 658).
Anything else is a 404. A route can be made slow, broken or missing to test the client's failure paths.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    body: bytes
    content_type: str = "application/octet-stream"
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering (a hung server)
    ranges: bool = True  # honour Range requests (False: always the whole body, as a broken mirror would)


class LoopbackPyPI:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.log: list[tuple[str, str | None, int]] = []  # (path, Range header, bytes sent)
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LoopbackPyPI:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add(self, path: str, body: bytes, content_type: str = "application/octet-stream", **options) -> None:
        self.routes[path] = Route(body, content_type, **options)

    def bytes_sent(self, path: str) -> int:
        return sum(sent for logged, _, sent in self.log if logged == path)

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms stalls

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.split("?", 1)[0]
                route = server.routes.get(path)
                if route is None:
                    return self._send(path, 404, b"not found", "text/plain")
                if route.delay:
                    time.sleep(route.delay)
                wanted = self.headers.get("Range")
                if route.status != 200 or not wanted or not route.ranges:
                    return self._send(path, route.status, route.body, route.content_type, wanted)
                span = _byte_range(wanted, len(route.body))
                if span is None:
                    return self._send(path, 416, b"", route.content_type, wanted,
                                      {"Content-Range": f"bytes */{len(route.body)}"})
                first, last = span
                self._send(path, 206, route.body[first : last + 1], route.content_type, wanted,
                           {"Content-Range": f"bytes {first}-{last}/{len(route.body)}"})

            def _send(self, path, status, body, content_type, wanted=None, headers=None) -> None:
                server.log.append((path, wanted, len(body)))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Accept-Ranges", "bytes")
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

        return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A client that hung up (its timeout ran out) is what some tests do on purpose: no traceback."""


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match or (not match.group(1) and not match.group(2)):
        return None
    if not match.group(1):  # bytes=-n: the last n bytes (all of them when n >= size)
        return max(0, size - int(match.group(2))), size - 1
    first = int(match.group(1))
    last = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
    return (first, last) if first <= last else None
