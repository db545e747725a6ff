"""In-process conda solving, locking and environment creation with py-rattler (the engine of pixi).

rattler is imported inside each function (it is the optional extra `envpin[conda]`; a solve of envpin's own never
loads it). The virtual packages always come from the caller (`envpin.conda.virtual`, built from envpin's facts),
never from rattler's detection of this machine or CONDA_OVERRIDE_*: an environment is solved for its target.

Channels: `channels=None` uses the environment file's channel names as conda does (conda-forge →
https://conda.anaconda.org/conda-forge, `defaults` → conda's default channels on repo.anaconda.com); a folder maps
each name to the subfolder of that name (offline mirrors, tests); a mapping gives each name its own path or URL.
Channel priority is strict, as conda-forge recommends.
"""

from __future__ import annotations

import asyncio
import atexit
import datetime
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from envpin.base.errors import Unreachable, looks_unreachable
from envpin.base.record import Record, field
from envpin.base.record import record as frozen_record
from envpin.conda.envfile import EnvironmentFile, parse_environment_yml
from envpin.conda.errors import CondaInputError, CondaSolveFailed, CondaToolFailed, RattlerMissing
from envpin.conda.locks import LockedRecord
from envpin.conda.virtual import VirtualPackage

if TYPE_CHECKING:
    from rattler import RepoDataRecord

ChannelSource = str | os.PathLike | Mapping[str, str] | None
SOLVE_TIMEOUT_S = 300.0


@frozen_record
class Solution(Record):
    """A solved environment for one conda subdir."""

    subdir: str
    channels: tuple[str, ...]  # the channel URLs or paths solved against, in priority order
    specs: tuple[str, ...]
    virtual_packages: tuple[VirtualPackage, ...]
    records: tuple[LockedRecord, ...]  # dependencies first
    pip: tuple[str, ...] = ()  # the environment file's `pip:` section, which a conda solve does not cover
    repodata_records: tuple[RepoDataRecord, ...] = field(default=(), compare=False, repr=False)  # rattler's, for install/lock

    def record(self, name: str) -> LockedRecord | None:
        return next((r for r in self.records if r.name == name), None)


def rattler():
    try:
        import rattler as module  # noqa: PLC0415 - the optional extra envpin[conda], and heavy: only conda work loads it
    except ImportError:
        raise RattlerMissing() from None
    return module


_SETTLE_S = 0.1
_settle_registered = False


def _run(coroutine):
    """asyncio.run for a rattler coroutine. py-rattler's tokio threads finish releasing Python objects a few
    milliseconds after the result arrives; a process that exits inside that window aborts in finalization
    ("PyGILState_Release: thread state … must be current", seen here in 7 of 12 runs of a solve followed by exit;
    0 of 40 with a 0.1 s pause at exit). So the first rattler call registers that pause to run at exit."""
    global _settle_registered
    if not _settle_registered:
        atexit.register(time.sleep, _SETTLE_S)
        _settle_registered = True
    return asyncio.run(coroutine)


# ---------------------------------------------------------------- solving


def solve_environment(
    env_yml_text: str,
    channels: ChannelSource,
    virtual_packages: Sequence[VirtualPackage],
    platform: str,
    *,
    origin: str = "environment.yml",
    cache_dir: str | os.PathLike | None = None,
    timeout_s: float = SOLVE_TIMEOUT_S,
) -> Solution:
    """Solve an environment.yml for a conda subdir (`linux-64`) and the target's virtual packages.

    CondaInputError (exit 2) for a malformed file or channel; CondaSolveFailed (exit 1) when it does not solve,
    with rattler's reason on one line (and, for a GPU package on a target without a driver, that reason first)."""
    environment = parse_environment_yml(env_yml_text, origin)
    return solve_specs(environment, channels, virtual_packages, platform, origin=origin, cache_dir=cache_dir,
                       timeout_s=timeout_s)


