"""A Jetson's driver fact: its Jetson Linux (L4T) release, read from /etc/nv_tegra_release.

The file's first line is `# R36 (release), REVISION: 4.0, GCID: ..., BOARD: ..., EABI: aarch64, DATE: ...`: release
36, revision 4.0, so L4T 36.4.0 (the lines recorded in tests/fixtures/jetson/SOURCES.md). Which JetPack that is,
and where NVIDIA's wheels for it are, is the database's (gpus.yaml `jetpack:`, `jetson:`).
"""

from __future__ import annotations

import re

_RELEASE = re.compile(r"^#\s*R(\d{2,3})\s*\(release\),\s*REVISION:\s*(\d{1,2})(?:\.(\d{1,2}))?\s*(?:,|$)")


def parse_nv_tegra_release(text: str) -> str | None:
    """The L4T release (`36.4.0`) of /etc/nv_tegra_release's text; None where its first line is not that form."""
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    match = _RELEASE.match(first.strip())
    if match is None:
        return None
    major, minor, micro = match.group(1), match.group(2), match.group(3) or "0"
    return f"{major}.{minor}.{micro}"
