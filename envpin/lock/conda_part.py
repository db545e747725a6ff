"""The conda part of a whole-environment resolution: an environment.yml's conda dependencies solved by rattler.

What is solved is what envpin writes for the plan (envpin.emit.environment_yml.conda_dependencies: the target's
Python, pip and the project's conda packages, from the project's channels) for the target's conda subdir and
virtual packages, so the Python that resolution goes on with (uv resolves the pip part for it) is the one conda
would install. The answer is one of three: solved (the records, the Python chosen), does not solve (rattler's reason,
on one line: a real answer about the packages), or not asked end to end (a channel that does not answer, rattler
missing, offline without a cache), each said in the words the plan prints.
"""

from __future__ import annotations

from envpin.base.errors import EnvpinError, Unreachable
from envpin.base.record import Record, record, replace
from envpin.lock.options import ResolveOptions
from envpin.readers.project import Project
from envpin.resolver.plan import Plan

NO_CACHE = "no usable repodata cache"  # rattler's words (py-rattler 0.28) for a cache-only fetch that finds none
DEFAULT_CHANNELS = ("conda-forge",)  # what envpin writes where the project names none (environment_yml.render)


@record
class CondaPart(Record):
    records: tuple[str, ...] = ()  # solved: `name=version=build`, dependencies first
    python: str = ""  # solved: the Python's full version, "3.12.0"
    detail: str = ""  # solved: how; otherwise why not, in one line
    conflict: str = ""  # it does not solve: rattler's reason, in one line
    assumed: str = ""  # what the solve took that the target does not say (its glibc)
    pip: tuple[str, ...] = ()  # a conda plan's: the lines of its environment.yml's pip section, which pip installs

    @property
    def solved(self) -> bool:
        return bool(self.python)


def solve_conda_part(plan: Plan, project: Project, options: ResolveOptions) -> CondaPart:
    """The project's conda side solved for the plan's target. Never raises for the channels' answer."""
    from envpin.emit.environment_yml import conda_dependencies  # noqa: PLC0415 - what the written file holds

    return _solved(plan, tuple(conda_dependencies(plan, project)), project.channels or DEFAULT_CHANNELS, options)


def solve_conda_plan(plan: Plan, project: Project | None, options: ResolveOptions, policy: str) -> CondaPart:
    """A plan of conda builds (`--conda-source conda-forge`): the environment.yml envpin writes for it (its builds'
    match specs, the target's Python, the project's conda packages, from its channels) solved for the target."""
    from envpin.conda.specs import conda_environment  # noqa: PLC0415 - the conda model, for a conda plan only

    environment = conda_environment(plan, None, plan.channel, policy, project)
    return replace(_solved(plan, environment.dependencies, environment.channels, options), pip=environment.pip)


def _solved(plan: Plan, dependencies: tuple[str, ...], channel_names: tuple[str, ...], options: ResolveOptions,
            ) -> CondaPart:
    from envpin.conda.errors import CondaSolveFailed  # noqa: PLC0415 - the conda model, for a conda side only
    from envpin.conda.rattler_solve import solve_specs  # noqa: PLC0415 - rattler, for a conda side only

    try:
        virtual, assumed = _virtual_packages(plan)
        environment = _environment(dependencies, channel_names)
        channels = options.channels
        solution = solve_specs(environment, channels.location, virtual, _subdir(plan), origin="the environment's conda part",
                               cache_dir=channels.cache_dir, timeout_s=options.timeout,
                               offline=options.offline and _remote(environment.channels, channels.location))
    except CondaSolveFailed as failed:
        if options.offline and NO_CACHE in str(failed):  # nothing was solved: the repodata was not there to read
            return CondaPart(detail=f"offline, and rattler's cache does not hold the channels' repodata ({NO_CACHE})")
        return CondaPart(conflict=str(failed))
    except Unreachable as error:
        if options.offline:
            return CondaPart(detail=f"offline, and rattler's cache does not hold the channels' repodata ({_short(error)})")
        return CondaPart(detail=_short(error))
    except EnvpinError as error:  # rattler missing, a channel folder that is not there, no __cuda for a driver
        return CondaPart(detail=str(error))
    python = solution.record("python")
    if python is None:
        return CondaPart(detail="the conda part solves without a Python, so there is none for pip to install into")
    records = tuple(f"{r.name}={r.version}={r.build}" for r in solution.records)
    where = ", ".join(solution.channels)
    detail = f"the conda part solved by rattler from {where} for {solution.subdir}: {len(records)} packages, " \
             f"Python {python.version}"
    return CondaPart(records, python.version, detail, assumed=assumed)


def _environment(dependencies: tuple[str, ...], channels: tuple[str, ...]):
    from envpin.conda.envfile import EnvironmentFile  # noqa: PLC0415 - as above

    return EnvironmentFile(name=None, channels=channels, dependencies=dependencies, pip=())


def _virtual_packages(plan: Plan):
    """The target's virtual packages; a Linux target whose glibc nothing says is solved for the glibc pixi and
    conda-lock assume, and that is said."""
    from envpin.conda.virtual import DEFAULT_GLIBC, virtual_packages  # noqa: PLC0415 - as above
    from envpin.facts.host import Libc  # noqa: PLC0415 - as above

    target = plan.target
    if target.os != "linux":
        return virtual_packages(target, None, target.macos), ""
    if target.glibc is not None:
        return virtual_packages(target, Libc("glibc", target.glibc)), ""
    return virtual_packages(target, Libc("glibc", DEFAULT_GLIBC)), \
        f"the target's glibc is not given: solved for glibc {DEFAULT_GLIBC} (pass --glibc X.Y)"


def _subdir(plan: Plan) -> str:
    from envpin.conda.virtual import conda_subdir  # noqa: PLC0415 - as above

    return conda_subdir(plan.target)


def _remote(names: tuple[str, ...], location) -> bool:
    """Whether any channel is fetched over the network (a channel name, or a URL), not read from a folder."""
    if location is None:
        return True
    if isinstance(location, str):
        return False
    return any("://" in str(location.get(name, "")) and not str(location[name]).startswith("file:") for name in names)


def _short(error: BaseException) -> str:
    """rattler's chain of causes ("… Caused by: dns error Caused by: …") cut to a line a plan can carry."""
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."
