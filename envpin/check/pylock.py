"""pylock.toml / pylock.*.toml (PEP 751): text → Contents.

Structure is `packaging.pylock` (packaging ≥ 25), the reference reader of the format; it stops at the first
error, so each package is validated on its own and every package's first problem is reported. The hash
checks are stricter than the format's minimum: every wheel, sdist and archive carries a `hashes` table
(PEP 751 requires one entry), each value is hex of its algorithm's length, and at least one algorithm is a
secure one (PEP 751: "at least one secure algorithm from hashlib.algorithms_guaranteed SHOULD always be
included"), so a lock with only md5 fails here.
"""

from __future__ import annotations

from typing import Any

from envpin.base import _toml
from envpin.readers.hashes import WEAK_ALGORITHMS, digest_problem
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import (
    PLATFORM_SENSITIVE,
    file_name,
    parse_wheel,
    requires_python_of,
    requires_python_pins,
    wheels_pythons,
)

_ARTIFACTS = ("wheels", "sdist", "archive")


def parse(text: str) -> Contents:
    return read(load_toml(text))


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a table")
    problems = structure_problems(data)
    packages = data.get("packages")
    pins: list[Pin] = []
    if isinstance(packages, list):
        for position, package in enumerate(packages):
            if isinstance(package, dict):
                problems += hash_problems(package, f"packages[{position}]")
                pin = _pin(package, f"packages[{position}]")
                if pin is not None:
                    pins.append(pin)
    pins += requires_python_pins(data)
    return Contents("pylock", pins=tuple(pins), problems=tuple(problems), binds_indexes=True,
                    requires_python=requires_python_of(data))


def load_toml(text: str) -> dict[str, Any]:
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as error:
        raise MalformedFile(f"malformed TOML ({error})") from None
    except (ValueError, RecursionError) as error:  # an integer of more than 4300 digits; arrays nested too deep
        raise MalformedFile(f"malformed TOML ({str(error).splitlines()[0] or type(error).__name__})") from None


def structure_problems(data: dict[str, Any]) -> list[Problem]:
    """packaging.pylock's verdict on the top level and on each package, every package's first error."""
    try:
        from packaging.pylock import Pylock, PylockValidationError  # noqa: PLC0415 - packaging.pylock is heavy (~25 ms): only this check needs it
    except ImportError:  # packaging < 25
        return [problem("CHK-STRUCTURE", "", "this envpin runs with a packaging older than 25.0, which cannot read "
                        "pylock files", "upgrade packaging (pip install 'packaging>=25')", severity="warning")]
    try:
        Pylock.from_dict(data)
        return []  # valid as a whole: the common case costs one pass
    except PylockValidationError:
        pass  # find every problem, not only the first: the top level, then each package on its own
    problems = []
    top = {key: value for key, value in data.items() if key != "packages"}
    try:
        Pylock.from_dict({**top, "packages": []})
    except PylockValidationError as error:
        problems.append(_validation_problem(error, ""))
    packages = data.get("packages")
    if not isinstance(packages, list):
        if "packages" in data:
            problems.append(problem("CHK-STRUCTURE", "packages", "packages must be an array of tables ([[packages]])",
                                    "write each package as a [[packages]] table"))
        return problems
    for position, package in enumerate(packages):
        try:
            Pylock.from_dict({"lock-version": "1.0", "created-by": "envpin", "packages": [package]})
        except PylockValidationError as error:
            if not str(error.context or "").endswith("hashes"):  # the hash checks below say more
                problems.append(_validation_problem(error, f"packages[{position}]"))
    return problems


def _validation_problem(error: Exception, prefix: str) -> Problem:
    context = str(getattr(error, "context", None) or "")
    if prefix and context.startswith("packages[0]"):
        context = prefix + context[len("packages[0]"):]
    message = str(getattr(error, "message", error)).splitlines()[0]
    return problem("CHK-STRUCTURE", context or prefix, f"{message} (PEP 751, as packaging.pylock reads it)",
                   "regenerate the lock with its tool (`pip lock`, `uv export --format pylock.toml`)")


def hash_problems(package: dict[str, Any], where: str) -> list[Problem]:
    problems = []
    for key in _ARTIFACTS:
        artifacts = package.get(key)
        if key == "wheels":
            entries = [(f"{where}.wheels[{i}]", w) for i, w in enumerate(artifacts)] if isinstance(artifacts, list) else []
        else:
            entries = [(f"{where}.{key}", artifacts)] if artifacts is not None else []
        for here, artifact in entries:
            if isinstance(artifact, dict):
                problems += _artifact_hashes(artifact, here, package.get("name"))
    return problems


def _artifact_hashes(artifact: dict[str, Any], where: str, name: object) -> list[Problem]:
    hashes = artifact.get("hashes")
    shown = artifact.get("name") or file_name(str(artifact.get("url") or artifact.get("path") or name or "this file"))
    if not hashes:
        return [problem("CHK-HASH-MISSING", f"{where}.hashes", f"{shown} has no hashes; PEP 751 requires at least one",
                        "regenerate the lock so every file carries its sha256")]
    if not isinstance(hashes, dict):
        return [problem("CHK-HASH-MALFORMED", f"{where}.hashes", f"hashes is a {type(hashes).__name__}, not a table",
                        "write hashes = {sha256 = \"…\"}")]
    problems = []
    for algorithm, digest in hashes.items():
        reason = digest_problem(algorithm, digest)
        if reason:
            problems.append(problem("CHK-HASH-MALFORMED", f"{where}.hashes.{algorithm}", f"{shown}: {reason}",
                                    "copy the digest again from the index, or regenerate the lock"))
    if not problems and all(str(a).lower() in WEAK_ALGORITHMS for a in hashes):
        problems.append(problem("CHK-HASH-ALGORITHM", f"{where}.hashes",
                                f"{shown} has only {', '.join(hashes)}; PEP 751 asks for a secure algorithm (sha256)",
                                "regenerate the lock with sha256 hashes"))
    return problems


def _pin(package: dict[str, Any], where: str) -> Pin | None:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a pin needs it

    name = package.get("name")
    if not isinstance(name, str):
        return None
    version = package.get("version") if isinstance(package.get("version"), str) else None
    canonical = canonicalize_name(name)
    platforms: set[str] = set()
    wheels = []
    urls = []
    for wheel in package.get("wheels") or []:
        if not isinstance(wheel, dict):
            continue
        location = wheel.get("url") or wheel.get("path") or ""
        if canonical in PLATFORM_SENSITIVE:  # reading wheel tags is costly; only these pins' platforms are used
            parsed = parse_wheel(wheel.get("name") or file_name(str(location)))
            wheels.append(parsed)
            platforms.update(parsed[2] if parsed else ())
        if isinstance(location, str) and "://" in location:
            urls.append(location)
    index = package.get("index") if isinstance(package.get("index"), str) else None
    if index is None and urls:
        index = urls[0].rsplit("/", 1)[0]  # a wheel's directory names its PyTorch index (…/whl/cu124/torch-…)
    marker = package.get("marker")
    return Pin(
        name=canonical,
        where=where,
        label=f"{name} {version}" if version else name,
        version=version,
        index=index,
        scope=frozenset({marker}) if isinstance(marker, str) else frozenset(),
        platforms=tuple(sorted(platforms)),
        pythons=wheels_pythons(wheels),
    )
