"""pixi.lock (pixi's multi-environment lock, written by rattler_lock): text → Contents.

The shapes are rattler_lock's (conda/rattler crates/rattler_lock/src/parse, file_format_version.rs):

- version 4 and 5: `environments.<name>.packages.<subdir>` lists selectors `{conda: URL}` / `{pypi: URL or
  path}`, and the top-level `packages` list holds one record per file with `kind: conda` (name, version,
  build, subdir, url, sha256, md5, depends) or `kind: pypi` (name, version, url or path, sha256). Version 5
  adds each environment's PyPI `indexes` and `find-links`.
- version 6: the `kind` is merged into the location: a record is `conda: URL` or `pypi: URL` and its name,
  version, build and subdir may be left out where the file name says them.
- version 7: a top-level `platforms` list (`name`, `subdir`, `virtual-packages`) names the platforms the
  environments' package lists are keyed by; locally built packages are `conda_source:` records.

Versions 1 to 3 are the single-environment format pixi wrote before 0.13 (version 4 came with prefix-dev/pixi
"refactor: multi-env (#721)", first in the v0.13.0 tag); pixi rewrites them on `pixi lock`.

Each environment is one `pixi install -e NAME`, and pixi installs an environment's packages for the machine's
own conda subdir (no fallback to another). So every pin is scoped by its environment and platform, each
environment is judged on a target by the packages it locks for the target's subdir, and every finding's
`where` names both (`environments.cf-channel.packages.linux-64[44]`). The CUDA an environment needs from
the driver is its `cuda-version` / `pytorch-cuda` packages and the strongest `__cuda >=X.Y` a locked package
depends on (and, in version 7, the platform's recorded `__cuda` virtual package).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from envpin.base.record import replace
from envpin.check.conda_lock import conda_build_of
from envpin.readers.environment_yml import load_yaml
from envpin.readers.hashes import digest_problem
from envpin.readers.model import Contents, LockedPlatform, MalformedFile, Pin, Problem
from envpin.readers.rules import problem
from envpin.readers.variants import CONDA_NAMES, CONDA_SUBDIRS, file_name, parse_wheel

REFRESH = "pixi lock"
_REGENERATE = f"regenerate it with `{REFRESH}`"
READ_VERSIONS = (4, 5, 6, 7)
_NEEDS_CUDA = re.compile(r"^__cuda(\s|$)")
_CUDA_DEPENDENCY = re.compile(r"^__cuda\s*(?:>=\s*|=\s*|==\s*)?(\d+(?:\.\d+)?)")


def parse(text: str) -> Contents:
    return read(load_yaml(text))


def read(data: Any) -> Contents:
    """The Contents of the parsed document (any shape: what is not the format is reported, never raised)."""
    if not isinstance(data, dict):
        raise MalformedFile(f"the top level is a {type(data).__name__}, not a pixi.lock mapping")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return Contents("pixi.lock", problems=(problem(
            "CHK-STRUCTURE", "version", "pixi.lock has no integer `version`", _REGENERATE),))
    if version < READ_VERSIONS[0]:
        return Contents("pixi.lock", problems=(problem(
            "CHK-STRUCTURE", "version", f"pixi.lock version {version} is the single-environment format of pixi "
            "before 0.13: envpin reads versions 4 to 7, so nothing in it was checked", _REGENERATE,
            severity="warning"),))
    problems: list[Problem] = []
    if version > READ_VERSIONS[-1]:
        problems.append(problem("CHK-STRUCTURE", "version", f"pixi.lock version {version}: envpin reads versions "
                                "4 to 7 and checks only the fields they share", "update envpin", severity="warning"))
    records, record_problems = _records(data.get("packages"), version)
    problems += record_problems
    subdirs = _platform_subdirs(data, version)
    environments = data.get("environments")
    if not isinstance(environments, dict):
        problems.append(problem("CHK-STRUCTURE", "environments", "there is no environments mapping", _REGENERATE))
        environments = {}
    pins: list[Pin] = []
    locked: list[LockedPlatform] = []
    declared_cuda = _virtual_cuda(data, version)
    for name, environment in environments.items():
        where = f"environments.{name}"
        if not isinstance(environment, dict) or not isinstance(environment.get("packages", {}), dict):
            problems.append(problem("CHK-STRUCTURE", where, f"environment {name} is not a mapping with a packages "
                                    "mapping", _REGENERATE))
            continue
        for platform_name, selectors in environment.get("packages", {}).items():
            platform = LockedPlatform(str(name), str(platform_name), subdirs.get(str(platform_name), str(platform_name)),
                                      declared_cuda.get(str(platform_name)))
            here = f"{where}.packages.{platform_name}"
            if not isinstance(selectors, list):
                problems.append(problem("CHK-STRUCTURE", here, "the package list is not a list", _REGENERATE))
                continue
            locked.append(platform)
            found, missing = _environment_pins(platform, here, selectors, records)
            pins += found
            problems += missing
    return Contents(
        "pixi.lock",
        pins=tuple(pins),
        platforms=tuple(sorted({CONDA_SUBDIRS[p.subdir] for p in locked if p.subdir in CONDA_SUBDIRS})),
        problems=tuple(problems),
        binds_indexes=True,
        environments=tuple(locked),
    )


def scope_label(platform: LockedPlatform) -> str:
    """The scope of a pin of one environment on one platform: pins of two of them never meet. The `pixi:` word
    keeps it from being read as a marker."""
    return f"pixi:{platform.environment}@{platform.name}"


def _platform_subdirs(data: dict[str, Any], version: int) -> dict[str, str]:
    """Version 7's platform name -> conda subdir (`linux-64-foobar` with `subdir: linux-64`); before it the
    environments are keyed by the subdir itself."""
    platforms = data.get("platforms") if version >= 7 else None
    names: dict[str, str] = {}
    for entry in platforms if isinstance(platforms, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            subdir = entry.get("subdir")
            names[entry["name"]] = subdir if isinstance(subdir, str) else entry["name"]
    return names


def _virtual_cuda(data: dict[str, Any], version: int) -> dict[str, str]:
    """Version 7's platform name -> the CUDA of its `__cuda` virtual package, where it records one."""
    platforms = data.get("platforms") if version >= 7 else None
    found = {}
    for entry in platforms if isinstance(platforms, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        for virtual in entry.get("virtual-packages") or []:
            match = _CUDA_DEPENDENCY.match(str(virtual))
            if match:
                found[entry["name"]] = match.group(1)
    return found


def _records(packages: Any, version: int) -> tuple[dict[tuple[str, str], dict[str, Any]], list[Problem]]:
    """(kind, location) -> the package record; kind is conda or pypi (a v7 `conda_source` is conda)."""
    problems: list[Problem] = []
    if not isinstance(packages, list):
        return {}, [problem("CHK-STRUCTURE", "packages", "there is no packages list", _REGENERATE)]
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for position, record in enumerate(packages):
        where = f"packages[{position}]"
        if not isinstance(record, dict):
            problems.append(problem("CHK-STRUCTURE", where, "a package record is not a mapping", _REGENERATE))
            continue
        key = _record_key(record, version)
        if key is None:
            problems.append(problem("CHK-STRUCTURE", where, "a package record names no location ("
                                    + ("kind with url or path" if version < 6 else "conda:, conda_source: or pypi:")
                                    + ")", _REGENERATE))
            continue
        records[key] = {**record, "__where": where, "__location": key[1], "__source": "conda_source" in record}
        problems += _hash_problems(record, key, where)
    return records, problems


def _record_key(record: dict[str, Any], version: int) -> tuple[str, str] | None:
    if version < 6:
        kind, location = record.get("kind"), record.get("url") or record.get("path")
        return (kind, str(location)) if kind in ("conda", "pypi") and location else None
    for field, kind in (("conda", "conda"), ("conda_source", "conda"), ("pypi", "pypi")):
        if isinstance(record.get(field), str):
            return kind, record[field]
    return None


def _selector_key(selector: Any) -> tuple[str, str] | None:
    if not isinstance(selector, dict):
        return None
    for field, kind in (("conda", "conda"), ("conda_source", "conda"), ("pypi", "pypi")):
        if isinstance(selector.get(field), str):
            return kind, selector[field]
    return None


def _hash_problems(record: dict[str, Any], key: tuple[str, str], where: str) -> list[Problem]:
    """pixi records the sha256 (and md5 for conda) of every downloaded file and verifies it on install; a
    remote file without one is installed unverified. Local paths and source packages have none to record."""
    kind, location = key
    shown = file_name(location)
    problems = []
    for algorithm in ("sha256", "md5"):
        if record.get(algorithm) is not None:
            reason = digest_problem(algorithm, str(record[algorithm]))
            if reason:
                problems.append(problem("CHK-HASH-MALFORMED", f"{where}.{algorithm}", f"{shown}: {reason}",
                                        _REGENERATE))
    remote = "://" in location and not location.startswith(("git+", "file:"))
    is_archive = location.endswith((".conda", ".tar.bz2", ".whl", ".tar.gz", ".zip"))
    if remote and is_archive and "conda_source" not in record and not record.get("sha256") and not record.get("md5"):
        problems.append(problem("CHK-HASH-MISSING", f"{where}.sha256", f"{shown} ({kind}) has no sha256 or md5: pixi "
                                "installs it unverified", _REGENERATE))
    return problems


def _environment_pins(platform: LockedPlatform, where: str, selectors: list[Any],
                      records: dict[tuple[str, str], dict[str, Any]]) -> tuple[list[Pin], list[Problem]]:
    pins: list[Pin] = []
    problems: list[Problem] = []
    cuda_needed: tuple[str, str] | None = None  # (CUDA, the package that asks for it)
    cuda_user: tuple[str, str] | None = None  # (where, package) of the first package that needs any __cuda
    for position, selector in enumerate(selectors):
        here = f"{where}[{position}]"
        key = _selector_key(selector)
        record = records.get(key) if key else None
        if record is None:
            problems.append(problem("CHK-STRUCTURE", here, f"environment {platform.environment} lists "
                                    f"{key[1] if key else 'a package'} for {platform.name}, which no package record holds "
                                    "(pixi refuses the lock)", _REGENERATE))
            continue
        pin = _conda_pin(record, platform, here) if key and key[0] == "conda" else _pypi_pin(record, platform, here)
        if pin is None:
            continue
        pins.append(pin)
        if pin.manager == "conda":
            for dependency in record.get("depends") or []:
                if cuda_user is None and _NEEDS_CUDA.match(str(dependency)):
                    cuda_user = (here, pin.shown)
                match = _CUDA_DEPENDENCY.match(str(dependency))
                if match and (cuda_needed is None or _cuda_key(match.group(1)) > _cuda_key(cuda_needed[0])):
                    cuda_needed = (match.group(1), f"{pin.shown} depends on {dependency}")
    if cuda_needed is not None:
        pins.append(Pin(name="__cuda", where=where, label=f"__cuda >={cuda_needed[0]} ({cuda_needed[1]})",
                        version=cuda_needed[0], manager="conda", scope=frozenset({scope_label(platform)}),
                        platforms=_platforms(platform)))
    elif cuda_user is not None:  # `__cuda` with no version: any driver, but one there must be
        pins.append(Pin(name="__cuda", where=cuda_user[0], label=f"__cuda ({cuda_user[1]} depends on it)",
                        manager="conda", scope=frozenset({scope_label(platform)}), platforms=_platforms(platform)))
    return pins, problems


def _platforms(platform: LockedPlatform) -> tuple[str, ...]:
    return (CONDA_SUBDIRS[platform.subdir],) if platform.subdir in CONDA_SUBDIRS else ()


def _shown(platform: LockedPlatform) -> str:
    named = f" ({platform.subdir})" if platform.name != platform.subdir else ""
    return f"environment {platform.environment}, {platform.name}{named}"


def _conda_pin(record: dict[str, Any], platform: LockedPlatform, where: str) -> Pin | None:
    location = record["__location"]
    filename = file_name(location)
    name = record.get("name")
    version = record.get("version")
    build = record.get("build")
    if not isinstance(name, str) or version is None or not isinstance(build, str):
        derived = _derived(filename)  # version 6 leaves out what the file name says
        if derived is None and not isinstance(name, str):
            return None
        name = name if isinstance(name, str) else derived[0] if derived else None
        version = version if version is not None else (derived[1] if derived else None)
        build = build if isinstance(build, str) else (conda_build_of(filename, str(name), str(version))
                                                      if version is not None else None)
    if not isinstance(name, str):
        return None
    version = str(version) if isinstance(version, (str, int, float)) else None
    return Pin(name=CONDA_NAMES.get(name, name), where=where,
               label=f"{name} {version or ''} {build or ''}".replace("  ", " ").strip() + f" ({_shown(platform)})",
               version=version, manager="conda", build=build if isinstance(build, str) else None,
               index=_channel_of(location), scope=frozenset({scope_label(platform)}), platforms=_platforms(platform))


def _pypi_pin(record: dict[str, Any], platform: LockedPlatform, where: str) -> Pin | None:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy (~15 ms): only a pin needs it

    name = record.get("name")
    if not isinstance(name, str):
        return None
    version = record.get("version")
    version = str(version) if isinstance(version, (str, int, float)) else None
    location = record["__location"]
    wheel = parse_wheel(file_name(location)) if location.endswith(".whl") else None
    index = record.get("index") if isinstance(record.get("index"), str) else None  # version 7 records it
    if index is None and "://" in location:
        index = location.rsplit("/", 1)[0]  # a wheel's directory names its PyTorch index (…/whl/cu124/torch-…)
    return Pin(name=canonicalize_name(name), where=where,
               label=f"{name} {version or ''} ({_shown(platform)})".replace("  ", " "),
               version=version, index=index, scope=frozenset({scope_label(platform)}), platforms=_platforms(platform),
               pythons=wheel[3] if wheel else ())


def _derived(filename: str) -> tuple[str, str] | None:
    """(name, version) of a conda file name `NAME-VERSION-BUILD.conda`."""
    for extension in (".conda", ".tar.bz2"):
        if filename.endswith(extension):
            parts = filename[: -len(extension)].rsplit("-", 2)
            return (parts[0], parts[1]) if len(parts) == 3 else None
    return None


def _channel_of(url: str) -> str | None:
    """The channel name of a package URL (`https://conda.anaconda.org/conda-forge/linux-64/…` → conda-forge,
    `https://fast.prefix.dev/pytorch/…` → pytorch): the path part before the subdir."""
    if "://" not in url:
        return None
    parts = url.split("://", 1)[1].split("/")
    for position, part in enumerate(parts[1:], start=1):
        if part in CONDA_SUBDIRS or part == "noarch":
            return parts[position - 1] if position > 1 else None
    return None


def _cuda_key(cuda: str) -> tuple[int, int]:
    major, _, minor = cuda.partition(".")
    return int(major), int(minor or 0)



def candidate_subdirs(subdir: str) -> list[str]:
    """The subdirs pixi looks for on a host, in order: its own, then the one it also runs (osx-64 under Rosetta
    on osx-arm64, win-64 on win-arm64); pixi_manifest's `candidate_subdirs`."""
    also = {"osx-arm64": "osx-64", "win-arm64": "win-64"}.get(subdir)
    return [subdir, also] if also else [subdir]


def chosen_platforms(contents: Contents, subdir: str, cuda_runs: Callable[[str], bool]) -> tuple[
        dict[str, LockedPlatform], list[str]]:
    """environment -> the platform pixi installs it for on this host, as pixi's `best_declared_platform`
    (crates/pixi_core/src/workspace/environment.rs) chooses: a platform of the host's subdir (then osx-64 on
    osx-arm64, win-64 on win-arm64) whose declared `__cuda` the host satisfies (`cuda_runs("12")`); and the
    environments that have none there."""
    by_environment: dict[str, list[LockedPlatform]] = {}
    for platform in contents.environments:
        by_environment.setdefault(platform.environment, []).append(platform)
    chosen: dict[str, LockedPlatform] = {}
    refused = []
    for environment, platforms in by_environment.items():
        for candidate in candidate_subdirs(subdir):
            runnable = [p for p in platforms if p.subdir == candidate and (p.cuda is None or cuda_runs(p.cuda))]
            # pixi takes the first in the manifest's order, which the lock (sorted by name) does not keep: a
            # platform whose __cuda the host runs first, as manifests list them (`cuda-linux-64` before `linux-64`)
            runnable.sort(key=lambda p: (p.cuda is None, tuple(-n for n in _cuda_key(p.cuda or "0"))))
            found = runnable[0] if runnable else None
            if found is not None:
                chosen[environment] = found
                break
        else:
            refused.append(environment)
    return chosen, refused


def for_target(contents: Contents, target_name: str, subdir: str, cuda_runs: Callable[[str], bool],
               driver_needed: Callable[[str], str], driver_present: bool = True) -> tuple[Contents, list[Problem]]:
    """The lock as pixi installs it on the host: each environment's pins of the platform pixi chooses there
    (the others left out), and a problem for each environment pixi would refuse: one it has no platform for,
    and on a host without an NVIDIA driver one whose packages depend on `__cuda` (pixi checks the machine's
    virtual packages against the environment's system requirements before it installs)."""
    chosen, refused = chosen_platforms(contents, subdir, cuda_runs)
    keep = {scope_label(p) for p in chosen.values()}
    pins = tuple(pin for pin in contents.pins
                 if not any(label.startswith("pixi:") for label in pin.scope) or pin.scope & keep)
    problems = []
    if not driver_present:
        for pin in pins:
            if pin.name == "__cuda" and pin.manager == "conda" and pin.scope & keep:
                environment = next(p.environment for p in chosen.values() if scope_label(p) in pin.scope)
                problems.append(problem(
                    "CHK-TARGET-DRIVER", pin.where,
                    f"{target_name}: environment {environment} needs {pin.label}, and this machine has no NVIDIA "
                    f"driver: pixi refuses to install it there (no __cuda virtual package)",
                    f"install an NVIDIA driver there, or lock a CPU environment for it (a feature without "
                    f"system-requirements.cuda) and run `{REFRESH}`"))
    fix = f"add {subdir} to the workspace's platforms and run `{REFRESH}`, or do not install it there"
    for environment in refused:
        platforms = [p for p in contents.environments if p.environment == environment]
        needing = [p for p in platforms if p.subdir in candidate_subdirs(subdir) and p.cuda is not None]
        if needing:
            cuda = needing[0].cuda or ""
            problems.append(problem(
                "CHK-TARGET-DRIVER", f"environments.{environment}",
                f"{target_name}: environment {environment} is locked for {subdir} only as {needing[0].name}, which "
                f"declares __cuda={cuda}, and this machine's driver does not run CUDA {cuda}: pixi installs nothing "
                "there", f"install NVIDIA driver ≥ {driver_needed(cuda)} there, or add a platform without __cuda "
                f"and run `{REFRESH}`"))
            continue
        locked = ", ".join(p.name for p in platforms)
        problems.append(problem(
            "CHK-TARGET-PLATFORM", f"environments.{environment}",
            f"{target_name}: environment {environment} is locked for {locked}, not {subdir}: "
            f"`pixi install -e {environment}` refuses there", fix, severity="warning" if chosen else None))
    return replace(contents, pins=pins), problems
