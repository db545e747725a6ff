"""Index URLs a user may point envpin at: https, or plain http only on this machine (a local mirror or test
server), or file://. Anything else would let a network attacker swap the wheels a lock pins, so it needs an
explicit `--allow-insecure-index` and gets a warning.

A URL reaches files that get committed (requirements.txt, environment.yml, their headers), so it must be one
token: whitespace or a control character in it would start a new requirement line. Credentials in it are
never written out: `redact_credentials` turns `https://user:secret@host` into `https://user:****@host`, as pip
does in its logs.
"""

from __future__ import annotations

import ipaddress
import re
import sys
from urllib.parse import urlsplit

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import has_control, printable

# A scheme is tried only where a run of scheme characters starts (the lookbehind), its leading digits and signs
# skipped (`lead`): the leftmost match is the same as a plain `[a-z][a-z0-9+.-]*://` search's, but a run of n
# letters costs n steps rather than n²/2 (a 20,000-letter GPU name took 25 s). tests/unit/test_regex_bounds.py.
_CREDENTIALS = re.compile(r"(?<![a-z0-9+.-])(?P<lead>[0-9+.-]*)(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/@\s:]*)"
                          r"(?::(?P<secret>[^/@\s]*))?@", re.IGNORECASE)


def checked_index_url(url: str, what: str, allow_insecure: bool = False) -> str:
    if has_control(url) or any(c.isspace() for c in url):
        raise EnvpinInputError(f"{what} '{printable(redact_credentials(url))}': contains whitespace or a control "
                               "character; a URL is one word")
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.netloc:
        return url
    if parts.scheme == "file":
        return url
    if parts.scheme == "http" and parts.netloc:
        if is_loopback(parts.hostname or ""):
            return url
        if allow_insecure:
            print(f"envpin: warning: {what} {redact_credentials(url)} is plain http: anyone on the network path can "
                  "change its wheels", file=sys.stderr)
            return url
        raise EnvpinInputError(
            f"{what} {redact_credentials(url)!r} is plain http on a remote host; use https, or pass "
            "--allow-insecure-index to accept it"
        )
    raise EnvpinInputError(f"{what} {redact_credentials(url)!r}: expected an https://, loopback http:// or file:// URL")


def is_loopback(host: str) -> bool:
    """Exactly `localhost`, or an IP literal in 127.0.0.0/8 or ::1: never a name that merely starts like one
    (`127.evil.example`, `127.0.0.1.nip.io` resolve wherever their owner likes)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


CREDENTIALS_NOTE = ("the index URL's credentials are written as ****; give them to pip and uv through ~/.netrc or "
                    "keyring instead (README: private indexes)")


def has_credentials(text: str) -> bool:
    return _CREDENTIALS.search(text) is not None


def redact_credentials(text: str) -> str:
    """Every `scheme://user:secret@` in the text as `scheme://user:****@` (a token alone, `scheme://token@`, as
    `scheme://****@`)."""

    def hide(match: re.Match[str]) -> str:
        if match.group("secret") is not None:
            return f"{match.group('lead')}{match.group('scheme')}{match.group('user')}:****@"
        return f"{match.group('lead')}{match.group('scheme')}****@"

    return _CREDENTIALS.sub(hide, text)

