"""A grid for the terminal: releases down, builds across, a short label in each cell and, under the grid, what
each label stands for with the reasons it covers.

The grid fits 80 columns: rows are cut into blocks of consecutive releases whose builds fit side by side, each
block with its own header (a torch grid spans some thirty flavors, a few releases use seven of them). Colour
only when asked (`colour`, which the command sets for a terminal without NO_COLOR); the labels say everything
without it.
"""

from __future__ import annotations

import textwrap

from envpin.base.escapes import printable
from envpin.matrix.grid import CAVEAT, NO, OK, Cell, Grid, Row

WIDTH = 80
GAP = 2
LABELS = {  # a rejected cell's label, by the fitness check that failed (in the legend's order)
    "driver": "drv",
    "gpu": "gpu",
    "python": "py",
    "installable": "broken",
    "kind": "skip",
    "platform": "-",
}
CAVEAT_LABELS = {"ptx": "ptx", "unchecked": "ok?"}
KEY = (
    ("ok", "runs"),
    ("ptx", "runs, but only by JIT from PTX (compiled on first use)"),
    ("ok?", "runs, but a check was made without the facts that decide it"),
)
_COLOURS = {OK: "32", CAVEAT: "33", NO: "31"}
_DIM = "2"


def render(grids: list[Grid], colour: bool = False) -> str:
    parts = []
    for grid in grids:
        lines = [f"== {printable(', '.join(grid.names))}"] if grid.names else []
        parts.append("\n".join(lines + _grid_lines(grid, colour)))
    return "\n\n".join(parts) + "\n"


def label_of(cell: Cell) -> str:
    if cell.verdict == OK:
        text = "ok"
    elif cell.verdict == CAVEAT:
        text = CAVEAT_LABELS[cell.caveat or "unchecked"]
    else:
        text = LABELS[cell.check or "kind"]
    return f"[{text}]" if cell.picked else text


def _grid_lines(grid: Grid, colour: bool) -> list[str]:
    lines = _wrapped(f"{grid.framework} on {printable(grid.target.describe())}")
    pick = grid.pick
    if pick is not None:
        lines += _wrapped(f"envpin solve picks {pick.label}, marked [{label_of(pick)[1:-1]}]")
    else:
        lines += _wrapped(f"no {grid.framework} build runs here: envpin solve has no answer for this machine")
    for block in _blocks(grid):
        lines += [""] + _block_lines(grid, block, colour)
    lines += [""] + _legend(grid)
    return lines


def _release_width(grid: Grid) -> int:
    return max([len("release")] + [len(row.release) for row in grid.rows]) + GAP


def _column_widths(grid: Grid, rows: list[Row]) -> dict[str, int]:
    present = {cell.build for row in rows for cell in row.cells}
    widths = {}
    for column in (c for c in grid.columns if c in present):
        labels = [label_of(cell) for row in rows for cell in row.cells if cell.build == column]
        widths[column] = max([len(column)] + [len(label) for label in labels]) + GAP
    return widths


def _blocks(grid: Grid) -> list[list[Row]]:
    """Consecutive releases, as many to a block as fit WIDTH with the builds they have."""
    blocks: list[list[Row]] = []
    for row in grid.rows:
        if blocks and _width(grid, blocks[-1] + [row]) <= WIDTH:
            blocks[-1].append(row)
        else:
            blocks.append([row])
    return blocks


def _width(grid: Grid, rows: list[Row]) -> int:
    return _release_width(grid) + sum(_column_widths(grid, rows).values()) - GAP


def _block_lines(grid: Grid, rows: list[Row], colour: bool) -> list[str]:
    release_width = _release_width(grid)
    widths = _column_widths(grid, rows)
    header = "release".ljust(release_width) + "".join(column.ljust(width) for column, width in widths.items())
    lines = [header.rstrip()]
    for row in rows:
        cells = {cell.build: cell for cell in row.cells}
        text = row.release.ljust(release_width)
        for column, width in widths.items():
            cell = cells.get(column)
            label = label_of(cell) if cell else ""
            padded = label.ljust(width)
            text += _painted(cell, padded, label) if colour and cell else padded
        lines.append(text.rstrip())
    return lines


def _painted(cell: Cell, padded: str, label: str) -> str:
    """The label in its colour (the padding left plain, so the columns stay where they are)."""
    code = _DIM if cell.check in ("platform", "kind") else _COLOURS[cell.verdict]
    if cell.picked:
        code = f"1;{code}"
    return f"\x1b[{code}m{label}\x1b[0m" + padded[len(label):]


def _legend(grid: Grid) -> list[str]:
    """What the labels stand for: those of builds that run, then every distinct reason of the cells that do not
    run or run with a caveat, caveats first, then by the fitness check that failed."""
    used = {label_of(cell).strip("[]") for row in grid.rows for cell in row.cells}
    width = max(len(label) for label in (*LABELS.values(), *CAVEAT_LABELS.values())) + 1
    lines = [f"{label:<{width}}{meaning}" for label, meaning in KEY if label in used]
    if grid.pick is not None:
        lines.append(f"{'[ ]':<{width}}what envpin solve picks")
    order = [*CAVEAT_LABELS.values(), *LABELS.values()]
    seen: dict[tuple[str, str], None] = {}
    for row in grid.rows:
        for cell in row.cells:
            if cell.verdict != OK:
                seen.setdefault((label_of(cell).strip("[]"), cell.reason), None)
    for label, reason in sorted(seen, key=lambda item: order.index(item[0])):
        lines += _wrapped(f"{label:<{width}}{printable(reason)}", indent=width)
    return lines


def _wrapped(text: str, indent: int = 2) -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=" " * indent, break_on_hyphens=False) or [""]
