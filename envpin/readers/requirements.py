"""requirements*.txt (and the `pip:` list of an environment.yml) as pip reads them: text → Contents.

Follows pip's own reader (pypa/pip src/pip/_internal/req/req_file.py): a trailing backslash joins lines, `#`
at the start or after whitespace starts a comment, a line that starts with `-` is an option line, and on a
requirement line everything from the first token that starts with `-` is options. Only --hash,
--config-settings and --global-option act on a requirement; pip ignores index options there
(`handle_line`'s docstring: "Other options from SUPPORTED_OPTIONS may be present, but are ignored").
Hash-checking mode (`--require-hashes`, or any `--hash`) needs every requirement hashed and pinned with ==.

Included files are followed as pip follows them (req_file.py `_parse_and_recurse`): a `-r`/`-c` path is joined to
the including file's directory; a `-r` inside a `-c` file is read as requirements again, a `-c` anywhere as
constraints; index options of every file apply to the whole install. A constraint installs nothing: it narrows
the requirement of the same name (`torch>=2.7` with `torch==2.12.1` in constraints.txt installs 2.12.1). The
reading itself is the caller's (`IncludeReader`): this module stays text in, Contents out. A URL is never
fetched (said, not followed); a cycle is an error; nesting deeper than MAX_INCLUDE_DEPTH, more than
MAX_INCLUDED_FILES files or more text than userfiles.MAX_INPUT_BYTES in all is refused as bad input.

Environment variables are expanded as pip expands them (req_file.py `expand_env_variables`, after joining lines
and removing comments; the requirements file format's "Using Environment Variables",
https://pip.pypa.io/en/stable/reference/requirements-file-format/#using-environment-variables): only the
`${NAME}` form, NAME of uppercase letters, digits and `_`, replaced by its value where it is set and not empty.
Where it is not, pip passes the text on as written; the line is read so, and a warning names the variable.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Protocol

from envpin.base.escapes import expanded, hidden
from envpin.base.limits import MAX_CONTINUATIONS, MAX_SPECIFIERS, continuation_limit_message
from envpin.base.record import Record, record, replace
from envpin.readers.hashes import PIP_ALGORITHMS, digest_problem, split_hash
from envpin.readers.model import Contents, IndexOption, MalformedFile, Pin, Problem, UnreadableInclude, can_coexist
from envpin.readers.rules import problem
from envpin.readers.variants import file_name, parse_wheel
from envpin.vocabulary.names import canonical_name

_COMMENT = re.compile(r"(^|(?<!\s)\s+)#.*$")  # a run of spaces tried once, from its start: linear
VARIABLE = re.compile(r"\$\{([A-Z0-9_]+)\}")  # pip's req_file.ENV_VAR_RE: the one form pip expands
# option -> (takes a value, what it is); pip's SUPPORTED_OPTIONS for a requirements file
_FILE_OPTIONS = {
    "-i": "index-url", "--index-url": "index-url", "--extra-index-url": "extra-index-url",
    "--no-index": "no-index", "-f": "find-links", "--find-links": "find-links",
    "-c": "constraint", "--constraint": "constraint", "-r": "requirement", "--requirement": "requirement",
    "-e": "editable", "--editable": "editable", "--no-binary": "no-binary", "--only-binary": "only-binary",
    "--prefer-binary": "prefer-binary", "--require-hashes": "require-hashes", "--pre": "pre",
    "--trusted-host": "trusted-host", "--use-feature": "use-feature",
}
_FLAGS = frozenset({"no-index", "prefer-binary", "require-hashes", "pre"})
_INDEX_OPTIONS = frozenset({"index-url", "extra-index-url", "no-index", "find-links"})
_INCLUDE_OPTIONS = frozenset({"requirement", "constraint"})
URL_INCLUDE = re.compile(r"^(http|https|file):", re.I)  # pip's req_file.SCHEME_RE: such a -r/-c pip fetches
MAX_INCLUDE_DEPTH = 16  # pip itself has no bound; a chain this deep is a mistake (or a symlink loop)
MAX_INCLUDED_FILES = 256
# pip's SUPPORTED_OPTIONS_REQ: the options that act on one requirement
_REQUIREMENT_OPTIONS = {"--hash": "hash", "--config-settings": "config-settings", "-C": "config-settings",
                        "--global-option": "global-option"}


@record
class Line(Record):
    """One logical requirements line, read."""

    where: str
    pin: Pin | None = None
    is_requirement: bool = False
    pinned: bool = False  # == / === or a direct URL: what hash-checking mode accepts
    editable: bool = False
    options: tuple[IndexOption, ...] = ()
    hashes: tuple[str, ...] = ()  # the --hash values as written
    require_hashes: bool = False
    includes: tuple[tuple[str, str], ...] = ()  # (requirement / constraint, the path or URL as written)
    problems: tuple[Problem, ...] = ()


@record
class Included(Record):
    """An included file as the caller read it."""

    label: str  # its path relative to the checked file's directory, as findings name it ("../base.txt")
    key: str  # what makes it the same file (its real path): a file met again in its own chain is a cycle
    text: str


class IncludeReader(Protocol):
    """Reads the files a checked file includes (envpin.check.included.beside)."""

    key: str  # the checked file's own Included.key: a file that includes it back is a cycle

    def __call__(self, including: str | None, target: str) -> Included:
        """`target` as written in `including` (a label, None for the checked file): the file, or
        userfiles.UnreadableFile."""


def parse(text: str, include: IncludeReader | None = None) -> Contents:
    return read_lines(logical_lines(text), kind="requirements", include=include)


def logical_lines(text: str) -> list[tuple[str, str]]:
    """(where, text) per logical line, as pip's join_lines and ignore_comments make them: a line ending in a
    backslash continues on the next (unless it is a comment line), then comments and blank lines go."""
    lines: list[tuple[str, str]] = []
    pending: list[str] = []
    start = 0

    def emit(number: int, line: str) -> None:
        stripped = (_COMMENT.sub("", line) if "#" in line else line).strip()
        if stripped:
            lines.append((f"line {number}", stripped))

    for number, raw in enumerate(text.splitlines(), 1):
        # _COMMENT.match(raw), without the regular expression on each of a long file's lines: \s is what
        # str.strip strips
        comment = raw.lstrip().startswith("#")
        if not raw.endswith("\\") or comment:
            if comment:
                raw = " " + raw  # so the comment is still seen as one after joining
            if pending:
                emit(start, "".join(pending + [raw]))
                pending = []
            else:
                emit(number, raw)
        else:
            if not pending:
                start = number
            elif len(pending) >= MAX_CONTINUATIONS:
                raise MalformedFile(continuation_limit_message(start), f"line {start}")
            pending.append(raw.strip("\\"))
    if pending:
        emit(start, "".join(pending))
    return lines


def read_lines(lines: Iterable[tuple[str, str]], *, kind: str, include: IncludeReader | None = None) -> Contents:
    walk = _Walk(include)
    walk.file(lines, None, constraint=False, chain=(include.key,) if include is not None else ())
    requirements = [line for line, constraint in walk.read if not constraint]
    constraints = [line.pin for line, constraint in walk.read if constraint and line.pin is not None]
    problems = [p for line, _ in walk.read for p in line.problems] + walk.problems
    problems += hash_mode_problems(requirements)
    pins, conflicts = constrained([line.pin for line in requirements if line.pin is not None], constraints)
    return Contents(
        kind=kind,
        pins=tuple(pins),
        indexes=tuple(option for line, _ in walk.read for option in line.options),
        problems=tuple(problems + conflicts),
    )


class _Walk:
    """The lines of a file and of every file it includes, depth first as pip reads them, each with whether it
    is a constraint."""

    def __init__(self, include: IncludeReader | None):
        self.include = include
        self.read: list[tuple[Line, bool]] = []
        self.problems: list[Problem] = []
        self.files = 0
        self.size = 0

    def file(self, lines: Iterable[tuple[str, str]], label: str | None, *, constraint: bool,
             chain: tuple[str, ...]) -> None:
        prefix = f"{label} " if label else ""
        for where, written in lines:
            text, unset = expand_variables(written)
            values = expanded_values(written) if text != written else {}
            if values:  # a value put into a URL's user part is a credential: findings never show it
                from envpin.resolver.urls import redact_credentials  # noqa: PLC0415 - only a line with a set ${…}

                text = redact_credentials(text)
            line = read_line(text, prefix + where)
            if values:  # findings show the line as written: `${NAME}`, never the value the environment gave it
                line = _as_written(line, values)
            if unset:
                line = _replace(line, problems=line.problems + tuple(_unset(name, prefix + where) for name in unset))
            self.read.append((line, constraint))
            for what, target in line.includes:
                self._include(what, target, line.where, label, chain, values)

    def _include(self, what: str, target: str, where: str, label: str | None, chain: tuple[str, ...],
                 values: dict[str, str]) -> None:
        from envpin.base.userfiles import MAX_INPUT_BYTES, UnreadableFile  # noqa: PLC0415 - only a file that includes another

        option = "-r" if what == "requirement" else "-c"
        read_as = target
        target = hidden(target, values)  # as written (`-r ${SECRET_PATH}`), in every message below
        if URL_INCLUDE.match(read_as) or self.include is None:
            why = ("envpin check does not fetch URLs" if URL_INCLUDE.match(read_as)
                   else "envpin check was given this file's text only, not its directory")
            self.problems.append(problem(
                "CHK-INCLUDE-NOT-READ", where, f"pip reads {option} {target}; {why}, so what it "
                f"{'pins' if what == 'requirement' else 'constrains'} is not checked",
                "check that file on its own (download it, or name it on the command line)"))
            return
        if len(chain) >= MAX_INCLUDE_DEPTH:
            raise UnreadableInclude(f"{where}: {option} {target}: includes nest deeper than {MAX_INCLUDE_DEPTH} files")
        self.files += 1
        if self.files > MAX_INCLUDED_FILES:
            raise UnreadableInclude(f"{where}: {option} {target}: more than {MAX_INCLUDED_FILES} included files")
        try:
            included = self.include(label, read_as)
        except UnreadableFile as error:
            raise UnreadableInclude(f"{where}: {option} {target}: cannot be read ({error.reason})") from None
        if included.key in chain:
            self.problems.append(problem(
                "CHK-INCLUDE-CYCLE", where, f"{option} {target} includes a file that includes this one "
                f"({included.label}): pip follows the loop until it fails", "remove one of the includes"))
            return
        self.size += len(included.text)
        if self.size > MAX_INPUT_BYTES:
            raise UnreadableInclude(f"{where}: {option} {target}: the included files are larger than "
                                    f"{MAX_INPUT_BYTES // (1024 * 1024)} MiB in all")
        # pip: a -c file's lines are constraints; a -r inside it is read as requirements again
        self.file(logical_lines(included.text), included.label, constraint=what == "constraint",
                  chain=chain + (included.key,))


def expand_variables(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, tuple[str, ...]]:
    """(`text` with each `${NAME}` that is set and not empty replaced by its value, as pip does; the names left
    as written, which pip passes on literally)."""
    environ = os.environ if environ is None else environ
    if "${" not in text:
        return text, ()
    unset: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if environ.get(name):
            expanded(environ[name], name)  # from now on, whatever envpin prints or writes shows it as ${NAME}
            return environ[name]
        unset.append(name)
        return match.group(0)

    return VARIABLE.sub(value, text), tuple(dict.fromkeys(unset))


def expanded_values(written: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """value -> "${NAME}" for each variable of `written` that expand_variables replaced."""
    environ = os.environ if environ is None else environ
    return {environ[name]: f"${{{name}}}" for name in VARIABLE.findall(written) if environ.get(name)}


def _as_written(line: Line, values: dict[str, str]) -> Line:
    """The line's messages and its pin's label with each expanded value written back as its `${NAME}`; the pin's
    version, range and index keep the values, which the rules judge (pip installs what the values say)."""
    problems = tuple(replace(p, message=hidden(p.message, values), fix=hidden(p.fix, values)) for p in line.problems)
    pin = replace(line.pin, label=hidden(line.pin.label, values)) if line.pin is not None else None
    return _replace(line, problems=problems, pin=pin)


def _unset(name: str, where: str) -> Problem:
    return problem(
        "CHK-ENV-VARIABLE-UNSET", where,
        f"${{{name}}} names an environment variable that is not set (or is empty) here: pip expands it where it is set, "
        "and otherwise passes the text on as written, so this line is checked as written",
        f"set {name} when checking (as where pip installs the file) to check the line pip will read, or write "
        "the value in the file")


def constrained(pins: list[Pin], constraints: list[Pin]) -> tuple[list[Pin], list[Problem]]:
    """The requirements as the constraints narrow them: an exact constraint decides the version, a range is
    added to the requirement's; a constraint that no version of the requirement meets is an error (pip:
    ResolutionImpossible). Constraints under exclusive markers (`onnxruntime==1.23.2; python_version < '3.11'`
    and `==1.24.3; python_version >= '3.11'`) make one requirement per marker, kept apart as markers keep pins
    apart. A constraint on a package nothing requires installs nothing and is dropped."""
    if not constraints:
        return list(pins), []  # as the loop below gives them, without importing packaging.specifiers for each pin
    problems: list[Problem] = []
    result = []
    for pin in pins:
        matching = [c for c in constraints if c.name == pin.name and can_coexist(c, pin)]
        unscoped = [c for c in matching if not c.scope]
        scoped = [c for c in matching if c.scope]
        worlds = [(replace(pin, scope=pin.scope | c.scope), [*unscoped, c]) for c in scoped] or [(pin, unscoped)]
        for requirement, narrowing in worlds:
            narrowed, conflicts = _narrowed(requirement, narrowing)
            result.append(narrowed)
            problems += conflicts
    return result, problems


def _narrowed(pin: Pin, constraints: list[Pin]) -> tuple[Pin, list[Problem]]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a file with constraints

    problems = []
    for constraint in constraints:
        try:
            allowed = SpecifierSet(pin.specifier or (f"=={pin.version}" if pin.version else ""))
            narrowing = SpecifierSet(constraint.specifier or (f"=={constraint.version}" if constraint.version else ""))
        except InvalidSpecifier:
            continue  # the requirement's own line says it is not PEP 508
        label = f"{pin.shown} (constrained by {constraint.shown} at {constraint.where})"
        if pin.version and narrowing.contains(pin.version, prereleases=True):
            continue  # the exact requirement meets the constraint (`==2.0.1+cu118` meets `==2.0.1`)
        if constraint.version and allowed.contains(constraint.version, prereleases=True):
            # `torch>=2.7` (or `torch==2.7.1`) with `torch==2.7.1+cu126`: pip takes the constraint's version
            pin = replace(pin, version=constraint.version, specifier="", label=label,
                          index=pin.index or constraint.index)
        elif pin.version or constraint.version:
            problems.append(_conflict(pin, constraint))
        else:
            pin = replace(pin, specifier=str(allowed & narrowing), label=label)
    return pin, problems


def _conflict(pin: Pin, constraint: Pin) -> Problem:
    return problem("CHK-CONSTRAINT-CONFLICT", pin.where,
                   f"{pin.shown} and the constraint {constraint.shown} ({constraint.where}) allow no common version: "
                   "pip cannot install the file", f"change one of them so that {pin.name} has a version both allow")


def read_line(text: str, where: str) -> Line:
    if text.startswith("-"):
        return _option_line(text, where)
    requirement, _, option_text = _break_args_options(text)
    line = _requirement(requirement, where)
    if not option_text:
        return line
    return _with_requirement_options(line, option_text, where)


def _break_args_options(text: str) -> tuple[str, str, str]:
    """pip's break_args_options: the requirement runs up to the first space-separated token starting with `-`."""
    tokens = text.split(" ")
    for position, token in enumerate(tokens):
        if token.startswith("-"):
            return " ".join(tokens[:position]).strip(), " ", " ".join(tokens[position:])
    return text, "", ""


