"""The project's policy over a plan: Project × Plan → Plan, pure.

What a project's own files say about an answer, laid over the solve's answer for one machine, the same for
`envpin solve --project`, `solve --targets`, `fleet` and every other command that answers a project (they all
reach it through `planning.answer_for`):

- the Pythons it leaves out (its requires-python, a pixi manifest's python line) and the platforms a pixi
  workspace is for: refusals before any solve;
- a line that names another vendor's build (`torch==2.7.1+rocm6.3` on an NVIDIA-only machine): refused, as
  `envpin check` reports it (the same `fitness.other_vendors_build`);
- its numpy lines, as the bound the builds' own numpy requirement must meet;
- its lines that cannot go beside the solved builds (a CUDA major, NumPy 2): warnings of the plan;
- its lines of packages built for one torch release: written as the release made for the solved torch, or, in a
  refusal, the release to change each to, read from the fix's own `moves` (never from its sentence);
- which of its lines asked for what, in a refusal's message.

Nothing here reads a file or detects anything; re-solving (what would run without the tied lines) is the
caller's `solved_with`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from packaging.version import Version

from envpin.base.errors import EnvpinInputError
from envpin.base.record import replace
from envpin.compat.model import PLATFORM_LIMITED, TIED, Database
from envpin.readers.project import Project
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import NumpyBound
from envpin.resolver.target import Target
from envpin.vocabulary.platforms import conda_subdir

SolvedWith = Callable[[tuple[str, ...]], "Plan | Unsatisfiable"]  # the solve with the project's GPU lines as given


def apply(answer: Plan | Unsatisfiable, project: Project, project_specs: tuple[str, ...],
          origins: Mapping[str, list[str]], cli_specs: tuple[str, ...], solved_with: SolvedWith, database: Database,
          target: Target) -> tuple[Project, Plan | Unsatisfiable]:
    """The project's policy over the solve's answer for the target: (the project as the plan writes it, the answer)."""
    answer = _required_beside(answer, project, project_specs, solved_with, database, target)
    answer = _name_project_pins(answer, origins)
    answer = _other_vendors_variant(answer, cli_specs, project_specs, origins, solved_with, target)
    answer = _project_lines_beside(answer, project)
    return _tied_follow_framework(answer, project, solved_with, database, target)


def _required_beside(answer: Plan | Unsatisfiable, project: Project, project_specs: tuple[str, ...],
                     solved_with: SolvedWith, database: Database, target: Target) -> Plan | Unsatisfiable:
    """A project line that the solved release's own Requires-Dist leaves no room for (`protobuf==4.25.1` beside
    tensorflow 2.20.0, which requires protobuf>=5.28.0; `sympy==1.12` beside torch 2.5.1): pip cannot install the
    two together, so the framework is solved again among the releases that leave room for every such line (the
    database's requires.yaml, markers evaluated for the target), and the plan says which it passed over and why."""
    if not isinstance(answer, Plan):
        return answer
    lines = [r for r in project.other_requirements if r.specifier and not r.marker]
    solved = {f: b for f, b in answer.builds.items() if f in ("torch", "tensorflow")}
    if not lines or not solved:
        return answer
    from envpin.readers.framework_requires import described, framework_bound, requires_names  # noqa: PLC0415 - a project line on a required package only
    from envpin.readers.tied import framework_versions, releases_specifier  # noqa: PLC0415 - as above
    from envpin.vocabulary.names import canonical_name  # noqa: PLC0415 - as above

    bounds: list[str] = []
    passed: list[tuple[str, str, list[tuple[str, str]], str]] = []
    for framework, build in solved.items():
        names = requires_names(database, framework)
        releases = framework_versions(database, framework)
        for requirement in (r for r in lines if canonical_name(r.name) in names):
            allowed, ruled_out = framework_bound(database, framework, requirement.name, requirement.specifier, releases,
                                                 target.python, target.platform)
            if build.version.public not in {version for version, _ in ruled_out}:
                continue  # the solved release leaves room for the line
            line = f"{requirement.text} ({requirement.origin})"
            if not allowed:
                why = f"{described(ruled_out, framework, requirement.name)} (their wheels' Requires-Dist)"
                from envpin.lock.resolution import UNRESOLVABLE  # noqa: PLC0415 - the code of this refusal only

                needs = dict(ruled_out)[build.version.public]
                return Unsatisfiable(
                    answer.target, answer.db_version, UNRESOLVABLE,
                    f"no {framework} release the database knows leaves room for {line}: {why}",
                    (f"{requirement.origin}: widen {requirement.text} to allow what {framework} {build.version.public} "
                     f"requires ({requirement.name}{needs})",))
            passed.append((framework, requirement.name, ruled_out, line))
            bounds.append(f"{framework}{releases_specifier(allowed, releases)}")
    if not bounds:
        return answer
    moved = solved_with(project_specs + tuple(bounds))
    said = []
    for framework, name, ruled_out, line in passed:
        # a plan names the newer releases it passed over; a refusal every one the line rules out
        now = moved.builds.get(framework) if isinstance(moved, Plan) else None
        newer = [(v, needed) for v, needed in ruled_out if now is None or Version(v) > now.version]
        said.append(f"{described(newer or ruled_out, framework, name)} (their wheels' Requires-Dist), which {line} "
                    "excludes")
    if isinstance(moved, Plan):
        return replace(moved, reasons=moved.reasons + tuple(f"passed over {text}" for text in said))
    return replace(moved, message=f"{moved.message} (passed over: {'; '.join(said)})",
                   fixes=_required_fixes(moved, passed, lines, database, target))


def _required_fixes(refusal: Unsatisfiable, passed: list, lines: list, database: Database,
                    target: Target) -> tuple[str, ...]:
    """A refusal's fixes, each that moves a framework followed by the change of each project line that the release
    it moves to leaves no room for (`sympy==1.12` -> what torch 2.7.0 requires), so that following the fixes
    installs."""
    from envpin.readers.framework_requires import needed_by  # noqa: PLC0415 - as _required_beside
    from envpin.resolver.numpy_fit import meet  # noqa: PLC0415 - as above

    fixes: list[str] = []
    for fix in refusal.fixes:
        fixes.append(fix)
        framework, version = refusal.moves.get(fix, ("", ""))
        for requirement in (r for r in lines if framework and any(p[0] == framework and p[1] == r.name for p in passed)):
            needs = needed_by(database, framework, version, requirement.name, target.python, target.platform)
            if needs is not None and not meet(needs, requirement.specifier):
                fixes.append(f"{requirement.origin}: with it, change {requirement.text} to allow {requirement.name}"
                             f"{needs}, which {framework} {version} requires (its wheel's Requires-Dist)")
    return tuple(fixes)


def project_numpy(project: Project) -> NumpyBound | None:
    """The project's own numpy lines (`numpy>=1.22, <1.24`) as the bound the builds' numpy requirement must meet.
    A line with a marker is left out: whether it holds on the target is pip's to say, and leaving it out never
    refuses a build the line would allow."""
    lines = [r for r in project.other_requirements if r.name == "numpy" and r.specifier and not r.marker]
    if not lines:
        return None
    return NumpyBound(",".join(r.specifier for r in lines), " and ".join(f"{r.text} ({r.origin})" for r in lines))


def outside_python(project: Project | None, target: Target, database: Database) -> Unsatisfiable | None:
    """The refusal for a target Python the project itself leaves out (its pixi python line, its requires-python)."""
    if project is None:
        return None
    return (_outside_manifest_python(project, target, database) or _outside_requires_python(project, target, database)
            or _line_without_wheel_for_python(project, target, database))


def _line_without_wheel_for_python(project: Project, target: Target, database: Database) -> Unsatisfiable | None:
    """A project line none of whose releases has a wheel for the target's Python on its platform, nor an sdist (the
    database's file lists of the platform-limited projects: tensorflow-addons 0.22.0 and 0.23.0 are CPython
    3.9-3.11 only): no plan for that Python would install, whatever the GPU builds."""
    # a package built for one framework release (triton) is the tied lines' to move, with the framework
    lines = [r for r in project.other_requirements if r.name in PLATFORM_LIMITED and r.name not in TIED
             and not r.marker]
    if not lines or not target.python:
        return None
    from envpin.readers.tied import without_wheel_for_python  # noqa: PLC0415 - a project with such a line only

    for requirement in lines:
        found = without_wheel_for_python(database, requirement.name, requirement.specifier, target.platform,
                                         target.python)
        if found is None:
            continue
        records, pythons = found
        return Unsatisfiable(
            target, database.version, "python-unsupported",
            f"{requirement.text} ({requirement.origin}): no {requirement.name} release it allows has a wheel for "
            f"Python {target.python} on {target.platform} or an sdist (its wheels there are for CPython "
            f"{', '.join(pythons)}; {records[-1].source}): pip cannot install it on Python {target.python}",
            (f"solve for a Python it has wheels for: --python {pythons[-1]}", f"or leave {requirement.name} out"))
    return None


def _project_lines_beside(answer: Plan | Unsatisfiable, project: Project) -> Plan | Unsatisfiable:
    """The project's own lines that cannot go beside the solved builds (a CUDA major, NumPy 2), said in the plan."""
    return _numpy_2_pins(_cuda_package_clashes(answer, project), project)


def _outside_manifest_python(project: Project, target: Target, database: Database) -> Unsatisfiable | None:
    """A pixi manifest's `python` dependency says which Pythons pixi installs: a solve for a Python it leaves out
    (`python = "3.10.*"` with --python 3.12) would pin builds for an interpreter the environment never has."""
    if not project.python_spec:
        return None
    from envpin.check.targets import admits_python, pythons_admitted  # noqa: PLC0415 - only a pixi project with a python line

    if admits_python(project.python_spec, target.python):
        return None
    allowed = pythons_admitted(project.python_spec)
    return Unsatisfiable(
        target, database.version, "python-unsupported",
        f"{project.python_origin}: the pixi manifest's python ({project.python_spec}) leaves out Python "
        f"{target.python}: pixi installs a Python it allows, so builds for {target.python} would never be used",
        (f"solve for the Python pixi installs: --python {allowed[-1]}" if allowed else
         "fix the manifest's python line", "or widen the manifest's python to include " + target.python))


def refuse_other_platforms(project: Project, target: Target) -> None:
    """A pixi workspace lists the platforms it installs on: a solve for another one would write an environment
    the project never made (its pins, its conda packages, its features are for those platforms)."""
    if project.platforms and conda_subdir(target.platform) not in project.platforms:
        raise EnvpinInputError(f"{', '.join(project.files)}: the pixi workspace is for {', '.join(project.platforms)}, "
                               f"not {conda_subdir(target.platform)}: add it to the workspace's platforms, or solve "
                               "for one of those")


def _outside_requires_python(project: Project, target: Target, database: Database) -> Unsatisfiable | None:
    """A pyproject.toml's requires-python that leaves out the target's Python: pip and uv refuse to install the
    project there ("requires a different Python"), so no pins for it would install."""
    if not project.requires_python or not target.python:
        return None
    from envpin.check.targets import admits_python  # noqa: PLC0415 - only a project with requires-python needs it

    if admits_python(project.requires_python, target.python):
        return None
    return Unsatisfiable(target, database.version, "python-unsupported",
                         f"{', '.join(project.files)}: requires-python {project.requires_python} leaves out Python "
                         f"{target.python}: pip and uv refuse to install the project there",
                         (f"solve for a Python that {project.requires_python} admits (--python)",
                          "or widen requires-python, if the project runs on that Python"))


def _cuda_package_clashes(answer: Plan | Unsatisfiable, project: Project) -> Plan | Unsatisfiable:
    """A project line built for one CUDA major (`cuml-cu11`, `cupy-cuda12x`, `onnxruntime[cu12]`) beside a
    framework the solve put on another: pip installs both, and one of them cannot load its CUDA libraries. Said,
    with the line, as a warning of the plan."""
    from envpin.readers.tied import cuda_major_of_requirement  # noqa: PLC0415 - only a project's plan needs it

    if not isinstance(answer, Plan):
        return answer
    majors = {b.cuda_major for b in answer.builds.values() if b.kind == "cuda" and b.cuda_major}
    if len(majors) != 1:
        return answer
    solved = next(iter(majors))
    clashes = []
    for requirement in project.other_requirements:
        major = cuda_major_of_requirement(requirement.name, requirement.extras)
        if major and major != solved:
            clashes.append(f"{requirement.origin}: {requirement.text} is built for CUDA {major}, but the solved "
                           f"frameworks are CUDA {solved}: use its CUDA {solved} build, or solve for CUDA {major}")
    return replace(answer, warnings=answer.warnings + tuple(clashes)) if clashes else answer


def _numpy_2_pins(answer: Plan | Unsatisfiable, project: Project) -> Plan | Unsatisfiable:
    """A project line that asks for NumPy 2 only (`numpy==2.1`) beside builds compiled against NumPy 1.x (the
    plan's numpy<2): pip cannot install both, and with NumPy 2 the framework's import fails. Said, with the line."""
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - only a project's plan

    from envpin.emit.common import allows_numpy_2  # noqa: PLC0415 - as above

    if not isinstance(answer, Plan) or not any(p.name == "numpy" and p.bound for p in answer.packages):
        return answer
    found = []
    for line in project.other_requirements:
        if line.name != "numpy":
            continue
        try:
            specifier = Requirement(line.text).specifier
        except InvalidRequirement:
            continue
        if specifier and not any(specifier.contains(v, prereleases=True) for v in ("1.26.4", "1.24.4", "1.21.6")) \
                and allows_numpy_2(specifier):
            old = ", ".join(b.label for b in answer.builds.values() if answer.target.platform in b.numpy_below_2)
            found.append(f"{line.origin}: {line.text} asks for NumPy 2, but {old} was compiled against NumPy 1.x "
                         "(its import fails with NumPy 2, and pip cannot install both this line and numpy<2): change "
                         "it to numpy<2")
    return replace(answer, warnings=answer.warnings + tuple(found)) if found else answer


def _tied_follow_framework(answer: Plan | Unsatisfiable, project: Project, solved_with: SolvedWith,
                           database: Database, target: Target) -> tuple[Project, Plan | Unsatisfiable]:
    """The lines of packages built for one framework release, beside the solved framework. A plan writes each as
    the release made for it (`xformers>=0.0.20` -> `xformers==0.0.34` beside torch 2.10.0, `tensorflow-text>=2.20`
    -> `tensorflow-text==2.20.1` beside TensorFlow 2.20.0: pip would otherwise try the newest first and backtrack
    through releases made for other releases), and says so. A refusal that those lines caused says, for each, the
    release to change it to for the framework release that runs here."""
    from envpin.project.gpu import tied_lines  # noqa: PLC0415 - for --project only, as collect
    from envpin.readers.tied import built_from_source, described, release_files, release_for  # noqa: PLC0415 - as above

    notes = [f"{r.origin}: {r.name} has no wheel on PyPI ({found}): pip compiles it against the torch "
             "installed beside it, so torch must be installed first" for r in project.other_requirements
             if (found := built_from_source(database, r.name)) is not None]
    lines = tied_lines(project, database)
    if isinstance(answer, Unsatisfiable):
        fixes = (_tied_fixes(lines, project, solved_with, database, target, answer.fixes, answer.moves) if lines
                 else answer.fixes)
        return replace(project, notes=project.notes + tuple(notes)), replace(answer, fixes=fixes)
    rewritten = {}
    for requirement, _, records in lines:
        framework = records[0].framework
        build = answer.builds.get(framework)
        if build is None:
            continue
        solved = str(build.version)
        chosen = release_for(records, solved, target.platform) or release_for(records, solved)
        if chosen is None:
            continue
        pin = f"{requirement.name}=={chosen.version}" + (f"; {requirement.marker}" if requirement.marker else "")
        if pin != requirement.text:
            rewritten[requirement] = replace(requirement, text=pin, specifier=f"=={chosen.version}")
            notes.append(f"{requirement.origin}: {requirement.text} is written {pin}, the release made for "
                         f"{framework} {solved} ({described(chosen)}, the Requires-Dist of its wheel)")
        if target.platform not in chosen.platforms:
            # only a platform-limited project's file lists say whether it has an sdist (tied.yaml `release_files:`)
            files = release_files(database, requirement.name, f"=={chosen.version}") if (
                requirement.name in PLATFORM_LIMITED) else []
            how = (" and no sdist: pip cannot install it there" if files and not files[0].sdist else
                   ": pip builds it from source there")
            notes.append(f"{requirement.origin}: {requirement.name} {chosen.version} has no wheel for {target.platform} "
                         f"on PyPI{how}")
    requirements = tuple(rewritten.get(r, r) for r in project.requirements)
    return replace(project, requirements=requirements, notes=project.notes + tuple(notes)), answer


def _tied_fixes(lines: list, project: Project, solved_with: SolvedWith, database: Database, target: Target,
                fixes_given: tuple[str, ...], moves: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    """The refusal's fixes with the tied lines'. Solved without the tied lines' framework bounds: for each line, the
    release of its package made for the framework release that runs, first. Where the project's own framework line
    is what cannot run (torch==2.0.1 on Python 3.12), a fix moves the framework to another release: each tied line
    that would then block (xformers==0.0.22 requires torch==2.0.1) says, after that fix, the release of its package
    made for that release, so that following the fixes installs."""
    from envpin.project.gpu import gpu_specs  # noqa: PLC0415 - for --project only, as collect

    try:
        specs, _, _ = gpu_specs(project, database, tied=False)
    except EnvpinInputError:
        return fixes_given  # the tied lines were its only requirement of their framework
    freed = solved_with(tuple(specs))
    fixes = fixes_given
    for framework in dict.fromkeys(records[0].framework for _, _, records in lines):
        own = [line for line in lines if line[2][0].framework == framework]
        build = freed.builds.get(framework) if isinstance(freed, Plan) else None
        if build is not None:
            fixes = tuple(_tied_changes(own, str(build.version), f"{framework} {build.version}+{build.flavor}",
                                        "the newest that runs here without these lines", database, target)) + fixes
            continue
        for position, fix in enumerate(fixes):
            moved, version = moves.get(fix, ("", ""))
            if moved == framework and version:
                changes = _tied_changes(own, version, f"{framework} {version}", "with the fix above", database, target)
                fixes = fixes[:position + 1] + tuple(changes) + fixes[position + 1:]
                break
    return fixes


def _tied_changes(lines: list, solved: str, shown: str, why: str, database: Database, target: Target) -> list[str]:
    from envpin.readers.tied import described, release_for, releases_of  # noqa: PLC0415 - for --project only

    fixes = []
    for requirement, _, own in lines:
        if release_for(own, solved) is not None:
            continue  # the line allows a release made for that one: it does not block
        chosen = release_for(releases_of(database, requirement.name, ""), solved, target.platform)
        if chosen is None:
            fixes.append(f"{requirement.origin}: remove {requirement.text}: no {requirement.name} release is made for "
                         f"{shown}, {why}")
        else:
            fixes.append(f"{requirement.origin}: change {requirement.text} to {requirement.name}=={chosen.version} "
                         f"({described(chosen)}), the release made for {shown}, {why}")
    return fixes


def _other_vendors_variant(answer: Plan | Unsatisfiable, cli_specs: tuple[str, ...], project_specs: tuple[str, ...],
                           origins: Mapping[str, list[str]], solved_with: SolvedWith,
                           target: Target) -> Plan | Unsatisfiable:
    """A project line that names another vendor's build (`torch==2.7.1+rocm6.3` on an NVIDIA-only machine): the
    solve takes a variant asked for by name, but this one cannot use the target's GPU, and `envpin check` reports
    the same line as an error (CHK-TARGET-GPU, the same `fitness.other_vendors_build`). Refused, with the same
    release in a build that runs here as the fix; a `--spec` on the command line that names it is the user's choice."""
    from envpin.resolver.fitness import other_vendors_build  # noqa: PLC0415 - only a project's plan

    if not isinstance(answer, Plan):
        return answer
    for framework, build in answer.builds.items():
        unusable = other_vendors_build(build, target)
        if unusable is None or not origins.get(framework) or any(f"+{build.flavor}" in s for s in cli_specs):
            continue
        asked = ", ".join(origins[framework])
        public = tuple(_without_local(spec) if _names(spec, framework) else spec for spec in project_specs)
        fixes = [f"or keep {asked} and solve for a machine with the GPU it is built for (--gfx, --gpu)"]
        moves: dict[str, tuple[str, str]] = {}
        same = solved_with(public)
        if isinstance(same, Plan) and framework in same.builds:
            pins = " ".join(p.requirement for p in same.packages)
            fixes.insert(0, fix := f"change {asked} to {pins}: the same release, in a build that runs on this machine")
            moves[fix] = (framework, str(same.builds[framework].version))
        return Unsatisfiable(target, answer.db_version, "gpu-unsupported", f"the project asks for {asked}: {unusable}",
                             tuple(fixes), moves)
    return answer


def _names(spec: str, framework: str) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - only a project's plan

    try:
        return Requirement(spec).name == framework
    except InvalidRequirement:
        return False


def _without_local(spec: str) -> str:
    """`torch==2.7.1+rocm6.3` -> `torch==2.7.1`: the release, in whichever build runs."""
    return re.sub(r"\+[A-Za-z0-9.]+", "", spec)


def _name_project_pins(answer: Plan | Unsatisfiable, origins: Mapping[str, list[str]]) -> Plan | Unsatisfiable:
    """An unsatisfiable answer for a project says which of its lines asked for what."""
    if not origins or not isinstance(answer, Unsatisfiable):
        return answer
    asked = "; ".join(", ".join(where) for where in origins.values())
    return replace(answer, message=f"the project asks for {asked}: {answer.message}")
