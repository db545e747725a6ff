"""The requirements reader's two fast paths give what the slow ones give, line for line.

A committed file's lines are mostly `NAME` and `NAME==VERSION` (pip freeze, pip-compile), and a pip-compile file's
options mostly `--hash=sha256:…` words: envpin.readers.requirements reads those shapes itself, and packaging's
Requirement and shlex.split everything else. Both fast paths are checked here against the slow ones on every
requirement line of the recorded repositories (tests/fixtures/repos) and on generated texts.
"""

from __future__ import annotations

import random
import re
import shlex
from pathlib import Path

import pytest

from envpin.readers import requirements

REPOSITORIES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"


def recorded_requirement_lines() -> list[str]:
    lines = set()
    for path in sorted(REPOSITORIES.rglob("*.txt")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = re.sub(r"(^|\s)#.*", "", line).strip()
            if line and not line.startswith("-"):
                lines.add(requirements._break_args_options(line)[0])
    return sorted(lines)


RECORDED = recorded_requirement_lines()
# shapes beside the recorded ones: on each side of what the fast path takes
MADE = ["torch", "Torch_Vision==0.20.1", "a..b==1.0", "torch==2.5.1+cu124", "torch==2.5.1+CU124", "torch==2.5.1rc1", "torch==2.5.1.post3.dev0", "a==1.0a1.post2", "a==1.0.pre1", "a==1.0-1", "a==1.0rc", "a==1.dev",
        "torch==2.*", "torch==v2.5", "torch ==2.5.1", "torch-", "-torch", "torch===2.5.1", "torch[cuda]==2.5.1",
        "torch==2.5.1;python_version<'3.13'", "torch>=2.4", "9==1", "a==1.", "a==.1", "a==1..2", "a==1+", "a==1+a..b"]


def test_the_recorded_lines_include_both_shapes():
    plain = [line for line in RECORDED if requirements._PLAIN_REQUIREMENT.fullmatch(line)]
    assert len(plain) > 100 and len(RECORDED) - len(plain) > 50  # the fast path and packaging both see real lines


@pytest.mark.parametrize("text", RECORDED + MADE)
def test_a_requirement_reads_the_same_with_and_without_packaging(text):
    assert requirements._requirement(text, "line 1") == requirements._read_by_packaging(text, "line 1")


def test_option_words_split_as_shlex_splits_them():
    texts = [line.split(" ", 1)[1] for line in RECORDED if " " in line]
    alphabet = list("ab-=:#\\'\" \t\r\n\x0b\x0c\u00a0\u2003")
    generator = random.Random(34)
    texts += ["".join(generator.choice(alphabet) for _ in range(generator.randint(0, 14))) for _ in range(20_000)]
    texts += ["--hash=sha256:" + "a" * 64 + " \t--hash=sha256:" + "b" * 64, "", "   ", "--config-settings='a b'"]
    for text in texts:
        try:
            expected: list[str] | str = shlex.split(text)
        except ValueError:
            expected = "cannot be split"
        found = requirements._tokens(text, "line 1")
        assert (found if isinstance(found, list) else "cannot be split") == expected, repr(text)


def test_a_comment_line_is_told_as_the_comment_pattern_tells_it():
    texts = RECORDED + ["# x", "  # x", "\t#x", "\u00a0# x", "x # y", "x#y", "", "  ", "#"]
    for text in texts:
        assert text.lstrip().startswith("#") == bool(requirements._COMMENT.match(text)), repr(text)