def solve_specs(
    environment: EnvironmentFile,
    channels: ChannelSource,
    virtual_packages: Sequence[VirtualPackage],
    platform: str,
    *,
    origin: str = "environment.yml",
    cache_dir: str | os.PathLike | None = None,
    timeout_s: float = SOLVE_TIMEOUT_S,
    offline: bool = False,
) -> Solution:
    """`offline`: the channels' repodata from rattler's cache only, never fetched (a local channel is read as ever)."""
    module = rattler()
    sources = resolve_channels(environment.channels, channels, origin, platform)
    specs = [_match_spec(module, spec, origin, position) for position, spec in enumerate(environment.dependencies)]
    virtual = [_generic(module, package) for package in virtual_packages]
    config = {"default_config": module.SourceConfig(cache_action="force-cache-only")} if offline else {}
    gateway = module.Gateway(cache_dir=cache_dir, **config) if cache_dir is not None else module.Gateway(**config)
    try:
        solved = _run(
            module.solve(
                sources,
                specs,
                gateway=gateway,
                platforms=[platform, "noarch"],
                virtual_packages=virtual,
                timeout=datetime.timedelta(seconds=timeout_s),
            )
        )
    except _rattler_errors(module) as error:
        if looks_unreachable(str(error)):
            raise Unreachable("a channel", " ".join(str(error).split())) from None
        raise CondaSolveFailed(explain_solve_failure(str(error), origin, platform, tuple(virtual_packages))) from None
    # sort_topologically hands back plain PackageRecords: keep rattler's order, but the solved RepoDataRecords
    by_name = {r.name.normalized: r for r in solved}
    ordered = [by_name[r.name.normalized] for r in module.PackageRecord.sort_topologically(solved)]
    return Solution(
        subdir=platform,
        channels=tuple(sources),
        specs=environment.dependencies,
        virtual_packages=tuple(virtual_packages),
        records=tuple(locked_record(r) for r in ordered),
        pip=environment.pip,
        repodata_records=tuple(ordered),
    )


# conda's `defaults` is an alias rattler does not know: conda reads it as its `default_channels` setting, which
# without a .condarc is DEFAULT_CHANNELS_UNIX, or DEFAULT_CHANNELS_WIN on Windows (conda/conda
# conda/base/constants.py @26.7.1, lines 122-131:
# https://github.com/conda/conda/blob/26.7.1/conda/base/constants.py#L122-L131). conda picks by the OS it runs on;
# a solve for a target picks by the target's subdir.
DEFAULTS = "defaults"
DEFAULT_CHANNELS_UNIX = ("https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r")
DEFAULT_CHANNELS_WIN = (*DEFAULT_CHANNELS_UNIX, "https://repo.anaconda.com/pkgs/msys2")


def default_channels(platform: str) -> tuple[str, ...]:
    """What conda reads `defaults` as for a conda subdir (`win-64`: msys2 too)."""
    return DEFAULT_CHANNELS_WIN if platform.startswith("win-") else DEFAULT_CHANNELS_UNIX


def resolve_channels(names: tuple[str, ...], channels: ChannelSource, origin: str, platform: str) -> list[str]:
    """The channel locations to solve against, in the file's order (`nodefaults` dropped). `defaults` is conda's
    channels for the subdir where the channels are the file's names, and a channel like any other where a folder
    or a location is given for it (`--channels DIR` with `DIR/defaults`, `--channel defaults=LOCATION`)."""
    names = tuple(n for n in names if n != "nodefaults")
    if not names:
        raise CondaInputError(f"{origin}: no channels; add `channels: [conda-forge]`")
    if channels is None:
        return list(dict.fromkeys(url for n in names for url in (default_channels(platform) if n == DEFAULTS else (n,))))
    if isinstance(channels, Mapping):
        missing = [n for n in names if n not in channels]
        if missing:
            raise CondaInputError(f"{origin}: no location given for channel(s) {', '.join(missing)}")
        return [_location(channels[n]) for n in names]
    folder = Path(channels)
    if not folder.is_dir():
        raise CondaInputError(f"channel folder {folder}: not a directory")
    missing = [n for n in names if not (folder / _folder_name(n)).is_dir()]
    if missing:
        raise CondaInputError(f"{origin}: channel(s) {', '.join(missing)} have no folder in {folder}")
    return [str((folder / _folder_name(n)).resolve()) for n in names]


