#!/usr/bin/env python3
"""Print one file from inside a wheel on an index, reading only the bytes it needs (HTTP range requests).

Framework wheels are hundreds of megabytes, but the facts the database records about them are often in a small
member: TensorFlow's `tensorflow/python/platform/build_info.py` (the CUDA and cuDNN it was built with), torch's
`torch/version.py`. A zip is read from its end (the central directory), so a file object that fetches ranges on
demand lets `zipfile` open a remote wheel and inflate one member: a few hundred kilobytes instead of the wheel.

Usage: scripts/wheel_member.py URL MEMBER      (MEMBER: a path inside the wheel, or a suffix of one)
       scripts/wheel_member.py URL --list      (the members' names)
Prints the member's text and, on stderr, the wheel's size and the bytes fetched. Needs the index to answer
range requests (files.pythonhosted.org does).
"""

from __future__ import annotations

import io
import sys
import urllib.request
import zipfile

_BLOCK = 256 * 1024


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file, fetched in blocks with HTTP range requests."""

    def __init__(self, url: str) -> None:
        self.url = url
        request = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(request, timeout=60) as response:
            self.size = int(response.headers["Content-Length"])
        self.position = 0
        self.blocks: dict[int, bytes] = {}
        self.fetched = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def _block(self, number: int) -> bytes:
        if number not in self.blocks:
            start = number * _BLOCK
            end = min(self.size, start + _BLOCK) - 1
            request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
            with urllib.request.urlopen(request, timeout=120) as response:
                if response.status != 206:
                    raise OSError(f"{self.url}: the server ignored the range request (HTTP {response.status})")
                self.blocks[number] = response.read()
            self.fetched += len(self.blocks[number])
        return self.blocks[number]

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.size - self.position
        size = min(size, self.size - self.position)
        out = bytearray()
        while size > 0:
            number, offset = divmod(self.position, _BLOCK)
            chunk = self._block(number)[offset:offset + size]
            out += chunk
            self.position += len(chunk)
            size -= len(chunk)
        return bytes(out)

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    url, member = argv
    remote = RangeFile(url)
    with zipfile.ZipFile(remote) as wheel:  # type: ignore[arg-type]
        names = wheel.namelist()
        if member == "--list":
            print("\n".join(names))
        else:
            matches = [name for name in names if name == member or name.endswith("/" + member)]
            if len(matches) != 1:
                print(f"wheel_member: {len(matches)} members match {member!r}", file=sys.stderr)
                return 1
            print(wheel.read(matches[0]).decode("utf-8", "replace"), end="")
    print(f"wheel_member: {remote.size} bytes, {remote.fetched} fetched", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
