"""Lock a planned answer: the GPU pins plus the project's own requirements, through uv (or pip).

`envpin lock` writes the result; `envpin install` without `--lock` installs it straight away.
"""

from __future__ import annotations

from envpin.app.planning import Planned, SolveOptions, plan
from envpin.base.record import Record, record, replace
from envpin.compat.model import Database
from envpin.emit.common import file_header, regenerate_command
from envpin.lock.engines import choose_engine
from envpin.lock.indexes import project_inputs
from envpin.lock.make import Lock, make_lock
from envpin.lock.options import LockOptions, ResolveOptions
from envpin.machine.spec import TargetSpec
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.urls import checked_index_url


@record
class LockedPlan(Record):
    lock: Lock
    header: tuple[str, ...]
    left_out: tuple[str, ...]  # the project's lines a lock cannot hold (editable installs, local paths)


def lock_planned(planned: Planned, options: LockOptions, output: str | None, allow_insecure_index: bool) -> LockedPlan:
    plan = planned.answer
    assert isinstance(plan, Plan), "lock only a solved plan"
    requirements, left_out, default_index = project_inputs(planned.project, options.index_url)
    if default_index is not None:
        default_index = checked_index_url(default_index, "index URL", allow_insecure_index)
    engine = choose_engine(options.locker)
    regenerate = lock_regenerate_command(planned, plan, options, output)
    lock = make_lock(plan, requirements, engine, default_index, regenerate, left_out, options.timeout)
    header = tuple(file_header(plan, planned.request, output)[:2]) + (f"Locked with {lock.engine}.",
                                                                      f"Regenerate: {regenerate}")
    return LockedPlan(lock, header, left_out)


def plan_to_lock(options: SolveOptions, target_spec: TargetSpec, database: Database, lock: LockOptions) -> Planned:
    """The plan a lock (`envpin lock`, `envpin install`) is made of. A lock is a resolution: a project's lines that
    rule out the newest GPU build move the solve to the next one they allow, as `solve --resolve` does
    (docs/resolution.md); where no build fits, the database's own plan is locked and the engine fails with its
    one-line error, as it always did."""
    if options.project is None:
        return plan(options, target_spec, database)
    from envpin.lock.resolution import UNRESOLVABLE  # noqa: PLC0415 - only a project's lock moves

    # the lock holds the pip part: an environment.yml's conda part is not solved for it
    planned = plan(replace(options, resolve=ResolveOptions(index_url=lock.index_url, timeout=lock.timeout,
                                                           conda_part=False)), target_spec, database)
    if isinstance(planned.answer, Unsatisfiable) and planned.answer.code == UNRESOLVABLE:
        planned = plan(options, target_spec, database)
    return planned


def passed_over(planned: Planned) -> tuple[str, ...]:
    """The newer framework builds the plan's resolution passed over, each with why: a lock's notes."""
    answer = planned.answer
    return answer.resolution.passed_over if isinstance(answer, Plan) and answer.resolution is not None else ()


def lock_regenerate_command(planned: Planned, plan: Plan, options: LockOptions, output: str | None) -> str:
    extra: list[str] = []
    if options.index_url:
        extra += ["--index-url", options.index_url]
    if options.locker:
        extra += ["--locker", options.locker]
    if options.format == "requirements":
        extra += ["--format", "requirements"]
    return regenerate_command(planned.request, plan.target, output, planned.source_args, command="lock",
                              extra=tuple(extra))
