"""`plan()`: from what the user asked (SolveOptions) and the machine (TargetSpec) to an answer, once.

solve, init, lock and install all start here, so a request means the same thing to each of them: the
project's files are read the same way, its Python fills in the target's, and an unsatisfiable answer for a
project says which of its lines asked for what.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from envpin.app import project_policy
from envpin.base.errors import EXIT_DRIVER_BROKEN
from envpin.base.record import Record, record, replace
from envpin.compat.model import Database
from envpin.facts.host import DriverTrouble, HostFacts
from envpin.machine.spec import TargetSpec
from envpin.readers.project import Project
from envpin.resolver.plan import NOT_RESOLVED, Plan, Resolution, Unsatisfiable
from envpin.resolver.plan import RESOLVED as RESOLVED  # what solve --resolve says of a plan, for the command
from envpin.resolver.request import Request, parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import Target, make_target

# what commands hand on about an answer's index URLs, from the layer they call (they import no resolver module)
from envpin.resolver.urls import CREDENTIALS_NOTE as CREDENTIALS_NOTE
from envpin.resolver.urls import checked_index_url as checked_index_url
from envpin.resolver.urls import has_credentials as has_credentials
from envpin.resolver.urls import redact_credentials as redact_credentials
from envpin.vocabulary.platforms import conda_subdir

if TYPE_CHECKING:
    from envpin.lock.options import ResolveOptions


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
    resolve: ResolveOptions | None = None  # `--resolve`: the whole environment resolved by uv; None: not asked

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
                         project_policy.project_numpy(project) if project is not None else None,
                         dict(project.gpu_asked) if project is not None else None,
                         project.torch_cuda[0] if project is not None and project.torch_cuda else None)


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
class FleetResult(Record):
    names: tuple[str, ...]  # the machines this answer serves
    answer: Plan | Unsatisfiable
    project: Project | None = None  # the project as read for them (its tied lines written for their torch)


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
    """The answer for one machine: the one the flags, a facts file or detection describe."""
    project = collect(options.project)
    if project is not None:
        target_spec = target_spec.with_python(project.python)
    facts = target_spec.facts()
    if target_spec.probes_this_machine and not detection_decided(target_spec, facts):
        facts = replace(facts, notes=(), driver_trouble=None)  # this machine's probe troubles are not the target's
    planned = answer_for(options, project, Machine("target", facts, target_spec.driver is not None), database)
    if target_spec.probes_this_machine:
        planned = replace(planned, answer=_with_detection_trouble(planned.answer, facts.notes, facts.driver_trouble))
    return planned


def detection_decided(target_spec: TargetSpec, facts: HostFacts) -> bool:
    """Whether what detection found on this machine decides the answer, so that its troubles belong in it: the GPUs
    when no flag names them, or the NVIDIA driver for a target with an NVIDIA GPU. A machine whose GPUs the flags
    name, none of them NVIDIA (`--gfx gfx1100`, `--gpu "Intel Arc B580"`), takes nothing from this machine's NVIDIA
    probes: that this container has no NVIDIA driver mounted says nothing about it."""
    if not (target_spec.gpus or target_spec.compute_capabilities or target_spec.gfx):
        return True
    return target_spec.driver is None and any(gpu.vendor == "nvidia" for gpu in facts.gpus)


@record
class Machine(Record):
    """One machine to answer for: its name (a node, a machine class, an inventory entry) and its facts, the target
    flags laid over them."""

    name: str
    facts: HostFacts
    driver_given: bool = False  # `--driver X|none` chose the driver: a driver that did not answer is no refusal


@record
class PlannedMachines(Record):
    """One answer per machine, in the machines' order, each made as `plan()` makes a single machine's."""

    machines: tuple[Machine, ...]
    answers: tuple[Planned, ...]

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.answers)

    @property
    def exit_code(self) -> int:
        return exit_code_of(tuple(p.answer for p in self.answers))


def plan_machines(options: SolveOptions, machines: Sequence[Machine], database: Database) -> PlannedMachines:
    """Every machine's answer, made by the function a single solve's is made by (`answer_for`): the project read
    once, each distinct machine solved once. This is what `solve --targets`, `fleet manifests`, `fleet status` and
    `fleet provision` stand on, so that none of them answers a machine that `envpin solve` refuses."""
    project = collect(options.project)
    answers: dict[tuple, Planned] = {}
    planned = []
    for machine in machines:
        target = make_target(database, machine.facts)
        key = (target, machine.facts.driver_trouble if machine.facts.driver is None else None, machine.driver_given)
        if key not in answers:
            answers[key] = answer_for(options, project, machine, database, in_fleet=True, target=target)
        planned.append(answers[key])
    return PlannedMachines(tuple(machines), tuple(planned))


def answer_for(options: SolveOptions, project: Project | None, machine: Machine, database: Database,
               in_fleet: bool = False, target: Target | None = None) -> Planned:
    """One machine's answer: the refusals (the project's Python, a driver that does not answer), the solve, and the
    project's policy laid over it (its lines beside the plan, its tied lines). `project` is the project as read,
    before the target's own lines join it."""
    facts = machine.facts
    target = target if target is not None else make_target(database, facts)
    if project is not None:
        project_policy.refuse_other_platforms(project, target)
        # the target's own lines (a pixi `target.linux-64` table) join the project once the target is known
        from envpin.project.collect import for_platform  # noqa: PLC0415 - for --project only, as collect

        project = for_platform(project, conda_subdir(target.platform)).for_target(target.python, target.os, target.arch,
                                                                                          database)
    project, project_specs, origins = project_specs_of(project, database)
    request = request_for(options, project_specs, project)
    outside = project_policy.outside_python(project, target, database)
    if outside is not None:
        return Planned(outside, request, project, _source_args(options, project), facts)
    refusal = None if machine.driver_given else broken_driver(facts, request, in_fleet)
    if refusal is not None:
        answer: Plan | Unsatisfiable = Unsatisfiable(target, database.version, DRIVER_BROKEN, *refusal)
        return Planned(answer, request, project, _source_args(options, project), facts)
    project, answer = _project_answer(options, database, target, request, project, project_specs, origins)
    if project is not None and options.resolve is not None:
        project, answer = _resolved(answer, project, options, database, target, project_specs, origins)
    elif project is not None and isinstance(answer, Plan):  # said, so that a project's plan is never taken as proven
        answer = replace(answer, resolution=NOT_ASKED)
    return Planned(answer, request, project, _source_args(options, project), facts)


