"""A grid as one static HTML page: something a user attaches to an issue or a lab publishes for its cluster.

The page stands alone: its style is inline, and it has no script, no font, no image and no link to anything
outside it, so it opens the same anywhere, offline, years later. Every text that comes from the user or a facts
file (a GPU name, a machine class's name) and every reason is HTML-escaped. Each cell's title attribute (its hover
text) gives the build, the verdict and the fitness check's own sentences. A fleet's grids stand side by side.
"""

from __future__ import annotations

from html import escape

from envpin import __version__
from envpin.base.escapes import printable
from envpin.matrix.grid import CAVEAT, NO, OK, Cell, Grid
from envpin.matrix.terminal import KEY, LABELS, label_of
from envpin.vocabulary.variants import parse_tag

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1f24; background: #fff; }
h1 { font-size: 1.3em; margin: 0 0 .2em; }
.meta { color: #57606a; margin: 0 0 1em; }
.grids { display: flex; flex-wrap: nowrap; gap: 2em; align-items: flex-start; overflow-x: auto; }
section { flex: none; }
h2 { font-size: 1.05em; margin: 0 0 .3em; }
.target, .pick { margin: 0 0 .3em; max-width: 34em; }
table { margin-top: .4em; border-collapse: collapse; font: 12px/1.2 ui-monospace, monospace; }
th, td { border: 1px solid #d0d7de; padding: 2px 4px; text-align: center; white-space: nowrap; }
thead th { background: #f6f8fa; position: sticky; top: 0; }
tbody th { text-align: left; background: #f6f8fa; }
td.ok { background: #dafbe1; color: #116329; }
td.caveat { background: #fff8c5; color: #7d4e00; }
td.no { background: #ffebe9; color: #a40e26; }
td.off { background: #f6f8fa; color: #8c959f; }
td.picked { outline: 3px solid #0969da; outline-offset: -3px; font-weight: bold; }
.legend { margin-top: 1.5em; color: #57606a; }
.legend dt { float: left; clear: left; width: 4em; font-family: ui-monospace, monospace; }
.legend dd { margin: 0 0 .2em 4.5em; }
"""


def render(grids: list[Grid]) -> str:
    framework = grids[0].framework if grids else ""
    title = f"envpin matrix: {framework}"
    database = grids[0].db_version if grids else ""
    sections = "\n".join(_section(grid) for grid in grids)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>{escape(framework)}: which releases and builds run on {_machines(grids)}</h1>
<p class="meta">envpin {escape(__version__)} · compatibility database {escape(database)} · hover a cell for its reason</p>
<div class="grids">
{sections}
</div>
{_legend()}
</body>
</html>
"""


def _machines(grids: list[Grid]) -> str:
    return "this machine" if len(grids) == 1 and not grids[0].names else f"{len(grids)} machine classes"


def _section(grid: Grid) -> str:
    heading = f"<h2>{_text(', '.join(grid.names))}</h2>\n" if grid.names else ""
    pick = grid.pick
    said = (f"envpin solve picks <strong>{escape(pick.label)}</strong> (outlined)" if pick is not None
            else f"no {escape(grid.framework)} build runs here: envpin solve has no answer")
    columns = grid.columns
    head = "".join(f"<th scope=\"col\">{_header(column)}</th>" for column in columns)
    body = []
    for row in grid.rows:
        cells = {cell.build: cell for cell in row.cells}
        tds = "".join(_td(cells[column]) if column in cells else "<td></td>" for column in columns)
        body.append(f"<tr><th scope=\"row\">{escape(row.release)}</th>{tds}</tr>")
    rows = "\n".join(body)
    return f"""<section>
{heading}<p class="target">Target: {_text(grid.target.describe())}</p>
<p class="pick">{said}</p>
<table>
<thead><tr><th scope="col">release</th>{head}</tr></thead>
<tbody>
{rows}
</tbody>
</table>
</section>"""


def _header(column: str) -> str:
    """A PyTorch variant's name on two lines (`cu` over `126`, `rocm` over `6.2.4`), which keeps a torch grid's
    thirty columns narrow; other builds' names (and-cuda, cuda12, cpu) as they are."""
    tag = parse_tag(column)
    if tag is None or tag.version is None:
        return escape(column)
    prefix = "cu" if tag.kind == "cuda" else tag.kind
    return f"{escape(prefix)}<br>{escape(column[len(prefix):])}"


def _td(cell: Cell) -> str:
    kind = "off" if cell.check in ("platform", "kind") else {OK: "ok", CAVEAT: "caveat", NO: "no"}[cell.verdict]
    classes = f"{kind} picked" if cell.picked else kind
    hover = [f"{cell.label}: {cell.verdict}: {cell.reason}"]
    if cell.detail and cell.detail not in cell.reason:
        hover.append(cell.detail)
    return f"<td class=\"{classes}\" title=\"{_text(*hover)}\">{escape(label_of(cell).strip('[]'))}</td>"


def _legend() -> str:
    meanings = list(KEY) + [
        (LABELS["driver"], "the driver cannot run the build's CUDA (or ROCm)"),
        (LABELS["gpu"], "the build has no code this GPU can run"),
        (LABELS["python"], "no wheel for this Python on this platform"),
        (LABELS["installable"], "published, but it cannot install"),
        (LABELS["kind"], "a build of another kind (CPU, ROCm, XPU; CUDA without a driver): envpin takes it only when asked"),
        (LABELS["platform"], "not built for this platform"),
    ]
    items = "\n".join(f"<dt>{escape(label)}</dt><dd>{escape(meaning)}</dd>" for label, meaning in meanings)
    return f"<dl class=\"legend\">\n{items}\n</dl>"


def _text(*lines: str) -> str:
    """Text from the user or a facts file, for the page: control characters shown as escapes (a line break in a
    GPU name too), then HTML-escaped, quotes included, so that it is safe in an attribute; lines joined by line
    breaks, which a title attribute shows."""
    return escape("\n".join(printable(line) for line in lines))
