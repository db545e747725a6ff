"""`envpin check`'s run: the machines to check against, each file read and checked, and with `--solve` each
environment.yml solved for the target (rattler), against the run's one database, loaded the first time a file or
a target needs it (a plain requirements file without GPU pins is checked without it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from envpin.app.database import run_database
from envpin.base.errors import EnvpinInputError
from envpin.base.record import replace
from envpin.base.userfiles import UnreadableFile, read_text, repository_boundary, write_atomically
from envpin.check import check_text
from envpin.check.config import CheckConfig
from envpin.check.formats import kind_of
from envpin.check.included import beside
from envpin.machine.spec import TargetSpec
from envpin.readers.model import FileReport, Problem
from envpin.readers.rules import problem

# A check imports what its files and options need, nothing more (tests/unit/test_import_hygiene.py): the conda
# solve (rattler, asyncio) only with --solve, the target checks (the resolver's builds and verdicts) only with
# targets; a plain requirements file is checked with neither.
if TYPE_CHECKING:
    from envpin.check.targets import CheckTarget
    from envpin.compat.model import Database
    from envpin.conda.channels import Channels
    from envpin.lock.options import ResolveOptions
    from envpin.resolver.target import Target


def check_files(paths: list[str], kind: str | None, spec: TargetSpec, config: CheckConfig, policy: str,
                ignored: frozenset[str], db: str | None, conda_channels: Channels | None,
                fix: bool = False, allow_outside: bool = False, resolve: ResolveOptions | None = None,
                ) -> list[FileReport]:
    """One report per file, in order; a file that cannot be read is a report that says so (`unreadable`).
    `fix`: a file with errors is rewritten where envpin.app.check_fix can, and its report is the file's check after
    that (what was and was not done said on stderr). `allow_outside`: includes and links may leave the checked
    file's git repository (envpin.base.userfiles.Boundary)."""
    database = _OneDatabase(db)
    targets = _targets(spec, config, database)
    assumed = None
    if conda_channels is not None and _glibc_unknown(spec):
        from envpin.conda.virtual import DEFAULT_GLIBC  # noqa: PLC0415 - only --solve (see the note on imports)

        spec, assumed = replace(spec, glibc=DEFAULT_GLIBC), problem(
            "CHK-SOLVE-ASSUMED", "", f"the target's glibc is not given: --solve assumes glibc {DEFAULT_GLIBC} "
            "(`__glibc`), the default pixi and conda-lock solve with", "pass --glibc X.Y (or --facts from the target) "
            "to solve for its own")
    reports = []
    for path in paths:
        text = _read(path, allow_outside)
        if isinstance(text, FileReport):  # the file could not be read
            reports.append(text)
            continue
        ignore = config.ignored_for(path) | ignored
        report = check_text(path, text, load_database=database.get, kind=kind, targets=targets, policy=policy,
                            ignore=ignore, include=None if path == "-" else beside(path, allow_outside))
        if conda_channels is not None and not report.unreadable:
            report = _with_conda_solve(report, text, kind, spec, database.get(), conda_channels, ignore, assumed)
        if resolve is not None and not report.unreadable:
            from envpin.check.targets import command_line_target  # noqa: PLC0415 - only --resolve without targets

            report = _with_resolution(report, text, kind, targets or (command_line_target(spec, database.get()),),
                                      resolve, ignore, allow_outside)
        if fix and path == "-" and report.errors:
            print("envpin: not fixed: -: text from stdin is checked, never rewritten", file=sys.stderr)
        elif fix and not report.unreadable and report.errors:
            report = _fixed(report, text, kind, targets, database, policy, ignore, allow_outside)
        reports.append(report)
    return reports


def _fixed(report: FileReport, text: str, kind: str | None, targets: tuple[CheckTarget, ...], database: _OneDatabase,
           policy: str, ignore: frozenset[str], allow_outside: bool) -> FileReport:
    """`--fix`: the file rewritten (atomically) where envpin.app.check_fix can, and checked again; what it did and
    did not do on stderr."""
    from envpin.app.check_fix import fix_file  # noqa: PLC0415 - only --fix needs the solve

    path = report.path

    def recheck(new_text: str) -> FileReport:
        return check_text(path, new_text, load_database=database.get, kind=kind, targets=targets, policy=policy,
                          ignore=ignore, include=beside(path, allow_outside))

    fixed = fix_file(path, text, kind or kind_of(path, text) or "", report, targets, database.get(), recheck)
    for line in fixed.advice:
        print(f"envpin: {path}: {line}", file=sys.stderr)
    if fixed.text is not None:
        write_atomically(Path(path), fixed.text, "--fix")
        for change in fixed.changed:
            print(f"envpin: fixed {path}:{change}", file=sys.stderr)
        report = recheck(fixed.text)
    for reason in fixed.unfixed:
        print(f"envpin: not fixed: {path}: {reason}", file=sys.stderr)
    return report


