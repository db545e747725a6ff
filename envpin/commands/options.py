"""The command-line options commands share, each declared once, and the frozen values they become.

A command adds the groups it takes (`add_target_options(parser)` …) and, after parsing, builds its values
once (`target_spec(args)`, `solve_options(args)` …). Nothing is written back onto the argparse Namespace:
from here on the library sees TargetSpec, SolveOptions, RenderOptions, LockOptions and Channels only.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from envpin.base.errors import EnvpinInputError
from envpin.machine.spec import TargetSpec

# Each command imports only the values of the options it takes: `envpin check` never plans a solve, renders one,
# locks or builds conda channels (the solve imports resolvelib, a lock its engines), so those modules are imported
# by the functions that build their values (measured on a 30-line requirements check, docs/performance.md).
if TYPE_CHECKING:
    from envpin.app.planning import SolveOptions
    from envpin.app.render import RenderOptions
    from envpin.conda.channels import Channels
    from envpin.lock.options import LockOptions, ResolveOptions

# ---------------------------------------------------------------- the target


def add_target_options(parser: argparse.ArgumentParser, conda: bool = False, facts: bool = True) -> None:
    """The target: flags override --facts, which overrides detection. `conda`: also the facts only a conda
    solve needs (the glibc and macOS versions behind __glibc and __osx). `facts`: also --facts (doctor declares
    its own, which holds an environment's facts as well as the machine's)."""
    group = parser.add_argument_group("target (default: this machine)")
    group.add_argument("--os", help="linux, windows or macos")
    group.add_argument("--arch", help="x86_64, aarch64 or arm64")
    group.add_argument("--driver", help="NVIDIA driver version, or 'none'")
    group.add_argument("--wsl", action="store_true", default=None,
                       help="Linux under WSL2: the driver is the Windows one and is judged by NVIDIA's Windows minimums")
    group.add_argument("--gpu", action="append", default=[],
                       help="GPU name of any vendor as its tool prints it (nvidia-smi, amd-smi, rocminfo, xpu-smi; "
                            "repeatable)")
    group.add_argument("--compute-capability", action="append", default=[], help="NVIDIA: X.Y (repeatable)")
    group.add_argument("--gfx", action="append", default=[], help="AMD: the GPU's target, gfxNNNN (repeatable)")
    group.add_argument("--amdgpu-driver", help="AMD: the kernel driver release (6.4, 30.10), as AMD's matrix names it, or "
                            "its amdgpu-dkms version (1:6.12.12.60401-2164967.24.04, 6.12.12)")
    group.add_argument("--rocm", help="AMD: the ROCm user space installed (/opt/rocm/.info/version)")
    group.add_argument("--jetpack", help="NVIDIA Jetson: the JetPack (6.1) or the L4T release (r36.4.0, "
                            "/etc/nv_tegra_release), the Jetson's driver")
    group.add_argument("--python", help="Python version, e.g. 3.11 (3.13t: the free-threaded build)")
    if facts:
        group.add_argument("--facts", help="a file from `envpin detect --format json` taken on the target")
    group.add_argument("--glibc", help="Linux: the target's glibc version, X.Y (`ldd --version`); a wheel tagged for a "
                                       "newer glibc does not install there (also __glibc of a conda target)")
    if conda:
        group.add_argument("--macos", "--macos-version", dest="macos",
                           help="Apple: the macOS version, X.Y (also __osx of a conda target)")
    else:
        group.add_argument("--macos", help="Apple: the macOS version, X.Y")


def target_spec(args: argparse.Namespace, conda: bool = False) -> TargetSpec:
    """`conda`: the parser was given the conda facts too (add_target_options(parser, conda=True))."""
    return TargetSpec(
        os=args.os,
        arch=args.arch,
        driver=args.driver,
        wsl=args.wsl,
        gpus=tuple(args.gpu),
        compute_capabilities=tuple(args.compute_capability),
        python=args.python,
        gfx=tuple(args.gfx),
        amdgpu_driver=args.amdgpu_driver,
        rocm=args.rocm,
        macos=args.macos,
        jetpack=args.jetpack,
        facts_file=args.facts,
        glibc=args.glibc,
        macos_version=args.macos if conda else None,
    )


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="use the compatibility database in this directory (or ENVPIN_DB)")


# ---------------------------------------------------------------- what to solve


def add_request_options(parser: argparse.ArgumentParser, requirements: bool = True) -> None:
    """Frameworks, requirements on them, and how to judge the driver and the index. `requirements`: also take
    requirements as arguments, as pip and uv do (`envpin solve torch==2.5.1 torchvision`)."""
    if requirements:
        parser.add_argument("requirements", nargs="*", metavar="REQUIREMENT",
                            help="PEP 508 requirements on the GPU packages, e.g. torch==2.5.1 torchvision")
    parser.add_argument("--framework", action="append", default=[], help="torch, tensorflow or jax (repeatable)")
    parser.add_argument("--spec", action="append", default=[],
                        help="a PEP 508 requirement, e.g. 'torch>=2.4' (repeatable; or give requirements as arguments)")
    add_driver_policy_option(parser)
    parser.add_argument("--torch-index-url", help="base URL of the PyTorch index (or ENVPIN_TORCH_INDEX_URL)")
    parser.add_argument("--allow-insecure-index", action="store_true",
                        help="accept a plain-http index URL on a remote host (with a warning)")


def add_driver_policy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--driver-policy", default="minor", help="minor (default) or strict")


def add_fleet_option(parser: argparse.ArgumentParser, each: str = "one answer per distinct result") -> None:
    """`--targets FILE`, read by envpin.fleet.inventory.read_inventory; `each` says what the command makes of the machines."""
    parser.add_argument("--targets", metavar="FILE",
                        help=f"a fleet inventory: JSON list of facts documents (each may have a \"name\"); {each}")


def add_project_options(parser: argparse.ArgumentParser, directory: bool = True) -> None:
    """A repository's requirements. `directory`: also --project DIR and -r FILE (init takes the directory as
    its argument)."""
    if directory:
        parser.add_argument("--project", nargs="?", const=".", metavar="DIR",
                            help="a repository's requirements: its GPU frameworks pinned, the rest kept (default: .)")
        parser.add_argument("-r", "--requirement", action="append", default=[], metavar="FILE",
                            help="a requirements file of the project (repeatable)")
    parser.add_argument("--allow-outside-repo", action="store_true",
                        help="read the files a requirements file includes (-r, -c) also where they lie outside its "
                        "git repository (default: refused; docs/hardening.md)")
    parser.add_argument("--extra", action="append", default=[], help="a pyproject optional-dependencies group (repeatable)")
    parser.add_argument("--group", action="append", default=[], help="a PEP 735 dependency group (repeatable)")


def add_resolve_options(parser: argparse.ArgumentParser) -> None:
    """`solve --project --resolve`: the whole environment resolved by uv (docs/resolution.md)."""
    parser.add_argument("--resolve", action="store_true",
                        help="with --project: resolve the project's lines beside the GPU pins with uv (asks the "
                             "index; moves to an older framework build where a line rules the newest out)")
    parser.add_argument("--offline", action="store_true", help="with --resolve: from uv's cache only (uv --offline)")
    parser.add_argument("--index-url", help="with --resolve: the default index, PyPI or a mirror of it (or "
                                            "ENVPIN_INDEX_URL)")
    parser.add_argument("--channels", metavar="DIR", help="with --resolve: a folder with one local conda channel per "
                        "channel name, for an environment.yml's conda part (default: the file's channels)")
    parser.add_argument("--channel", action="append", default=[], metavar="NAME=LOCATION",
                        help="with --resolve: where one conda channel of the environment.yml is (a folder or URL); "
                             "repeatable")
    parser.add_argument("--cache-dir", help="with --resolve: rattler's cache (default: rattler's own)")


def resolve_options(args: argparse.Namespace) -> ResolveOptions | None:
    from envpin.app.planning import checked_index_url  # noqa: PLC0415 - see the note on imports above
    from envpin.lock.options import ResolveOptions  # noqa: PLC0415

    if not hasattr(args, "resolve"):
        return None  # a command without --resolve (lock has its own --index-url)
    if not args.resolve:
        for flag, given in (("--offline", args.offline), ("--index-url", args.index_url), ("--channels", args.channels),
                            ("--channel", args.channel), ("--cache-dir", args.cache_dir)):
            if given:
                raise EnvpinInputError(f"{flag} is for --resolve (the whole environment resolved by uv)")
        return None
    if getattr(args, "project", None) is None and not getattr(args, "requirement", None):
        raise EnvpinInputError("--resolve resolves a project's lines beside the GPU pins: give --project DIR or -r FILE")
    index_url = checked_index_url(args.index_url, "--index-url", args.allow_insecure_index) if args.index_url else None
    if getattr(args, "targets", None):
        raise EnvpinInputError("--resolve is for one target, not a --targets inventory: resolve each machine's plan "
                               "on its own (--facts FILE)")
    return ResolveOptions(index_url=index_url, offline=args.offline, channels=channels(args))


def check_resolve_options(args: argparse.Namespace) -> ResolveOptions | None:
    """`check --resolve`: uv asked about each requirements file's lines; None (the default) keeps the check offline."""
    if not args.resolve:
        for flag, given in (("--offline", args.offline), ("--index-url", args.index_url)):
            if given:
                raise EnvpinInputError(f"{flag} is for --resolve (the file's lines resolved by uv)")
        return None
    from envpin.app.planning import checked_index_url  # noqa: PLC0415 - see the note on imports above
    from envpin.lock.options import ResolveOptions  # noqa: PLC0415

    index_url = checked_index_url(args.index_url, "--index-url", args.allow_insecure_index) if args.index_url else None
    return ResolveOptions(index_url=index_url, offline=args.offline)


