"""A command envpin runs that hides processes from its process group: a child that calls setsid() (a session of its
own, out of reach of killpg), and a daemon made by a double fork (its parent exits, so it is nobody's descendant).
At the timeout every one of them is killed (envpin.host.runner.kill_tree walks /proc, and envpin is the child
subreaper that orphans are re-parented to). Real processes throughout: a Python script that forks, calls os.setsid
and sleeps, run through each of envpin's ways of running a command and through `envpin verify --interpreter`."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from envpin.host.runner import CommandTimeout, SubprocessRunner, run_command
from envpin.provision.runner import run_streaming
from tests.faults.support import assert_one_line_error, envpin
from tests.faults.test_fault_children import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process-tree walk reads /proc")

# Forks two hidden sleepers: one that calls setsid() and stays the script's child, one that double-forks away (its
# middle process exits) and calls setsid(); writes their pids, one per line, then sleeps itself.
HIDER = textwrap.dedent("""
    import os, sys, time
    pids = sys.argv[1]
    def sleeper():
        os.setsid()
        time.sleep(120)
        os._exit(0)
    first = os.fork()
    if first == 0:
        sleeper()
    middle = os.fork()
    if middle == 0:
        second = os.fork()
        if second == 0:
            sleeper()
        with open(pids + ".tmp", "w") as handle:
            handle.write(f"{first}\\n{second}\\n")
        os.rename(pids + ".tmp", pids)
        os._exit(0)
    os.waitpid(middle, 0)
    print("started", flush=True)
    time.sleep(120)
""")


def _hider(tmp_path: Path) -> tuple[list[str], Path]:
    script = tmp_path / "hider.py"
    script.write_text(HIDER)
    return [sys.executable, str(script), str(tmp_path / "pids")], tmp_path / "pids"


def _hidden(pids: Path) -> list[int]:
    deadline = time.monotonic() + 10
    while not pids.exists():
        assert time.monotonic() < deadline, "the script did not start its sleepers"
        time.sleep(0.02)
    return [int(word) for word in pids.read_text().split()]


def _assert_all_dead(pids: list[int]) -> None:
    deadline = time.monotonic() + 5  # SIGKILL is delivered at once; re-parenting and reaping take a moment
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if alive(pid)], "a hidden process outlived the timeout"


def test_the_probe_runner_kills_setsid_children_and_double_forked_daemons(tmp_path):
    argv, pids = _hider(tmp_path)
    started = time.monotonic()
    with pytest.raises(CommandTimeout):
        SubprocessRunner().run(argv, 2)
    assert time.monotonic() - started < 10
    _assert_all_dead(_hidden(pids))


def test_run_command_kills_the_whole_tree_too(tmp_path):
    argv, pids = _hider(tmp_path)
    with pytest.raises(CommandTimeout):
        run_command(argv, 2, cwd=tmp_path)
    _assert_all_dead(_hidden(pids))


def test_an_installer_step_is_killed_with_its_hidden_processes(tmp_path):
    argv, pids = _hider(tmp_path)
    result = run_streaming(argv, lambda line: None, 2)
    assert result.timed_out
    _assert_all_dead(_hidden(pids))


def test_a_command_that_finishes_leaves_other_children_of_envpin_alone(tmp_path):
    # a process envpin did not start (here: one this test started before) is never taken for an orphan
    import subprocess  # noqa: PLC0415 - the bystander only

    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        argv, pids = _hider(tmp_path)
        with pytest.raises(CommandTimeout):
            SubprocessRunner().run(argv, 2)
        _assert_all_dead(_hidden(pids))
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_verify_interpreter_honours_timeout_and_leaves_nothing_running(tmp_path):
    # an "interpreter" that never runs the probe: it hides two sleepers and sleeps itself
    pids = tmp_path / "pids"
    script = tmp_path / "hider.py"
    script.write_text(HIDER)
    interpreter = tmp_path / "python"
    interpreter.write_text(f"#!/bin/sh\nexec {sys.executable} {script} {pids}\n")
    interpreter.chmod(0o755)
    started = time.monotonic()
    result = envpin("verify", "--interpreter", str(interpreter), "--timeout", "1", timeout=60)
    took = time.monotonic() - started
    assert_one_line_error(result, "did not finish within 8 s")  # 3 imports of 1 s, 5 s for the scan
    assert took < 30, took
    _assert_all_dead(_hidden(pids))


def test_the_probe_kills_a_hung_import_with_the_processes_it_hid(tmp_path):
    # a `torch` whose import hides a setsid() sleeper and then hangs: the probe's per-import timeout kills both
    package = tmp_path / "site" / "torch"
    package.mkdir(parents=True)
    pids = tmp_path / "pids"
    (package / "__init__.py").write_text(textwrap.dedent(f"""
        import os, time
        child = os.fork()
        if child == 0:
            os.setsid()
            time.sleep(120)
            os._exit(0)
        open({str(pids)!r}, "w").write(str(child))
        time.sleep(120)
    """))
    result = envpin("verify", "--timeout", "2", "--no-smoke", "--format", "json",
                    env={"PYTHONPATH": str(tmp_path / "site")}, timeout=120)
    assert "import torch did not finish within 2 s" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
    _assert_all_dead(_hidden(pids))
