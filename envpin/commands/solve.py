"""`envpin solve`: the exact framework builds for a machine, in the format asked for."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envpin.app.database import run_database
from envpin.app.planning import (
    CREDENTIALS_NOTE,
    RESOLVED,
    FleetResult,
    Plan,
    PlannedFleet,
    Unsatisfiable,
    has_credentials,
    plan,
    plan_fleet,
)
from envpin.app.render import RenderOptions, render
from envpin.base.escapes import printable, terminal
from envpin.base.record import replace
from envpin.base.userfiles import write_atomically
from envpin.commands.options import (
    add_db_option,
    add_fleet_option,
    add_project_options,
    add_render_options,
    add_request_options,
    add_resolve_options,
    add_target_options,
    render_options,
    solve_options,
    target_spec,
)
from envpin.emit.common import answer_json


def register(solve: argparse.ArgumentParser, parser_class) -> None:
    add_request_options(solve)
    add_render_options(solve)
    add_project_options(solve)
    add_resolve_options(solve)
    add_fleet_option(solve)
    add_target_options(solve)
    add_db_option(solve)
    solve.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # --conda-source is declared with the output options, but it is where the builds come from: a solve option
    options = solve_options(args, conda_source=args.conda_source)
    spec, rendering = target_spec(args), render_options(args)
    database = run_database(args.db)
    if args.targets:
        return run_fleet(plan_fleet(options, args.targets, spec, database), rendering, database)
    planned = plan(options, spec, database)
    answer = planned.answer
    uv_lock = rendering.format == "uv.lock" and isinstance(answer, Plan)  # two files, by `uv lock`: not one text
    text = "" if uv_lock else render(answer, planned.request, rendering, database, planned.project, planned.source_args)
    if planned.project is not None and isinstance(answer, Plan):
        for note in planned.project.notes:  # what the project's files said that the output changes, and why
            print(f"envpin: note: {printable(note)}", file=sys.stderr)
    if rendering.format == "requirements.txt" and isinstance(answer, Plan):
        _say_what_pip_cannot_take(answer, planned.project)
    if uv_lock:
        _write_uv_lock(planned, rendering, options)
    elif rendering.output and isinstance(answer, Plan):  # planned.ok
        write_atomically(Path(rendering.output), text)
        print(f"wrote {rendering.output} ({answer.packages[0].requirement}, {answer.accelerator})", file=sys.stderr)
        if has_credentials(planned.request.torch_index):
            print(f"envpin: note: {CREDENTIALS_NOTE}", file=sys.stderr)
    else:
        sys.stdout.write(terminal(text))
    if rendering.format not in ("text", "json") and isinstance(answer, Plan) and options.resolve is not None:
        _say_the_resolution(answer, rendering.format, planned.project)
    if rendering.format not in ("text", "json") and isinstance(answer, Plan) and planned.project is not None:
        # what the plan found about the project's own lines (a numpy==2.1, a cuml-cu11): the text and JSON answers
        # carry it, a file format would lose it
        for warning in answer.warnings:
            if warning.startswith(planned.project.files):
                print(f"envpin: warning: {printable(warning)}", file=sys.stderr)
    return planned.exit_code  # 3 for a broken driver (docs/contracts.md)


def _write_uv_lock(planned, rendering: RenderOptions, options) -> None:
    """`-o DIR/uv.lock`: uv's lock and the pyproject.toml it holds with (render_options checked -o, --resolve and
    --project before the solve)."""
    from envpin.app.uv_project import write_uv_lock  # noqa: PLC0415 - uv.lock's writer, for this format only

    answer = planned.answer
    assert isinstance(answer, Plan) and options.resolve is not None and options.project is not None
    written = write_uv_lock(planned, rendering.output, options.resolve, options.project.directory or ".")
    pins = ", ".join(p.requirement for p in answer.packages)
    if written.pyproject is None:
        print(f"wrote {written.lock} ({pins}, {answer.accelerator}): uv's lock of the project's own "
              "pyproject.toml, which already pins and binds them", file=sys.stderr)
    else:
        print(f"wrote {written.lock} ({pins}, {answer.accelerator}) and {written.pyproject}, the project's "
              "pyproject.toml it is locked from (the GPU pins, their indexes and the target added): the lock holds "
              "only beside it, so move both into the project", file=sys.stderr)


def _say_the_resolution(answer: Plan, output_format: str, project) -> None:
    """What uv made of the project's lines is said beside the file: what was passed over, and whether the file holds
    the resolution (requirements.txt, pylock.toml, environment.yml, the pip and uv commands, the indexes) or the
    lines as written (not resolved)."""
    resolution = answer.resolution
    if resolution is None:
        return
    for passed in resolution.passed_over:
        print(f"envpin: note: {printable(passed)}", file=sys.stderr)
    if resolution.status != RESOLVED:
        print(f"envpin: warning: not resolved end to end: {printable(resolution.detail)}", file=sys.stderr)
        return
    from envpin.app import resolved  # noqa: PLC0415 - the resolution's formats, for --resolve only

    document = resolved.resolved_document(answer) if output_format in resolved.RESOLVED_FORMATS else None
    if output_format == "uv.lock":
        written = "; the uv.lock is `uv lock`'s own lock of the project's pyproject.toml with these GPU pins, for " \
            "the target"
    elif resolution.conda and not resolution.lock:  # a plan of conda builds: rattler's records, no pip lock
        written = "; the file's dependencies are the solved records" if output_format == "environment.yml" else ""
    elif document is None:
        written = "; `envpin lock` writes every one of them pinned, with hashes"
    elif output_format in resolved.COMMANDS:
        written = "; the command pins every one of them (`envpin lock` writes them with hashes)"
    elif output_format == "index-url":
        written = "; these are the indexes it installs from, the default first"
    elif output_format == "environment.yml" or not resolved.hashed(document, project):
        written = "; the file pins every one of them"
    else:
        written = "; the file pins every one of them, with the sha256 of each file"
    print(f"envpin: note: {printable(resolution.detail)}{written}", file=sys.stderr)


def _say_what_pip_cannot_take(answer: Plan, project) -> None:
    from envpin.emit.requirements import outside_pip  # noqa: PLC0415 - only --format requirements.txt needs it

    steps = outside_pip(answer, project)
    if steps:
        print(f"envpin: note: requirements.txt cannot hold {len(steps) - 1} step(s) pip does not take; they are "
              "written as comments at its top: " + printable("; ".join(s.strip() for s in steps[1:])), file=sys.stderr)


def run_fleet(fleet: PlannedFleet, rendering: RenderOptions, database) -> int:
    """`--targets FILE`: print or write one result per distinct answer."""

    def rendered(result: FleetResult, options: RenderOptions) -> str:
        return render(result.answer, fleet.request, options, database, result.project, fleet.source_args)

    if rendering.output:
        for path, result in zip(fleet_paths(Path(rendering.output), fleet.results), fleet.results, strict=True):
            if isinstance(result.answer, Unsatisfiable):
                continue
            write_atomically(path, rendered(result, replace(rendering, output=str(path))))
            print(f"wrote {path} for {printable(', '.join(result.names))}", file=sys.stderr)
    if rendering.format == "json" and not rendering.output:
        document = {"results": [{"targets": list(r.names), **answer_json(r.answer)} for r in fleet.results]}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif not rendering.output or not fleet.ok:
        shown = replace(rendering, format="text") if rendering.output else rendering
        for result in fleet.results:
            if rendering.output and not isinstance(result.answer, Unsatisfiable):
                continue
            sys.stdout.write(f"== {printable(', '.join(result.names))}\n")
            sys.stdout.write(terminal(rendered(result, shown)) + "\n")
    return fleet.exit_code


def fleet_paths(output: Path, results) -> list[Path]:
    """`environment.yml` → `environment.cu126.yml`, `environment.cpu.yml` …; answers that share an accelerator add
    their platform (`environment.cu132.linux-aarch64.yml`), then their Python, then a number."""
    labels = [[r.answer.accelerator if not isinstance(r.answer, Unsatisfiable) else "none",
               r.answer.target.platform, f"py{r.answer.target.python}"] for r in results]
    names = [label[0] for label in labels]
    for depth in (2, 3):
        names = [".".join(label[:depth]) if names.count(name) > 1 else name for name, label in zip(names, labels, strict=True)]
    seen: dict[str, int] = {}
    paths: list[Path] = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        label = f"{name}-{seen[name]}" if seen[name] > 1 else name
        paths.append(output.with_name(f"{output.stem}.{label}{output.suffix}"))
    return paths