_SHLEX_WHITESPACE = str.maketrans("\t\r\n", "   ")  # shlex's whitespace; its quotes and escape are ' " and \\


def _tokens(text: str, where: str) -> list[str] | Problem:
    """The words of an option text, or the problem that it cannot be split."""
    if "'" not in text and '"' not in text and "\\" not in text:
        # shlex gives the same words, 30 times slower: a pip-compile file's 20 --hash options a package took
        # three fifths of a 5,000-line check in shlex's character loop
        if "\t" in text or "\r" in text or "\n" in text:
            text = text.translate(_SHLEX_WHITESPACE)
        return [word for word in text.split(" ") if word]
    try:
        return shlex.split(text)
    except ValueError as error:
        return problem("CHK-REQUIREMENT-INVALID", where, f"options {text!r} cannot be split ({error})",
                             "fix the quoting")


def _options(tokens: list[str], table: dict[str, str]) -> Iterable[tuple[str | None, str, str | None]]:
    """(what, option as written, value) per option, read as optparse reads them (`--opt=v`, `--opt v`, `-iURL`,
    `-i URL`); what is None for an option not in the table."""
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if token.startswith("--"):
            name, _, value = token.partition("=")
        elif token.startswith("-") and len(token) > 2:
            name, value = token[:2], token[2:]
        else:
            name, value = token, ""
        what = table.get(name)
        if what is None:
            yield None, token, None
            continue
        takes_value = what not in _FLAGS
        if takes_value and not value:
            value = tokens[position] if position < len(tokens) else ""
            position += 1
        yield what, name, value if takes_value else None