class _OneDatabase:
    """The database of --db, loaded the first time a file or a target needs it (a plain requirements file
    without GPU pins is checked without it), and then the same one for every file and target."""

    def __init__(self, directory: str | None):
        self.directory = directory
        self.loaded: Database | None = None

    def get(self) -> Database:
        if self.loaded is None:
            self.loaded = run_database(self.directory)
        return self.loaded


def _glibc_unknown(spec: TargetSpec) -> bool:
    """A Linux target described by flags alone, without --glibc: nothing says its glibc."""
    return spec.glibc is None and not spec.facts_file and not spec.probes_this_machine and spec.os == "linux"


def _with_conda_solve(report: FileReport, text: str, kind: str | None, spec: TargetSpec, database: Database,
                      conda_channels: Channels, ignore: frozenset[str], assumed: Problem | None) -> FileReport:
    """`--solve`: an environment.yml must solve for the target, with the virtual packages envpin builds."""
    if (kind or kind_of(report.path, text)) != "environment.yml" or "CHK-CONDA-UNSOLVABLE" in ignore:
        return report
    if assumed is not None and assumed.id not in ignore:
        report = replace(report, problems=report.problems + (assumed,))
    from envpin.conda.errors import CondaSolveFailed  # noqa: PLC0415 - only --solve (see the note on imports)
    from envpin.conda.target import solve_for_target  # noqa: PLC0415

    try:
        solve_for_target(text, report.path, spec, database, conda_channels)
    except CondaSolveFailed as error:
        found = problem("CHK-CONDA-UNSOLVABLE", "dependencies", str(error),
                        "regenerate it for this target (envpin solve --conda-source …) or relax the pins named")
        return replace(report, problems=report.problems + (found,))
    return report


RESOLVE_IDS = ("CHK-PIN-NOT-SERVED", "CHK-RESOLVE-CONFLICT", "CHK-NOT-RESOLVED")


def _with_resolution(report: FileReport, text: str, kind: str | None, targets: tuple[CheckTarget, ...],
                     options: ResolveOptions, ignore: frozenset[str], allow_outside: bool) -> FileReport:
    """`--resolve`: a requirements file's lines (or an environment.yml's pip section) resolved by uv for each
    target's Python and platform, as pip reads them (envpin.lock.resolution.resolve_lines), a pyproject.toml's as uv
    installs them: a pin no file of the index serves, lines that conflict, or that uv could not be asked."""
    from envpin.lock.resolution import resolve_lines  # noqa: PLC0415 - --resolve only

    kind = kind or kind_of(report.path, text)
    if kind in ("pyproject.toml", "pixi.toml"):
        return _with_manifest_resolution(report, text, kind == "pixi.toml", targets, options, ignore)
    if kind not in ("requirements", "environment.yml"):
        return report
    requirements, index_options, origins, left_out = _file_lines(report.path, text, kind, allow_outside)
    found: list[Problem] = []
    for target in dict.fromkeys((t.target.python, t.target.platform) for t in targets):
        python, platform = target
        answer = resolve_lines(requirements, index_options, python, platform, options)
        found += _resolution_problems(answer, f"for Python {python} on {platform}", "the file's lines", origins)
    if left_out and found:
        found = [replace(f, message=f"{f.message} ({', '.join(left_out)} left out: a resolver cannot take it)")
                 for f in found]
    kept = tuple(f for f in found if f.id not in ignore)
    return replace(report, problems=report.problems + kept) if kept else report


def _resolution_problems(answer, on: str, what: str, origins: dict[str, str]) -> list[Problem]:
    """The problems of one uv answer (envpin.lock.resolution.FileResolution) about `what` (the file's lines, a
    pyproject.toml's dependencies with an extra) `on` a target ("for Python 3.11 on linux-x86_64")."""
    from envpin.lock.resolution import CONFLICT, NOT_RESOLVED  # noqa: PLC0415 - --resolve only

    if answer.status == NOT_RESOLVED:
        return [problem("CHK-NOT-RESOLVED", "", f"not resolved end to end {on}: {answer.detail}",
                        "run it where the index answers (or once online, for --offline)")]
    if answer.status == CONFLICT and answer.unserved:
        return [problem("CHK-PIN-NOT-SERVED", origins.get(_name(requirement), ""),
                        f"the index serves no file of {requirement} {on} (deleted, never published, or not built for "
                        f"it): {answer.detail}", "pin a version the index serves for the target")
                for requirement in answer.unserved]
    if answer.status == CONFLICT:
        lines = [origins[n] for n in answer.named if n in origins]
        return [problem("CHK-RESOLVE-CONFLICT", lines[0] if lines else "",
                        f"uv resolves no environment of {what} {on}: {answer.detail}",
                        "relax or remove the lines uv names" + (f" ({', '.join(lines)})" if lines else ""))]
    return []


