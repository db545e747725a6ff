"""A cluster's machine classes and the answer for each: the inventory read (a Kubernetes node list, or the
fleet facts `envpin fleet detect` writes), grouped into classes, each class answered by `plan_machines`, the
function `envpin solve --targets` answers a machine with, so a class is refused wherever a single solve of its
facts is refused."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml

from envpin.app.database import run_database
from envpin.app.lock import lock_planned
from envpin.app.planning import (
    TROUBLE_WORDS,
    Machine,
    Planned,
    SolveOptions,
    answer_key,
    broken_driver,
    exit_code_of,
    plan_machines,
    read_project,
    request_for,
)
from envpin.base.escapes import printable
from envpin.base.record import Record, record, replace
from envpin.compat.model import Database
from envpin.facts.host import to_json
from envpin.fleet.images import (
    CONDA,
    CONDA_LOCK_NAME,
    LOCK_NAME,
    PROBE_NAME,
    Image,
    base_image,
    conda_class_environment,
    dockerfile,
    image_name,
)
from envpin.fleet.inventory import read_inventory
from envpin.fleet.kubernetes import class_job, class_selector, node_verify_jobs
from envpin.fleet.nodes import ClusterNode, MachineClass, group_classes, weakest_facts
from envpin.lock.options import LockOptions
from envpin.lock.pylock import render as render_lock
from envpin.machine.spec import TargetSpec
from envpin.readers.project import Project
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import Request
from envpin.verify.run import PROBE


@record
class ClassAnswer(Record):
    machine_class: MachineClass
    planned: Planned  # the class's answer, with the project as read for it

    @property
    def answer(self) -> Plan | Unsatisfiable:
        return self.planned.answer


@record
class PlannedClasses(Record):
    classes: tuple[ClassAnswer, ...]
    nodes: tuple[ClusterNode, ...]  # every node of the inventory, for selectors that must tell classes apart
    request: Request
    project: Project | None
    kubernetes: bool  # the inventory was a Kubernetes node list
    driver_given: bool = False  # `--driver` chose every class's driver

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
    return PlannedClasses(answers, tuple(nodes), first.request, first.project, kubernetes, driver_given)


# The images of a fleet: the fewest builds that cover its classes

@record
class ImageAnswer(Record):
    image: Image
    planned: Planned  # the answer of the class whose build the image is: what its lock is made from
    shared: tuple[str, ...]  # for each class the image serves with another class's build: its own answer, and why


def fleet_images(planned: PlannedClasses, options: SolveOptions, database: Database) -> tuple[ImageAnswer, ...]:
    """One image per build that serves classes: first the classes whose answers are the same build (answer_key: the
    same pins from the same indexes, for the same platform and Python), then two such groups merged where one of
    their builds is the answer for both together (solved as one class: the oldest driver and every GPU among them),
    until no two merge. The classes with no answer get no image."""
    groups: list[list[ClassAnswer]] = []
    for entry in planned.classes:
        if not isinstance(entry.answer, Plan):
            continue
        same = next((g for g in groups if answer_key(g[0].answer) == answer_key(entry.answer)), None)
        if same is None:
            groups.append([entry])
        else:
            same.append(entry)
    solved: dict[frozenset[str], object | None] = {}  # classes -> their one build's key: each union solved once

    def one_build_for(entries: list[ClassAnswer]) -> object | None:
        names = frozenset(e.machine_class.name for e in entries)
        if names not in solved:
            solved[names] = _one_build_for(entries, options, database, planned.driver_given)
        return solved[names]

    while (merge := _next_merge(groups, one_build_for)) is not None:
        i, j = merge  # groups[i]'s build serves groups[j] too: one group, in i's place, its build's classes first
        groups = [g + groups[j] if k == i else g for k, g in enumerate(groups) if k != j]
    answers = [_image_answer(group) for group in groups]
    seen: dict[str, int] = {}  # a shared image's name may be another's ("a" and "b" share "a-b", a class "a-b")
    for position, made in enumerate(answers):
        seen[made.image.name] = seen.get(made.image.name, 0) + 1
        if seen[made.image.name] > 1:
            suffix = f"-{seen[made.image.name]}"
            name = made.image.name[:63 - len(suffix)] + suffix
            answers[position] = replace(made, image=replace(made.image, name=name))
    return tuple(answers)


def _next_merge(groups: list[list[ClassAnswer]], one_build_for) -> tuple[int, int] | None:
    """(i, j): the first two groups of which one, i, has the build that is the answer for both together."""
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            key = one_build_for(groups[i] + groups[j])
            if key == answer_key(groups[i][0].answer):
                return i, j
            if key == answer_key(groups[j][0].answer):
                return j, i
    return None


def _one_build_for(entries: list[ClassAnswer], options: SolveOptions, database: Database,
                   driver_given: bool) -> object | None:
    """The answer key of one of these classes' builds when it is also the answer for all of them as one class."""
    targets = {(e.answer.target.platform, e.answer.target.python, e.answer.channel, _kinds(e.answer)) for e in entries
               if isinstance(e.answer, Plan)}
    if len(targets) != 1:  # a GPU class never gets a CPU build (nor a CUDA one a ROCm build) for sharing an image
        return None
    facts = weakest_facts([e.machine_class.facts for e in entries])
    [together] = plan_machines(options, [Machine("together", facts, driver_given)], database).answers
    keys = {answer_key(e.answer) for e in entries}
    key = answer_key(together.answer)
    return key if isinstance(together.answer, Plan) and key in keys else None


