"""`plan()`: from what the user asked (SolveOptions) and the machine (TargetSpec) to an answer, once.

solve, init, lock and install all start here, so a request means the same thing to each of them: the
project's files are read the same way, its Python fills in the target's, and an unsatisfiable answer for a
project says which of its lines asked for what.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from envpin.compat.model import Database
from envpin.errors import EXIT_DRIVER_BROKEN, EnvpinInputError
from envpin.facts import DriverTrouble, HostFacts
from envpin.project.model import Project
from envpin.record import Record, record, replace
from envpin.resolver.fleet import FleetResult, solve_fleet
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import NumpyBound, Request, parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import Target, make_target
from envpin.target_spec import TargetSpec
from envpin.vocabulary.platforms import conda_subdir


@record
class ProjectSource(Record):
    """Which of a repository's files hold its requirements."""

    directory: str | None = None  # `--project DIR`: its requirements*.txt, pyproject.toml, setup.cfg, environment.yml
    requirement_files: tuple[str, ...] = ()  # `-r FILE`
    extras: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    allow_outside: bool = False  # `--allow-outside-repo`: includes may name files outside the repository

    def to_argv(self) -> tuple[str, ...]:
        """The project as options, so a regenerate line reads the project again rather than today's reading."""
        words: list[str] = []
        if self.directory is not None:
            words += ["--project", self.directory]
        for option, values in (("-r", self.requirement_files), ("--extra", self.extras), ("--group", self.groups)):
            for value in values:
                words += [option, value]
        if self.allow_outside:
            words.append("--allow-outside-repo")
        return tuple(words)


@record
class SolveOptions(Record):
    frameworks: tuple[str, ...] = ()
    specs: tuple[str, ...] = ()  # PEP 508 requirements on the GPU packages, as arguments or --spec
    driver_policy: str = "minor"
    torch_index_url: str | None = None  # else ENVPIN_TORCH_INDEX_URL, else download.pytorch.org
    allow_insecure_index: bool = False
    project: ProjectSource | None = None
    conda_source: str = "pip"  # the channel whose builds the solve chooses from (--conda-source)

    def source_argv(self) -> tuple[str, ...]:
        """The request as the user phrased it: the project's options, then the frameworks and specs."""
        words = list(self.project.to_argv()) if self.project else []
        for framework in self.frameworks:
            words += ["--framework", framework]
        for spec in self.specs:
            words += ["--spec", spec]
        return tuple(words)


@record
class Planned(Record):
    """An answer and everything that rendering, locking or installing it needs to know about the question."""

    answer: Plan | Unsatisfiable
    request: Request
    project: Project | None
    source_args: tuple[str, ...] | None  # the request in the user's words, for a project's regenerate line
    facts: HostFacts | None = None  # what the answer was solved for: install's conda backends reuse it, not detect again

    @property
    def ok(self) -> bool:
        return isinstance(self.answer, Plan)

    @property
    def exit_code(self) -> int:
        """What solve, init, lock and install exit with for this answer when they stop at it (docs/contracts.md)."""
        return exit_code_of((self.answer,))


def request_for(options: SolveOptions, project_specs: tuple[str, ...] = (), project: Project | None = None) -> Request:
    """The Request the options (and a project's GPU requirements) make; bad options are a one-line error."""
    frameworks = options.frameworks or (() if options.specs or project is not None else ("torch",))
    return parse_request(list(frameworks), list(project_specs + options.specs), options.driver_policy,
                         options.torch_index_url, options.allow_insecure_index, options.conda_source,
                         frozenset(project.cpu_only) if project is not None else frozenset(),
                         project_numpy(project) if project is not None else None,
                         dict(project.gpu_asked) if project is not None else None)


def project_numpy(project: Project) -> NumpyBound | None:
    """The project's own numpy lines (`numpy>=1.22, <1.24`) as the bound the builds' numpy requirement must meet.
    A line with a marker is left out: whether it holds on the target is pip's to say, and leaving it out never
    refuses a build the line would allow."""
    lines = [r for r in project.other_requirements if r.name == "numpy" and r.specifier and not r.marker]
    if not lines:
        return None
    return NumpyBound(",".join(r.specifier for r in lines), " and ".join(f"{r.text} ({r.origin})" for r in lines))


def read_project(source: ProjectSource | None, database: Database | None = None,
                 ) -> tuple[Project | None, tuple[str, ...], Mapping[str, list[str]]]:
    """(Project or None, its GPU requirements as specs, where each GPU package is asked for)."""
    return project_specs_of(collect(source), database)


def collect(source: ProjectSource | None) -> Project | None:
    if source is None:
        return None
    directory = Path(source.directory) if source.directory is not None else None
    # Reading a project (TOML, INI, requirement files) is for --project only: kept off a plain solve's imports
    from envpin.project.collect import collect_project  # noqa: PLC0415

    return collect_project(directory, source.requirement_files, source.extras, source.groups, source.allow_outside)


