"""A cluster's machine classes and the answer for each: the inventory read (a Kubernetes node list, or the
fleet facts `envpin fleet detect` writes), grouped into classes, each class answered by `plan_machines`, the
function `envpin solve --targets` answers a machine with, so a class is refused wherever a single solve of its
facts is refused."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from envpin.app.database import run_database
from envpin.app.planning import (
    TROUBLE_WORDS,
    Machine,
    Planned,
    SolveOptions,
    broken_driver,
    exit_code_of,
    plan_machines,
    read_project,
    request_for,
)
from envpin.base.escapes import printable
from envpin.compat.model import Database
from envpin.facts.host import to_json
from envpin.fleet.images import conda_class_environment, dockerfile
from envpin.fleet.inventory import read_inventory
from envpin.fleet.kubernetes import class_job, class_selector, node_verify_jobs
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes
from envpin.machine.spec import TargetSpec
from envpin.readers.project import Project
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request


@dataclass(frozen=True)
class ClassAnswer:
    machine_class: MachineClass
    planned: Planned  # the class's answer, with the project as read for it

    @property
    def answer(self) -> Plan | Unsatisfiable:
        return self.planned.answer


@dataclass(frozen=True)
class PlannedClasses:
    classes: tuple[ClassAnswer, ...]
    nodes: tuple[ClusterNode, ...]  # every node of the inventory, for selectors that must tell classes apart
    request: Request
    project: Project | None
    kubernetes: bool  # the inventory was a Kubernetes node list

    @property
    def ok(self) -> bool:
        return all(isinstance(c.answer, Plan) for c in self.classes)

    @property
    def exit_code(self) -> int:
        """As `solve --targets`: 3 when a class is refused for its nodes' broken drivers, else 1 when one has no answer."""
        return exit_code_of(tuple(c.answer for c in self.classes))


def plan_inventory(options: SolveOptions, path: str, spec: TargetSpec,
                   db: str | None) -> tuple[PlannedClasses, Database]:
    """The classes of `--targets FILE` and their answers, with the run's one database (`--db`)."""
    database = run_database(db)
    return plan_classes(options, path, spec, database), database


def plan_classes(options: SolveOptions, path: str, spec: TargetSpec, database: Database) -> PlannedClasses:
    """Each class answered once for its facts. A node whose facts show an NVIDIA GPU with a driver that does not
    answer (as `envpin solve` refuses such a machine) is left out of its class's facts and named; a class of such
    nodes only keeps their facts, so that its answer is the single solve's `driver-broken` refusal."""
    nodes, kubernetes = read_inventory(path, spec)
    driver_given = spec.driver is not None
    broken: dict[str, str] = {}  # node -> what is broken, for its class's differences
    if not driver_given:
        project, project_specs, _ = read_project(options.project, database)
        request = request_for(options, project_specs, project)  # whether a +cpu requirement asks for the CPU build
        for node in nodes:
            trouble = node.facts.driver_trouble
            if trouble is not None and broken_driver(node.facts, request, in_fleet=True) is not None:
                broken[node.name] = TROUBLE_WORDS[trouble.state]
    classes = group_classes(nodes, broken)
    planned = plan_machines(options, [Machine(c.name, c.facts, driver_given) for c in classes], database)
    answers = tuple(ClassAnswer(c, p) for c, p in zip(classes, planned.answers, strict=True))
    first = planned.answers[0]
    return PlannedClasses(answers, tuple(nodes), first.request, first.project, kubernetes)


# What the fleet commands write for each class: the Kubernetes Jobs, the Dockerfiles (with a conda class's
# environment.yml), and a conda class's lock.

def kubernetes_files(planned: PlannedClasses, image: str, namespace: str | None) -> dict[str, str]:
    files = {}
    for entry in planned.classes:
        if isinstance(entry.answer, Plan):
            machine_class = entry.machine_class
            selector = class_selector(machine_class, list(planned.nodes))
            image_of_class = f"{image}:{machine_class.name}"
            pins = " ".join(p.requirement for p in entry.answer.packages)
            job = class_job(machine_class, selector, image_of_class, namespace)
            # the comment names the nodes: escaped, so no name starts a YAML line of its own; the Jobs are yaml's
            files[f"{machine_class.name}/job.yaml"] = (
                printable(f"# The Job of class {machine_class.name} ({', '.join(machine_class.node_names)}): one pod "
                          f"on a node of the class, in its image ({pins}).")
                + "\n# It runs envpin verify; put the workload's command there.\n" + yaml.safe_dump(job, sort_keys=False))
            jobs = node_verify_jobs(machine_class, selector, image_of_class, namespace)
            files[f"{machine_class.name}/verify-jobs.yaml"] = (
                f"# envpin verify on every node of class {machine_class.name}, one Job per node; each pod's log is "
                f"the node's report:\n#   kubectl logs -l envpin.dev/node=NODE --tail=-1 > reports/NODE.json, then "
                f"envpin fleet status --reports reports\n" + yaml.safe_dump_all(jobs, sort_keys=False))
    return files


def docker_files(planned: PlannedClasses, database: Database, policy: str) -> dict[str, str]:
    files = {}
    for entry in planned.classes:
        if isinstance(entry.answer, Plan):
            name = entry.machine_class.name
            files[f"{name}/Dockerfile"] = dockerfile(entry.answer, entry.machine_class, database, policy)
            files[f"{name}/facts.json"] = json.dumps(to_json(entry.machine_class.facts), indent=2) + "\n"
            if entry.answer.channel != "pip":  # a conda class: the environment its conda lock is solved from
                from envpin.conda.render import render as render_conda  # noqa: PLC0415 - conda classes only

                environment = conda_class_environment(entry.answer, entry.machine_class, policy, entry.planned.project)
                files[f"{name}/environment.yml"] = render_conda(environment, entry.answer, planned.request,
                                                                name=name)
    return files


def conda_class_lock(environment: Path, facts: Path, db: str | None, conda_channels) -> tuple[str, str]:
    """(a conda class's conda-lock.yml, what it holds): solved (rattler) from its environment.yml for its facts, with
    the glibc pixi and conda-lock assume rather than the node's: in the image the packages run on the image's C
    library. A package solved from a local channel folder is recorded at https://conda.anaconda.org/<folder name>/,
    where the image build fetches it."""
    from envpin import __version__  # noqa: PLC0415 - the conda lock is for conda classes only, as below
    from envpin.base.userfiles import read_text  # noqa: PLC0415
    from envpin.conda import locks  # noqa: PLC0415
    from envpin.conda.target import solve_for_target  # noqa: PLC0415
    from envpin.conda.virtual import DEFAULT_GLIBC  # noqa: PLC0415

    spec = TargetSpec(facts_file=str(facts), detect=False, origin="the class's facts", glibc=DEFAULT_GLIBC)
    found, solution = solve_for_target(read_text(environment), str(environment), spec, run_database(db),
                                       conda_channels)
    header = [f"Generated by envpin {__version__} from {environment.name} for {found.target.describe()}.",
              f"Virtual packages: {', '.join(str(p) for p in solution.virtual_packages)}."]
    text = locks.conda_lock_of(solution, environment.name, header, locks.public_bases(solution.channels))
    return text, f"{len(solution.records)} packages for {solution.subdir}"
