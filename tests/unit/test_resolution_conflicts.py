"""Reading uv's explanation of a conflict (envpin.lock.resolution): the messages are uv 0.13.9's own, printed by
`uv pip compile` against pypi.org for the requirement sets named (2026-12-01)."""

from __future__ import annotations

from envpin.lock.resolution import Move, moves_from, name_of, not_cached, unserved

# tensorflow[and-cuda]==2.21.0 beside tensorflow-text>=2.20.1,<2.21
TEXT_BOUND = ("No solution found when resolving dependencies cause: Because tensorflow-text==2.20.1 depends on "
              "tensorflow>=2.20.0,<2.21 and you require tensorflow[and-cuda]==2.21.0, we can conclude that your "
              "requirements and tensorflow-text==2.20.1 are incompatible. And because you require "
              "tensorflow-text>=2.20.1,<2.21, we can conclude that your requirements are unsatisfiable.")
# tensorflow[and-cuda]==2.20.0 beside protobuf==4.25.1
PROTOBUF = ("No solution found when resolving dependencies cause: Because tensorflow==2.20.0 depends on "
            "protobuf>=5.28.0 and you require tensorflow[and-cuda]==2.20.0, we can conclude that you require "
            "protobuf>=5.28.0. And because you require protobuf==4.25.1, we can conclude that your requirements are "
            "unsatisfiable.")
# tensorflow[and-cuda]==2.21.0 with --offline and an empty cache
OFFLINE = ("No solution found when resolving dependencies cause: Because there is no version of "
           "tensorflow[and-cuda]==2.21.0 and you require tensorflow[and-cuda]==2.21.0, we can conclude that your "
           "requirements are unsatisfiable.")


def test_a_lines_bound_on_the_solved_framework_is_the_move():
    assert moves_from(TEXT_BOUND, {"tensorflow": "2.21.0"}) == [
        Move("tensorflow", "tensorflow>=2.20.0,<2.21", "tensorflow-text==2.20.1 depends on tensorflow>=2.20.0,<2.21")]


def test_a_solved_release_whose_requirement_clashes_is_passed_over():
    assert moves_from(PROTOBUF, {"tensorflow": "2.20.0"}) == [
        Move("tensorflow", "tensorflow!=2.20.0", "tensorflow==2.20.0 depends on protobuf>=5.28.0")]


def test_a_bound_the_solved_version_meets_moves_nothing():
    assert moves_from(TEXT_BOUND, {"tensorflow": "2.20.0"}) == []


def test_a_conflict_without_a_solved_package_moves_nothing():
    assert moves_from(PROTOBUF, {"torch": "2.8.0+cu128"}) == []


def test_a_version_the_index_does_not_serve():
    assert unserved(OFFLINE) == ["tensorflow[and-cuda]==2.21.0"]
    assert name_of("tensorflow[and-cuda]==2.21.0") == "tensorflow"
    assert unserved(PROTOBUF) == []


# uv 0.13.9 --offline, as envpin.lock.engines.engine_error puts it on one line: a cache that holds the index's page
# for another Python but not this file (the loopback tests' environment.yml case), and one that holds nothing of the
# project (`check --resolve --offline` of protobuf==4.25.1)
NOT_DOWNLOADED = ("No solution found when resolving dependencies cause: Because tensorflow==2.21.0 needs to be "
                  "downloaded from a registry and envpin-lock-input depends on tensorflow==2.21.0, we can conclude that "
                  "your "
                  "requirements are unsatisfiable.")
NOT_IN_CACHE = ("No solution found when resolving dependencies cause: Because protobuf was not found in the cache and "
                "you require protobuf==4.25.1, we can conclude that your requirements are unsatisfiable.")


def test_what_uv_offline_says_its_cache_does_not_hold():
    assert not_cached(NOT_DOWNLOADED) == ["tensorflow==2.21.0"]
    assert not_cached(NOT_IN_CACHE) == ["protobuf"]
    assert not_cached(PROTOBUF) == [] and not_cached(TEXT_BOUND) == []  # a real conflict is no cache miss


def test_a_files_lines_are_resolved_as_pip_reads_them():
    from pathlib import Path  # noqa: PLC0415 - the argv's paths

    from envpin.lock.engines import uv_check_argv  # noqa: PLC0415 - check --resolve's call

    argv = uv_check_argv("uv", Path("in.txt"), ("https://pypi.org/simple", "https://download.pytorch.org/whl/cu124"),
                         "3.11", "linux-x86_64", Path("out.txt"), offline=True)
    assert argv[:4] == ["uv", "pip", "compile", "in.txt"]
    assert argv[argv.index("--index-url") + 1] == "https://pypi.org/simple"
    assert argv[argv.index("--extra-index-url") + 1] == "https://download.pytorch.org/whl/cu124"
    assert argv[argv.index("--index-strategy") + 1] == "unsafe-best-match"  # pip's rule: the best version anywhere
    assert argv[argv.index("--python-platform") + 1] == "x86_64-unknown-linux-gnu" and argv[-1] == "--offline"
