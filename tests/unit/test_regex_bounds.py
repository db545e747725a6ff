"""Every regular expression in envpin, fed a megabyte of one character class: each finishes, because none can
backtrack quadratically on the text it is given. A pattern such as `[a-z][a-z0-9+.-]*://`, searched in a run of n
letters, tries every start and scans the run from each: n²/2 steps, 25 s for a 20,000-letter GPU name, hours for a
megabyte. A linear pattern takes milliseconds; the watchdog (60 s) turns a quadratic one into a failure, not a hang.

The patterns are found in the source (every `re.compile`, `re.search` … with a literal pattern), so a new one is
tested without being listed here. Each is run as it is used: `re.match`/`re.fullmatch` anchored, everything else
(and every compiled pattern) searched. The few that are not searched are listed in ANCHORED_ONLY with why.
"""

from __future__ import annotations

import ast
import random
import re
import signal
from pathlib import Path

import pytest

from envpin.doctor import arch
from envpin.readers import environment_yml, requirements
from envpin.resolver.urls import redact_credentials

SOURCE = Path(__file__).resolve().parents[2] / "envpin"
MEGABYTE = 1024 * 1024
TEXTS = {
    "letters": "a" * MEGABYTE,
    "digits": "1" * MEGABYTE,
    "spaces": " " * MEGABYTE,
    "name characters": "aA1-." * (MEGABYTE // 5),
    "url punctuation": "a:/" * (MEGABYTE // 3),
}
CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}
# Compiled patterns used only with .match/.fullmatch (one start, so a run costs its length), or only on envpin's own
# database files (not text a user or a stranger's pull request controls)
ANCHORED_ONLY = {
    "compat/yaml_subset.py": "the database's YAML subset, on envpin's own data files (and anchored with .match)",
    "facts/checks.py:_AMDGPU_DKMS": "only .fullmatch",
    "readers/poetry.py:_CLAUSE": "only .fullmatch",
}


def _patterns() -> list[tuple[str, str, int, str]]:
    """(where, pattern, flags, how it is run) for every literal pattern in envpin's source."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                names[id(node.value)] = node.targets[0].id
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CALLS
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
                continue
            pattern = _literal(node.args[0])
            if pattern is None:
                continue
            flags = _flags(node)
            where = f"{relative}:{names.get(id(node), node.lineno)}"
            if relative in ANCHORED_ONLY or where in ANCHORED_ONLY:
                how = "match"
            else:
                how = node.func.attr if node.func.attr in ("match", "fullmatch") else "search"
            found.append((where, pattern, flags, how))
    return found


def _literal(node: ast.expr) -> str | None:
    """A string constant, or a + of them (some patterns are built from pieces), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _flags(node: ast.Call) -> int:
    value = 0
    candidates = [*node.args[1:], *(k.value for k in node.keywords if k.arg == "flags")]
    for candidate in candidates:
        for part in ast.walk(candidate):
            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "re":
                flag = getattr(re, part.attr, None)
                if isinstance(flag, re.RegexFlag):
                    value |= flag
    return value


PATTERNS = _patterns()


def test_the_source_has_the_patterns_this_test_is_about():
    wheres = {where for where, *_ in PATTERNS}
    assert len(PATTERNS) > 100
    assert "resolver/urls.py:_CREDENTIALS" in wheres and "readers/requirements.py:_COMMENT" in wheres


class _Watchdog(Exception):
    pass


def _expire(signum, frame):
    raise _Watchdog


@pytest.mark.parametrize(("where", "pattern", "flags", "how"), PATTERNS, ids=[p[0] for p in PATTERNS])
def test_a_megabyte_of_one_character_class_finishes(where, pattern, flags, how):
    compiled = re.compile(pattern, flags)
    run = {"match": compiled.match, "fullmatch": compiled.fullmatch, "search": compiled.search}[how]
    previous = signal.signal(signal.SIGALRM, _expire)
    try:
        for name, text in TEXTS.items():
            signal.alarm(60)  # a linear pattern takes milliseconds; a quadratic one, hours
            try:
                run(text)
            except _Watchdog:
                pytest.fail(f"{where}: {pattern!r} did not finish on a megabyte of {name}: it backtracks quadratically")
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_redaction_of_a_megabyte_name_is_linear_and_still_redacts():
    text = "a" * MEGABYTE + " 1https://user:secret@example.org/x 9.x+git://token@host"
    redacted = redact_credentials(text)
    assert redacted.endswith(" 1https://user:****@example.org/x 9.x+git://****@host")


# The patterns made linear, against the quadratic ones they replaced: the same answers on random text over the
# characters that matter to each (a fixed seed, so a failure replays)
QUADRATIC = {
    "credentials": r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/@\s:]*)(?::(?P<secret>[^/@\s]*))?@",
    "operator spaces": r"\s*([=<>!~,|])\s*",
    "bracket field": r"(\w+)\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|([^,\s]+))",
    "comment": r"(^|\s+)#.*$",
    "extension file": r"([\w.\-]+\.(?:cpython-[\w-]+\.so|so|pyd))\b",
}


def _random_texts(alphabet: str, count: int = 20_000, seed: int = 35) -> list[str]:
    generator = random.Random(seed)
    return ["".join(generator.choice(alphabet) for _ in range(generator.randint(0, 16))) for _ in range(count)]


def test_the_linear_patterns_answer_as_the_quadratic_ones_did():
    old = re.compile(QUADRATIC["credentials"], re.IGNORECASE)

    def hide(match):
        secret = f"{match.group('user')}:****@" if match.group("secret") is not None else "****@"
        return match.group("scheme") + secret

    for text in _random_texts("aZ09+.-:/@ \nſ"):
        assert redact_credentials(text) == old.sub(hide, text), text
    old = re.compile(QUADRATIC["operator spaces"])
    for text in _random_texts("a1 =<,|\t."):
        assert environment_yml._SPACES_BEFORE_OPERATOR.sub("", environment_yml._SPACES_AFTER_OPERATOR.sub("", text)) \
            == old.sub(r"\1", text), text
    old = re.compile(QUADRATIC["bracket field"])
    for text in _random_texts("ab_1 ='\","):
        assert [m.groups() for m in environment_yml._BRACKET_FIELD.finditer(text)] == \
            [m.groups() for m in old.finditer(text)], text
    old = re.compile(QUADRATIC["comment"])
    for text in _random_texts("a #\t"):
        assert requirements._COMMENT.sub("", text) == old.sub("", text), text
        assert bool(requirements._COMMENT.match(text)) == bool(old.match(text)), text
    old = re.compile(QUADRATIC["extension file"])
    for text in _random_texts("aso.pyd-c x"):
        assert arch.EXTENSION_FILE.findall(text) == old.findall(text), text
