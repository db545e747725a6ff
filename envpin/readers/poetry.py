"""Poetry's own dependency tables in a pyproject.toml, as PEP 508 lines: what `poetry install` installs.

poetry-core's layout (python-poetry.org/docs/pyproject and /docs/dependency-specification): `[tool.poetry.dependencies]`
(its `python` is the project's Python), the optional ones installed by the extras of `[tool.poetry.extras]`, and each
group's `[tool.poetry.group.G.dependencies]` (`[tool.poetry.dev-dependencies]`: the old form of the dev group). A
constraint is poetry's: `2.12.1` is exactly that release, `^1.2.3` is >=1.2.3,<2.0.0 (the leftmost non-zero part
bumped: `^0.2.3` <0.3.0), `~1.2.3` is >=1.2.3,<1.3.0, `*` any; a table adds `version`, `extras`, `markers`, `python`
and `platform`. A git, path or url dependency, and an alternative (`^1.0 || ^2.0`), are left out, with a note.
"""

from __future__ import annotations

import re

# (the PEP 508 line, where it is, its scope: `extra:E`, `group:G`)
PoetryLine = tuple[str, str, tuple[str, ...]]

_CLAUSE = re.compile(r"(\^|~=|~|===|==|!=|>=|<=|>|<|=)?\s*([0-9][0-9A-Za-z.*+!-]*)")


def poetry_lines(poetry: dict, notes: list[str], *, has_project_dependencies: bool = False) -> tuple[list[PoetryLine], str | None]:
    """The requirements of `[tool.poetry]` and the project's Python (`python` of its dependencies, as a specifier).
    Beside `[project] dependencies` (poetry 2), poetry installs those, and its own dependencies table only refines
    them (sources, `develop`): it is not read again then, its groups are."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - packaging.utils is heavy: only a poetry project needs it

    extras_of: dict[str, list[str]] = {}
    for extra, names in _table(poetry.get("extras")).items():
        for package in names if isinstance(names, list) else []:
            if isinstance(package, str):
                extras_of.setdefault(canonicalize_name(package), []).append(extra)
    tables: list[tuple[str, dict, tuple[str, ...]]] = [
        ("tool.poetry.dependencies", {} if has_project_dependencies else _table(poetry.get("dependencies")), ()),
        ("tool.poetry.dev-dependencies", _table(poetry.get("dev-dependencies")), ("group:dev",)),
    ]
    for group, table in _table(poetry.get("group")).items():
        tables.append((f"tool.poetry.group.{group}.dependencies", _table(_table(table).get("dependencies")),
                       (f"group:{group}",)))
    lines: list[PoetryLine] = []
    python = None
    for prefix, table, scope in tables:
        for package, value in table.items():
            where = f"{prefix}.{package}"
            if package == "python" and not scope:
                python = poetry_specifier(value) if isinstance(value, str) else None
                continue
            items = value if isinstance(value, list) else [value]
            for position, item in enumerate(items):
                at = f"{where}[{position}]" if isinstance(value, list) else where
                line = _line(package, item)
                if line is None:
                    notes.append(f"{at}: not read (a git, path or url dependency, or a constraint with no PEP 440 form)")
                    continue
                if isinstance(item, dict) and item.get("optional") is True:
                    lines += [(line, at, (*scope, f"extra:{extra}")) for extra in extras_of.get(canonicalize_name(package), [])]
                    continue
                lines.append((line, at, scope))
    return lines, python


def poetry_specifier(constraint: str) -> str | None:
    """A poetry constraint as a PEP 440 specifier (`^2.5` -> `>=2.5,<3`, `2.12.1` -> `==2.12.1`, `*` -> ``), or
    None where it has none (an alternative with `||`, a word)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a poetry project needs it

    text = constraint.strip()
    if text in ("", "*"):
        return ""
    if "|" in text:
        return None
    clauses = [clause for part in text.split(",") for clause in _spaced(part)]
    out = []
    for clause in clauses:
        match = _CLAUSE.fullmatch(clause)
        if match is None:
            return None
        operator, version = match.group(1) or "==", match.group(2)
        if operator in ("^", "~"):
            numbers = [int(n) for n in re.match(r"\d+(?:\.\d+)*", version).group(0).split(".")]  # type: ignore[union-attr]
            if operator == "^":
                bumped = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
            else:
                bumped = 1 if len(numbers) > 1 else 0
            upper = [*numbers[:bumped], numbers[bumped] + 1]
            out += [f">={version}", f"<{'.'.join(map(str, upper))}"]
        else:
            out.append(f"{'==' if operator == '=' else operator}{version}")
    specifier = ",".join(out)
    try:
        SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    return specifier


def _spaced(part: str) -> list[str]:
    """A comma-free part's clauses: poetry also separates them with spaces (`>=1.2 <2.0`), and an operator may stand
    apart from its version (`>= 1.2`)."""
    clauses: list[str] = []
    for word in part.split():
        if clauses and clauses[-1].strip("^~<>=!") == "":
            clauses[-1] += word
        else:
            clauses.append(word)
    return clauses


def _line(package: str, item) -> str | None:
    if isinstance(item, str):
        specifier = poetry_specifier(item)
        return None if specifier is None else f"{package}{specifier}"
    if not isinstance(item, dict) or any(key in item for key in ("git", "path", "url", "file")):
        return None
    version = item.get("version", "*")
    specifier = poetry_specifier(version) if isinstance(version, str) else None
    if specifier is None:
        return None
    extras = [e for e in item.get("extras") or [] if isinstance(e, str)]
    markers = [item["markers"]] if isinstance(item.get("markers"), str) else []
    if isinstance(item.get("python"), str):
        python = poetry_specifier(item["python"])
        if python is None:
            return None
        markers += [f'python_version {re.match(r"[<>=!~]+", c).group(0)} "{c.lstrip("<>=!~")}"'  # type: ignore[union-attr]
                    for c in python.split(",") if c]
    if isinstance(item.get("platform"), str):
        markers.append(f'sys_platform == "{item["platform"]}"')
    written = f"{package}[{','.join(extras)}]" if extras else package
    return f"{written}{specifier}" + ("; " + " and ".join(f"({m})" for m in markers) if markers else "")


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}
