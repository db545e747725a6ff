"""Slurm: the nodes from `sinfo`, each node's facts from `envpin detect` run on it through `srun`, and per
machine class a plain sbatch script that installs the class's lock and verifies it on every node.

envpin only writes and submits what a user could type: `sinfo` lists the nodes and partitions, one `srun`
step per partition runs one `envpin detect` task per node (`--ntasks-per-node=1`), and `sbatch` takes the
scripts written out under the output folder, where a user can read and resubmit them. Each task writes its
document to a folder as NODE.json itself (`--node-report-dir`, envpin.fleet.node_report), named after the Slurm
node it runs on: the node facts for `fleet detect`, the verify reports for `envpin fleet status --reports`.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from envpin import __version__
from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import has_control, printable, shown
from envpin.base.record import Record, record
from envpin.base.userfiles import read_json
from envpin.fleet.names import checked_slurm_name
from envpin.fleet.nodes import MachineClass
from envpin.host.runner import CommandTimeout, SubprocessRunner
from envpin.resolver.plan import Plan


@record
class SlurmNode(Record):
    name: str
    partitions: tuple[str, ...]  # in sinfo's order; the first names the node's class


def _run(argv: Sequence[str], timeout: float) -> str:
    if shutil.which(argv[0]) is None:
        raise EnvpinInputError(f"{argv[0]} not found on PATH: --slurm runs on a Slurm login node (or one that has "
                               "the Slurm client commands)")
    try:
        result = SubprocessRunner().run(argv, timeout)
    except CommandTimeout:
        raise EnvpinInputError(f"{shlex.join(argv)} did not finish within {timeout:g} s (--timeout)") from None
    except OSError as error:
        raise EnvpinInputError(f"{argv[0]}: cannot run it ({error})") from None
    if result.returncode != 0:
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()
        raise EnvpinInputError(f"{shlex.join(argv)} failed (exit status {result.returncode})"
                               + (f": {said[-1]}" if said else ""))
    return result.stdout


def list_nodes(partitions: Sequence[str], timeout: float) -> list[SlurmNode]:
    """Every node of the partitions (all partitions when none is named), once, with the partitions it is in."""
    argv = ["sinfo", "--noheader", "--Node", "--format=%N|%P"]
    if partitions:
        argv.append(f"--partition={','.join(partitions)}")
    found: dict[str, list[str]] = {}
    for line in _run(argv, timeout).splitlines():
        name, _, partition = line.strip().partition("|")
        if name and partition:
            checked_slurm_name(name, "sinfo lists node")
            # sinfo marks the default partition with *; the partition names a folder of the work directory too
            found.setdefault(name, []).append(checked_slurm_name(partition.rstrip("*"), "sinfo lists partition"))
    if not found:
        raise EnvpinInputError("sinfo lists no nodes" + (f" in partition {', '.join(partitions)}" if partitions else ""))
    return [SlurmNode(name, tuple(parts)) for name, parts in found.items()]


def detect_facts(nodes: list[SlurmNode], envpin: Sequence[str], workdir: Path, timeout: float) -> list[dict]:
    """The fleet facts: `envpin detect` of every node, one srun step per partition, plus the
    node's name, partition and partitions."""
    by_partition: dict[str, list[SlurmNode]] = {}
    for node in nodes:
        by_partition.setdefault(node.partitions[0], []).append(node)
    documents = []
    for partition, members in by_partition.items():
        outputs = workdir / partition
        outputs.mkdir(parents=True, exist_ok=True)
        _run(["srun", f"--partition={partition}", f"--nodes={len(members)}", "--ntasks-per-node=1",
              f"--nodelist={','.join(n.name for n in members)}", "--job-name=envpin-detect", *envpin, "detect",
              "--node-report-dir", str(outputs)], timeout)
        for node in members:
            path = outputs / f"{node.name}.json"
            if not path.is_file():
                written = ", ".join(sorted(p.name for p in outputs.iterdir())) or "nothing"
                raise EnvpinInputError(f"envpin detect on node {node.name} wrote no {path.name} in {outputs} (the tasks "
                                       f"wrote: {written}); is the folder on storage the nodes share?")
            document = read_json(path, f"the facts of node {node.name}")
            if not isinstance(document, dict):
                raise EnvpinInputError(f"envpin detect on node {node.name} printed no facts document")
            documents.append({"name": node.name, "partition": partition, "partitions": list(node.partitions),
                              **document})
    return documents


