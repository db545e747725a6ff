"""`envpin check`: committed environment files and lockfiles → problems, offline and without running anything.

    text ──formats.kind_of──► kind ──<format>.parse──► Contents (pins, index options, format problems)
         ──check_contents (+ database, + targets)──► Problems ──ignores──► FileReport

One module per format (requirements, environment_yml, pylock, conda_lock, explicit, uv_lock, pixi_lock, poetry_lock,
pipfile_lock, pdm_lock); `rules` holds
the problem ids and the checks every format shares; `config` reads `[tool.envpin]`. Only `config` and the
command touch the file system.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from envpin.base.limits import LimitExceeded, check_entries_per_package
from envpin.check.conda_wiring import pytorch_channel_wiring
from envpin.check.formats import KINDS, kind_of, read_contents
from envpin.readers.model import Contents, FileReport, MalformedFile, Problem, UnreadableInclude
from envpin.readers.rules import (
    cuda_library_pins,
    cuda_majors,
    duplicate_packages,
    index_bindings,
    jax_plugins,
    needs_database,
    numpy_abi,
    numpy_requires,
    package_requires,
    plan_bounds,
    problem,
    python_support,
    releases,
    torch_family,
)
from envpin.readers.served import unserved_pins

if TYPE_CHECKING:
    from envpin.check.targets import CheckTarget
    from envpin.compat.model import Database
    from envpin.readers.requirements import IncludeReader

__all__ = ["check_text", "FileReport", "Problem"]


def check_text(
    path: str,
    text: str,
    *,
    load_database: Callable[[], Database],
    kind: str | None = None,
    targets: Sequence[CheckTarget] = (),
    policy: str = "minor",
    ignore: frozenset[str] = frozenset(),
    include: IncludeReader | None = None,
) -> FileReport:
    """Every problem of one file. `load_database` is called only when the file pins something the database
    knows about, so a plain requirements file is checked without loading it. `include` reads the files it
    includes with -r / -c (envpin.check.included.beside(path)); without it they are said, not followed."""
    kind = kind or kind_of(path, text)
    if kind is None:
        return FileReport(path, (problem(
            "CHK-FILE-UNREADABLE", "", "envpin cannot tell what kind of file this is",
            f"name it as the tools do (requirements*.txt, environment*.yml, pylock.toml, conda-lock.yml, uv.lock, pixi.lock, poetry.lock, "
            f"Pipfile.lock, pdm.lock, "
            f"pyproject.toml, pixi.toml, "
            f"an @EXPLICIT file) or pass --kind ({', '.join(KINDS)})",
        ),), unreadable=True)
    try:
        contents = read_contents(kind, text, include)
        check_entries_per_package((pin.name for pin in contents.pins), "")
    except UnreadableInclude as error:
        return FileReport(path, (problem(
            "CHK-FILE-UNREADABLE", "", error.message, "fix the include, or the file it names",
        ),), unreadable=True)
    except MalformedFile as error:
        return FileReport(path, (problem(
            "CHK-FILE-MALFORMED", error.where, f"not a valid {kind} file: {error.message}",
            "fix the syntax (or regenerate the file with its tool)",
        ),), unreadable=True)
    except LimitExceeded as error:
        return FileReport(path, (problem(
            "CHK-FILE-UNREADABLE", "", str(error), "split the file, or shorten what it repeats",
        ),), unreadable=True)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as error:
        # A shape no reader expected: still one line and exit 2, never a traceback (and a bug worth a report).
        return FileReport(path, (problem(
            "CHK-FILE-MALFORMED", "", f"envpin could not read it as {kind} ({error.__class__.__name__}: {error}); "
            "if the file is valid, this is a bug in envpin", "check the file's syntax, or report the bug",
        ),), unreadable=True)
    # with targets the database is loaded already (they were resolved against it): the target checks all run
    database = load_database() if needs_database(contents) or targets else None
    problems = check_contents(contents, database, targets, policy=policy)
    if include is not None:
        from envpin.check.staleness import stale_problems  # noqa: PLC0415 - only a lock beside its manifest needs it

        problems += tuple(stale_problems(kind, text, _reader_beside(include)))
    if database is not None:
        problems += database_news_problems(text, contents, database)
    return FileReport(path, tuple(p for p in problems if p.id not in ignore))


def _reader_beside(include: IncludeReader) -> Callable[[str], str | None]:
    """A file beside the checked one by name, or None when it is not there or cannot be read."""
    from envpin.base.userfiles import UnreadableFile  # noqa: PLC0415

    def read(name: str) -> str | None:
        try:
            return include(None, name).text
        except (UnreadableFile, UnreadableInclude, OSError):
            return None

    return read


# envpin's file header ("compatibility database 2026.11.29") and its pylock table (db-version = "2026.11.29").
_MADE_WITH = re.compile(r"compatibility database (\d{4}\.\d{2}\.\d{2})|db-version\s*=\s*\"(\d{4}\.\d{2}\.\d{2})\"")


def database_news_problems(text: str, contents, database) -> tuple[Problem, ...]:
    """What the database learned about the file's pins since the database the file was made with."""
    match = _MADE_WITH.search(text) if "compatibility database" in text or "db-version" in text else None
    if not match:
        return ()
    from envpin.compat.news import database_news  # noqa: PLC0415 - compat.news imports packaging.utils (heavy): only for a file that names its database

    since = match.group(1) or match.group(2)
    pins = [(pin.name, pin.version) for pin in contents.pins if pin.version]
    return tuple(
        problem("CHK-DATABASE-NEWS", "header", news, "regenerate the file with the command in its header")
        for news in database_news(database, since, pins)
    )


def check_contents(
    contents: Contents,
    database: Database | None,
    targets: Sequence[CheckTarget] = (),
    *,
    policy: str = "minor",
) -> tuple[Problem, ...]:
    problems = list(contents.problems)
    problems += duplicate_packages(contents)
    problems += unserved_pins(contents)
    if database is not None:
        problems += torch_family(contents, database)
        problems += cuda_majors(contents, database)
        problems += index_bindings(contents, database)
        problems += releases(contents, database, {t.target.platform for t in targets})
        problems += python_support(contents, database)
        problems += jax_plugins(contents, database)
        problems += numpy_abi(contents, database, [t.target.python for t in targets if t.python_known and t.target.python])
        problems += numpy_requires(contents, database, sorted({t.target.python for t in targets if t.target.python}))
        problems += package_requires(contents, database, sorted({(t.target.python, t.target.platform) for t in targets
                                                                 if t.target.python}))
        problems += plan_bounds(contents, database)
        problems += cuda_library_pins(contents, database)
        problems += pytorch_channel_wiring(contents, database, sorted({t.target.platform for t in targets}))
        if targets:
            # the target checks import the resolver's builds and verdicts: only a check with targets pays for them
            from envpin.check.targets import target_fit  # noqa: PLC0415

            for check_target in targets:
                problems += target_fit(contents, database, check_target, policy)
    return tuple(problems)
