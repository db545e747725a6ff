#!/usr/bin/env python3
"""Print one small file from inside a wheel on an index, reading only the bytes it needs (HTTP range requests).

Framework wheels are hundreds of megabytes, but the facts the database records about them are often in a small
member: TensorFlow's `tensorflow/python/platform/build_info.py` (the CUDA and cuDNN it was built with and the GPU
code compiled in), torch's `torch/version.py`. `envpin db refresh` reads METADATA this way (envpin.refresh.client);
this reads any member with the same client.

Usage: .venv/bin/python scripts/wheel_member.py URL MEMBER   (MEMBER: a path inside the wheel, or its last part(s))
Prints the member's text; on stderr, the bytes fetched. Exit 1 with one line when the wheel or member cannot be read.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envpin.refresh.client import FetchError, PyPIClient  # noqa: E402 - the checkout's envpin


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    url, member = argv
    client = PyPIClient()
    try:
        text = client.wheel_member(url, member)
    except FetchError as error:
        print(f"wheel_member: {error}", file=sys.stderr)
        return 1
    print(text, end="")
    print(f"wheel_member: {client.requests_made} requests", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