def _option_line(text: str, where: str) -> Line:
    tokens = _tokens(text, where)
    if isinstance(tokens, Problem):
        return Line(where, problems=(tokens,))
    options: list[IndexOption] = []
    problems: list[Problem] = []
    require_hashes = editable = False
    includes: list[tuple[str, str]] = []
    leftover: list[str] = []  # words that are no option: pip's optparse returns them and pip drops them
    for what, written, value in _options(tokens, _FILE_OPTIONS):
        if what is None and not written.startswith("-"):
            leftover.append(written)
        elif what is None:
            problems.append(problem("CHK-REQUIREMENT-INVALID", where, f"pip does not take {written} in a requirements file",
                                    "remove it, or pass it on the pip command line"))
        elif what in _INDEX_OPTIONS:
            if what != "no-index" and not value:
                problems.append(problem("CHK-REQUIREMENT-INVALID", where, f"{written} needs a URL", f"write {written} URL"))
            else:
                options.append(IndexOption(what, value, where))
        elif what in _INCLUDE_OPTIONS:
            if value:
                includes.append((what, value))
            else:
                problems.append(problem("CHK-REQUIREMENT-INVALID", where, f"{written} needs a file", f"write {written} FILE"))
        elif what == "require-hashes":
            require_hashes = True
        elif what == "editable":
            editable = True
    if leftover and leftover[0].startswith(";"):
        problems.append(_ignored_marker(text[text.index(";"):].strip(), where))
    else:
        problems += [problem("CHK-REQUIREMENT-INVALID", where, f"pip does not take {word} in a requirements file",
                             "remove it, or pass it on the pip command line") for word in leftover]
    if editable:
        return Line(where, is_requirement=True, editable=True, options=tuple(options), includes=tuple(includes),
                    problems=tuple(problems))
    return Line(where, options=tuple(options), require_hashes=require_hashes, includes=tuple(includes),
                problems=tuple(problems))