def solve_options(args: argparse.Namespace, project_directory: str | None = None, conda_source: str = "pip") -> SolveOptions:
    """The request of add_request_options and add_project_options (both with their defaults). With
    `project_directory` (init: add_request_options(requirements=False), add_project_options(directory=False))
    the project is that directory."""
    from envpin.app.planning import ProjectSource, SolveOptions  # noqa: PLC0415 - see the note on imports above

    if project_directory is None:
        directory, files, requirements = args.project, tuple(args.requirement), tuple(args.requirements)
    else:
        directory, files, requirements = project_directory, (), ()
    project = None
    if directory is not None or files:
        project = ProjectSource(directory, files, tuple(args.extra), tuple(args.group), args.allow_outside_repo)
    return SolveOptions(
        frameworks=tuple(args.framework),
        specs=requirements + tuple(args.spec),
        driver_policy=args.driver_policy,
        torch_index_url=args.torch_index_url,
        allow_insecure_index=args.allow_insecure_index,
        project=project,
        conda_source=conda_source,
        resolve=resolve_options(args) if project_directory is None else None,
    )


# ---------------------------------------------------------------- output


def add_render_options(parser: argparse.ArgumentParser) -> None:
    from envpin.app.render import FORMATS  # noqa: PLC0415 - see the note on imports above

    parser.add_argument("--format", choices=FORMATS, help="output format (default: text, or from -o)")
    parser.add_argument("-o", "--output", help="write to FILE, or - for stdout; the format follows the file name")
    parser.add_argument("--name", default="envpin", help="environment name in environment.yml")
    add_conda_source_option(parser, "a conda source is solved and written as environment.yml")


