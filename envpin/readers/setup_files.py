"""setup.py and setup.cfg: the requirements setuptools would install, read without running anything.

setup.cfg is read as setuptools reads it (`[options] install_requires`, `[options.extras_require]`, one
requirement a line). setup.py is a program: envpin never runs it. Its `setup(...)` call is parsed (Python's
`ast`, nothing executed) and `install_requires=` / `extras_require=` are read where they are written as
literal lists and dicts of strings, as most repositories write them. A value that only running setup.py
gives (`install_requires=read_requirements()`, a variable, `**kwargs`) is named as not read, so that a check
or a solve says what it could not see instead of passing it.
"""

from __future__ import annotations

import ast
import configparser

from envpin.base.record import Record, record
from envpin.readers.model import Contents, MalformedFile, Pin, Problem
from envpin.readers.requirements import read_line
from envpin.readers.rules import problem

_KEYWORDS = ("install_requires", "extras_require")


@record
class SetupRequirement(Record):
    where: str  # "install_requires[3]", "extras_require.gpu[0]", "options.install_requires[1]"
    text: str  # the requirement as written
    extra: str | None = None  # the extras_require key it is listed under


@record
class SetupRequirements(Record):
    requirements: tuple[SetupRequirement, ...] = ()
    unread: tuple[str, ...] = ()  # setup.py keywords whose value only running setup.py gives


def read_setup_py(text: str) -> SetupRequirements:
    """The literal install_requires / extras_require of setup.py's `setup(...)` call (the last one found)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise MalformedFile(f"not valid Python (line {error.lineno}: {error.msg})") from None
    except (ValueError, RecursionError, MemoryError) as error:  # a NUL byte; nesting deeper than the parser goes
        raise MalformedFile(f"not Python envpin can parse ({error.__class__.__name__})") from None
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _called(node) == "setup"]
    if not calls:
        return SetupRequirements()
    call = calls[-1]
    found: list[SetupRequirement] = []
    unread: list[str] = []
    given = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    for keyword in _KEYWORDS:
        if keyword not in given:
            continue
        try:
            value = ast.literal_eval(given[keyword])
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):  # not a literal: computed
            unread.append(keyword)
            continue
        items = _items(keyword, value)
        if items is None:
            unread.append(keyword)
        else:
            found.extend(items)
    if any(keyword.arg is None for keyword in call.keywords) and not all(k in given for k in _KEYWORDS):
        unread.extend(k for k in _KEYWORDS if k not in given)  # setup(**options): they may be in there
    return SetupRequirements(tuple(found), tuple(unread))


def read_setup_cfg(text: str) -> SetupRequirements:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as error:
        raise MalformedFile(f"not a valid setup.cfg ({str(error).splitlines()[0]})") from None
    blocks: list[tuple[str, str | None, str]] = [
        ("options.install_requires", None, parser.get("options", "install_requires", fallback=""))]
    if parser.has_section("options.extras_require"):
        blocks += [(f"options.extras_require.{extra}", extra, parser.get("options.extras_require", extra))
                   for extra in parser.options("options.extras_require")]
    found = []
    for where, extra, block in blocks:
        lines = [line.strip() for line in block.splitlines()]
        found += [SetupRequirement(f"{where}[{n}]", line, extra)
                  for n, line in enumerate(line for line in lines if line and not line.startswith("#"))]
    return SetupRequirements(tuple(found))


def parse_setup_py(text: str) -> Contents:
    return _contents("setup.py", read_setup_py(text))


def parse_setup_cfg(text: str) -> Contents:
    return _contents("setup.cfg", read_setup_cfg(text))


def unread_note(unread: tuple[str, ...]) -> str:
    return (f"{' and '.join(unread)} {'is' if len(unread) == 1 else 'are'} computed when setup.py runs, and envpin "
            "does not run it: those requirements were not read")


def _contents(kind: str, read: SetupRequirements) -> Contents:
    pins: list[Pin] = []
    problems: list[Problem] = []
    for requirement in read.requirements:
        line = read_line(requirement.text, requirement.where)
        problems += line.problems
        if line.pin is not None:
            scope = frozenset({f"extra:{requirement.extra}"}) if requirement.extra else frozenset()
            pins.append(Pin(name=line.pin.name, where=requirement.where, label=line.pin.label,
                            version=line.pin.version, extras=line.pin.extras, scope=scope | line.pin.scope,
                            specifier=line.pin.specifier, platforms=line.pin.platforms, pythons=line.pin.pythons,
                            index=line.pin.index))
    if read.unread:
        problems.append(problem("CHK-SETUP-PY-COMPUTED", "setup()", unread_note(read.unread),
                                "list the requirements literally in setup(), or in pyproject.toml [project] "
                                "dependencies, so that they can be checked"))
    return Contents(kind, tuple(pins), problems=tuple(problems))


def _called(node: ast.Call) -> str | None:
    function = node.func
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None  # setuptools.setup(...)


def _items(keyword: str, value: object) -> list[SetupRequirement] | None:
    if keyword == "install_requires":
        lines = _strings(value)
        return None if lines is None else [SetupRequirement(f"install_requires[{n}]", t) for n, t in enumerate(lines)]
    if not isinstance(value, dict):
        return None
    found = []
    for extra, listed in value.items():
        lines = _strings(listed)
        if not isinstance(extra, str) or lines is None:
            return None
        found += [SetupRequirement(f"extras_require.{extra}[{n}]", t, extra) for n, t in enumerate(lines)]
    return found


def _strings(value: object) -> list[str] | None:
    """setuptools takes a list of requirement strings or one string of lines."""
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return None
    return [v.strip() for v in value if v.strip() and not v.strip().startswith("#")]