@record
class ClassFiles(Record):
    """Where a class's files go under the output folder."""

    folder: Path  # OUTPUT/CLASS: facts.json, pylock.toml, provision.sbatch, provision-<job>.out
    reports: Path  # OUTPUT/reports: NODE.json, one verify report per node

    @property
    def script(self) -> Path:
        return self.folder / "provision.sbatch"

    @property
    def lock(self) -> Path:
        return self.folder / "pylock.toml"


def check_slurm_names(machine_class: MachineClass) -> None:
    """The class's node and partition names, which its sbatch script writes out (envpin.fleet.names)."""
    for name in machine_class.node_names:
        checked_slurm_name(name, f"class {machine_class.name}: node")
    if machine_class.group:
        checked_slurm_name(machine_class.group, f"class {machine_class.name}: partition")


def provision_script(machine_class: MachineClass, plan: Plan, files: ClassFiles, prefix: str,
                     envpin: Sequence[str], node_local: bool) -> str:
    """One batch job for the class: install the lock at `prefix` (once, on the job's first node, when the prefix
    is on shared storage; on every node with `node_local`), then `envpin verify` on every node of the class."""
    check_slurm_names(machine_class)
    count = len(machine_class.nodes)
    step = f"srun --nodes={count} --ntasks-per-node=1"
    quoted = shlex.quote
    install = f'"${{envpin[@]}}" install --quiet --prefix "$prefix" --lock {quoted(str(files.lock))}'
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name=envpin-{machine_class.name}",
        *([f"#SBATCH --partition={machine_class.group}"] if machine_class.group else []),
        f"#SBATCH --nodes={count}",
        f"#SBATCH --nodelist={','.join(machine_class.node_names)}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --output={sbatch_path(files.folder)}/provision-%j.out",
        f"# Written by envpin {__version__} (database {plan.db_version}) for machine class {machine_class.name}:",
        f"# nodes {', '.join(machine_class.node_names)}.",
        printable(f"# The environment: {' '.join(p.requirement for p in plan.packages)} ({plan.accelerator}), locked in"),
        printable(f"# {files.lock}. Resubmit with: sbatch {quoted(str(files.script))}"),
        *[f"# Differs: {printable(text)}" for text in machine_class.differences],
        "set -u",
        f"envpin=({' '.join(quoted(word) for word in envpin)})",
        f"prefix={quoted(prefix)}",
    ]
    if node_local:
        lines += ["# node-local: every node installs its own copy", f"{step} {install} || exit $?"]
    else:
        lines += ["# shared storage: installed once, seen by every node", f"{install} || exit $?"]
    lines += [
        f"mkdir -p {quoted(str(files.reports))}",
        "# each node's verify report: NODE.json (envpin fleet status --reports reads them)",
        f'{step} "${{envpin[@]}}" verify --prefix "$prefix" --node-report-dir {quoted(str(files.reports))}',
    ]
    return "\n".join(lines) + "\n"


def sbatch_path(folder: Path) -> str:
    """The output folder in an `#SBATCH --output=` line, which sbatch reads up to the first space or line break."""
    text = str(folder)
    if has_control(text) or any(c.isspace() for c in text):
        raise EnvpinInputError(f"-o {shown(text, 80)!r}: sbatch cannot take an output folder with a space or control "
                               "character in its path (#SBATCH --output)")
    return text


def submit(script: Path, timeout: float) -> str:
    """sbatch the script; the job id."""
    return _run(["sbatch", "--parsable", str(script)], timeout).strip().split(";")[0]


def facts_document(documents: list[dict]) -> str:
    return json.dumps({"targets": documents}, indent=2) + "\n"