def add_conda_source_option(parser: argparse.ArgumentParser, then: str) -> None:
    """`--conda-source`: which channel's builds the solve chooses from; `then` says what the command makes of them."""
    from envpin.app.render import CONDA_SOURCES  # noqa: PLC0415 - see the note on imports above

    parser.add_argument("--conda-source", choices=CONDA_SOURCES, default="pip",
                        help="where the builds come from: pip wheels (pip, the default), conda-forge builds, or the "
                             f"pytorch channel (torch <= 2.5.1); {then}")


def render_options(args: argparse.Namespace) -> RenderOptions:
    """The output options; a conda source with an output format that cannot hold conda builds is an input error
    here, before anything is solved."""
    from envpin.app.render import RenderOptions, check_conda_format  # noqa: PLC0415 - see the note on imports above

    rendering = RenderOptions.for_output(args.format, args.output, name=args.name)
    check_conda_format(args.conda_source, rendering.format)
    if rendering.format == "pylock.toml" and not getattr(args, "resolve", False):
        raise EnvpinInputError("a pylock.toml is a resolution of the whole environment: add --resolve (with --project "
                               "DIR or -r FILE), or write it with `envpin lock`")
    if rendering.format == "uv.lock":  # where it goes, and that it can be written, before anything is solved
        from envpin.app.uv_project import uv_lock_output  # noqa: PLC0415 - see the note on imports above

        uv_lock_output(args.output, getattr(args, "project", None), getattr(args, "resolve", False))
    return rendering