def project_specs_of(project: Project | None, database: Database | None = None,
                     ) -> tuple[Project | None, tuple[str, ...], Mapping[str, list[str]]]:
    if project is None:
        return None, (), {}
    from envpin.project.gpu import gpu_specs  # noqa: PLC0415 - for --project only, as collect

    specs, notes, origins = gpu_specs(project, database)
    return replace(project, notes=project.notes + tuple(notes)), tuple(specs), origins


@record
class PlannedFleet(Record):
    """The answers for a fleet: one per distinct result, each naming the machines it serves."""

    results: tuple[FleetResult, ...]
    request: Request
    project: Project | None
    source_args: tuple[str, ...] | None

    @property
    def ok(self) -> bool:
        return not any(isinstance(r.answer, Unsatisfiable) for r in self.results)

    @property
    def exit_code(self) -> int:
        """3 when any machine's driver is broken (the others answered as usual), else 1 when any has no answer."""
        return exit_code_of(tuple(r.answer for r in self.results))


def exit_code_of(answers: tuple[Plan | Unsatisfiable, ...]) -> int:
    """0 when every answer is a plan; 3 when any machine was refused for its broken driver, since that machine needs
    mending before any answer means anything; else 1."""
    if any(isinstance(a, Unsatisfiable) and a.code == DRIVER_BROKEN for a in answers):
        return EXIT_DRIVER_BROKEN
    return 0 if all(isinstance(a, Plan) for a in answers) else 1


def plan(options: SolveOptions, target_spec: TargetSpec, database: Database) -> Planned:
    project = collect(options.project)
    if project is not None:
        target_spec = target_spec.with_python(project.python)
    facts = target_spec.facts()
    target = make_target(database, facts)
    if project is not None:
        _refuse_other_platforms(project, target)
        # the target's own lines (a pixi `target.linux-64` table) join the project once the target is known
        from envpin.project.collect import for_platform  # noqa: PLC0415 - for --project only, as collect

        project = for_platform(project, conda_subdir(target.platform)).for_target(target.python, target.os, target.arch,
                                                                                          database)
    project, project_specs, origins = project_specs_of(project, database)
    request = request_for(options, project_specs, project)
    outside = _outside_project_python(project, target, database)
    if outside is not None:
        return Planned(outside, request, project, _source_args(options, project), facts)
    refusal = broken_driver(facts, target_spec, request)
    if refusal is not None:
        answer: Plan | Unsatisfiable = Unsatisfiable(target, database.version, DRIVER_BROKEN, *refusal)
        return Planned(answer, request, project, _source_args(options, project), facts)
    answer = _name_project_pins(solve(database, target, request), origins)
    if project is not None:
        answer = _project_lines_beside(answer, project)
        project, answer = _tied_follow_torch(answer, project, options, database, target)
    if target_spec.probes_this_machine:
        answer = _with_detection_trouble(answer, facts.notes, facts.driver_trouble)
    return Planned(answer, request, project, _source_args(options, project), facts)


DRIVER_BROKEN = "driver-broken"  # the Unsatisfiable code of a refused answer; solve, init, lock and install exit 3

TROUBLE_WORDS = {  # DriverTrouble.state -> what is broken, for the one-line message
    "driver-library-mismatch": "the NVIDIA kernel module and the driver's libraries are different versions (nvidia-smi: "
                               "Driver/library version mismatch)",
    "no-devices": "nvidia-smi runs but finds no GPU (No devices were found)",
    "module-not-loaded": "the NVIDIA kernel module is not loaded (nvidia-smi cannot communicate with the driver)",
    "nvml-error": "NVML, the driver's own interface, fails to initialise",
    "tool-failed": "the NVIDIA driver does not answer (nvidia-smi / NVML failed)",
    "no-driver": "an NVIDIA GPU is on the PCI bus, but no NVIDIA driver is loaded",
    "container-without-gpu": "this container does not have the host's NVIDIA GPU (started without --gpus / the NVIDIA runtime)",
    "wsl-driver-unreachable": "WSL2 has the Windows NVIDIA driver's libcuda, but nvidia-smi does not answer",
}