def _kinds(answer: Plan) -> tuple[str, ...]:
    """What each framework of the answer runs on, without the version: cpu, cu, rocm, mps, xpu."""
    accelerators = (answer.accelerators or {"": answer.accelerator}).values()
    return tuple(sorted({accelerator.rstrip("0123456789.") for accelerator in accelerators}))


def _image_answer(group: list[ClassAnswer]) -> ImageAnswer:
    """The group's image: the build of its first class, which every group starts with."""
    own = group[0]
    key = answer_key(own.answer)
    classes = tuple(e.machine_class for e in group)
    shared = tuple(f"class {e.machine_class.name}: its own answer is {_pins(e.answer)}; the build of class "
                   f"{own.machine_class.name} runs on its nodes too" for e in group if answer_key(e.answer) != key)
    assert isinstance(own.answer, Plan), "an image serves only classes with an answer"
    return ImageAnswer(Image(image_name(classes), own.answer, classes), own.planned, shared)


def _pins(answer: Plan | Unsatisfiable) -> str:
    assert isinstance(answer, Plan), "an image serves only classes with an answer"
    return f"{' '.join(p.requirement for p in answer.packages)} ({answer.accelerator})"


def image_of_class(images: tuple[ImageAnswer, ...]) -> dict[str, str]:
    """Class name -> the name of the image that serves it."""
    return {c.name: answer.image.name for answer in images for c in answer.image.classes}


# What the fleet commands write: per class the Kubernetes Jobs; per image the Dockerfile, the probe, the facts its
# lock is made for (with a conda image's environment.yml), and its lock.

def kubernetes_files(planned: PlannedClasses, images: tuple[ImageAnswer, ...], repository: str,
                     namespace: str | None) -> dict[str, str]:
    files = {}
    tags = image_of_class(images)
    for entry in planned.classes:
        if isinstance(entry.answer, Plan):
            machine_class = entry.machine_class
            selector = class_selector(machine_class, list(planned.nodes))
            image = f"{repository}:{tags[machine_class.name]}"
            served = next(a.image for a in images if a.image.name == tags[machine_class.name])
            pins = " ".join(p.requirement for p in served.plan.packages)
            job = class_job(machine_class, selector, image, namespace)
            # the comment names the nodes: escaped, so no name starts a YAML line of its own; the Jobs are yaml's
            files[f"{machine_class.name}/job.yaml"] = (
                printable(f"# The Job of class {machine_class.name} ({', '.join(machine_class.node_names)}): one pod "
                          f"on a node of the class, in image {image} ({pins}).")
                + "\n# It runs envpin's probe; put the workload's command there.\n" + yaml.safe_dump(job, sort_keys=False))
            jobs = node_verify_jobs(machine_class, selector, image, namespace)
            files[f"{machine_class.name}/verify-jobs.yaml"] = (
                f"# envpin's probe on every node of class {machine_class.name}, one Job per node; each pod's log is "
                f"the node's report:\n#   kubectl logs -l envpin.dev/node=NODE --tail=-1 > reports/NODE.json, then "
                f"envpin fleet status --reports reports\n" + yaml.safe_dump_all(jobs, sort_keys=False))
    return files


def docker_files(images: tuple[ImageAnswer, ...], database: Database, policy: str, request: Request) -> dict[str, str]:
    """Per image: its Dockerfile, envpin's probe, the facts its lock is made for and, for a conda image, the
    environment its conda lock is solved from. The lock itself: image_locks."""
    files = {}
    probe = PROBE.read_text(encoding="utf-8")
    for entry in images:
        image = entry.image
        files[f"{image.name}/Dockerfile"] = dockerfile(image, database, policy)
        files[f"{image.name}/{PROBE_NAME}"] = probe
        files[f"{image.name}/facts.json"] = json.dumps(to_json(_lock_facts(entry)), indent=2) + "\n"
        if image.plan.channel != "pip":  # a conda image: the environment its conda lock is solved from
            from envpin.conda.render import render as render_conda  # noqa: PLC0415 - conda images only

            environment = conda_class_environment(image.plan, image.classes[0], policy, entry.planned.project)
            files[f"{image.name}/environment.yml"] = render_conda(environment, image.plan, request, name=image.name)
    return files


def _lock_facts(entry: ImageAnswer):
    """The facts of the class whose answer the image's build is: the first (_image_answer)."""
    return entry.image.classes[0].facts


def image_locks(images: tuple[ImageAnswer, ...], files: dict[str, str], options: LockOptions,
                allow_insecure_index: bool, db: str | None, conda_channels) -> dict[str, tuple[str, str]]:
    """Every image's lock, made before any file is written ({path: (text, what it holds)}): a pip image's
    pylock.toml by the machinery of `envpin lock`, a conda image's conda-lock.yml by that of `envpin conda lock`. An
    index or channel that does not answer is the one-line error of the first lock that needs it."""
    locks = {}
    for entry in images:
        image = entry.image
        if base_image(image.plan, image.classes[0]).route == CONDA:
            with tempfile.TemporaryDirectory(prefix="envpin-image-") as work:  # the lock is solved from these files
                folder = Path(work)
                for name in ("environment.yml", "facts.json"):
                    (folder / name).write_text(files[f"{image.name}/{name}"], encoding="utf-8")
                locks[f"{image.name}/{CONDA_LOCK_NAME}"] = conda_class_lock(folder / "environment.yml",
                                                                            folder / "facts.json", db, conda_channels)
            continue
        path = f"{image.name}/{LOCK_NAME}"
        locked = lock_planned(replace(entry.planned, source_args=None), options, path, allow_insecure_index)
        packages = len(locked.lock.document.get("packages", []))
        locks[path] = (render_lock(locked.lock.document, list(locked.header)), f"{packages} packages, {locked.lock.engine}")
    return locks


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
