"""conda spec lists (`conda list --export`, read back by `conda create --file`): text → Contents.

`conda list --export` writes a header (`# This file may be used to create an environment using:` /
`# $ conda create --name <env> --file <this file>` / `# platform: linux-64`), then one `NAME=VERSION=BUILD`
line per package; a package pip installed has the build `pypi_0`. Repositories often commit it as
requirements.txt, which `pip install -r` refuses at the first line (`= is not a valid operator`), so the file
is said to be conda's, once, and its packages are judged as conda pins (the `pypi_0` ones as pip pins); the
platform line says which OS its platform-only packages (`_libgcc_mutex`, `vc`) are for.
"""

from __future__ import annotations

import re

from envpin.readers.model import Contents, Pin
from envpin.readers.rules import problem
from envpin.readers.variants import CONDA_NAMES, CONDA_SUBDIRS

_HEADER = re.compile(r"^#\s*\$?\s*conda create .*--file <this file>", re.M)
_PLATFORM = re.compile(r"^#\s*platform:\s*(\S+)", re.M)
_SPEC = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*=[^=\s]+(?:=[^=\s]+)?$")


def is_spec_list(text: str) -> bool:
    """conda's own header, or (hand-written) every line a `NAME=VERSION[=BUILD]` conda spec, which pip refuses."""
    if _HEADER.search(text[:4096]):
        return True
    count = 0
    for line in text.splitlines():  # a requirements file fails at its first requirement: the rest is not read
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not _SPEC.match(line):
            return False
        count += 1
    return count >= 3


def parse(text: str) -> Contents:
    from envpin.readers.environment_yml import conda_pin  # noqa: PLC0415 - a requirements file is told from a spec list without it
    from envpin.readers.project_files import PLATFORM_ONLY  # noqa: PLC0415 - the export's words are the project reader's

    platform = _PLATFORM.search(text)
    subdir = platform.group(1) if platform else None
    pins: list[Pin] = []
    only: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, rest = line.partition("=")
        version, _, build = rest.partition("=")
        where = f"line {number}"
        if build == "pypi_0":  # installed by pip: a pip pin
            pins.append(Pin(name=CONDA_NAMES.get(name.lower(), name.lower()), where=where, label=line, version=version))
            continue
        pin = conda_pin(line, where)
        if pin is not None:
            pins.append(pin)
        if any(name.lower() == n or (n.endswith("*") and name.lower().startswith(n[:-1]))
               for n in PLATFORM_ONLY.get(_os_of(subdir) or "", ())):
            only.append(line)
    problems = (problem(
        "CHK-STRUCTURE", "line 1",
        "this is a conda spec list (`conda list --export`): `conda create --name ENV --file FILE` reads it, but "
        "`pip install -r` refuses it at its first package ('=' is not a valid operator)",
        "install it with `conda create --name ENV --file FILE` (and say so beside it), or keep a pip requirements "
        "file under another name", severity="warning"),)
    platforms = (CONDA_SUBDIRS[subdir],) if subdir in CONDA_SUBDIRS else ()
    return Contents("conda-specs", pins=tuple(pins), problems=problems, platforms=platforms,
                    exported_on=_os_of(subdir) if only else None, exported_only=tuple(only))


def _os_of(subdir: str | None) -> str | None:
    if not subdir:
        return None
    return {"linux": "linux", "win": "windows", "osx": "macos"}.get(subdir.split("-", 1)[0])