def _ignored_marker(marker: str, where: str) -> Problem:
    """A marker after an option line's options: pip reads the line with optparse and drops the words that are
    no option (req_file.py: `opts, _ = parser.parse_args(...)`), so `--extra-index-url URL ; sys_platform ==
    "win32"` adds the index on every platform."""
    return problem("CHK-OPTION-MARKER-IGNORED", where,
                   f"pip ignores `{marker}` after an option: markers apply to requirements only, so the option "
                   "holds on every platform", "remove the marker, or move the option into a file that only that "
                   "platform installs")


# The two shapes of most lines of a committed file (`pip freeze`, pip-compile): NAME and NAME==VERSION, the version
# a release in PEP 440's normal form with an optional local label (2.1.0, 2.1.0.post3, 1.0rc1, 2.5.1+cu124).
# packaging's Requirement gives such a line exactly its name, no extras, marker or URL, and the version as written;
# read here, a file of them is checked without packaging.requirements, whose marker parser and packaging.tags cost
# about as much as `import yaml` (docs/performance.md). Everything else (ranges, extras, markers, URLs, other
# spellings) is read by packaging; tests/unit/test_requirement_fast_paths.py holds the two readings equal.
_PLAIN_REQUIREMENT = re.compile(
    r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"  # a PEP 508 name
    r"(?:==([0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?))?"
)


