"""Every command's --help shows examples and the exit codes, and no internal name reaches the user."""

from __future__ import annotations

import shlex

import pytest

from envpin.cli import build_parser, command_named, main
from envpin.commands import COMMANDS, EXAMPLES


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_has_examples_and_exit_codes(command, capsys):
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "examples:" in text and "exit codes:" in text
    assert all(line in text for line in EXAMPLES[command])
    assert "_command" not in text and "db_command" not in text


@pytest.mark.parametrize("words", [["db", "info"], ["db", "validate"], ["db", "refresh"], ["conda", "solve"],
                                   ["conda", "lock"], ["conda", "create"], ["conda", "virtual-packages"],
                                   ["fleet", "manifests"], ["fleet", "detect"], ["fleet", "provision"],
                                   ["fleet", "status"]])
def test_a_subcommands_help_says_what_it_does_with_examples_and_exit_codes(words, capsys):
    assert main([*words, "--help"]) == 0
    text = capsys.readouterr().out
    assert text.split("\n\n")[1].strip()  # the line under the usage: what it does
    assert "examples:" in text and "exit codes:" in text
    examples = text.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert examples and all(f"{line.strip()} ".startswith(f"envpin {' '.join(words)} ") for line in examples)


@pytest.mark.parametrize("words", [["db"], ["conda"], []])
def test_a_missing_subcommand_is_named_for_the_user(words, capsys):
    assert main(words) == 2
    error = capsys.readouterr().err
    assert "COMMAND" in error and "_command" not in error and error.count("\n") == 1


def test_every_example_parses():
    """The examples are real command lines: each one parses (running them needs a machine and files)."""
    for lines in EXAMPLES.values():
        text = "\n".join(lines).replace("\\\n", " ")
        for line in text.splitlines():
            words = shlex.split(line.split("  #")[0], comments=True)
            if "|" in words:
                words = words[words.index("|") + 1:]
            if ">" in words:
                words = words[: words.index(">")]
            assert words[0] == "envpin", line
            build_parser(command_named(words[1:])).parse_args(words[1:])


def test_an_in_process_run_leaves_the_garbage_collector_as_it_was(capsys):
    # Only envpin's own process (main() with the command line) freezes objects and raises the collector's threshold:
    # a caller in-process (these tests) keeps its collector as it set it.
    import gc  # noqa: PLC0415 - only this test needs it

    before = gc.get_threshold(), gc.get_freeze_count()
    assert main(["--version"]) == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
