"""The whole environment resolved by uv: a project's lines beside the solved GPU pins (`solve --resolve`).

The database chooses the GPU builds; whether the project's other lines install beside them is the index's to
say, so the whole requirement set (the pins, the project's lines, their indexes, the target's Python and platform)
goes to the same `uv pip compile` that `envpin lock` runs (engines.UvEngine). Where uv resolves it, the plan
carries that resolution: every package pinned. Where uv finds no solution, its explanation is read as a solver
reads a conflict: a project line that bounds a solved framework (`tensorflow-text 2.20.1 depends on
tensorflow<2.21`) becomes that bound, a solved framework release whose own requirement clashes with a project
line (`tensorflow 2.20.0 depends on protobuf>=5.28.0` beside `protobuf==4.25.1`) is passed over, and the
database solves again, at most MAX_MOVES times. Each newer build passed over is said with the line and the
requirement that ruled it out; when no GPU build that runs here resolves, the answer is a refusal naming the
lines that clash. Offline (from uv's cache only), or with an index that does not answer, the plan says it was
not resolved end to end, and why: nothing is printed as resolved that uv did not resolve.

An environment.yml's conda part is solved first, by rattler (envpin.lock.conda_part), and the pip part is then
resolved for the Python that solve chose. `resolve_lines` asks uv the same question about a committed file's own
lines (`check --resolve`).

The conflict reading is pure (`moves_from`, `unserved`, `not_cached`); `resolve_environment` and `resolve_lines` are
the only I/O.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from envpin.base.errors import EnvpinError, EnvpinInputError, Unreachable
from envpin.base.record import Record, record, replace
from envpin.lock.engines import LockFailed, LockInput, UvEngine, find_uv
from envpin.lock.indexes import index_plan, project_inputs
from envpin.lock.options import ResolveOptions
from envpin.readers.project import Project
from envpin.resolver.plan import NOT_RESOLVED, RESOLVED, Plan, Resolution, Unsatisfiable
from envpin.vocabulary.names import canonical_name as canonical

LOCK_PROJECT = "envpin-lock-input"  # engines.uv_input_project's name for the requirement set
MAX_MOVES = 4  # framework candidates passed over before the answer is a refusal: each costs one uv run
UNRESOLVABLE = "unresolvable"  # the Unsatisfiable code: uv resolves the project's lines beside no build that runs

# uv's words (`uv pip compile`, 0.5 to 0.13): "tensorflow-text==2.20.1 depends on tensorflow>=2.20.0,<2.21",
# "all versions of tensorflow-text depend on tensorflow<2.21", "tensorflow==2.20.0 depends on protobuf>=5.28.0"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SPEC = r"(?:(?:===|==|!=|~=|<=|>=|<|>)[^\s,]+(?:,(?:===|==|!=|~=|<=|>=|<|>)[^\s,]+)*)"
_DEPENDS = re.compile(rf"(?:all versions of )?(?P<who>{_NAME})(?:\[[^\]]*\])?(?:\{{[^}}]*\}})?(?P<whospec>{_SPEC})?"
                      rf" depends? on (?P<name>{_NAME})(?:\[[^\]]*\])?(?:\{{[^}}]*\}})?(?P<spec>{_SPEC})?")
# "there is no version of tensorflow-gpu==2.3.0rc0", "tensorflow-gpu was not found in the package registry",
# "only tensorflow-gpu<=2.12.0 is available", "tensorflow-gpu==2.3.0 has no wheels with a matching Python ABI tag"
_UNSERVED = re.compile(rf"there is no version of (?P<a>{_NAME}(?:\[[^\]]*\])?{_SPEC}?)|(?P<b>{_NAME}) was not "
                       rf"found in the package registry|(?P<c>{_NAME}(?:\[[^\]]*\])?{_SPEC}) has no wheels with a "
                       r"matching (?:platform|Python)")


# uv --offline, for a package its cache does not hold: "tensorflow==2.21.0 needs to be downloaded from a registry",
# "protobuf was not found in the cache"
_NOT_CACHED = re.compile(rf"(?P<a>{_NAME}(?:\[[^\]]*\])?{_SPEC}?) needs to be downloaded from a registry|"
                         rf"(?P<b>{_NAME}) was not found in the cache")


@record
class Move(Record):
    """One step a conflict allows: the spec that rules out the solved build, and why."""

    framework: str  # the package of the plan that moves: tensorflow
    spec: str  # added to the request: "tensorflow>=2.20.0,<2.21", or "tensorflow!=2.20.0"
    why: str  # uv's own words for it: "tensorflow-text==2.20.1 depends on tensorflow>=2.20.0,<2.21"


def solved_versions(plan: Plan) -> dict[str, str]:
    """The plan's pinned packages (the GPU builds and their companions): canonical name -> version."""
    return {canonical(p.name): p.version for p in plan.packages if not p.bound}