def broken_driver(facts: HostFacts, target_spec: TargetSpec, request: Request,
                  in_fleet: bool = False) -> tuple[str, tuple[str, ...]] | None:
    """(message, fixes) when the machine (detected here, in a `--facts` file detected there, or a machine of a
    `--targets` inventory) shows an NVIDIA GPU whose driver does not answer, so that the solve would answer the CPU
    build for a GPU machine; None when the driver answered or the user chose: `--driver X` solves for that driver,
    `--driver none` or a `+cpu` requirement asks for the CPU build on purpose."""
    trouble = facts.driver_trouble
    if trouble is None or facts.driver is not None or target_spec.driver is not None:
        return None
    if any("+cpu" in str(specifier) for specifier in request.specifiers.values()):
        return None
    message = (f"not answering the CPU build for a machine with an NVIDIA GPU: {TROUBLE_WORDS[trouble.state]}; "
               f"detection: {trouble.message}")
    if in_fleet:  # a flag would apply to every machine of the inventory: the fix is this machine's entry
        fixes = ("run `envpin doctor` on that machine for the cause and the fix",
                 "once its driver answers (`nvidia-smi` prints the table), detect it again (`envpin detect --format "
                 "json`, or `envpin fleet detect`) and run this command again",
                 "or give its entry the driver it will have (\"driver\": {\"version\": \"...\"}) and no driver_trouble",
                 "or ask for the CPU build on purpose for the whole inventory: --driver none")
    else:
        fixes = ("run `envpin doctor` for the cause and the fix",
                 "once the driver answers (`nvidia-smi` prints the table), run this command again",
                 "or solve for the GPU with the driver it will have: --driver VERSION (and --gpu NAME)",
                 "or ask for the CPU build on purpose: --driver none")
    return message, fixes


def trouble_line(trouble: DriverTrouble) -> str:
    return f"detection: {TROUBLE_WORDS[trouble.state]} ({trouble.message}); `envpin doctor` says how to fix it"


def _with_detection_trouble(answer: Plan | Unsatisfiable, notes: tuple[str, ...],
                            driver_trouble: DriverTrouble | None = None) -> Plan | Unsatisfiable:
    """A probe of this machine that failed or timed out is said in the answer, not only in `envpin detect`: the
    answer may rest on it (a driver read from /proc while nvidia-smi fails). A plain "no NVIDIA driver here" (every
    source simply absent) is no trouble and the answer's reasons say it already."""
    from envpin.host import ABSENT_DRIVER_NOTE  # noqa: PLC0415 - only a solve that probed has notes to judge

    trouble = tuple(f"detection: {note}" for note in notes if not note.startswith(ABSENT_DRIVER_NOTE))
    if driver_trouble is not None:
        trouble = (trouble_line(driver_trouble),) + trouble
    if not trouble or not isinstance(answer, Plan):
        return answer
    return replace(answer, warnings=answer.warnings + trouble)


def plan_fleet(options: SolveOptions, inventory: str, target_spec: TargetSpec, database: Database) -> PlannedFleet:
    """`--targets FILE`: every machine of the inventory (the target flags laid over each), solved once per
    distinct machine, one result per distinct answer. A machine whose facts show an NVIDIA GPU with a driver that
    does not answer is refused as a single solve refuses it, and named in its own result."""
    project, project_specs, _ = read_project(options.project, database)
    request = request_for(options, project_specs, project)
    from envpin.fleet.inventory import read_inventory  # noqa: PLC0415 - only a fleet needs it, never one solve

    machines: list[tuple[str, Target | Unsatisfiable]] = []
    for node in read_inventory(inventory, target_spec)[0]:
        target = make_target(database, node.facts)
        refusal = broken_driver(node.facts, target_spec, request, in_fleet=True)
        # refused as a single solve refuses it: a Python the project leaves out, then a driver that does not answer
        machines.append((node.name, _outside_project_python(project, target, database) or (
            target if refusal is None else Unsatisfiable(target, database.version, DRIVER_BROKEN, *refusal))))
    results = solve_fleet(database, machines, request)
    if project is not None:
        results = [replace(result, answer=_project_lines_beside(result.answer, project)) for result in results]
    return PlannedFleet(tuple(results), request, project, _source_args(options, project))


def _source_args(options: SolveOptions, project: Project | None) -> tuple[str, ...] | None:
    return options.source_argv() if project is not None else None


def _outside_project_python(project: Project | None, target: Target, database: Database) -> Unsatisfiable | None:
    """The refusal for a target Python the project itself leaves out (its pixi python line, its requires-python)."""
    if project is None:
        return None
    return _outside_manifest_python(project, target, database) or _outside_requires_python(project, target, database)


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


def _refuse_other_platforms(project: Project, target) -> None:
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
    from envpin.project.tied import cuda_major_of_requirement  # noqa: PLC0415 - only a project's plan needs it

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


