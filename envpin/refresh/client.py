"""HTTP access to PyPI: the JSON API, the PEP 691 simple API, and wheel METADATA.

METADATA comes from the PEP 658 `.metadata` file where the simple API declares one, and otherwise from the
wheel itself by HTTP range requests: the zip's end record and central directory from the tail of the file,
then the one `*.dist-info/METADATA` member, so a 900 MB torch wheel costs a few small requests (this is what
pip's lazy wheel does). A server that ignores `Range:` is an error, never a whole-wheel download.

Every request has a timeout and a bounded number of attempts (timeouts, connection errors, 429 and 5xx are
retried with a doubling pause; 404 and malformed answers are not). Failures raise FetchError naming the URL
and the reason in one line, which the caller puts in the report. Base URLs are settings, so tests point the
client at a server on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import time
import zipfile
from collections.abc import Callable
from typing import Any

import requests

from envpin import __version__
from envpin.base.record import Record, record

DEFAULT_JSON_URL = "https://pypi.org/pypi"
DEFAULT_SIMPLE_URL = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


@record
class ClientSettings(Record):
    json_url: str = DEFAULT_JSON_URL
    simple_url: str = DEFAULT_SIMPLE_URL
    timeout: float = 20.0  # seconds to connect, and between bytes of an answer
    attempts: int = 3  # tries per request
    backoff: float = 1.0  # pause before the second try, doubled before each further one
    max_document_bytes: int = 64 << 20  # tensorflow's JSON document is 1.5 MB
    max_metadata_bytes: int = 4 << 20
    max_range_bytes: int = 64 << 20  # per wheel: the end record, the central directory and METADATA
    range_chunk: int = 64 << 10  # the smallest range asked for: one request covers the tail's directory


DEFAULT_SETTINGS = ClientSettings()


class FetchError(Exception):
    """One request that failed for good: `<url>: <reason>`."""

    def __init__(self, url: str, reason: str):
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@record
class Fetched(Record):
    """A document and the URL it really came from (relative file URLs are resolved against it)."""

    url: str
    data: Any


class PyPIClient:
    def __init__(self, settings: ClientSettings = DEFAULT_SETTINGS, session: requests.Session | None = None):
        self.settings = settings
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = f"envpin-refresh/{__version__}"
        self.requests_made = 0

    # ------------------------------------------------------------ documents

    def project_json(self, name: str) -> Fetched:
        """`<json_url>/<name>/json`: every release with its files, and `info` of the newest."""
        url = f"{self.settings.json_url.rstrip('/')}/{name}/json"
        fetched = self._json(url, "application/json")
        if not isinstance(fetched.data, dict) or not isinstance(fetched.data.get("releases"), dict):
            raise FetchError(url, "not a PyPI JSON API document (no `releases` mapping)")
        return fetched

    def simple_project(self, name: str) -> Fetched:
        """`<simple_url>/<name>/` as PEP 691 JSON: every file with its URL, hashes and metadata flags."""
        url = f"{self.settings.simple_url.rstrip('/')}/{name}/"
        fetched = self._json(url, SIMPLE_JSON)
        if not isinstance(fetched.data, dict) or not isinstance(fetched.data.get("files"), list):
            raise FetchError(url, "not a PEP 691 simple API document (no `files` list)")
        return fetched

    # ------------------------------------------------------------ METADATA

    def wheel_metadata(self, url: str, core_metadata: Any = None) -> tuple[str, str]:
        """The wheel's METADATA text and how it was read ("PEP 658" or "range")."""
        if core_metadata:
            try:
                return self._pep658_metadata(url, core_metadata), "PEP 658"
            except FetchError as error:
                if "HTTP 404" not in error.reason:
                    raise
                # A declared .metadata that is missing: read the wheel itself, as pip does.
        return self._metadata_by_range(url), "range"

    def _pep658_metadata(self, url: str, core_metadata: Any) -> str:
        response = self._request(url + ".metadata", headers={"Accept-Encoding": "identity"})
        body = self._body(response, url + ".metadata", self.settings.max_metadata_bytes)
        expected = core_metadata.get("sha256") if isinstance(core_metadata, dict) else None
        if expected and hashlib.sha256(body).hexdigest() != expected:
            raise FetchError(url + ".metadata", "sha256 does not match the hash the simple API declares")
        return _utf8(body, url + ".metadata")

    def _metadata_by_range(self, url: str) -> str:
        return self._member_by_range(url, lambda names: _metadata_member(names, url))

    def wheel_member(self, url: str, member: str) -> str:
        """A small text file inside a remote wheel (its path, or the one path ending in `/member`), read with HTTP
        range requests as METADATA is: TensorFlow's `tensorflow/python/platform/build_info.py`, torch's version.py."""
        def pick(names: list[str]) -> str:
            found = [n for n in names if n == member or n.endswith("/" + member)]
            if len(found) != 1:
                raise FetchError(url, f"{len(found)} members of the wheel match {member!r}")
            return found[0]

        return self._member_by_range(url, pick)

    def _member_by_range(self, url: str, pick: Callable[[list[str]], str]) -> str:
        remote = RangeFile(url, self._fetch_range, self.settings.range_chunk, self.settings.max_range_bytes)
        remote.open()
        try:
            with zipfile.ZipFile(remote) as wheel:
                name = pick(wheel.namelist())
                if wheel.getinfo(name).file_size > self.settings.max_metadata_bytes:
                    raise FetchError(url, f"{name} is larger than {self.settings.max_metadata_bytes} bytes")
                return _utf8(wheel.read(name), f"{url} ({name})")
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as error:
            raise FetchError(url, f"not a readable wheel ({error})") from None

    def _fetch_range(self, url: str, start: int | None, end: int) -> tuple[int, int, bytes]:
        """Bytes start..end-1 (start None: the last `end` bytes) -> (first offset, file size, bytes)."""
        spec = f"bytes=-{end}" if start is None else f"bytes={start}-{end - 1}"
        response = self._request(url, headers={"Range": spec, "Accept-Encoding": "identity"})
        if response.status_code != 206:
            response.close()
            raise FetchError(url, f"the server ignored the range request (HTTP {response.status_code}); "
                                  "the whole wheel is not downloaded")
        match = re.match(r"bytes (\d+)-(\d+)/(\d+)", response.headers.get("Content-Range", ""))
        if not match:
            response.close()
            raise FetchError(url, "a range answer without a usable Content-Range header")
        first, last, size = (int(group) for group in match.groups())
        body = self._body(response, url, last - first + 1)
        if len(body) != last - first + 1:
            raise FetchError(url, f"a range answer of {len(body)} bytes where {last - first + 1} were announced")
        return first, size, body

    # ------------------------------------------------------------ transport

    def _json(self, url: str, accept: str) -> Fetched:
        response = self._request(url, headers={"Accept": accept})
        body = self._body(response, url, self.settings.max_document_bytes)
        kind = response.headers.get("Content-Type", "").split(";")[0].strip()
        try:
            data = json.loads(body)
        except ValueError as error:
            what = f" (the server sent {kind})" if kind and "json" not in kind else ""
            raise FetchError(url, f"malformed JSON{what}: {error}") from None
        return Fetched(url=response.url or url, data=data)

    def _request(self, url: str, headers: dict[str, str]) -> requests.Response:
        """GET with bounded retries; the answer is streamed so that its size can be capped."""
        settings = self.settings
        pause = settings.backoff
        for attempt in range(1, settings.attempts + 1):
            last = attempt == settings.attempts
            try:
                self.requests_made += 1
                response = self.session.get(url, headers=headers, timeout=settings.timeout, stream=True)
            except requests.Timeout:
                reason = f"timed out after {settings.timeout:g} s ({_tries(attempt)})"
            except requests.ConnectionError as error:
                reason = f"cannot connect ({_short(error)}; {_tries(attempt)})"
            except requests.RequestException as error:
                raise FetchError(url, f"request failed ({_short(error)})") from None
            else:
                if response.status_code < 400:
                    return response
                response.close()
                reason = f"HTTP {response.status_code}"
                if response.status_code not in RETRIED_STATUSES:
                    raise FetchError(url, reason)
                reason += f" ({_tries(attempt)})"
            if last:
                raise FetchError(url, reason)
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")

    def _body(self, response: requests.Response, url: str, limit: int) -> bytes:
        chunks, size = [], 0
        try:
            for chunk in response.iter_content(chunk_size=1 << 16):
                size += len(chunk)
                if size > limit:
                    raise FetchError(url, f"the answer is larger than {limit} bytes")
                chunks.append(chunk)
        except requests.RequestException as error:
            what = "timed out" if "timed out" in str(error).lower() else f"broken answer ({_short(error)})"
            raise FetchError(url, f"{what} while reading the body") from None
        finally:
            response.close()
        return b"".join(chunks)


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches only the ranges `zipfile` reads.

    The first request asks for the last `chunk` bytes (which also tells the file's size); later reads are
    served from what was fetched, or fetch at least `chunk` bytes from the position asked for.
    """

    def __init__(self, url: str, fetch: Callable[[str, int | None, int], tuple[int, int, bytes]],
                 chunk: int, budget: int):
        super().__init__()
        self.url, self._fetch, self._chunk, self._budget = url, fetch, chunk, budget
        self._pieces: list[tuple[int, bytes]] = []
        self._position = 0
        self.size = 0
        self.fetched_bytes = 0

    def open(self) -> None:
        first, self.size, data = self._fetch(self.url, None, self._chunk)
        self._keep(first, data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.size}[whence]
        if base + offset < 0:
            raise ValueError(f"seek to {base + offset} before the start of {self.url}")
        self._position = base + offset
        return self._position

    def readinto(self, buffer) -> int:
        start, end = self._position, min(self._position + len(buffer), self.size)
        if start >= end:
            return 0
        data = self._bytes(start, end)
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)

    def _bytes(self, start: int, end: int) -> bytes:
        for first, data in self._pieces:
            if first <= start and end <= first + len(data):
                return data[start - first : end - first]
        fetch_end = min(self.size, max(end, start + self._chunk))
        first, _, data = self._fetch(self.url, start, fetch_end)
        self._keep(first, data)
        return data[start - first : end - first]

    def _keep(self, first: int, data: bytes) -> None:
        self.fetched_bytes += len(data)
        if self.fetched_bytes > self._budget:
            raise FetchError(self.url, f"reading a member needed more than {self._budget} bytes of the wheel")
        self._pieces.append((first, data))


def _metadata_member(names: list[str], url: str) -> str:
    """The top-level `<name>-<version>.dist-info/METADATA` (a vendored package's METADATA is deeper)."""
    found = [n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
    if len(found) != 1:
        raise FetchError(url, f"expected one *.dist-info/METADATA in the wheel, found {len(found)}")
    return found[0]


def _utf8(body: bytes, where: str) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise FetchError(where, "not UTF-8") from None


def _tries(attempt: int) -> str:
    return "1 try" if attempt == 1 else f"{attempt} tries"


def _short(error: Exception) -> str:
    """The last line of a requests/urllib3 error chain, which is the one that names the cause."""
    text = str(error).strip().splitlines()[-1] if str(error).strip() else error.__class__.__name__
    text = re.sub(r"^.*?\(Caused by \w+\(", "", text).rstrip(")")
    return text[:160]