def moves_from(conflict: str, solved: dict[str, str]) -> list[Move]:
    """What uv's explanation allows the solve to change, best first: a line's bound on a solved package (the next
    candidate inside it is the one to try), then a solved release whose own requirement clashes (passed over)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a conflict needs it
    from packaging.version import InvalidVersion, Version  # noqa: PLC0415 - as above

    bounds, passed = [], []
    for found in _DEPENDS.finditer(conflict):
        who, name, spec = canonical(found["who"]), canonical(found["name"]), found["spec"] or ""
        said = found[0]
        if name in solved and spec and who not in solved:
            try:
                if not SpecifierSet(spec).contains(Version(solved[name]), prereleases=True):
                    bounds.append(Move(name, f"{name}{spec}", said))
            except (InvalidSpecifier, InvalidVersion):
                continue
        elif who in solved and name not in solved:
            version = solved[who].split("+")[0]
            passed.append(Move(who, f"{who}!={version}", said))
    return list(dict.fromkeys(bounds + passed))


def unserved(conflict: str) -> list[str]:
    """The requirements uv says no file of the index can meet (a deleted or never published version, or none for
    this platform or Python): `tensorflow-gpu==2.3.0rc0`."""
    return list(dict.fromkeys(next(g for g in found.groups() if g) for found in _UNSERVED.finditer(conflict)))


def not_cached(conflict: str) -> list[str]:
    """The requirements uv --offline says its cache does not hold: `tensorflow==2.21.0`."""
    return list(dict.fromkeys(found["a"] or found["b"] for found in _NOT_CACHED.finditer(conflict)))


def name_of(requirement: str) -> str:
    return canonical(re.split(r"[=<>!~\[;\s]", requirement, maxsplit=1)[0])


def lines_named(text: str, project: Project | None) -> list[str]:
    """The project's lines whose package uv's explanation names, as `origin: line`."""
    if project is None:
        return []
    words = {canonical(w) for w in re.findall(_NAME, text)}
    return list(dict.fromkeys(f"{r.origin}: {r.text}" for r in project.other_requirements if r.name in words))


# ---------------------------------------------------------------- running uv


@record
class Outcome(Record):
    resolution: Resolution
    conflict: str | None = None  # uv's explanation when it found no solution
    unsolvable: str = ""  # the conda part does not solve (rattler's reason): a refusal no move of the plan mends
    python: str = ""  # the Python the pip part was resolved for, where not the target's: the conda part's "3.12.0"


def resolve_environment(plan: Plan, project: Project | None, options: ResolveOptions, policy: str = "minor") -> Outcome:
    """Ask uv for the whole environment of a plan (rattler for a plan of conda builds, whose environment.yml follows
    the driver `policy`). Never raises for the index's answer: a conflict is an Outcome with its explanation, an index
    that does not answer a Resolution that says it was not resolved."""
    outcome = _conda_plan(plan, project, options, policy) if plan.channel != "pip" else \
        _whole_environment(plan, project, options)
    return replace(outcome, resolution=replace(outcome.resolution, again=resolve_again(options)))


def has_conda_part(project: Project) -> bool:
    """Whether the environment has a conda side: conda packages, or an environment.yml (its Python and pip are
    conda's even where every other line is pip's)."""
    return bool(project.conda_packages) or any(f.endswith((".yml", ".yaml")) for f in project.files)


def resolve_again(options: ResolveOptions) -> tuple[str, ...]:
    """The options a regenerate line needs to resolve the same way: the index and the channels the user named
    (not --offline: online, the same files resolve the same)."""
    words = ["--resolve"] + (["--index-url", options.index_url] if options.index_url else [])
    if options.channels.folder:
        words += ["--channels", options.channels.folder]
    for name, location in options.channels.named:
        words += ["--channel", f"{name}={location}"]
    return tuple(words)


def _conda_plan(plan: Plan, project: Project | None, options: ResolveOptions, policy: str) -> Outcome:
    """A plan of conda builds: the environment.yml envpin writes for it, solved by rattler. Its pip lines (a project's
    pip-only packages) stay unproven: uv would resolve them without seeing the conda packages beside them."""
    from envpin.lock.conda_part import solve_conda_plan  # noqa: PLC0415 - rattler, for a conda plan only

    if not options.conda_part:
        return Outcome(Resolution(NOT_RESOLVED, f"the plan's builds come from {plan.channel}, whose conda part is "
                                                "not solved here"))
    conda = solve_conda_plan(plan, project, options, policy)
    if conda.conflict:
        return Outcome(Resolution(NOT_RESOLVED, conda.conflict), unsolvable=conda.conflict)
    if not conda.solved:
        return Outcome(Resolution(NOT_RESOLVED, f"the conda part ({plan.channel}'s builds) was not solved: "
                                                f"{conda.detail}"))
    assumed = f"; {conda.assumed}" if conda.assumed else ""
    pip = [line for line in conda.pip if not line.startswith("-")]  # its requirements, not its index options
    if pip:
        shown = ", ".join(pip[:5]) + (", …" if len(pip) > 5 else "")
        return Outcome(Resolution(NOT_RESOLVED, f"{conda.detail}{assumed}; its pip lines ({shown}) are not resolved "
                                                "beside it (uv does not see the conda packages)", conda=conda.records))
    return Outcome(Resolution(RESOLVED, f"resolved end to end: {conda.detail}{assumed}", conda=conda.records))


def _whole_environment(plan: Plan, project: Project | None, options: ResolveOptions) -> Outcome:
    conda = None
    if project is not None and has_conda_part(project) and options.conda_part:
        from envpin.lock.conda_part import solve_conda_part  # noqa: PLC0415 - rattler, for an environment.yml only

        conda = solve_conda_part(plan, project, options)
        if conda.conflict:
            return Outcome(Resolution(NOT_RESOLVED, conda.conflict), unsolvable=conda.conflict)
    # the pip part is resolved for the Python the conda part installs (its patch release too: a Requires-Python
    # may name one), else for the target's
    outcome = _pip_part(plan, project, options, conda.python if conda is not None and conda.solved else "")
    resolution = outcome.resolution
    if conda is None or (conda.solved and resolution.status != RESOLVED):
        return outcome
    if conda.solved:
        detail = (f"resolved end to end: {conda.detail}; the pip part "
                  + resolution.detail.removeprefix("resolved end to end ") + (f"; {conda.assumed}" if conda.assumed else ""))
        return replace(outcome, resolution=replace(resolution, detail=detail, conda=conda.records))
    # the conda part was not solved (a channel that did not answer): the pip part was asked for the target's Python,
    # and the whole environment is not proven
    conda_packages = project.conda_packages if project is not None else ()
    named = (f"the conda packages ({', '.join(conda_packages[:5])}{', …' if len(conda_packages) > 5 else ''}) were"
             if conda_packages else "the conda part (python, pip) was")
    pip_part = resolution.detail.replace("resolved end to end by", "resolved by")
    return replace(outcome, resolution=replace(resolution, status=NOT_RESOLVED, detail=f"{named} not solved: "
                                               f"{conda.detail}; the pip part: {pip_part}"))


def _pip_part(plan: Plan, project: Project | None, options: ResolveOptions, conda_python: str) -> Outcome:
    """uv's resolution of the pins and the project's pip lines, for `conda_python` where the conda part chose it."""
    uv = find_uv()
    if uv is None:
        return Outcome(Resolution(NOT_RESOLVED, "uv is not installed (pip install uv)"))
    from envpin.lock.make import lock_macos  # noqa: PLC0415 - the lock path's helpers, for a resolve only

    try:
        requirements, left_out, default_index = project_inputs(project, options.index_url)
    except EnvpinInputError as error:
        return Outcome(Resolution(NOT_RESOLVED, str(error)))
    python = conda_python or plan.target.python
    indexes = index_plan(plan.packages, default_index)
    lock_input = LockInput(tuple(p.requirement for p in plan.packages), requirements, indexes, python,
                           plan.target.platform, lock_macos(plan), offline=options.offline, python_downloads=False)
    engine = UvEngine(uv)
    where = ("uv's cache (--offline)" if options.offline else
             " and ".join(dict.fromkeys((indexes.default_index, *indexes.accelerator_indexes))))
    try:
        with tempfile.TemporaryDirectory(prefix="envpin-resolve-") as workdir:
            text = engine.lock(lock_input, Path(workdir), options.timeout)
    except LockFailed as failed:
        missing = unserved(failed.conflict) + not_cached(failed.conflict)
        if options.offline and missing:
            # offline, "there is no version of" means only that uv's cache does not hold it (uv's hint says so)
            return Outcome(Resolution(NOT_RESOLVED, f"offline, and uv's cache does not hold {', '.join(missing)}: "
                                                    "run once online"))
        return Outcome(Resolution(NOT_RESOLVED, _short(failed.conflict)), failed.conflict or str(failed),
                       python=f"Python {python}, which the conda part solves to" if conda_python else "")
    except Unreachable as error:
        return Outcome(Resolution(NOT_RESOLVED, f"an index did not answer ({_short(str(error))})"))
    except EnvpinError as error:
        return Outcome(Resolution(NOT_RESOLVED, _short(str(error))))
    packages = _pinned(text)
    engine_version = engine.version()
    detail = f"resolved end to end by {engine_version} from {where} for Python {python} on " \
             f"{plan.target.platform}: {len(packages)} packages"
    lock, incomplete = _lock_text(plan, text, indexes, engine_version, left_out)
    if incomplete:
        detail += f"; its lock cannot be written ({incomplete})"
    if left_out:
        detail += f"; a resolver cannot take {', '.join(left_out)} (installed as written)"
    return Outcome(Resolution(RESOLVED, detail, packages, lock=lock))


def _lock_text(plan: Plan, text: str, indexes, engine_version: str, left_out: tuple[str, ...]) -> tuple[str, str]:
    """(the resolution as a complete PEP 751 document, as `envpin lock` completes it, or ""; why not, or "")."""
    from envpin.lock.make import lock_document  # noqa: PLC0415 - a resolved plan only
    from envpin.lock.pylock import render  # noqa: PLC0415 - as above

    try:
        return render(lock_document(plan, text, indexes, engine_version, left_out=left_out), []), ""
    except EnvpinError as error:  # a file without a sha256 (a find-links source): the pins stand, the lock does not
        return "", _short(str(error))


def _pinned(pylock: str) -> tuple[str, ...]:
    from envpin.base._toml import loads  # noqa: PLC0415 - only a resolved plan reads TOML

    return tuple(sorted(f"{p['name']}=={p['version']}" for p in loads(pylock).get("packages", []) if "version" in p))


def _short(text: str) -> str:
    text = re.sub(r"^(uv: )?(no solution: )?(error: )?", "", text.strip())
    text = text.replace(f"{LOCK_PROJECT} depends on", "the plan requires")  # uv names the throwaway input project
    return text if len(text) <= 400 else text[:397] + "..."


# ---------------------------------------------------------------- the solver loop


Resolve = Callable[[Plan, Project | None], Outcome]  # resolve_environment with the options bound
SolveAgain = Callable[[tuple[str, ...]], tuple[Project | None, Plan | Unsatisfiable]]


def resolved_answer(answer: Plan | Unsatisfiable, project: Project | None, resolve: Resolve,
                    solve_again: SolveAgain) -> tuple[Project | None, Plan | Unsatisfiable]:
    """The answer whose whole environment uv resolves: the first plan, or the newest the conflicts allow.
    `solve_again(specs)` is the same solve with those specs added; deterministic, and at most MAX_MOVES moves."""
    if not isinstance(answer, Plan):
        return project, answer
    added: tuple[str, ...] = ()
    passed_over: list[str] = []
    while True:
        outcome = resolve(answer, project)
        if outcome.unsolvable:
            return project, _conda_refusal(answer, project, outcome.unsolvable, passed_over)
        conflict = outcome.conflict
        if conflict is None:
            return project, replace(answer, resolution=replace(outcome.resolution, passed_over=tuple(passed_over)))
        missing = unserved(conflict)
        solved = solved_versions(answer)
        named = [m for m in missing if name_of(m) in solved]
        # a solved build the index does not serve (a mirror without it) is passed over like one that clashes
        moves = [m for m in moves_from(conflict, solved) + [
            Move(name_of(m), f"{name_of(m)}!={solved[name_of(m)].split('+')[0]}", f"the index does not serve {m}")
            for m in named] if m.spec not in added]
        if not moves or (missing and len(named) < len(missing)) or len(added) == MAX_MOVES:
            return project, _refusal(answer, project, conflict, missing, passed_over, python=outcome.python)
        move = moves[0]
        lines = lines_named(move.why, project)
        passed_over.append(f"{move.framework} {solved[move.framework]} was passed over: {move.why}"
                           + (f" ({'; '.join(lines)})" if lines else ""))
        added += (move.spec,)
        project, again = solve_again(added)
        if not isinstance(again, Plan):
            return project, _refusal(answer, project, conflict, missing, passed_over, again)
        answer = replace(again, reasons=again.reasons + tuple(passed_over))  # each solve's reasons start afresh


def _conda_refusal(answer: Plan, project: Project | None, reason: str, passed_over: list[str]) -> Unsatisfiable:
    """The environment.yml's conda part does not solve for the target: rattler's reason, and the conda packages."""
    conda = ", ".join(project.conda_packages) if project is not None else ""
    message = reason + (f"; passed over: {'; '.join(passed_over)}" if passed_over else "")
    fixes = ((f"relax or remove the conda packages rattler names ({conda})",) if conda else ()) + \
        ("solve for a Python the channels serve (--python X.Y)",)
    return Unsatisfiable(answer.target, answer.db_version, UNRESOLVABLE, message, fixes)


def _refusal(answer: Plan, project: Project | None, conflict: str, missing: list[str], passed_over: list[str],
             exhausted: Unsatisfiable | None = None, python: str = "") -> Unsatisfiable:
    """No GPU build that runs here resolves beside the project's lines: the lines that clash, in uv's words.
    `python`: the Python the pip part was resolved for, where the conda part chose it."""
    lines = lines_named(conflict, project)
    pins = ", ".join(p.requirement for p in answer.packages)
    python = python or f"Python {answer.target.python}"
    if missing:
        message = (f"the index serves no file for {', '.join(missing)}" + (f" ({'; '.join(lines)})" if lines else "")
                   + ": no release of it that installs has that version (deleted, never published, or not built for "
                   f"{python} on {answer.target.platform})")
        fixes = tuple(f"change {line} to a version the index serves" for line in lines) or \
            ("pin a version the index serves",)
    else:
        message = (f"uv resolves the project's lines beside no GPU build that runs here: with {pins}"
                   + (f" for {python}" if python != f"Python {answer.target.python}" else "") + f", {_short(conflict)}"
                   + (f"; passed over: {'; '.join(passed_over)}" if passed_over else ""))
        fixes = tuple(f"relax or remove {line}" for line in lines) or ("relax the lines uv names",)
    if exhausted is not None:
        fixes += (f"without the moves above: {exhausted.message}",)
    return Unsatisfiable(answer.target, answer.db_version, UNRESOLVABLE, message, fixes)


# ---------------------------------------------------------------- a file's own lines (`check --resolve`)


@record
class FileResolution(Record):
    """A file's own lines as uv resolves them for one target, as pip would install them."""

    status: str  # RESOLVED, NOT_RESOLVED (uv could not be asked: offline, an index that does not answer), CONFLICT
    detail: str  # how, or why not, or uv's reason, in one line
    unserved: tuple[str, ...] = ()  # CONFLICT: the requirements no file of the index meets ("protobuf==4.25.0")
    named: tuple[str, ...] = ()  # CONFLICT: the packages uv's reason names