def _with_manifest_resolution(report: FileReport, text: str, pixi: bool, targets: tuple[CheckTarget, ...],
                              options: ResolveOptions, ignore: frozenset[str]) -> FileReport:
    """`--resolve` of a pyproject.toml: its `[project]` dependencies, then those with each extra and each dependency
    group, as uv installs them (envpin.lock.resolution.resolve_manifest), for each target. An extra or group is
    asked only where the dependencies themselves resolve: its answer would repeat theirs. A pixi manifest's
    pypi-dependencies likewise (the default feature's, then with each feature), as pixi has uv resolve them: for the
    Python of its conda `python` dependency, from its `[pypi-options]` indexes; its conda dependencies are not
    uv's, and stay out."""
    from envpin.lock.resolution import RESOLVED, resolve_manifest  # noqa: PLC0415 - --resolve only
    from envpin.readers.project_files import read_manifest  # noqa: PLC0415 - as above

    try:
        manifest = read_manifest(text, report.path)
    except EnvpinInputError:
        return report  # the file's own check reports it malformed
    default = manifest.pypi_index_url or next((i.url for i in manifest.indexes if i.default), None)
    searched = (*manifest.pypi_extra_index_urls, *(i.url for i in manifest.indexes if not i.explicit and not i.default))
    scopes = list(dict.fromkeys(s for e in manifest.entries if e.manager == "pip" for s in e.scope
                                if s.startswith(("extra:", "group:", "feature:"))))
    indexed = any(e.manager == "pip" for e in manifest.entries)
    found: list[Problem] = []
    machines: dict[tuple[str, str], Target] = {}  # one run per Python and platform: a source's markers read no more
    for each in targets:
        machines.setdefault((each.target.python, each.target.platform), each.target)
    for check_target in machines.values():
        for scope in (None, *scopes):
            lines, bindings, origins = _manifest_environment(manifest, scope, check_target)
            python = _pixi_python(manifest, scope, check_target.python)
            on = f"for Python {python}" + (" (the manifest's python)" if python != check_target.python else "") + \
                f" on {check_target.platform}"
            if not lines:
                if not indexed and manifest.unindexed:
                    found.append(problem("CHK-NOT-RESOLVED", manifest.unindexed[0], f"not resolved end to end {on}: "
                                         f"its PyPI dependencies ({', '.join(manifest.unindexed)}) are path, git or "
                                         "URL packages, which no index serves and uv would have to build",
                                         "nothing to fix here: pixi builds them when it installs"))
                continue
            answer = resolve_manifest(lines, bindings, default, searched, python, check_target.platform, options)
            what = ("the pixi manifest's pypi-dependencies" if pixi else "the project's dependencies") + \
                (f" with {scope.replace(':', ' ', 1)}" if scope else "") + \
                (" (its conda dependencies left out: they are not uv's)" if pixi else "")
            found += _resolution_problems(answer, on, what, origins)
            if scope is None and answer.status != RESOLVED:
                break
    if manifest.unindexed and indexed:
        found = [replace(f, message=f"{f.message} ({', '.join(manifest.unindexed)} left out: a resolver cannot take "
                                    "it)") for f in found]
    kept = tuple(dict.fromkeys(f for f in found if f.id not in ignore))
    return replace(report, problems=report.problems + kept) if kept else report


def _pixi_python(manifest, scope: str | None, python: str) -> str:
    """The Python pixi installs for an environment (the default feature, or with one feature): the target's where
    the manifest's conda `python` (the feature's own, else the default one) allows it or says none, else the minor
    it allows nearest the target's (`3.11.*` → 3.11)."""
    from envpin.check.targets import admits_python, pythons_admitted  # noqa: PLC0415 - --resolve only
    from envpin.readers.project_files import pixi_python_spec  # noqa: PLC0415 - as above

    specs = {next((s for s in e.scope if s.startswith("feature:")), None): pixi_python_spec(e.text)
             for e in manifest.entries if e.manager == "conda" and not e.platforms and pixi_python_spec(e.text)}
    spec = specs.get(scope) or specs.get(None)
    if spec is None or admits_python(spec, python):
        return python
    allowed = pythons_admitted(spec)
    minor = int(python.split(".")[1]) if python.count(".") else 0
    return min(allowed, key=lambda v: abs(int(v.split(".")[1]) - minor)) if allowed else python


