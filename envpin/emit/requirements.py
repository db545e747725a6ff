"""`--format requirements.txt`: pins with the index line, for `pip install -r`."""

from __future__ import annotations

import shlex

from envpin.base.escapes import printable
from envpin.emit.common import file_header, pip_lines
from envpin.resolver.plan import Plan
from envpin.resolver.request import Request


def render(
    plan: Plan, request: Request, output: str | None = None, project=None, source_args: tuple[str, ...] | None = None
) -> str:
    # --extra-index-url, not --index-url: the file may hold other requirements that live on PyPI, and the
    # full local versions (2.5.1+cu124) exist only on the PyTorch index, so no other build can satisfy them.
    lines = [f"# {line}" for line in file_header(plan, request, output, source_args, "requirements.txt")]
    # a conda package's name comes from the project's file: escaped, so a line break in it starts no pip line
    lines += [f"# {printable(line)}" for line in outside_pip(plan, project)]
    lines += pip_lines(plan, project)
    return "\n".join(lines) + "\n"


def outside_pip(plan: Plan, project=None) -> list[str]:
    """What the environment needs that pip cannot install, said at the top of the file instead of dropped: the
    plan's steps outside pip (TensorFlow ≤ 2.10's conda cudatoolkit and cuDNN on native Windows) and the
    project's conda packages."""
    steps = [note.removeprefix("before pip: ") for note in plan.notes]
    conda = list(project.conda_packages) if project is not None else []
    if not steps and not conda:
        return []
    lines = ["Before `pip install -r` this file, steps pip cannot take:"]
    lines += [f"  {step}" for step in steps]
    if conda:
        channels = " ".join(f"-c {shlex.quote(c)}" for c in project.channels) or "-c conda-forge"
        lines.append(f"  conda install {channels} " + " ".join(_shell_word(p) for p in conda))
    return lines


def _shell_word(spec: str) -> str:
    """A conda spec as one shell word: quoted where a shell would split or glob it (`'numpy=1.23.1'`, quoted though a
    shell would not need it, so the reader sees one word), and by shlex where it holds a quote of its own."""
    if "'" not in spec and any(c in spec for c in "<>=* "):
        return f"'{spec}'"
    return shlex.quote(spec)
