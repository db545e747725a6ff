"""conda-native output: an environment.yml for a channel strategy (`--conda-source conda-forge|pytorch-channel`),
its `--format text` plan, and the `virtual-packages.yml` conda-lock reads instead of its defaults (which assume `__cuda` 11.4)."""

from __future__ import annotations

import json
import shlex

from envpin.base.escapes import printable
from envpin.base.record import replace
from envpin.conda.specs import CondaEnvironment, conda_environment
from envpin.conda.virtual import VirtualPackage, conda_lock_spec
from envpin.emit.common import file_header
from envpin.emit.environment_yml import _scalar
from envpin.emit.text import head, resolution_lines, warning_lines
from envpin.resolver.plan import RESOLVED, Plan
from envpin.resolver.request import Request


def render(
    environment: CondaEnvironment,
    plan: Plan,
    request: Request,
    output: str | None = None,
    name: str = "envpin",
    source_args: tuple[str, ...] | None = None,
) -> str:
    """The environment.yml: envpin's header (its regenerate command names the strategy), why each conda pin is what
    it is and what is unverified, then name, channels, dependencies and a `pip:` section when there is one. Where
    rattler solved it end to end (`solve --resolve`), the dependencies are the solved records, `name=version=build`."""
    again: tuple[str, ...] = ()
    resolution = plan.resolution
    if resolution is not None and resolution.status == RESOLVED and resolution.conda:
        environment, again = replace(environment, dependencies=resolution.conda), resolution.again
    lines = [f"# {line}" for line in _header(plan, request, output, source_args, environment.strategy, name, again)]
    lines += [f"# {printable(text)}" for text in (*environment.reasons, *environment.warnings)]
    lines += [f"name: {_scalar(name)}", "channels:"]
    lines += [f"  - {_scalar(channel)}" for channel in environment.channels]
    lines += ["dependencies:"]
    lines += [f"  - {_scalar(spec)}" for spec in environment.dependencies]
    if environment.pip:
        lines += ["  - pip:"]
        lines += [f"      - {_scalar(line)}" for line in environment.pip]
    return "\n".join(lines) + "\n"


def render_text(answer: Plan, request: Request) -> str:
    """A plan of conda builds: its match specs, the conda command that makes the environment, and why."""
    lines = head(answer)
    environment = conda_environment(answer, None, answer.channel, request.policy)
    lines += [f"  {spec}" for spec in environment.dependencies]
    accelerators = answer.accelerators or {}
    accelerator = ", ".join(f"{f} {a}" for f, a in accelerators.items()) if len(accelerators) > 1 else answer.accelerator
    channels = [word for channel in environment.channels for word in ("-c", channel)]
    command = shlex.join(["conda", "create", "-n", "envpin", "--override-channels", *channels, *environment.dependencies])
    lines += ["", f"accelerator: {accelerator} ({answer.channel} builds)", "", "install:", f"  {command}", "", "why:"]
    lines += [f"  - {printable(reason)}" for reason in (*answer.reasons, *environment.reasons)]  # one line each
    lines += warning_lines(answer.warnings)
    lines += resolution_lines(answer)
    return "\n".join(lines) + "\n"


def _header(plan: Plan, request: Request, output: str | None, source_args, strategy: str, name: str,
            again: tuple[str, ...] = ()) -> list[str]:
    return file_header(plan, request, output, source_args, "environment.yml", name,
                       extra=("--conda-source", strategy, *again))


def render_virtual_packages(packages: tuple[VirtualPackage, ...], subdir: str, header: list[str]) -> str:
    """conda-lock's `--virtual-package-spec` file for one subdir, from the target's virtual packages."""
    document = conda_lock_spec(packages, subdir)
    lines = [f"# {line}" for line in header]
    lines += [
        "# conda-lock: `conda-lock lock --virtual-package-spec virtual-packages.yml -p " + subdir + " -f environment.yml`",
        "# (it also reads a virtual-packages.yml in the current directory).",
        "subdirs:",
    ]
    for name, spec in document["subdirs"].items():
        lines += [f"  {name}:", "    packages:"]
        lines += [f"      {package}: {json.dumps(version)}" for package, version in spec["packages"].items()]
    return "\n".join(lines) + "\n"
