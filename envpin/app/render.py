"""One answer in the format asked for: the dispatch every command that prints or writes a plan shares."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import hidden
from envpin.base.record import Record, record
from envpin.emit.formats import format_for_path
from envpin.resolver.plan import RESOLVED, Plan, Unsatisfiable
from envpin.resolver.request import CHANNELS, PIP, Request
from envpin.resolver.urls import redact_credentials

if TYPE_CHECKING:
    from envpin.compat.model import Database
    from envpin.readers.project import Project

FORMATS = ("text", "json", "environment.yml", "requirements.txt", "pylock.toml", "uv.lock", "index-url", "pip", "uv")
CONDA_SOURCES = CHANNELS  # --conda-source: a solve option (Request.channel); these formats can show a conda plan
CONDA_FORMATS = ("environment.yml", "text", "json")


@record
class RenderOptions(Record):
    format: str = "text"
    output: str | None = None  # the file written, named in its own regenerate line
    name: str = "envpin"  # environment.yml's `name:`

    @classmethod
    def for_output(cls, chosen: str | None, output: str | None, **rest) -> RenderOptions:
        """The format chosen, else the one the output file's name implies, else text."""
        return cls(format=chosen or format_for_path(output), output=output, **rest)


def check_conda_format(channel: str, output_format: str) -> None:
    """A plan of conda builds is written as an environment.yml (or shown as text or JSON); the others are pip's."""
    if channel != PIP and output_format not in CONDA_FORMATS:
        raise EnvpinInputError("--conda-source is for environment.yml or JSON output (--format environment.yml, "
                               "-o *.yml or --format json); "
                               f"{output_format} is a pip format")


def _conda_json(plan: Plan, request: Request, database: Database, project: Project | None) -> dict[str, object]:
    """The environment a conda plan makes, as the environment.yml says it (docs/contracts.md)."""
    from envpin.conda.specs import conda_environment  # noqa: PLC0415 - the conda model, for conda plans only

    environment = conda_environment(plan, database, request.channel, request.policy, project)
    return {"strategy": environment.strategy, "channels": list(environment.channels),
            "dependencies": list(environment.dependencies), "pip": list(environment.pip),
            "reasons": list(environment.reasons),
            "warnings": [w for w in environment.warnings if w not in plan.warnings]}  # the plan's are said above


def render_text(answer: Plan | Unsatisfiable, request: Request, project: Project | None = None) -> str:
    """`--format text`: a pip plan's table, or a conda plan's match specs and conda command (conda renders its own).
    A resolved plan's `install:` command is the resolution's (`--format pip`), so that copying it installs the
    environment uv proved, not the plan's pins for pip to resolve again."""
    if isinstance(answer, Plan) and answer.channel != PIP:
        from envpin.conda.render import render_text as conda_text  # noqa: PLC0415 - the conda model, conda plans only

        return conda_text(answer, request)
    from envpin.emit import text  # noqa: PLC0415

    install = None
    if isinstance(answer, Plan) and answer.resolution is not None and answer.resolution.status == RESOLVED:
        from envpin.app import resolved  # noqa: PLC0415 - the resolution's formats, for --resolve only

        document = resolved.resolved_document(answer)
        install = resolved.install_command("pip", document, project) if document is not None else None
    return text.render(answer, request, install=install)


COMMAND_FORMATS = ("index-url", "pip", "uv")  # what the user runs now: the index's credentials must stay in


def render(answer: Plan | Unsatisfiable, request: Request, options: RenderOptions, database: Database,
           project: Project | None = None, source_args: tuple[str, ...] | None = None) -> str:
    """The answer in `options.format`. Every format but a command to run now has the index URLs' credentials
    redacted (`https://user:****@…`): files get committed and printed plans get pasted into issues."""
    text = hidden(_render(answer, request, options, database, project, source_args))  # a ${NAME}'s value, as ${NAME}
    return text if options.format in COMMAND_FORMATS else redact_credentials(text)


def _render(answer: Plan | Unsatisfiable, request: Request, options: RenderOptions, database: Database,
            project: Project | None, source_args: tuple[str, ...] | None) -> str:
    # Each format imports its own emitter: a run prints one format, and the conda one brings the conda model.
    check_conda_format(request.channel, options.format)
    if options.format == "json":
        from envpin.emit.common import answer_json  # noqa: PLC0415

        document = answer_json(answer)
        if request.channel != PIP and isinstance(answer, Plan):
            document["conda"] = _conda_json(answer, request, database, project)
        return json.dumps(document, indent=2) + "\n"
    if options.format == "text" or isinstance(answer, Unsatisfiable):
        return render_text(answer, request, project)
    if request.channel != PIP:
        from envpin.conda import render as conda_env  # noqa: PLC0415
        from envpin.conda.specs import conda_environment  # noqa: PLC0415

        environment = conda_environment(answer, database, request.channel, request.policy, project)
        return conda_env.render(environment, answer, request, options.output, name=options.name, source_args=source_args)
    if options.format == "uv.lock":  # two files, written by `solve -o` (envpin.app.uv_project), never one text
        raise EnvpinInputError("a uv.lock is written with its pyproject.toml: give -o DIR/uv.lock")
    if options.format == "pylock.toml":
        from envpin.app import resolved  # noqa: PLC0415 - the resolution's formats, for --resolve only

        return resolved.pylock(answer, request, options.output, source_args)
    resolution: dict[str, Any] | None = None
    if options.format != "pylock.toml" and answer.resolution is not None:
        from envpin.app import resolved  # noqa: PLC0415 - as above

        resolution = resolved.resolved_document(answer)  # what uv resolved is written, not the lines as written
    if options.format == "environment.yml":
        from envpin.emit import environment_yml  # noqa: PLC0415

        words = resolved.resolve_words(answer) if resolution is not None else ()
        return environment_yml.render(answer, request, options.output, name=options.name, project=project,
                                      source_args=source_args, extra=words,
                                      pip=resolved.pip_section(resolution, project) if resolution is not None else None,
                                      conda=answer.resolution.conda if answer.resolution is not None else ())
    if options.format == "requirements.txt":
        if resolution is not None:
            return resolved.requirements(answer, resolution, request, options.output, project, source_args)
        from envpin.emit import requirements  # noqa: PLC0415

        return requirements.render(answer, request, options.output, project=project, source_args=source_args)
    if resolution is not None and options.format in resolved.COMMANDS:
        return resolved.install_command(options.format, resolution, project) + "\n"
    if resolution is not None and options.format == "index-url":
        return "\n".join(resolved.index_urls(resolution)) + "\n"
    from envpin.emit import commands  # noqa: PLC0415

    if options.format == "index-url":
        return commands.index_url(answer) + "\n"
    if options.format == "pip":
        return commands.pip_command(answer) + "\n"
    return commands.uv_command(answer) + "\n"
