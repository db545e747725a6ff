"""Index URLs a user may point envpin at: https, or plain http only on this machine (a local mirror or test
server), or file://. Anything else would let a network attacker swap the wheels a lock pins, so it needs an
explicit `--allow-insecure-index` and gets a warning."""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

from envpin.errors import EnvpinInputError

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def checked_index_url(url: str, what: str, allow_insecure: bool = False) -> str:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.netloc:
        return url
    if parts.scheme == "file":
        return url
    if parts.scheme == "http" and parts.netloc:
        host = (parts.hostname or "").lower()
        if host in LOOPBACK_HOSTS or host.startswith("127."):
            return url
        if allow_insecure:
            print(f"envpin: warning: {what} {url} is plain http: anyone on the network path can change its wheels",
                  file=sys.stderr)
            return url
        raise EnvpinInputError(
            f"{what} {url!r} is plain http on a remote host; use https, or pass --allow-insecure-index to accept it"
        )
    raise EnvpinInputError(f"{what} {url!r}: expected an https://, loopback http:// or file:// URL")