def _manifest_environment(manifest, scope: str | None, target) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...],
                                                                        dict[str, str]]:
    """(requirement lines, (package, index) bindings, canonical name -> where) of the dependencies with one extra,
    group or pixi feature (`extra:cu128`), on the target: a line whose uv source holds under a marker only where it
    holds there, a pixi `target.<subdir>` line only on that subdir."""
    from envpin.readers.variants import CONDA_SUBDIRS  # noqa: PLC0415 - --resolve only
    from envpin.vocabulary.markers import marker_holds  # noqa: PLC0415 - as above

    lines: list[str] = []
    bindings: list[tuple[str, str]] = []
    origins: dict[str, str] = {}
    for entry in manifest.entries:
        if entry.manager != "pip":
            continue  # pixi's conda tables: rattler's, not uv's to resolve
        if entry.platforms and target.platform not in {CONDA_SUBDIRS.get(s) for s in entry.platforms}:
            continue
        labels = [s for s in entry.scope if s.startswith(("extra:", "group:", "feature:"))]
        if labels and labels != [scope]:
            continue
        markers = [s for s in entry.scope if s not in labels and not s.startswith("target:")]
        if not all(marker_holds(m, os_name=target.os, arch=target.arch, python=target.python) for m in markers):
            continue
        name = _name(entry.text)
        lines.append(entry.text)
        origins.setdefault(name, entry.where.split(" (", 1)[0])
        if entry.index:
            bindings.append((name, entry.index))
    return tuple(dict.fromkeys(lines)), tuple(dict.fromkeys(bindings)), origins


def _file_lines(path: str, text: str, kind: str, allow_outside: bool,
                ) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str], tuple[str, ...]]:
    """(requirement lines, index options, canonical name -> where, lines left out) of a requirements file, its
    includes followed as `solve -r` follows them, or of an environment.yml's pip section (its conda part is
    `--solve`'s)."""
    from envpin.readers.project_files import Entries, read_environment_yml, read_requirements_txt  # noqa: PLC0415 - --resolve only

    if kind == "environment.yml":
        own = read_environment_yml(text, path, lambda target, constraint: Entries())
        requirements = [r for r in own.requirements if ".pip[" in r.origin]  # not a conda line solved as pip
        other_lines = own.other_lines
    else:
        own = read_requirements_txt(text, path, lambda target, constraint: Entries())
        requirements, other_lines = own.requirements, own.other_lines
    if kind == "requirements" and path != "-":
        from envpin.project.collect import collect_project  # noqa: PLC0415 - as above

        project = collect_project(None, (path,), allow_outside=allow_outside)
        requirements, other_lines = list(project.requirements), list(project.other_lines)
    origins: dict[str, str] = {}
    for requirement in requirements:
        where = requirement.origin.split(": ", 1)[1] if kind == "environment.yml" else \
            f"line {requirement.origin.rpartition(':')[2]}"
        origins.setdefault(requirement.name, where)
    return (tuple(dict.fromkeys(r.text for r in requirements)), tuple(dict.fromkeys(own.index_options)), origins,
            tuple(other_lines))


def _name(requirement: str) -> str:
    import re  # noqa: PLC0415 - as above

    from envpin.vocabulary.names import canonical_name  # noqa: PLC0415 - as above

    return canonical_name(re.split(r"[=<>!~\[;\s]", requirement, maxsplit=1)[0])


def _read(path: str, allow_outside: bool) -> str | FileReport:
    """The file's text, or the report that it cannot be read. A file in a git work tree that is a symbolic link
    out of it is not read: the hook is given a pull request's files, and git stores links."""
    try:
        boundary = repository_boundary(path, allow_outside) if path != "-" else None
        if boundary is not None and boundary.repository:
            boundary.admit(path, path)
        return read_text(path)
    except UnreadableFile as error:
        found = problem("CHK-FILE-UNREADABLE", "", f"cannot be read ({error.reason})", "check the path and that it is UTF-8 text")
        return FileReport(path, (found,), unreadable=True)


def _targets(spec: TargetSpec, config: CheckConfig, database: _OneDatabase) -> tuple[CheckTarget, ...]:
    """The machines to check against: the target options when any is given, else the config's targets, each
    resolved against the one database of --db."""
    if not spec.given and not config.targets:
        return ()
    from envpin.check.targets import command_line_target, configured_target  # noqa: PLC0415 - only with targets

    if spec.given:
        return (command_line_target(spec, database.get()),)
    return tuple(configured_target(named, database.get()) for named in config.targets)


