"""Reading a conda environment.yml into what a solver needs (pure: text in, value or one error out).

Every problem is collected with the path of the bad field (`dependencies[3]`, `channels[1]`) and reported
together, so one run shows all of them.
"""

from __future__ import annotations

from envpin.base.escapes import shown
from envpin.base.record import Record, record
from envpin.conda.errors import CondaInputError


@record
class EnvironmentFile(Record):
    name: str | None
    channels: tuple[str, ...]
    dependencies: tuple[str, ...]  # conda match specs as written
    pip: tuple[str, ...]  # the `pip:` section, as written


def parse_environment_yml(text: str, origin: str = "environment.yml") -> EnvironmentFile:
    import yaml  # noqa: PLC0415 - PyYAML is heavy, and only an environment file needs it

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise CondaInputError(f"{origin}{where}: malformed YAML ({problem})") from None
    except RecursionError:
        raise CondaInputError(f"{origin}: malformed YAML (nested too deep)") from None
    except ValueError as error:  # a value the reader cannot make: an integer past Python's digit limit, a 13th month
        raise CondaInputError(f"{origin}: malformed YAML ({shown(str(error), 160)})") from None
    if not isinstance(document, dict) or not isinstance(document.get("dependencies"), list):
        raise CondaInputError(f"{origin}: not a conda environment file (no `dependencies:` list)")
    problems: list[str] = []
    channels = _strings(document.get("channels", []), "channels", problems)
    dependencies: list[str] = []
    pip: list[str] = []
    for position, entry in enumerate(document["dependencies"]):
        where = f"dependencies[{position}]"
        if isinstance(entry, dict) and set(entry) == {"pip"}:
            pip += _strings(entry["pip"], f"{where}.pip", problems)
        elif isinstance(entry, str) and entry.strip():
            dependencies.append(entry.strip())
        elif isinstance(entry, (int, float)) and not isinstance(entry, bool):
            problems.append(f"{where}: {entry!r} is a number; write the package spec as text")
        else:
            problems.append(f"{where}: expected a package spec such as 'numpy>=1.26' or a `pip:` list, got {entry!r}")
    name = document.get("name")
    if name is not None and not isinstance(name, str):
        problems.append(f"name: expected a string, got {name!r}")
        name = None
    if problems:
        more = f" (and {len(problems) - 1} more: {'; '.join(problems[1:])})" if len(problems) > 1 else ""
        raise CondaInputError(f"{origin}: {problems[0]}{more}")
    return EnvironmentFile(name=name, channels=tuple(channels), dependencies=tuple(dependencies), pip=tuple(pip))


def _strings(value, where: str, problems: list[str]) -> list[str]:
    if not isinstance(value, list):
        problems.append(f"{where}: expected a list")
        return []
    found = []
    for position, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            found.append(item.strip())
        else:
            problems.append(f"{where}[{position}]: expected a non-empty string, got {item!r}")
    return found
