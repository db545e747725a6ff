"""The import graph has one direction: cli → commands → library, with no cycles, and no command imports another.

Read from the source with `ast` (every import, at the top of a module or inside a function; those under
`if TYPE_CHECKING:` are for annotations only and never run), so the test sees what a run could import.
"""

from __future__ import annotations

import ast
from pathlib import Path

from envpin.commands import COMMANDS

PACKAGE = Path(__file__).resolve().parents[2] / "envpin"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _owner(name: str) -> str | None:
    """The envpin module an imported name lives in (`envpin.resolver.solve.solve` → `envpin.resolver.solve`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            owner = _owner(name) if name.startswith("envpin") else None
            if owner is not None and owner != module:
                found.add(owner)
    return found


GRAPH = {module: imports_of(module) for module in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each a cycle to break."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for neighbour in sorted(graph[node]):
            if neighbour not in index:
                visit(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in on_stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_measurement_sees_imports_inside_functions_and_relative_ones():
    assert "envpin.commands" in GRAPH["envpin.cli"]  # from envpin.commands import COMMANDS
    assert "envpin.resolver.explain" in GRAPH["envpin.resolver.solve"]  # imported inside solve()
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_import_graph_has_no_cycles():
    assert cycles(GRAPH) == []


def test_no_command_imports_another_command():
    commands = {f"envpin.commands.{name}" for name in COMMANDS}
    assert commands <= set(MODULES), "every listed command has its module"
    crossing = {module: sorted(GRAPH[module] & commands) for module in commands if GRAPH[module] & commands}
    assert crossing == {}


def test_the_library_never_imports_the_command_layer():
    front = {"envpin.cli", "envpin.__main__", "envpin.commands"} | {f"envpin.commands.{name}" for name in COMMANDS}
    library = set(MODULES) - front
    upward = {module: sorted(GRAPH[module] & front) for module in library if GRAPH[module] & front}
    assert upward == {}


def test_the_vocabulary_is_the_bottom_of_the_graph():
    # envpin.vocabulary (platform keys, variant tags, framework names) is used everywhere, so it imports nothing
    # of envpin's but itself and envpin.base.record (the frozen value class), which imports nothing of envpin's at all.
    vocabulary = {module for module in MODULES if module.startswith("envpin.vocabulary")}
    assert {"envpin.vocabulary.platforms", "envpin.vocabulary.variants", "envpin.vocabulary.frameworks"} <= vocabulary
    below = vocabulary | {"envpin.base.record"}
    outside = {module: sorted(GRAPH[module] - below) for module in vocabulary if GRAPH[module] - below}
    assert outside == {}
    assert GRAPH["envpin.base.record"] == set()


def test_commands_load_no_database_and_import_no_resolver():
    """A command parses, hands `--db` down to the one library call it makes, and prints (issue 28): the database is
    loaded below it (envpin.app.database, once per run), and the answer types come from the planning layer it calls."""
    commands = {module for module in MODULES if module.startswith("envpin.commands.")}
    loading = sorted(m for m in commands if "load_database" in MODULES[m].read_text(encoding="utf-8"))
    resolver = {m: sorted(i for i in GRAPH[m] if i.startswith("envpin.resolver")) for m in commands}
    assert loading == []
    assert {m: found for m, found in resolver.items() if found} == {}


# The package order (issue 28): each package imports only packages on its own floor or below, and the package graph
# has no cycle. Read top to bottom: the front door, the commands, the application layer, the runs it orchestrates,
# then the capabilities, down to the base modules that know nothing of envpin's subject.
LAYERS = (
    {"cli", "__main__"},
    {"commands"},
    {"app", "doctor"},  # the doctor's fixes are the planner's answers for the machine diagnosed (issue 32)
    {"lock", "provision", "fleet", "matrix"},
    {"conda"},
    {"emit"},
    {"check", "verify"},
    {"project", "readers", "machine"},
    {"resolver", "host", "refresh"},
    {"compat"},
    {"facts"},
    {"vocabulary"},
    {"base"},
)
FLOOR = {package: floor for floor, packages in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str | None:
    """`envpin.resolver.solve` -> `resolver`, `envpin.cli` -> `cli`; None for `envpin` itself (its __version__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


PACKAGE_GRAPH: dict[str, set[str]] = {}
for _module, _imported in GRAPH.items():
    _package = package_of(_module)
    if _package is not None:
        PACKAGE_GRAPH.setdefault(_package, set()).update(
            p for p in map(package_of, _imported) if p is not None and p != _package)


def test_the_root_package_keeps_only_the_front_door():
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py", "cli.py"]


def test_every_package_has_its_floor():
    assert sorted(set(PACKAGE_GRAPH) - set(FLOOR)) == []


def test_the_package_graph_has_no_cycle():
    assert cycles(PACKAGE_GRAPH) == []


def test_no_package_imports_a_floor_above_its_own():
    upward = {f"{package} -> {imported}" for package, imported_packages in PACKAGE_GRAPH.items()
              for imported in imported_packages if FLOOR[imported] < FLOOR[package]}
    assert sorted(upward) == []


def test_the_package_contract_can_fail():
    assert cycles({"check": {"project"}, "project": {"check"}}) == [["check", "project"]]
    assert FLOOR["readers"] > FLOOR["check"] and FLOOR["conda"] < FLOOR["emit"] and FLOOR["doctor"] == FLOOR["app"]
