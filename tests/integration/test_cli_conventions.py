"""The everyday conventions of the command line (envpin/commands/conventions.py, envpin/base/terminal.py, docs/cli.md):
-q/-v before or after the command, --color with NO_COLOR and FORCE_COLOR, `-o -` for stdout, "did you mean",
shell completion generated from the parser (run in a real bash), and progress on stderr only on a terminal
(a real pseudo-terminal, `db refresh` against the loopback PyPI of tests/integration/refresh_world.py)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpin.base import terminal
from envpin.cli import build_parser, main
from envpin.commands.conventions import QuietStream, apply, suggestion
from tests.conftest import REPO
from tests.integration.refresh_world import World

try:
    import pty  # POSIX only: the tests that need a pseudo-terminal are skipped on Windows
except ImportError:
    pty = None  # type: ignore[assignment]
needs_pty = pytest.mark.skipif(pty is None, reason="pseudo-terminals (pty) are POSIX only")

RTX_3090 = ["--os", "linux", "--arch", "x86_64", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090",
            "--python", "3.11"]
GTX_1080_TI = ["--os", "linux", "--arch", "x86_64", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce GTX 1080 Ti",
               "--python", "3.11"]


def envpin(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CI")} | (env or {})
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=REPO,
                          env=environment, timeout=120)


# --- did you mean ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("words", "meant", "help_of"), [
    (["slove"], "'solve'", "envpin --help"),
    (["db", "inof"], "'info'", "envpin db --help"),
    (["solve", "--fromat", "json"], "'--format'", "envpin solve --help"),
    (["solve", "--format", "jsno"], "'json'", "envpin solve --help"),
    (["db", "refresh", "--dyr-run"], "'--dry-run'", "envpin db refresh --help"),
])
def test_a_mistyped_command_option_or_choice_gets_the_nearest(words, meant, help_of, capsys):
    assert main(words) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"did you mean {meant}?" in error and f"(see `{help_of}`)" in error


def test_no_suggestion_when_nothing_is_near(capsys):
    assert main(["zzzzzz"]) == 2
    assert "did you mean" not in capsys.readouterr().err
    assert suggestion("unrecognized arguments: --qqqqqqqq", None) == ""


def test_the_suggestion_is_in_the_json_error_too(capsys):
    assert main(["solve", "--format", "json", "--fromat", "json"]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["error"]["code"] == "usage" and "did you mean '--format'?" in document["error"]["message"]


# --- -q / -v ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_keeps_stderr_to_warnings_and_errors(where, tmp_path):
    out = tmp_path / "environment.yml"
    words = ["solve", *RTX_3090, "-o", str(out)]
    loud = envpin(*words)
    assert loud.returncode == 0 and f"wrote {out}" in loud.stderr
    quiet = envpin(*(["-q", *words] if where == "before" else [*words, "-q"]))
    assert quiet.returncode == 0 and quiet.stderr == "" and "torch==" in out.read_text()
    failed = envpin("-q", "solve", *RTX_3090, "--gpu", "NVIDIA GeForce RTX 3090", "--compute-capability", "99.9")
    assert failed.returncode == 2 and failed.stderr.startswith("envpin: error:")


def test_quiet_stream_passes_whole_lines_of_errors_and_warnings():
    sink = io.StringIO()
    stream = QuietStream(sink)
    stream.write("wrote x\nenvpin: warn")
    stream.write("ing: unverified thing\nenvpin: note: y\nenvpin: error: z\n")
    assert sink.getvalue() == "envpin: warning: unverified thing\nenvpin: error: z\n" and not stream.isatty()
    stream.write("envpin: error: no line break")
    stream.finish()
    assert sink.getvalue().endswith("envpin: error: z\nenvpin: error: no line break\n")


def test_quiet_and_verbose_together_is_bad_input():
    result = envpin("-q", "db", "info", "-v")
    assert result.returncode == 2 and "choose one" in result.stderr and result.stderr.count("\n") == 1


def test_a_commands_own_quiet_and_verbose_are_set_by_the_global_ones():
    args = build_parser("install").parse_args(["-q", "install", "--prefix", "x", "--lock", "y"])
    apply(args)
    assert args.quiet is True and terminal.quiet()
    sys.stderr = sys.__stderr__  # apply wrapped it; main restores it, this test calls apply alone
    terminal.configure()
    args = build_parser("db").parse_args(["-v", "db", "refresh", "--dry-run"])
    apply(args)
    assert args.verbose is True and terminal.verbose()
    terminal.configure()


# --- --color, NO_COLOR, FORCE_COLOR -----------------------------------------------------------------------------

@pytest.mark.parametrize(("flags", "env", "coloured"), [
    ([], {}, False),  # a pipe: no colour
    (["--color", "always"], {}, True),
    (["--color=never"], {"FORCE_COLOR": "1"}, False),
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"FORCE_COLOR": "0"}, False),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # NO_COLOR wins over FORCE_COLOR (uv's order)
    (["--color", "always"], {"NO_COLOR": "1"}, True),  # the flag wins over the environment
])
def test_colour_follows_the_flag_then_no_color_then_force_color(flags, env, coloured):
    result = envpin("matrix", *GTX_1080_TI, *flags, env=env)
    assert result.returncode == 0, result.stderr
    assert ("\x1b[" in result.stdout) is coloured and "[ok]" in result.stdout


def test_colour_is_never_in_a_file_or_json(tmp_path):
    result = envpin("matrix", *GTX_1080_TI, "--color", "always", "--format", "json")
    assert result.returncode == 0 and "\x1b" not in result.stdout
    json.loads(result.stdout)


def test_a_bad_colour_mode_is_a_usage_error():
    result = envpin("db", "info", "--color", "sometimes")
    assert result.returncode == 2 and "invalid choice: 'sometimes'" in result.stderr


# --- -o - ---------------------------------------------------------------------------------------------------------

def test_dash_output_writes_to_stdout_where_o_writes_a_file(tmp_path):
    solved = envpin("solve", *RTX_3090, "--format", "requirements.txt", "-o", "-")
    assert solved.returncode == 0 and "torch==" in solved.stdout and "wrote" not in solved.stderr
    assert not (REPO / "-").exists()
    (tmp_path / "requirements.txt").write_text("torch>=2.4\n")
    initialised = envpin("init", str(tmp_path), *RTX_3090, "-o", "-")
    assert initialised.returncode == 0 and "torch==" in initialised.stdout and "pre-commit" not in initialised.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requirements.txt"]
    grid = envpin("matrix", *GTX_1080_TI, "-o", "-", "--format", "json")
    assert grid.returncode == 0 and json.loads(grid.stdout)


def test_dash_output_is_refused_where_o_is_a_folder(tmp_path):
    result = envpin("fleet", "manifests", "--targets", str(tmp_path / "nodes.json"), "--python", "3.11", "--format", "dockerfile",
                    "-o", "-")
    assert result.returncode == 2 and "writes a folder, not stdout" in result.stderr


# --- completion -------------------------------------------------------------------------------------------------

def complete_in_bash(script: str, line: str) -> list[str]:
    """What bash offers for `line` (the cursor at its end) with the generated script loaded."""
    words = line.split(" ")
    program = (f"{script}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\nCOMP_CWORD={len(words) - 1}\n"
               "_envpin_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                            timeout=30, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash (the script is for bash)")
def test_bash_completion_offers_commands_subcommands_options_and_choices():
    script = envpin("completion", "bash")
    assert script.returncode == 0 and script.stderr == ""
    assert subprocess.run(["bash", "-n"], input=script.stdout, text=True, timeout=30).returncode == 0
    assert complete_in_bash(script.stdout, "envpin so") == ["solve"]
    assert complete_in_bash(script.stdout, "envpin db r") == ["refresh"]
    assert complete_in_bash(script.stdout, "envpin solve --for") == ["--format"]
    assert "environment.yml" in complete_in_bash(script.stdout, "envpin solve --format ")
    assert complete_in_bash(script.stdout, "envpin fleet manifests --format k") == ["kubernetes"]
    assert "--dry-run" in complete_in_bash(script.stdout, "envpin db refresh --")
    assert "--dry-run" not in complete_in_bash(script.stdout, "envpin db info --")


def test_zsh_and_fish_scripts_name_every_command():
    zsh, fish = envpin("completion", "zsh"), envpin("completion", "fish")
    assert zsh.returncode == 0 and zsh.stdout.startswith("autoload -U +X bashcompinit && bashcompinit\n")
    assert fish.returncode == 0
    for command in ("solve", "detect", "matrix", "completion"):
        assert f"-a {command} " in fish.stdout
    assert "complete -c envpin -n '__fish_seen_subcommand_from db; and not __fish_seen_subcommand_from info " \
           "validate refresh' -f -a refresh" in fish.stdout
    assert "-l format -x -a 'text json environment.yml requirements.txt pylock.toml uv.lock index-url pip uv'" in fish.stdout
    if shutil.which("zsh"):
        assert subprocess.run(["zsh", "-n"], input=zsh.stdout, text=True, timeout=30).returncode == 0
    if shutil.which("fish"):
        assert subprocess.run(["fish", "-n"], input=fish.stdout, text=True, timeout=30).returncode == 0


def test_an_unknown_shell_is_a_usage_error():
    result = envpin("completion", "powershell")
    assert result.returncode == 2 and "bash, zsh or fish" in result.stderr


# --- progress ---------------------------------------------------------------------------------------------------

def stderr_on_a_terminal(words: list[str], env: dict[str, str], cwd) -> tuple[str, str]:
    """Run `words` with stderr on a pseudo-terminal (a person watching) and stdout on a pipe: (stdout, stderr)."""
    leader, follower = pty.openpty()
    out = Path(cwd) / ".stdout"  # a file, not a pipe: a child writing more than a pipe holds never blocks on it
    with open(out, "wb") as sink:
        process = subprocess.Popen(words, stdout=sink, stderr=follower, env=env, cwd=cwd)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=120)
    return out.read_text(encoding="utf-8"), b"".join(chunks).decode()


def watching_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("CI", "TERM")} | {"TERM": "xterm-256color"}


def refresh_with_stderr(on_terminal: bool, server, tmp_path) -> tuple[str, str]:
    words = [sys.executable, "-m", "envpin", "db", "refresh", "--dry-run", "--recheck", "0", "--date", "2026-12-01",
             "--json-url", f"{server.base}/pypi", "--simple-url", f"{server.base}/simple", "--timeout", "2"]
    if on_terminal:
        return stderr_on_a_terminal(words, watching_env(), tmp_path)
    result = subprocess.run(words, capture_output=True, text=True, env=watching_env(), timeout=120, cwd=tmp_path)
    return result.stdout, result.stderr


@needs_pty
def test_db_refresh_shows_progress_on_a_terminal_only_and_never_on_stdout(tmp_path):
    with World(plant=False).serve() as server:
        report, shown = refresh_with_stderr(True, server, tmp_path)
        piped_report, piped = refresh_with_stderr(False, server, tmp_path)
    assert "\r\x1b[2Kenvpin db refresh: reading PyPI [1] " in shown
    assert "\x1b" not in report and report.startswith("#")
    assert "\r" not in piped and "reading PyPI" not in piped and piped.startswith("envpin refresh:")
    assert piped_report == report


def test_the_status_line_writes_nothing_off_a_terminal_or_under_quiet():
    class Terminal(io.StringIO):
        def isatty(self):  # the platform fact faked: this stream is a terminal
            return True

    on_terminal, off_terminal = Terminal(), io.StringIO()
    environment = {k: os.environ.pop(k) for k in ("CI", "TERM") if k in os.environ}
    try:
        line = terminal.StatusLine("work", stream=on_terminal, interval=0)
        line.update("one")
        line.update("two")
        line.clear()
        assert on_terminal.getvalue() == "\r\x1b[2Kwork [1] one\r\x1b[2Kwork [2] two\r\x1b[2K"
        quiet_line = terminal.StatusLine("work", stream=off_terminal, interval=0)
        quiet_line.update("one")
        quiet_line.clear()
        assert off_terminal.getvalue() == ""
        terminal.configure(verbosity=-1)
        assert not terminal.StatusLine("work", stream=Terminal()).enabled
    finally:
        terminal.configure()
        os.environ.update(environment)


@needs_pty
def test_matrix_over_an_inventory_shows_progress_on_a_terminal_only(tmp_path):
    machine = json.loads((REPO / "tests" / "fixtures" / "doctor" / "machines" / "linux-t4-515.105.01.json").read_text())
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps([{**machine, "name": "t4-a"}, {**machine, "name": "t4-b", "python": {
        **machine["python"], "version": "3.12.3"}}]))
    words = [sys.executable, "-m", "envpin", "matrix", "--targets", str(fleet), "--format", "json"]
    document, shown = stderr_on_a_terminal(words, watching_env(), tmp_path)
    assert "\r\x1b[2Kenvpin matrix: machine classes [1] 1/" in shown
    assert len(json.loads(document)["results"]) == 2 and "\x1b" not in document
    piped = subprocess.run(words, capture_output=True, text=True, env=watching_env(), timeout=120, cwd=tmp_path)
    assert piped.stderr == "" and json.loads(piped.stdout) == json.loads(document)