def _requirement(text: str, where: str) -> Line:
    plain = _PLAIN_REQUIREMENT.fullmatch(text)
    if plain:
        name, exact = canonical_name(plain.group(1)), plain.group(2)
        pin = Pin(name=name, where=where, label=text, version=exact)
        return Line(where, pin=pin, is_requirement=True, pinned=exact is not None)
    return _read_by_packaging(text, where)


def _read_by_packaging(text: str, where: str) -> Line:
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - packaging.requirements is heavy (~20 ms): only a requirement needs it

    if _is_url_or_path(text):
        # pip splits a URL line's marker at "; " (a bare ";" can be part of a URL): parse_req_from_line
        url, _, marker = text.partition("; ") if "://" in text.split(" @ ")[0] else text.partition(";")
        return _direct_reference(url.strip(), text, where, scope=frozenset({marker.strip()}) if marker.strip() else frozenset())
    try:
        requirement = Requirement(text)
    except InvalidRequirement as error:
        reason = str(error).splitlines()[0]
        return Line(where, is_requirement=True, problems=(problem(
            "CHK-REQUIREMENT-INVALID", where, f"{text!r} is not a requirement pip can read ({reason})",
            "write it as NAME==VERSION (PEP 508), or a URL",
        ),))
    scope = frozenset({str(requirement.marker)}) if requirement.marker else frozenset()
    extras = frozenset(canonical_name(e) for e in requirement.extras)
    name = canonical_name(requirement.name)
    if requirement.url:
        return _direct_reference(requirement.url, text, where, name=name, extras=extras, scope=scope)
    specifiers = list(requirement.specifier)
    if len(specifiers) > MAX_SPECIFIERS:
        raise MalformedFile(f"{where}: {len(specifiers):,} version clauses in one requirement, more than envpin takes "
                            f"({MAX_SPECIFIERS})", where)
    exact = None
    if len(specifiers) == 1 and specifiers[0].operator in ("==", "===") and "*" not in specifiers[0].version:
        exact = specifiers[0].version
    pin = Pin(name=name, where=where, label=text, version=exact, extras=extras, scope=scope,
              specifier="" if exact else str(requirement.specifier))
    return Line(where, pin=pin, is_requirement=True, pinned=exact is not None)