def _folder_name(channel: str) -> str:
    """`https://fast.prefix.dev/conda-forge/` and `conda-forge` are both the folder `conda-forge`."""
    return channel.rstrip("/").rsplit("/", 1)[-1]


def _location(value: str) -> str:
    if "://" in value:
        return value
    path = Path(value)
    if not path.is_dir():
        raise CondaInputError(f"channel folder {path}: not a directory")
    return str(path.resolve())


def _match_spec(module, spec: str, origin: str, position: int):
    # Lenient parsing, as conda's own: `pytorch=2.4.0=cuda120*` is conda's name=version=build form, which rattler's
    # strict mode rejects.
    try:
        return module.MatchSpec(spec, strict=False)
    except _rattler_errors(module) as error:
        raise CondaInputError(f"{origin}: dependencies[{position}]: {spec!r} is not a conda package spec ({error})") from None


def _generic(module, package: VirtualPackage):
    return module.GenericVirtualPackage(
        module.PackageName(package.name), module.Version(package.version), module.BuildString(package.build)
    )


def _rattler_errors(module) -> tuple[type[BaseException], ...]:
    """Every exception type rattler raises (its own, all in rattler.exceptions), so nothing else is swallowed."""
    import rattler.exceptions as exceptions  # noqa: PLC0415 - rattler is loaded only for conda work (see rattler())

    found = tuple(
        value for value in vars(exceptions).values()
        if isinstance(value, type) and issubclass(value, Exception) and not issubclass(value, Warning)
    )
    return found or (Exception,)


def explain_solve_failure(text: str, origin: str, platform: str, virtual_packages: tuple[VirtualPackage, ...]) -> str:
    """rattler's tree of reasons on one line; a GPU package on a target without `__cuda` is said first, plainly."""
    lines = [line.strip(" │├└─\t") for line in text.splitlines()]
    detail = " ".join(line for line in lines if line)
    names = {p.name for p in virtual_packages}
    shown = ", ".join(str(p) for p in virtual_packages) or "none"
    if "__cuda" in text and "__cuda" not in names:
        return (f"{origin} does not solve for {platform}: it asks for a CUDA build, which needs an NVIDIA driver "
                f"(the `__cuda` virtual package), and the target has none — solve for a machine with a driver "
                f"(--driver / --facts) or ask for the CPU build ({detail})")
    return f"{origin} does not solve for {platform} with virtual packages {shown}: {detail}"


def locked_record(record) -> LockedRecord:
    return LockedRecord(
        name=record.name.normalized,
        version=str(record.version),
        build=str(record.build),
        subdir=record.subdir,
        url=str(record.url),
        md5=record.md5.hex() if record.md5 else None,
        sha256=record.sha256.hex() if record.sha256 else None,
        depends=tuple(record.depends),
        channel=str(record.channel) if record.channel else None,
    )


# ---------------------------------------------------------------- locks


def write_pixi_lock(
    solution: Solution, path: str | os.PathLike, environment: str = "default", url_bases: Mapping[str, str] | None = None
) -> None:
    """A pixi.lock (rattler's lock format) holding the solution as `environment`, its platform carrying the
    virtual packages it was solved for; written beside `path` and renamed into place."""
    module = rattler()
    platform = module.LockPlatform(solution.subdir, virtual_packages=[str(p) for p in solution.virtual_packages])
    lock = module.LockFile([platform])
    lock.set_channels(environment, [module.LockChannel(_public(c, url_bases)) for c in solution.channels])
    for record in solution.repodata_records:
        if url_bases:
            record = _relocated(module, record, url_bases)
        lock.add_conda_package(environment, platform, record)
    target = Path(path)
    temporary = target.with_name(f".{target.name}.envpin-{os.getpid()}.tmp")
    try:
        lock.to_path(temporary)
        os.replace(temporary, target)
    except (OSError,) + _rattler_errors(module) as error:
        temporary.unlink(missing_ok=True)
        raise CondaInputError(f"{target}: cannot write the lock ({error})") from None


