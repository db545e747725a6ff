"""`envpin fleet`: machine classes of a cluster, and what runs them on the cluster's own engine.

- `manifests --targets NODES --format kubernetes|dockerfile -o DIR`: per class, a Job whose nodeSelector picks
  exactly the class and a verify Job per node of it, in the image that serves the class; or per image (the fewest
  builds that serve every class) a Dockerfile that installs the image's lock, written beside it in the same run
  (with `--conda-source`, its environment.yml and conda-lock.yml, installed by micromamba), and envpin's probe;
- `detect --slurm [--partition P …] -o FILE`: `envpin detect` on every node through srun, as fleet facts;
- `provision --slurm --targets FILE -o DIR --prefix-root ROOT`: per class the lock and a plain sbatch script that
  installs it at ROOT/CLASS and verifies it on every node of the class, written out, then submitted;
- `status --targets FILE [--reports DIR]`: per class its nodes, its answer, the nodes whose facts differ and,
  with the verify reports, which nodes are good and why the others are not.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

from envpin.app.fleet import docker_files, fleet_images, image_locks, kubernetes_files, plan_inventory
from envpin.app.lock import lock_planned
from envpin.app.planning import Plan
from envpin.app.render import render_text as render_answer
from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import printable, terminal
from envpin.base.record import replace
from envpin.base.userfiles import write_atomically
from envpin.commands.options import (
    add_channel_options,
    add_conda_source_option,
    add_db_option,
    add_lock_options,
    add_project_options,
    add_request_options,
    add_target_options,
    channels,
    lock_options,
    seconds,
    solve_options,
    target_spec,
)
from envpin.facts.host import to_json
from envpin.fleet.images import CONDA, base_image
from envpin.fleet.names import checked_namespace
from envpin.fleet.report import render_json, render_text, report_json
from envpin.fleet.slurm import (
    ClassFiles,
    check_slurm_names,
    detect_facts,
    facts_document,
    list_nodes,
    provision_script,
    sbatch_path,
    submit,
)
from envpin.lock.pylock import render

MANIFEST_FORMATS = ("kubernetes", "dockerfile")


def register(fleet: argparse.ArgumentParser, parser_class) -> None:
    commands = fleet.add_subparsers(dest="fleet_command", metavar="COMMAND", required=True, parser_class=parser_class)
    manifests = commands.add_parser("manifests", help="per machine class: Kubernetes Jobs, or a Dockerfile")
    _add_inventory_options(manifests)
    manifests.add_argument("--format", choices=MANIFEST_FORMATS, required=True,
                           help="kubernetes: DIR/CLASS/job.yaml and verify-jobs.yaml; dockerfile: per image (the fewest that "
                                "serve the classes) DIR/IMAGE/Dockerfile, its lock and envpin's probe")
    manifests.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write into")
    manifests.add_argument("--image", metavar="REPOSITORY",
                           help="kubernetes: the images are REPOSITORY:IMAGE (built from the Dockerfiles)")
    manifests.add_argument("--namespace", help="kubernetes: the Jobs' namespace")
    manifests.add_argument("--no-lock", action="store_true",
                           help="dockerfile: write no lock (each image's lock is made now otherwise: DIR/IMAGE/pylock.toml, "
                                "or conda-lock.yml for a conda source, from its indexes or channels)")
    add_conda_source_option(manifests, "dockerfile: a conda class's image installs its conda-lock.yml with micromamba")
    add_lock_options(manifests)
    add_channel_options(manifests)
    manifests.set_defaults(handler=run_manifests)
    detect = commands.add_parser("detect", help="every node's facts through srun (Slurm), as fleet facts")
    detect.add_argument("--slurm", action="store_true", required=True, help="the cluster runs Slurm")
    detect.add_argument("--partition", action="append", default=[], help="only this partition (repeatable)")
    detect.add_argument("-o", "--output", required=True, metavar="FILE", help="the fleet facts file to write")
    _add_slurm_options(detect)
    detect.set_defaults(handler=run_detect)
    provision = commands.add_parser("provision", help="per machine class: lock, sbatch script, submit (Slurm)")
    provision.add_argument("--slurm", action="store_true", required=True, help="the cluster runs Slurm")
    _add_inventory_options(provision)
    provision.add_argument("-o", "--output", required=True, metavar="DIR",
                           help="DIR/CLASS/{facts.json,pylock.toml,provision.sbatch}, DIR/reports/NODE.json")
    provision.add_argument("--prefix-root", required=True, metavar="ROOT",
                           help="each class's environment goes to ROOT/CLASS (shared storage, or node-local)")
    provision.add_argument("--node-local", action="store_true",
                           help="ROOT is local to each node: every node installs its own copy")
    provision.add_argument("--no-submit", action="store_true", help="write the scripts, submit nothing")
    add_lock_options(provision)
    _add_slurm_options(provision)
    provision.set_defaults(handler=run_provision)
    status = commands.add_parser("status", help="per machine class: nodes, answer, differing nodes, verify results")
    _add_inventory_options(status)
    status.add_argument("--reports", metavar="DIR", help="the folder of verify reports, NODE.json each")
    status.add_argument("--format", choices=("text", "json"), default="text")
    status.set_defaults(handler=run_status)


def _add_inventory_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--targets", required=True, metavar="FILE",
                        help="`kubectl get nodes -o json`, or fleet facts (`envpin fleet detect --slurm`)")
    add_request_options(parser, requirements=False)
    add_project_options(parser)
    add_target_options(parser)
    add_db_option(parser)


def _add_slurm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--envpin", metavar="COMMAND",
                        help="how the nodes run envpin (default: this envpin, `PYTHON -m envpin`, which must be on "
                             "shared storage)")
    parser.add_argument("--timeout", type=seconds, default=600, metavar="S",
                        help="give up on one sinfo, srun or sbatch after S seconds (default 600)")


def _envpin_command(args: argparse.Namespace) -> list[str]:
    if args.envpin:
        words = shlex.split(args.envpin)
        if not words:
            raise EnvpinInputError("--envpin '': expected the command that runs envpin on the nodes")
        return words
    return [sys.executable, "-m", "envpin"]


def run_detect(args: argparse.Namespace) -> int:
    folder = Path(args.output).resolve().parent  # srun's tasks write here: storage the nodes share, as $HOME is
    if not folder.is_dir():
        raise EnvpinInputError(f"-o {args.output}: no folder {folder}")
    nodes = list_nodes(args.partition, args.timeout)
    with tempfile.TemporaryDirectory(prefix="envpin-detect-", dir=folder) as work:
        documents = detect_facts(nodes, _envpin_command(args), Path(work), args.timeout)
    write_atomically(Path(args.output), facts_document(documents))
    print(f"wrote {args.output}: {len(documents)} node(s)", file=sys.stderr)
    return 0


def run_provision(args: argparse.Namespace) -> int:
    planned, _, options = _planned(args)
    output = Path(args.output).resolve()
    envpin = _envpin_command(args)
    for entry in planned.classes:  # every script's names are checked before any class is locked or written
        check_slurm_names(entry.machine_class)
    sbatch_path(output)
    written: list[Path] = []
    for entry in planned.classes:
        machine_class = entry.machine_class
        if not isinstance(entry.answer, Plan):
            sys.stdout.write(f"== class {printable(machine_class.name)}: nothing written\n")
            sys.stdout.write(terminal(render_answer(entry.answer, planned.request)))
            continue
        files = ClassFiles(output / machine_class.name, output / "reports")
        locked = lock_planned(replace(entry.planned, source_args=None), lock_options(args),
                              str(files.lock), options.allow_insecure_index)
        prefix = str(Path(args.prefix_root) / machine_class.name)
        write_files(output, {
            f"{machine_class.name}/facts.json": json.dumps(to_json(machine_class.facts), indent=2) + "\n",
            f"{machine_class.name}/pylock.toml": render(locked.lock.document, list(locked.header)),
            f"{machine_class.name}/provision.sbatch": provision_script(machine_class, entry.answer, files, prefix,
                                                                       envpin, args.node_local),
        })
        written.append(files.script)
    if not args.no_submit:
        for script in written:
            print(f"submitted {script}: job {submit(script, args.timeout)}", file=sys.stderr)
    return planned.exit_code


def _planned(args: argparse.Namespace):
    options = solve_options(argparse.Namespace(**{**vars(args), "requirements": []}),
                            conda_source=getattr(args, "conda_source", "pip"))  # only manifests has --conda-source
    planned, database = plan_inventory(options, args.targets, target_spec(args), args.db)
    return planned, database, options


def run_status(args: argparse.Namespace) -> int:
    planned, database, _ = _planned(args)
    reports = Path(args.reports) if args.reports else None
    if reports is not None and not reports.is_dir():
        raise EnvpinInputError(f"--reports {args.reports}: not a folder")
    document = report_json(planned, reports, database)
    sys.stdout.write(render_json(document) if args.format == "json" else terminal(render_text(document)))
    return planned.exit_code or (0 if document["ok"] else 1)  # a broken driver's 3 before the verify results


def run_manifests(args: argparse.Namespace) -> int:
    planned, database, options = _planned(args)
    output = Path(args.output)
    if args.format == "kubernetes":
        if not planned.kubernetes:
            raise EnvpinInputError(f"--targets {args.targets}: --format kubernetes needs a Kubernetes node list "
                                   "(kubectl get nodes -o json)")
        if not args.image:
            raise EnvpinInputError("--format kubernetes: give --image REPOSITORY (the images, REPOSITORY:IMAGE)")
        namespace = args.namespace and checked_namespace(args.namespace)
        images = fleet_images(planned, options, database)
        files = kubernetes_files(planned, images, args.image, namespace)
        locks: dict[str, tuple[str, str]] = {}
    else:
        images = fleet_images(planned, options, database)
        files = docker_files(images, database, options.driver_policy, planned.request)
        # every lock is made before any file is written: an index that does not answer leaves nothing behind
        locks = {} if args.no_lock else image_locks(images, files, lock_options(args), args.allow_insecure_index,
                                                    args.db, channels(args))
    for entry in images:
        image = entry.image
        sys.stdout.write(printable(f"== image {image.name}: class{'es' if len(image.classes) > 1 else ''} "
                                   f"{', '.join(c.name for c in image.classes)}; "
                                   f"{' '.join(p.requirement for p in image.plan.packages)} ({image.plan.accelerator})")
                         + "\n")
        for line in entry.shared:
            sys.stdout.write(f"   {printable(line)}\n")
    for entry in planned.classes:
        if not isinstance(entry.answer, Plan):
            sys.stdout.write(f"== class {printable(entry.machine_class.name)}: nothing written\n")
            sys.stdout.write(terminal(render_answer(entry.answer, planned.request)))
    write_files(output, files)
    for path, (text, summary) in locks.items():
        write_atomically(output / path, text)
        print(f"wrote {output / path} ({summary})", file=sys.stderr)
    if args.format == "dockerfile" and args.no_lock:
        for entry in images:
            _say_how_to_lock(entry, output, args)
    return planned.exit_code


def write_files(output: Path, files: dict[str, str]) -> None:
    """Each file under `output`, its folders made first."""
    for relative, text in files.items():
        path = output / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise EnvpinInputError(f"-o {output}: cannot make {path.parent} ({error.strerror})") from None
        write_atomically(path, text)
        print(f"wrote {path}", file=sys.stderr)


def _say_how_to_lock(entry, output: Path, args: argparse.Namespace) -> None:
    """`--no-lock`: the command that locks the image, to run before building it."""
    image = entry.image
    folder = output / image.name
    if base_image(image.plan, image.classes[0]).route == CONDA:
        from envpin.conda.virtual import DEFAULT_GLIBC  # noqa: PLC0415 - for conda images only

        words = ["envpin", "conda", "lock", str(folder / "environment.yml"), "--facts", str(folder / "facts.json"),
                 "--glibc", DEFAULT_GLIBC, "-o", str(folder / "conda-lock.yml")]
        words += (["--channels", args.channels] if args.channels else []) + [
            word for channel in args.channel for word in ("--channel", channel)]
    else:
        words = ["envpin", "lock", "--facts", str(folder / "facts.json"), "-o", str(folder / "pylock.toml")]
        for framework in args.framework:
            words += ["--framework", framework]
        for spec in args.spec:
            words += ["--spec", spec]
    print(f"envpin: note: lock image {printable(image.name)} before building: {printable(shlex.join(words))}",
          file=sys.stderr)