CONFLICT = "conflict"  # FileResolution.status: uv found no solution


def resolve_lines(requirements: tuple[str, ...], index_options: tuple[str, ...], python: str, platform: str,
                  options: ResolveOptions) -> FileResolution:
    """`check --resolve`: the requirement lines with the file's own index options (`-i`, `--extra-index-url`; the
    default index from --index-url, else the file's `-i`, else ENVPIN_INDEX_URL, else PyPI). Never raises for the
    index's answer."""
    from envpin.lock.engines import run_engine, uv_check_argv, uv_environment  # noqa: PLC0415 - check --resolve only

    uv = find_uv()
    if uv is None:
        return FileResolution(NOT_RESOLVED, "uv is not installed (pip install uv)")
    default, extra = None, []
    for option in index_options:
        key, _, value = option.partition(" ")
        if key in ("-i", "--index-url"):
            default = default or value
        elif key == "--extra-index-url":
            extra.append(value)
    from envpin.lock.indexes import PYPI_SIMPLE  # noqa: PLC0415 - as above

    default = options.index_url or default or os.environ.get("ENVPIN_INDEX_URL") or PYPI_SIMPLE
    indexes = tuple(dict.fromkeys((default, *extra)))
    lock_input = LockInput((), requirements, index_plan((), default), python, platform, offline=options.offline,
                           python_downloads=False)
    try:
        with tempfile.TemporaryDirectory(prefix="envpin-check-") as workdir:
            listed = Path(workdir) / "requirements.in"
            listed.write_text("".join(f"{line}\n" for line in requirements), encoding="utf-8")
            run_engine(uv_check_argv(uv, listed, indexes, python, platform, Path(workdir) / "resolved.txt",
                                     options.offline), Path(workdir), options.timeout, uv_environment(lock_input))
    except EnvpinError as failed:  # LockFailed (no solution), Unreachable, or uv itself failing
        return _failed_file(failed, options.offline)
    where = "uv's cache (--offline)" if options.offline else " and ".join(indexes)
    return FileResolution(RESOLVED, f"resolved by uv from {where} for Python {python} on {platform}")