def add_lock_options(parser: argparse.ArgumentParser) -> None:
    """How a lock is made; `envpin install` takes the same options."""
    parser.add_argument("--index-url", help="the default index: PyPI or a mirror of it (or ENVPIN_INDEX_URL)")
    parser.add_argument("--locker", choices=("uv", "pip"), help="uv (default when installed) or pip >= 25.1")
    parser.add_argument("--lock-timeout", type=seconds, default=900, metavar="S", help="give up locking after S seconds")


def lock_options(args: argparse.Namespace, file_format: str = "pylock") -> LockOptions:
    from envpin.lock.options import LockOptions  # noqa: PLC0415 - see the note on imports above

    return LockOptions(index_url=args.index_url, locker=args.locker, timeout=args.lock_timeout, format=file_format)


# ---------------------------------------------------------------- conda channels


def add_channel_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--channels", metavar="DIR", help="a folder with one local channel per channel name")
    parser.add_argument("--channel", action="append", default=[], metavar="NAME=LOCATION",
                        help="where one channel of the file is (a folder or URL); repeatable")
    parser.add_argument("--cache-dir", help="rattler's cache (default: rattler's own)")


def channels(args: argparse.Namespace) -> Channels:
    from envpin.conda.channels import Channels  # noqa: PLC0415 - see the note on imports above

    return Channels.parse(args.channels, tuple(args.channel), args.cache_dir)


# ---------------------------------------------------------------- probing an environment


def add_probe_options(parser: argparse.ArgumentParser) -> None:
    """Which environment the verify probe runs in, and how: shared by `verify` and `doctor`."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--interpreter", metavar="PATH",
                       help="the environment's interpreter (default: the one running envpin); --python is a version elsewhere")
    where.add_argument("--prefix", metavar="DIR", help="the environment's root directory (a venv or conda env)")
    parser.add_argument("--timeout", type=seconds, default=120.0,
                        help="seconds allowed for each framework's import (default 120); the whole probe gets 3 times "
                             "that plus as much again for the package scan (5 to 60 s)")
    parser.add_argument("--no-smoke", action="store_true", help="skip the small GPU computations of the probe")
    add_db_option(parser)


def add_node_report_option(parser: argparse.ArgumentParser) -> None:
    """`--node-report-dir DIR`: detect and verify as one task per node of a cluster (envpin.fleet.node_report)."""
    parser.add_argument("--node-report-dir", metavar="DIR",
                        help="write the JSON document to DIR/NODE.json, NODE the Slurm node this runs on "
                             "($SLURMD_NODENAME) or else the host name, instead of printing it")


MAX_SECONDS = 7 * 24 * 3600  # a week: longer than any step takes, short enough for every clock and timer (1e300 is not)


def seconds(text: str) -> float:
    """An argparse type for every timeout: a positive, finite number of seconds (not 0, -5, inf or nan), at most
    MAX_SECONDS."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r}: more than a week ({MAX_SECONDS:,} s), the longest timeout envpin takes")
    return value
