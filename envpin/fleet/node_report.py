"""A node's own report file: `envpin detect` or `envpin verify` run as one task per node writes its JSON document
to DIR/NODE.json (`--node-report-dir DIR`), where `envpin fleet detect` and `envpin fleet status --reports` read it.

The task names the file itself, from the node it runs on, rather than leaving it to the job's output pattern:
Slurm's `%N` in `srun --output` is the node's short host name, which is not always its Slurm node name (a node
whose NodeName differs from its host name, or several slurmd on one host). slurmd sets `SLURMD_NODENAME`, the
name of the node running the task, in every task's environment (srun(1), "OUTPUT ENVIRONMENT VARIABLES").
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path

from envpin.base.errors import EnvpinInputError
from envpin.base.userfiles import write_atomically

SLURM_NODE_VARIABLE = "SLURMD_NODENAME"


def node_name(environ: Mapping[str, str] | None = None) -> str:
    """The Slurm node this runs on, else this machine's short host name."""
    environ = os.environ if environ is None else environ
    name = environ.get(SLURM_NODE_VARIABLE) or socket.gethostname().split(".")[0]
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise EnvpinInputError(f"--node-report-dir: {name!r} cannot name a report file ({SLURM_NODE_VARIABLE} or the "
                               "host name)")
    return name


def write_node_report(directory: str, text: str, environ: Mapping[str, str] | None = None) -> Path:
    """DIR/NODE.json, written whole or not at all."""
    folder = Path(directory)
    if not folder.is_dir():
        raise EnvpinInputError(f"--node-report-dir {directory}: not a folder")
    path = folder / f"{node_name(environ)}.json"
    write_atomically(path, text, "--node-report-dir")
    return path