def _project_answer(options: SolveOptions, database: Database, target: Target, request: Request,
                    project: Project | None, project_specs: tuple[str, ...], origins: Mapping[str, list[str]],
                    ) -> tuple[Project | None, Plan | Unsatisfiable]:
    """The solve, and the project's policy laid over it (envpin.app.project_policy)."""
    answer = solve(database, target, request)
    if project is None:
        return project, answer

    def solved_with(specs: tuple[str, ...]) -> Plan | Unsatisfiable:  # the project's GPU lines, other specs
        return solve(database, target, request_for(options, specs, project))

    return project_policy.apply(answer, project, project_specs, origins, options.specs, solved_with, database, target)


def _resolved(answer: Plan | Unsatisfiable, project: Project, options: SolveOptions, database: Database,
              target: Target, project_specs: tuple[str, ...], origins: Mapping[str, list[str]],
              ) -> tuple[Project | None, Plan | Unsatisfiable]:
    """`--resolve`: the answer whose whole environment uv resolves (envpin.lock.resolution), solved again with the
    bounds uv's conflicts give where the first one does not."""
    from envpin.lock.resolution import resolve_environment, resolved_answer  # noqa: PLC0415 - only with --resolve

    assert options.resolve is not None
    resolve_options = options.resolve
    read = project

    def solve_again(added: tuple[str, ...]) -> tuple[Project | None, Plan | Unsatisfiable]:
        request = request_for(options, project_specs + added, read)
        return _project_answer(options, database, target, request, read, project_specs + added, origins)

    return resolved_answer(answer, project, lambda plan, lines: resolve_environment(plan, lines, resolve_options,
                                                                                      options.driver_policy),
                           solve_again)


# a project's plan solved without --resolve: its own lines were not resolved beside the pins (docs/resolution.md)
NOT_ASKED = Resolution(NOT_RESOLVED, "not asked: the project's other lines were not resolved beside the pins "
                                     "(--resolve has uv resolve the whole environment)")

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


def broken_driver(facts: HostFacts, request: Request, in_fleet: bool = False) -> tuple[str, tuple[str, ...]] | None:
    """(message, fixes) when the machine (detected here, in a `--facts` file detected there, or a machine of a
    `--targets` inventory) shows an NVIDIA GPU whose driver does not answer, so that the solve would answer the CPU
    build for a GPU machine; None when the driver answered or a `+cpu` requirement asks for the CPU build on purpose
    (`--driver X|none` is the user's choice too: the caller does not ask then)."""
    trouble = facts.driver_trouble
    if trouble is None or facts.driver is not None:
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


def inventory_machines(inventory: str, target_spec: TargetSpec) -> tuple[Machine, ...]:
    """The machines of a `--targets FILE` inventory, the target flags laid over each."""
    from envpin.fleet.inventory import read_inventory  # noqa: PLC0415 - only a fleet needs it, never one solve

    return tuple(Machine(node.name, node.facts, target_spec.driver is not None)
                 for node in read_inventory(inventory, target_spec)[0])


def plan_fleet(options: SolveOptions, inventory: str, target_spec: TargetSpec, database: Database) -> PlannedFleet:
    """`solve --targets FILE`: every machine of the inventory answered by `plan_machines`, one result per distinct
    answer, each naming the machines it serves."""
    planned = plan_machines(options, inventory_machines(inventory, target_spec), database)
    grouped: dict[object, list[str]] = {}
    representative: dict[object, Planned] = {}
    for machine, answer in zip(planned.machines, planned.answers, strict=True):
        key = answer_key(answer.answer)
        grouped.setdefault(key, []).append(machine.name)
        representative.setdefault(key, answer)
    results = tuple(FleetResult(tuple(names), representative[key].answer, representative[key].project)
                    for key, names in grouped.items())
    first = planned.answers[0]
    return PlannedFleet(results, first.request, first.project, first.source_args)


def answer_key(answer: Plan | Unsatisfiable) -> object:
    """The same answer means everything a file or a report says of it: the pins, where they come from, what each
    framework runs on, the steps outside pip, and the platform and Python the environment is for (a macOS laptop
    and a Linux node can both pin torch==2.15.0, from PyPI, and still need two files)."""
    machine = (answer.target.platform, answer.target.python)
    if isinstance(answer, Unsatisfiable):
        return ("unsatisfiable", machine, answer.code, answer.message)
    return ("plan", machine, answer.channel, answer.packages, answer.accelerator,
            tuple(sorted((answer.accelerators or {}).items())), answer.notes)


def _source_args(options: SolveOptions, project: Project | None) -> tuple[str, ...] | None:
    return options.source_argv() if project is not None else None