def _public(channel: str, url_bases: Mapping[str, str] | None) -> str:
    url = channel if "://" in channel else Path(channel).as_uri() + "/"
    for local, public in (url_bases or {}).items():
        if url.startswith(local):
            return public + url[len(local):]
    return url


def _relocated(module, record, url_bases: Mapping[str, str]):
    """A copy of the record whose URL points at the public channel (the solution itself is left as it was)."""
    url = str(record.url)
    for local, public in url_bases.items():
        if url.startswith(local):
            return module.RepoDataRecord(record, record.file_name, public + url[len(local):], public)
    return record


# ---------------------------------------------------------------- creating the environment


def link_into(
    records: Sequence[RepoDataRecord],
    directory: str | os.PathLike,
    final_prefix: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    platform: str | None = None,
) -> None:
    """Link `records` into `directory` as if it were `final_prefix` (the path written into scripts and prefix
    placeholders), so the folder can then be renamed to `final_prefix` as it is: the step an atomic installer
    (envpin.provision's staging) builds on. CondaToolFailed when rattler fails."""
    module = rattler()
    try:
        _run(
            module.install(
                list(records),
                Path(directory),
                cache_dir=cache_dir,
                platform=module.Subdir(platform) if platform else None,
                show_progress=False,
                alternative_target_prefix=Path(final_prefix),
                execute_link_scripts=False,
            )
        )
    except _rattler_errors(module) as error:
        wait_until_still(Path(directory))
        raise CondaToolFailed(f"rattler could not link the environment: {_one_line(error)}") from None


def wait_until_still(directory: Path, interval_s: float = 0.25, limit_s: float = 30.0) -> None:
    """Return once nothing has changed in `directory` for `interval_s` (or after `limit_s`). rattler reports the
    first package that failed while its tasks for the other packages may still be linking into the folder (seen
    in CI: a staging folder removed on the error, then written to again); the caller removes the folder after."""
    deadline = time.monotonic() + limit_s
    previous = None
    while time.monotonic() < deadline:
        current = _tree_state(directory)
        if current == previous:
            return
        previous = current
        time.sleep(interval_s)


def _tree_state(directory: Path) -> tuple[int, int]:
    """(entries, newest modification time in ns) of a folder tree: changes while anything is written into it."""
    count, newest = 0, 0
    for root, folders, files in os.walk(directory):
        for name in (*folders, *files):
            try:
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime_ns)
            except OSError:
                continue
            count += 1
    return count, newest


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or error.__class__.__name__


def records_from_lock(path: str | os.PathLike, subdir: str, environment: str = "default") -> list[RepoDataRecord]:
    """The conda records a pixi.lock or conda-lock.yml holds for one environment and subdir (rattler reads both)."""
    module = rattler()
    try:
        lock = module.LockFile.from_path(Path(path))
    except _rattler_errors(module) as error:
        raise CondaInputError(f"{path}: not a lock file rattler can read ({_one_line(error)})") from None
    found = lock.environment(environment)
    if found is None:
        names = ", ".join(name for name, _ in lock.environments()) or "none"
        raise CondaInputError(f"{path}: no environment {environment!r} (it has {names})")
    platform = next((p for p in found.platforms() if p.name == subdir), None)
    records = found.conda_repodata_records_for_platform(platform) if platform is not None else None
    if not records:
        raise CondaInputError(f"{path}: environment {environment!r} has no conda packages for {subdir}")
    return list(records)