def resolve_manifest(requirements: tuple[str, ...], bindings: tuple[tuple[str, str], ...], default_index: str | None,
                     searched: tuple[str, ...], python: str, platform: str, options: ResolveOptions) -> FileResolution:
    """`check --resolve` of a pyproject.toml's environment (its dependencies, with an extra or a group) as uv installs
    it: each package its `[tool.uv.sources]` binds to an index from that index only (`bindings`: name, URL), its
    other `[[tool.uv.index]]`s asked first (`searched`, uv's first-index strategy), then the default index (its
    `default = true` one, else --index-url, else ENVPIN_INDEX_URL, else PyPI). The same uv call as `envpin lock`
    (engines.UvEngine). Never raises for the index's answer."""
    from envpin.lock.indexes import PYPI_SIMPLE, IndexPlan  # noqa: PLC0415 - check --resolve only

    uv = find_uv()
    if uv is None:
        return FileResolution(NOT_RESOLVED, "uv is not installed (pip install uv)")
    default = (options.index_url or default_index or os.environ.get("ENVPIN_INDEX_URL") or PYPI_SIMPLE).rstrip("/")
    indexes = IndexPlan(default, tuple((canonical(name), url.rstrip("/")) for name, url in bindings))
    lock_input = LockInput((), requirements, indexes, python, platform, offline=options.offline,
                           python_downloads=False, searched_indexes=tuple(u.rstrip("/") for u in searched))
    try:
        with tempfile.TemporaryDirectory(prefix="envpin-check-") as workdir:
            UvEngine(uv).lock(lock_input, Path(workdir), options.timeout)
    except EnvpinError as failed:  # LockFailed (no solution), Unreachable, or uv itself failing
        return _failed_file(failed, options.offline)
    where = "uv's cache (--offline)" if options.offline else \
        " and ".join(dict.fromkeys((*lock_input.searched_indexes, *indexes.accelerator_indexes, default)))
    return FileResolution(RESOLVED, f"resolved by uv from {where} for Python {python} on {platform}")


def _failed_file(failed: EnvpinError, offline: bool) -> FileResolution:
    """What uv's failure says of a file's lines: a conflict (or a pin no file of the index meets), or that uv could
    not be asked (offline without its cache, an index that does not answer)."""
    if isinstance(failed, LockFailed):
        missing = unserved(failed.conflict) + not_cached(failed.conflict)
        if offline and missing:
            return FileResolution(NOT_RESOLVED, f"offline, and uv's cache does not hold {', '.join(missing)}: run "
                                                "once online")
        words = {canonical(w) for w in re.findall(_NAME, failed.conflict)}
        reason = re.sub(r"^No solution found when resolving dependencies[^:]*:\s*(cause:\s*)?", "", _short(failed.conflict))
        reason = reason.replace("the plan requires", "the file requires")
        return FileResolution(CONFLICT, reason, tuple(unserved(failed.conflict)), tuple(sorted(words)))
    if isinstance(failed, Unreachable):
        return FileResolution(NOT_RESOLVED, f"an index did not answer ({_short(str(failed))})")
    return FileResolution(NOT_RESOLVED, _short(str(failed)))
