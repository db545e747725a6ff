"""The TensorFlow and JAX releases' own requirement on numpy, from the METADATA scripts/record-numpy-requirements read.

The snapshot (tests/fixtures/pypi-metadata/numpy-requirements.json) holds, per package and release, the `numpy`
Requires-Dist lines of one wheel per platform. What pip installs for `tensorflow==V` on a platform is the tensorflow
wheel there, or, where that wheel is a stub, the package it installs (tensorflow-intel on Windows, tensorflow-cpu-aws
on Linux aarch64, tensorflow-macos on macOS arm64); for `jax==V` it is jax and the jaxlib jax's own requirement
picks (jax 0.4.37 installs jaxlib 0.4.36). `fields_from_snapshot` turns those lines into the database's `numpy:`
field (SCHEMA.md), the lines' python_version markers evaluated for each Python the release has wheels for;
`write_fields` writes them into tensorflow.yaml and jax.yaml. A release whose platforms disagree is an error here:
the field has one requirement per release.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

SNAPSHOT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "pypi-metadata" / "numpy-requirements.json"
STUB_TARGETS = {"windows-x86_64": "tensorflow-intel", "linux-aarch64": "tensorflow-cpu-aws",
                "macos-arm64": "tensorflow-macos"}
SOURCES = {  # the database's source of each file's field
    "tensorflow": ("tensorflow.yaml", "pypi-tensorflow-numpy-requires",
                   "tensorflow, tensorflow-cpu and the packages the tensorflow stub wheels install (tensorflow-intel, "
                   "tensorflow-cpu-aws, tensorflow-macos) on PyPI: one wheel per platform of every release in this "
                   "file, its METADATA (PEP 658 .metadata file) read for Requires-Dist numpy by "
                   "scripts/record-numpy-requirements (recorded in tests/fixtures/pypi-metadata/numpy-requirements.json, "
                   "each wheel's URL beside it)", "https://pypi.org/project/tensorflow/#files"),
    "jax": ("jax.yaml", "pypi-jax-numpy-requires",
            "jax and jaxlib on PyPI: jax's wheel and one jaxlib wheel per platform of every release in this file, "
            "their METADATA (PEP 658 .metadata file) read for Requires-Dist numpy (and jax's on jaxlib) by "
            "scripts/record-numpy-requirements (recorded in tests/fixtures/pypi-metadata/numpy-requirements.json, "
            "each wheel's URL beside it); the jax-cuda12/13 plugins name no numpy", "https://pypi.org/project/jaxlib/#files"),
}


def load_snapshot(path: Path = SNAPSHOT) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def fields_from_snapshot(snapshot: dict[str, Any], database) -> dict[tuple[str, str], dict[str, Any]]:
    """(framework, version) -> the `numpy:` field of that release, for every release the snapshot can answer."""
    projects = {name: entry["releases"] for name, entry in snapshot["projects"].items()}
    fields: dict[tuple[str, str], dict[str, Any]] = {}
    for release in database.tensorflow_releases:
        version = str(release.version)
        read: dict[str, tuple[list[str], str]] = {}  # platform or package@platform -> (lines, wheel)
        for package in ("tensorflow", "tensorflow-cpu"):
            platforms = release.python if package == "tensorflow" else release.cpu_package
            for platform in platforms:
                found = _installed(projects, package, version, platform)
                if found is not None:
                    read[f"{package}@{platform}"] = found
        if read:
            fields[("tensorflow", version)] = numpy_field("tensorflow", version, read, _pythons(release.python),
                                                          [SOURCES["tensorflow"][1]])
    for release in database.jax_releases:
        version = str(release.version)
        jax = projects.get("jax", {}).get(version, {}).get("any")
        if jax is None:
            continue
        jaxlib = _jaxlib_for(projects.get("jaxlib", {}), jax.get("jaxlib", []))
        if jaxlib is None:
            continue
        read = {"jax": (jax["numpy"], _file(jax["url"]))}
        for platform in release.platforms:
            wheel = projects["jaxlib"][jaxlib].get(platform)
            if wheel is not None:
                read[f"jaxlib@{platform}"] = (wheel["numpy"], _file(wheel["url"]))
        fields[("jax", version)] = numpy_field("jax", version, read, tuple(release.python), [SOURCES["jax"][1]],
                                               together=True)
    return fields


def _installed(projects, package: str, version: str, platform: str) -> tuple[list[str], str] | None:
    """The numpy lines of what `pip install package==version` installs on the platform, and the wheel they are in."""
    wheel = projects.get(package, {}).get(version, {}).get(platform)
    if wheel is None:
        return None
    if not wheel["numpy"] and platform in STUB_TARGETS:  # a stub: the package it installs says
        target = projects.get(STUB_TARGETS[platform], {}).get(version, {}).get(platform)
        if target is not None:
            return target["numpy"], _file(target["url"])
    return wheel["numpy"], _file(wheel["url"])


def _jaxlib_for(jaxlib_releases: dict[str, Any], lines: list[str]) -> str | None:
    """The newest recorded jaxlib that jax's Requires-Dist on jaxlib allows (pip's choice): its unconditional line
    (from jax 0.4.30), else its `cpu` extra's (`jaxlib ==0.4.25 ; extra == 'cpu'`: jax[cpu] and jax[cuda12] up to
    0.4.29 bring the jaxlib of their own version)."""
    parsed = [Requirement(line) for line in lines]
    chosen = [r for r in parsed if r.marker is None] or [r for r in parsed
                                                         if r.marker is not None and r.marker.evaluate({"extra": "cpu"})]
    specifier = SpecifierSet()
    for requirement in chosen:
        specifier &= requirement.specifier
    allowed = [v for v, wheels in jaxlib_releases.items() if wheels and specifier.contains(v, prereleases=True)]
    return max(allowed, key=Version) if allowed else None


def numpy_field(framework: str, version: str, read: dict[str, tuple[list[str], str]], pythons: tuple[str, ...],
                sources: list[str], together: bool = False) -> dict[str, Any]:
    """One requirement for the release: every platform's lines must agree (`together`: jax's lines and jaxlib's
    apply at once, and the jaxlib platforms must agree among themselves)."""
    groups = {k: v for k, v in read.items() if not together or k != "jax"}
    distinct = {tuple(sorted(_normal(line) for line in lines)) for lines, _ in groups.values()}
    if len(distinct) != 1:
        raise ValueError(f"{framework} {version}: the platforms' wheels require different numpy: {sorted(distinct)}")
    lines = list(next(iter(groups.values()))[0]) + (read["jax"][0] if together else [])
    by_python = {python: _specifier_on(lines, python) for python in pythons}
    if not by_python or any(not s for s in by_python.values()):
        raise ValueError(f"{framework} {version}: no numpy requirement on some Python ({by_python})")
    common = Counter(by_python.values()).most_common()
    requires = max((s for s, n in common if n == common[0][1]),
                   key=lambda s: -min(pythons.index(p) for p, t in by_python.items() if t == s))
    wheels = list(dict.fromkeys(wheel for _, wheel in read.values()))
    field: dict[str, Any] = {"requires": requires}
    others = {p: s for p, s in by_python.items() if s != requires}
    if others:
        field["python"] = others
    field["wheels"] = wheels
    field["sources"] = sources
    return field


def _specifier_on(lines: list[str], python: str) -> str:
    specifier = SpecifierSet()
    environment = {"python_version": python, "python_full_version": f"{python}.0"}
    for line in lines:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            specifier &= requirement.specifier
    return _simplest(specifier)


def _simplest(specifier: SpecifierSet) -> str:
    """The same versions in the fewest clauses: of several lower bounds `>=` the highest, of several upper bounds
    `<` (or `<=`) the lowest (jax 0.4.20's `>=1.22`, `>=1.23.2` and `>=1.26.0` on Python 3.12 are `>=1.26.0`)."""
    kept = []
    for operator in {c.operator for c in specifier}:
        clauses = [c for c in specifier if c.operator == operator]
        if operator in (">=", ">"):
            clauses = [max(clauses, key=lambda c: Version(c.version))]
        elif operator in ("<", "<="):
            clauses = [min(clauses, key=lambda c: Version(c.version))]
        kept += clauses
    return str(SpecifierSet(",".join(str(c) for c in kept)))


def _normal(line: str) -> str:
    requirement = Requirement(line)
    return f"{requirement.specifier};{requirement.marker}"


def _pythons(by_platform) -> tuple[str, ...]:
    return tuple(sorted({p for pythons in by_platform.values() for p in pythons}, key=lambda v: tuple(map(int, v.split(".")))))


def _file(url: str) -> str:
    return url.rsplit("/", 1)[-1]


# ---------------------------------------------------------------- writing the YAML text


def write_fields(directory: Path, snapshot_path: Path = SNAPSHOT) -> list[str]:
    """Write every release's `numpy:` line (replacing one already there) and the files' source entries; returns
    what it did, a line per file."""
    from envpin.compat.loader import load_database  # noqa: PLC0415

    fields = fields_from_snapshot(load_snapshot(snapshot_path), load_database(directory))
    done = []
    for framework, (name, source_id, title, url) in SOURCES.items():
        path = directory / name
        text = path.read_text(encoding="utf-8")
        text = _with_source(text, source_id, title, url)
        count = 0
        for (which, version), field in fields.items():
            if which == framework:
                text = _with_field(text, version, _flow(field))
                count += 1
        path.write_text(text, encoding="utf-8")
        done.append(f"{name}: numpy of {count} releases")
    return done


def _with_source(text: str, source_id: str, title: str, url: str) -> str:
    entry = (f"  {source_id}:\n    title: {json.dumps(title)}\n    url: \"{url}\"\n    grade: pypi\n"
             f"    read: \"2026-12-01\"\n")
    pattern = re.compile(rf"^  {re.escape(source_id)}:\n(?:    .*\n)+", re.MULTILINE)
    if pattern.search(text):
        return pattern.sub(lambda _: entry, text, count=1)
    return text.replace("\nsources:\n", "\nsources:\n" + entry, 1)


def _with_field(text: str, version: str, line: str) -> str:
    start = re.search(rf'^  - version: "{re.escape(version)}"\n', text, re.MULTILINE)
    if start is None:
        raise ValueError(f"release {version} not found")
    end = re.compile(r"^  - version: |^\S", re.MULTILINE).search(text, start.end())
    stop = end.start() if end else len(text)
    block = text[start.end():stop]
    block = re.sub(r"^    numpy: \{.*\}\n", "", block, flags=re.MULTILINE)
    released = re.search(r"^    released: .*\n", block, re.MULTILINE)
    at = released.end() if released else 0
    block = block[:at] + f"    numpy: {line}\n" + block[at:]
    return text[:start.end()] + block + text[stop:]


def _flow(field: dict[str, Any]) -> str:
    parts = [f'requires: "{field["requires"]}"']
    if "python" in field:
        parts.append("python: {" + ", ".join(f'"{p}": "{s}"' for p, s in field["python"].items()) + "}")
    parts.append("wheels: [" + ", ".join(field["wheels"]) + "]")
    parts.append("sources: [" + ", ".join(field["sources"]) + "]")
    return "{" + ", ".join(parts) + "}"
