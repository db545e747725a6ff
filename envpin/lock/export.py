"""A lock as a pip requirements file with hashes (pure): what `pip install --require-hashes -r` installs.

Each package is pinned to its exact version with the sha256 of every file the lock lists for it, so pip
accepts only those files; `--index-url` is the lock's default index and each accelerator index is an
`--extra-index-url` (its full local versions exist nowhere else, and the hashes rule out any other file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def requirements_text(document: Mapping[str, Any], header: list[str]) -> str:
    lines = [f"# {line}" for line in header]
    lines += index_options(document)
    lines += package_lines(document, hashes=True)
    return "\n".join(lines) + "\n"


def pinned(package: Mapping[str, Any]) -> str:
    """`name==version ; marker`: one package of a lock as a requirement."""
    marker = f" ; {package['marker']}" if package.get("marker") else ""
    return f"{package['name']}=={package['version']}{marker}"


def package_lines(document: Mapping[str, Any], hashes: bool) -> list[str]:
    """Every package of the lock pinned, each (with `hashes`) followed by the sha256 of every file it lists."""
    lines = []
    for package in document["packages"]:
        digests = sorted({f["hashes"]["sha256"] for f in _files(package)}) if hashes else []
        lines.append(pinned(package) + (" \\" if digests else ""))
        lines += [f"    --hash=sha256:{h}" + (" \\" if i < len(digests) - 1 else "") for i, h in enumerate(digests)]
    return lines


def index_options(document: Mapping[str, Any]) -> list[str]:
    indexes = list(dict.fromkeys(p["index"] for p in document["packages"] if p.get("index")))
    default = document.get("tool", {}).get("envpin", {}).get("default-index") or (indexes[0] if indexes else None)
    options = [f"--index-url {default}"] if default else []
    return options + [f"--extra-index-url {url}" for url in indexes if url != default]


def _files(package: dict[str, Any]) -> list[dict[str, Any]]:
    return package.get("wheels", []) + ([package["sdist"]] if "sdist" in package else [])