def _is_url_or_path(text: str) -> bool:
    return "://" in text.split(" @ ")[0] or text.startswith((".", "/")) or text.endswith((".whl", ".tar.gz", ".zip"))


def _direct_reference(url: str, text: str, where: str, *, name: str | None = None,
                      extras: frozenset[str] = frozenset(), scope: frozenset[str] = frozenset()) -> Line:
    """A URL or path requirement: a wheel's file name says its project and version (and the URL's directory
    which PyTorch index it is on)."""
    location = url.split("#", 1)[0]
    wheel = parse_wheel(file_name(location)) if location.endswith(".whl") else None
    if wheel is None:
        pin = Pin(name=name, where=where, label=text, extras=extras, scope=scope) if name else None
        return Line(where, pin=pin, is_requirement=True, pinned=True)
    project, version, platforms, pythons = wheel
    pin = Pin(name=name or project, where=where, label=text, version=version, index=location.rsplit("/", 1)[0],
              extras=extras, scope=scope, platforms=platforms, pythons=pythons)
    return Line(where, pin=pin, is_requirement=True, pinned=True)


def _with_requirement_options(line: Line, option_text: str, where: str) -> Line:
    tokens = _tokens(option_text, where)
    if isinstance(tokens, Problem):
        return _replace(line, problems=line.problems + (tokens,))
    hashes: list[str] = []
    problems = list(line.problems)
    for what, written, value in _options(tokens, {**_REQUIREMENT_OPTIONS, **_FILE_OPTIONS}):
        if what == "hash":
            hashes.append(value or "")
        elif what in _INDEX_OPTIONS:
            problems.append(problem(
                "CHK-INDEX-OPTION-IGNORED", where,
                f"pip ignores {written} on a requirement line: only --hash, --config-settings and --global-option "
                "act on one requirement, so this index is never consulted",
                f"put `{written} {value or ''}`".rstrip() + " on a line of its own"
                + (" (pip applies it to the whole file)" if what != "no-index" else ""),
            ))
        elif what is None:
            problems.append(problem("CHK-REQUIREMENT-INVALID", where, f"pip does not take {written} after a requirement",
                                    "remove it"))
    return _replace(line, hashes=tuple(hashes), problems=tuple(problems))


