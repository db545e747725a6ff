"""The compatibility grid of one framework for one machine: every release × build, each cell judged by the very
verdict the solver reads.

A grid is made from the solve's own resolution (`envpin.resolver.queries.resolve`, which `envpin solve` runs): its
cells are the provider's verdicts on every build (`envpin.resolver.fitness.assess`), in the provider's preference
order, and its pick is the build resolvelib chose. One framework's builds have no dependencies of their own, so
resolvelib takes the first candidate the provider offers, which is the first build that fits. So the first `ok` or
`caveat` cell in preference order (rows newest first, each row's cells in its release's own preference) is the
solve's answer, and a grid without one is a machine the solve has no answer for.
"""

from __future__ import annotations

from typing import Any

from envpin.base.record import Record, record
from envpin.compat.model import Database
from envpin.emit.common import target_json
from envpin.resolver.builds import Build
from envpin.resolver.fitness import Verdict
from envpin.resolver.queries import resolve
from envpin.resolver.request import Request
from envpin.resolver.target import Target
from envpin.vocabulary.variants import parse_tag

OK, CAVEAT, NO = "ok", "caveat", "no"
_KIND_ORDER = ("cuda", "rocm", "xpu", "cpu")  # the preference among a release's builds (builds.ordered_variants)


@record
class Cell(Record):
    """One build of one release, judged for the target."""

    build: str  # the column: the build's flavor (cu126, rocm6.2, cpu; and-cuda, cuda; cuda12)
    verdict: str  # ok | caveat | no
    reason: str  # the one deciding reason in a few words ("driver below 580"), or what a build that runs rests on
    detail: str  # the fitness check's own sentences, for hover text
    label: str  # the build's name: "torch 2.14.1+cu126"
    check: str | None = None  # the fitness check that failed (fitness.CHECKS); None when it runs
    caveat: str | None = None  # a caveat's kind: ptx (JIT from PTX) or unchecked (a check without its facts)
    picked: bool = False  # the build `envpin solve` picks for this target


@record
class Row(Record):
    release: str
    cells: tuple[Cell, ...]


@record
class Grid(Record):
    framework: str
    target: Target
    rows: tuple[Row, ...]  # newest release first
    db_version: str
    names: tuple[str, ...] = ()  # a fleet: the machine classes with this target

    @property
    def columns(self) -> tuple[str, ...]:
        """Every build of any release, in preference order."""
        return tuple(_ordered_columns(self.rows))

    @property
    def pick(self) -> Cell | None:
        return next((cell for row in self.rows for cell in row.cells if cell.picked), None)


def grid_for(database: Database, target: Target, request: Request, names: tuple[str, ...] = ()) -> Grid:
    """The grid of the request's one framework on the target, from the solve's own resolution."""
    (framework,) = request.solved_frameworks
    resolution = resolve(database, target, request)
    provider = resolution.provider
    chosen = resolution.chosen[framework].framework_build if resolution.chosen else None
    rows: list[Row] = []
    releases: dict[str, list[Build]] = {}
    for build in provider.builds(framework):  # newest release first, each release's builds in preference order
        releases.setdefault(str(build.version), []).append(build)
    for release, builds in releases.items():
        rows.append(Row(release, tuple(_cell(provider.verdict(b), b is chosen) for b in _one_per_flavor(builds, target))))
    return Grid(framework, target, tuple(rows), database.version, names)


def grid_json(grid: Grid) -> dict[str, Any]:
    """The `envpin matrix --format json` document of one grid (docs/contracts.md)."""
    return {
        "framework": grid.framework,
        "target": target_json(grid.target),
        "rows": [
            {"release": row.release,
             "cells": [{"build": cell.build, "verdict": cell.verdict, "reason": cell.reason} for cell in row.cells]}
            for row in grid.rows
        ],
    }


def _one_per_flavor(builds: list[Build], target: Target) -> list[Build]:
    """A release's builds, one per flavor. TensorFlow's plain GPU build is one build per platform (Linux, native
    Windows): the target's own platform's stands for the flavor, since the others are not built for it."""
    chosen: dict[str, Build] = {}
    for build in builds:
        current = chosen.get(build.flavor)
        if current is None or (target.platform in build.platforms and target.platform not in current.platforms):
            chosen[build.flavor] = build
    return list(chosen.values())


def _cell(verdict: Verdict, picked: bool) -> Cell:
    build = verdict.build
    if verdict.rejection is not None:
        rejection = verdict.rejection
        return Cell(build.flavor, NO, rejection.brief, rejection.message, build.label, check=rejection.check)
    detail = "; ".join(verdict.reasons) or f"{build.label}: nothing on the machine for it to check"
    if verdict.caveats:
        reason = "; ".join(dict.fromkeys(c.brief for c in verdict.caveats))
        kind = "ptx" if any(c.kind == "ptx" for c in verdict.caveats) else "unchecked"
        return Cell(build.flavor, CAVEAT, reason, detail, build.label, caveat=kind, picked=picked)
    return Cell(build.flavor, OK, _runs(verdict), detail, build.label, picked=picked)


def _runs(verdict: Verdict) -> str:
    """What a build that runs, runs on: the fitness checks' own words (its GPU code, its driver), or the CPU."""
    if verdict.build.kind == "cpu" or not verdict.reasons:
        return "runs on the CPU" if verdict.build.kind == "cpu" else "runs"
    return "runs: " + "; ".join(verdict.reasons)


def _ordered_columns(rows: tuple[Row, ...]) -> list[str]:
    """The flavors of all rows in preference order: CUDA builds, newest CUDA first, then ROCm, then CPU (the
    order of a release's own builds); flavors that name no version (TensorFlow's and-cuda and cuda, JAX's cuda13
    and cuda12) in the order the newest releases have them."""
    first_seen: dict[str, int] = {}
    for row in rows:
        for cell in row.cells:
            first_seen.setdefault(cell.build, len(first_seen))

    def key(flavor: str) -> tuple:
        tag = parse_tag(flavor)  # None for TensorFlow's and JAX's flavors, which are all CUDA builds but `cpu`
        parts = [int(part) for part in tag.version.split(".")] if tag and tag.version else []
        version = tuple(-part for part in parts + [0] * (3 - len(parts)))  # ROCm 6.2.4 before 6.2
        return (_KIND_ORDER.index(tag.kind if tag else "cuda"), version, first_seen[flavor])

    return sorted(first_seen, key=key)
