"""The file formats of a plan whose whole environment was resolved (`solve --resolve`): the resolution written, not
the project's lines as written.

uv's resolution, completed as `envpin lock` completes it (envpin.lock.make.lock_document), rides on the plan
(Resolution.lock). A requirements file then pins every package with the sha256 of each of its files, so that
`pip install -r` installs that environment and nothing else; a pylock.toml is the PEP 751 document itself; an
environment.yml's pip section pins every package (conda passes it to pip as a requirements file), and where
rattler solved the conda part, its dependencies are the solved records. A plan that was not resolved end to end
keeps the project's lines as written (the command says why beside the file), and has no pylock.toml to write.
The `pip` and `uv` commands install the same set as the requirements file (every package pinned, the same index
options; a command line carries no hashes), and `index-url` prints the indexes it was resolved from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envpin.base.errors import EnvpinError
from envpin.emit.common import file_header
from envpin.lock.export import index_options, package_lines, pinned
from envpin.resolver.plan import Plan
from envpin.resolver.request import Request

RESOLVED_FORMATS = ("requirements.txt", "pylock.toml", "environment.yml", "pip", "uv", "index-url")  # write a resolution
COMMANDS = ("pip", "uv")  # the install commands a resolution prints


class NotResolvedEndToEnd(EnvpinError):
    """A pylock.toml was asked for, and uv did not resolve the environment (offline, an index that did not
    answer): there is no lock to write (exit 1, as for an answer that cannot be given)."""

    exit_code = 1


def resolved_document(plan: Plan) -> dict[str, Any] | None:
    """The plan's resolution as a PEP 751 document, or None where it carries none."""
    if plan.resolution is None or not plan.resolution.lock:
        return None
    from envpin.base import _toml  # noqa: PLC0415 - only a resolved plan reads TOML

    return _toml.loads(plan.resolution.lock)


def resolve_words(plan: Plan) -> tuple[str, ...]:
    """What a regenerate line adds so that it resolves again, from the same index and channels."""
    return plan.resolution.again if plan.resolution is not None else ()


def pylock(plan: Plan, request: Request, output: str | None, source_args: tuple[str, ...] | None) -> str:
    from envpin.lock.pylock import render  # noqa: PLC0415 - tomli_w, for this format only

    document = resolved_document(plan)
    if document is None:
        why = plan.resolution.detail if plan.resolution is not None else "not asked"
        raise NotResolvedEndToEnd(f"no pylock.toml to write: the environment was not resolved end to end ({why})")
    header = file_header(plan, request, output, source_args, "pylock.toml", extra=resolve_words(plan))
    document["tool"]["envpin"]["regenerate"] = header[-1].removeprefix("Regenerate: ")
    return render(document, header)


def requirements(plan: Plan, document: Mapping[str, Any], request: Request, output: str | None, project,
                 source_args: tuple[str, ...] | None) -> str:
    """Every package pinned, each with the sha256 of its files (pip's hash-checking mode). A project line a lock
    cannot hold (`-e .`, a URL) is kept as written, and then no line has hashes: pip refuses such a line in
    hash-checking mode."""
    from envpin.emit.requirements import outside_pip  # noqa: PLC0415 - the pip file's own preamble

    header = file_header(plan, request, output, source_args, "requirements.txt", extra=resolve_words(plan))
    kept = list(project.other_lines) if project is not None else []
    lines = [f"# {line}" for line in header + outside_pip(plan, project)]
    locker = document.get("tool", {}).get("envpin", {}).get("locker", "the resolver")
    lines.append(f"# Resolved by {locker}: {len(document['packages'])} packages, each pinned"
                 + ("" if kept else " with the sha256 of its files"))
    lines += index_options(document)
    lines += package_lines(document, hashes=not kept)
    if kept:
        lines.append("# as written (pip's hash-checking mode refuses these lines, so no line above has hashes):")
        lines += kept
    return "\n".join(line for line in lines if line) + "\n"


def install_command(tool: str, document: Mapping[str, Any], project) -> str:
    """`pip install` (or `uv pip install`) of every package of the resolution, with the requirements file's index
    options, then the lines a lock cannot hold, as written. With more than one index, uv is told to take the best
    version from any of them, as pip does and as the requirements file is read (uv's default takes a package from
    the first index that has it: https://docs.astral.sh/uv/pip/compatibility/#packages-that-exist-on-multiple-indexes),
    so a numpy pin the PyTorch index also lists is still found where uv resolved it."""
    import shlex  # noqa: PLC0415 - a command format only

    words = ["pip", "install"] if tool == "pip" else ["uv", "pip", "install"]
    words += [pinned(p) for p in document["packages"]]
    for line in list(project.other_lines) if project is not None else []:
        option, _, value = line.partition(" ")  # `-e ./lib`: an option and its value; a path or URL: one word
        words += [option, value.strip()] if option.startswith("-") and value.strip() else [line]
    options = [word for option in index_options(document) for word in option.split(" ", 1)]
    if tool == "uv" and options.count("--extra-index-url"):
        options += ["--index-strategy", "unsafe-best-match"]
    return shlex.join(words + options)


def index_urls(document: Mapping[str, Any]) -> list[str]:
    """The indexes the resolution installs from, one a line: the default index first, then the extra ones."""
    return [option.split(" ", 1)[1] for option in index_options(document)]


def pip_section(document: Mapping[str, Any], project) -> list[str]:
    """An environment.yml's pip section: the index options and every package pinned, then the lines a lock cannot
    hold, as written."""
    pins = [pinned(p) for p in document["packages"]]
    return index_options(document) + pins + (list(project.other_lines) if project is not None else [])


def hashed(document: Mapping[str, Any], project) -> bool:
    """Whether the requirements file of this resolution carries hashes."""
    return not (project is not None and project.other_lines) and bool(document["packages"])