def _replace(line: Line, **changes) -> Line:
    return replace(line, **changes)


def hash_mode_problems(lines: list[Line]) -> list[Problem]:
    problems = [p for line in lines for value in line.hashes for p in _hash_value_problems(value, line.where)]
    if not any(line.require_hashes or line.hashes for line in lines):
        return problems
    for line in (line for line in lines if line.is_requirement):
        shown = line.pin.shown if line.pin else "this requirement"
        if line.editable:
            problems.append(problem("CHK-HASH-MISSING", line.where,
                                    "hash-checking mode is on and pip cannot hash an editable requirement",
                                    "install the editable project in a separate step, or drop hashes from this file"))
            continue
        if not line.hashes:
            problems.append(problem("CHK-HASH-MISSING", line.where,
                                    f"{shown} has no --hash, but hash-checking mode is on (--require-hashes or another "
                                    "line's --hash): pip refuses the whole file",
                                    "regenerate the file with hashes (`pip-compile --generate-hashes`, "
                                    "`uv pip compile --generate-hashes`)"))
        if not line.pinned:
            problems.append(problem("CHK-HASH-UNPINNED", line.where,
                                    f"{shown} is not pinned with ==, which hash-checking mode requires",
                                    "pin an exact version and hash its files"))
    return problems


def _hash_value_problems(value: str, where: str) -> list[Problem]:
    parts = split_hash(value)
    if parts is None:
        return [problem("CHK-HASH-MALFORMED", where, f"--hash={value} is not algorithm:digest",
                        "write --hash=sha256:<64 hex digits>")]
    algorithm, digest = parts
    if algorithm not in PIP_ALGORITHMS:
        return [problem("CHK-HASH-ALGORITHM", where,
                        f"--hash={algorithm}:…: pip allows only {', '.join(PIP_ALGORITHMS)} and rejects the file",
                        "regenerate the hashes as sha256")]
    reason = digest_problem(algorithm, digest)
    return [problem("CHK-HASH-MALFORMED", where, f"--hash: {reason}", "copy the digest again from the index")] if reason else []