def _tied_follow_torch(answer: Plan | Unsatisfiable, project: Project, options: SolveOptions, database: Database,
                       target: Target) -> tuple[Project, Plan | Unsatisfiable]:
    """The lines of packages built for one torch release, beside the solved torch. A plan writes each as the
    release made for that torch (`xformers>=0.0.20` -> `xformers==0.0.34` beside torch 2.10.0: pip would otherwise
    try the newest first and backtrack through releases made for other torch releases), and says so. A refusal
    that those lines caused says, for each, the release to change it to for the torch that runs here."""
    from envpin.project.gpu import tied_lines  # noqa: PLC0415 - for --project only, as collect
    from envpin.project.tied import built_from_source, described, release_for  # noqa: PLC0415 - as above

    notes = [f"{r.origin}: {r.name} has no wheel on PyPI ({found}): pip compiles it against the torch "
             "installed beside it, so torch must be installed first" for r in project.other_requirements
             if (found := built_from_source(database, r.name)) is not None]
    lines = tied_lines(project, database)
    if isinstance(answer, Unsatisfiable):
        fixes = _tied_fixes(lines, project, options, database, target, answer.fixes) if lines else answer.fixes
        return replace(project, notes=project.notes + tuple(notes)), replace(answer, fixes=fixes)
    torch = answer.builds.get("torch")
    if torch is None:
        return replace(project, notes=project.notes + tuple(notes)), answer
    solved = str(torch.version)
    rewritten = {}
    for requirement, _, records in lines:
        chosen = release_for(records, solved, target.platform) or release_for(records, solved)
        if chosen is None:
            continue
        pin = f"{requirement.name}=={chosen.version}" + (f"; {requirement.marker}" if requirement.marker else "")
        if pin != requirement.text:
            rewritten[requirement] = replace(requirement, text=pin, specifier=f"=={chosen.version}")
            notes.append(f"{requirement.origin}: {requirement.text} is written {pin}, the release made for torch "
                         f"{solved} ({described(chosen)}, the Requires-Dist of its wheel)")
        if target.platform not in chosen.platforms:
            notes.append(f"{requirement.origin}: {requirement.name} {chosen.version} has no wheel for {target.platform} "
                         "on PyPI: pip builds it from source there")
    requirements = tuple(rewritten.get(r, r) for r in project.requirements)
    return replace(project, requirements=requirements, notes=project.notes + tuple(notes)), answer


# how a refusal's fix names the torch release it moves to (resolver/explain.py `_fixes_near_the_request`)
_MOVED_TORCH = re.compile(r"--spec 'torch==([^'+]+)'")


def _tied_fixes(lines: list, project: Project, options: SolveOptions, database: Database, target: Target,
                fixes_given: tuple[str, ...]) -> tuple[str, ...]:
    """The refusal's fixes with the tied lines'. Solved without the tied lines' torch: for each line, the release
    of its package made for that torch, first. Where the project's own torch line is what cannot run (torch==2.0.1
    on Python 3.12), a fix moves torch to another release: each tied line that would then block (xformers==0.0.22
    requires torch==2.0.1) says, after that fix, the release of its package made for that torch, so that following
    the fixes installs."""
    from envpin.project.gpu import gpu_specs  # noqa: PLC0415 - for --project only, as collect

    try:
        specs, _, _ = gpu_specs(project, database, tied=False)
    except EnvpinInputError:
        return fixes_given  # the tied lines were its only torch requirement
    freed = solve(database, target, request_for(options, tuple(specs), project))
    torch = freed.builds.get("torch") if isinstance(freed, Plan) else None
    if torch is not None:
        return tuple(_tied_changes(lines, str(torch.version), f"torch {torch.version}+{torch.flavor}",
                                   "the newest that runs here without these lines", database, target)) + fixes_given
    for position, fix in enumerate(fixes_given):
        moved = _MOVED_TORCH.search(fix)
        if moved:
            version = moved.group(1)
            changes = _tied_changes(lines, version, f"torch {version}", "with the fix above", database, target)
            return fixes_given[:position + 1] + tuple(changes) + fixes_given[position + 1:]
    return fixes_given


def _tied_changes(lines: list, solved: str, shown: str, why: str, database: Database, target: Target) -> list[str]:
    from envpin.project.tied import described, release_for, releases_of  # noqa: PLC0415 - for --project only

    fixes = []
    for requirement, _, own in lines:
        if release_for(own, solved) is not None:
            continue  # the line allows a release made for that torch: it does not block
        chosen = release_for(releases_of(database, requirement.name, ""), solved, target.platform)
        if chosen is None:
            fixes.append(f"{requirement.origin}: remove {requirement.text}: no {requirement.name} release is made for "
                         f"{shown}, {why}")
        else:
            fixes.append(f"{requirement.origin}: change {requirement.text} to {requirement.name}=={chosen.version} "
                         f"({described(chosen)}), the release made for {shown}, {why}")
    return fixes


def _name_project_pins(answer: Plan | Unsatisfiable, origins: Mapping[str, list[str]]) -> Plan | Unsatisfiable:
    """An unsatisfiable answer for a project says which of its lines asked for what."""
    if not origins or not isinstance(answer, Unsatisfiable):
        return answer
    asked = "; ".join(", ".join(where) for where in origins.values())
    return replace(answer, message=f"the project asks for {asked}: {answer.message}")
