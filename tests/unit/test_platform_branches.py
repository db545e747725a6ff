"""Windows and macOS, checked statically and by faking only the platform facts.

envpin's CI runs the suite on Windows and macOS (.github/workflows/ci.yml); here, on Linux:

1. no module of envpin, its tests or scripts imports a platform-only module (pty, termios, fcntl, resource …;
   winreg, msvcrt …) where every platform would run the import: at a module's top, outside a `try` that takes
   the ImportError or an `if` on the platform. (A test module that did would not even be collected on Windows.)
2. every `os.name` / `sys.platform` branch in envpin is listed below with what covers it, so a new one is a
   decision, not an accident; the branches that are logic are run here with the platform fact faked (the
   module's `os` or `sys` seen through a proxy that answers `name` or `platform` differently, nothing else).
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
from pathlib import Path

import pytest

from envpin.base import escapes
from envpin.host import platform_info
from envpin.host import runner as host_runner
from envpin.provision import atomic, backends, runner
from envpin.verify import probe

REPO = Path(__file__).resolve().parents[2]
PLATFORM_ONLY = {"pty", "termios", "tty", "fcntl", "resource", "grp", "pwd", "posix", "crypt", "readline",
                 "winreg", "msvcrt", "_winapi", "winsound"}
PLATFORM_TESTS = ("os.name", "sys.platform")

# (module, function) -> what runs each side of its branch. "windows job": the Popen flags of a real Windows
# process, which only a Windows runner can exercise; the other entries name the test in this file.
BRANCHES = {
    ("envpin/base/escapes.py", "exit_status"): "test_an_ntstatus_is_said_in_hex_on_windows_only",
    ("envpin/base/userfiles.py", "_pseudo_root"): "test_only_posix_has_proc_sys_and_dev_to_refuse",
    ("envpin/provision/backends.py", "python_in"): "test_the_interpreter_of_an_environment_per_platform",
    ("envpin/provision/atomic.py", "exchange"): "test_directories_are_exchanged_atomically_on_linux_only",
    ("envpin/provision/runner.py", "_load_prctl"): "test_the_parent_death_signal_is_linux_only",
    ("envpin/host/platform_info.py", "_free_threaded_build"): "test_a_free_threaded_python_is_told_per_platform",
    ("envpin/provision/runner.py", "run_streaming"): "windows job",
    ("envpin/host/runner.py", "run_command"): "windows job",
    ("envpin/host/runner.py", "kill_tree"): "windows job",
    ("envpin/host/runner.py", "become_subreaper"): "test_only_linux_makes_envpin_a_child_subreaper",
    ("envpin/verify/probe.py", "describe_exit"): "test_the_probe_says_an_ntstatus_in_hex_on_windows_only",
    ("envpin/verify/probe.py", "probe_framework"): "windows job",
    ("envpin/verify/probe.py", "kill"): "windows job",
    ("envpin/verify/probe.py", "loaded_libraries"): "windows job",
    ("envpin/verify/probe.py", "windows_loaded"): "test_the_probe_lists_windows_dlls_on_windows_only",
}


def python_files() -> list[Path]:
    skipped = REPO / "tests" / "fixtures"
    return [p for d in ("envpin", "tests", "scripts") for p in sorted((REPO / d).rglob("*.py"))
            if skipped not in p.parents]


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Inside a function, a try that catches ImportError, or an if on the platform."""
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        if isinstance(node, ast.Try) and any(
                handler.type is None or "ImportError" in ast.unparse(handler.type) or "Exception" in ast.unparse(handler.type)
                for handler in node.handlers):
            return True
        if isinstance(node, ast.If) and any(test in ast.unparse(node.test) for test in PLATFORM_TESTS):
            return True
    return False


def unguarded_platform_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    found = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        for name in names:
            if name.split(".")[0] in PLATFORM_ONLY and not _guarded(node, parents):
                found.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}: import {name}")
    return found


def test_no_platform_only_module_is_imported_unguarded():
    found = [line for path in python_files() for line in unguarded_platform_imports(path)]
    assert found == []


def test_the_import_check_sees_an_unguarded_import_and_accepts_guarded_ones(tmp_path):
    sample = REPO / "tests" / "unit" / "_platform_sample.py"
    sample.write_text("import pty\ntry:\n    import fcntl\nexcept ImportError:\n    fcntl = None\n"
                      "if sys.platform != 'win32':\n    import termios\ndef f():\n    import resource\n")
    try:
        assert unguarded_platform_imports(sample) == ["tests/unit/_platform_sample.py:1: import pty"]
    finally:
        sample.unlink()


def _own_nodes(function: ast.AST):
    """The nodes of a function's body, not those of the functions defined inside it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def platform_branches() -> set[tuple[str, str]]:
    """(file, function) of each function whose own code tests os.name or sys.platform."""
    found = set()
    for path in sorted((REPO / "envpin").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not any(test in text for test in PLATFORM_TESTS):
            continue
        for function in (n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            if any(isinstance(n, ast.Attribute) and ast.unparse(n) in PLATFORM_TESTS for n in _own_nodes(function)):
                found.add((path.relative_to(REPO).as_posix(), function.name))
    return found


def test_every_platform_branch_is_listed_with_what_covers_it():
    assert platform_branches() == set(BRANCHES)
    here = set(globals())
    assert [test for test in BRANCHES.values() if test != "windows job" and test not in here] == []


class _Platform:
    """The real module, with one platform fact answered differently."""

    def __init__(self, module, **facts):
        self._module = module
        self._facts = facts

    def __getattr__(self, name):
        return self._facts[name] if name in self._facts else getattr(self._module, name)


def test_an_ntstatus_is_said_in_hex_on_windows_only(monkeypatch):
    assert escapes.exit_status(0xC0000005) == f"exit status {0xC0000005}"
    monkeypatch.setattr(escapes, "os", _Platform(os, name="nt"))
    assert escapes.exit_status(0xC0000005) == "ended with status 0xC0000005"
    assert escapes.exit_status(1) == "exit status 1"


def test_the_interpreter_of_an_environment_per_platform(tmp_path, monkeypatch):
    assert backends.python_in(tmp_path) == tmp_path / "bin" / "python"
    monkeypatch.setattr(backends, "os", _Platform(os, name="nt"))
    assert backends.python_in(tmp_path) == tmp_path / "python.exe"  # a conda environment's layout on Windows
    (tmp_path / "Scripts").mkdir()
    (tmp_path / "Scripts" / "python.exe").write_bytes(b"")
    assert backends.python_in(tmp_path) == tmp_path / "Scripts" / "python.exe"  # a venv's


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_directories_are_exchanged_atomically_on_linux_only(platform, tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "x").write_text("first")
    monkeypatch.setattr(atomic, "sys", _Platform(sys, platform=platform))
    assert atomic.exchange(first, second) is False  # the caller then renames in two steps
    assert (first / "x").read_text() == "first"


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_the_parent_death_signal_is_linux_only(platform, monkeypatch):
    monkeypatch.setattr(runner, "sys", _Platform(sys, platform=platform))
    assert runner._load_prctl() is None


def test_only_posix_has_proc_sys_and_dev_to_refuse(monkeypatch):
    from envpin.base import userfiles  # noqa: PLC0415 - the module whose branch this is

    status = os.stat("/proc/self/status")
    assert userfiles._pseudo_root("/proc/self/status", status) == "/proc"
    monkeypatch.setattr(userfiles, "os", _Platform(os, name="nt"))
    assert userfiles._pseudo_root("/proc/self/status", status) is None


def test_the_probe_says_an_ntstatus_in_hex_on_windows_only(monkeypatch):
    assert probe.describe_exit(0xC0000005) == f"ended its process with exit status {0xC0000005} before reporting"
    monkeypatch.setattr(probe, "os", _Platform(os, name="nt"))
    assert probe.describe_exit(0xC0000005) == "killed its process with status 0xC0000005"


def test_the_probe_lists_windows_dlls_on_windows_only(monkeypatch):
    monkeypatch.setattr(probe, "sys", _Platform(sys, platform="linux"))
    assert probe.windows_loaded() == []


def test_a_free_threaded_python_is_told_per_platform(monkeypatch):
    monkeypatch.setattr(platform_info, "sys", _Platform(sys, abiflags="t"))
    assert platform_info._free_threaded_build() is True  # POSIX: the ABI flags say it
    # Windows has no abiflags: the build configuration is asked (faked too: a free-threaded build's)
    monkeypatch.setattr(platform_info, "sys", _Platform(sys, abiflags="", version_info=(3, 13, 0)))
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: 1 if name == "Py_GIL_DISABLED" else None)
    monkeypatch.setattr(platform_info, "os", _Platform(os, name="nt"))
    assert platform_info._free_threaded_build() is True
    monkeypatch.setattr(platform_info, "os", _Platform(os, name="posix"))
    assert platform_info._free_threaded_build() is False  # POSIX without the flag: not asked


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_only_linux_makes_envpin_a_child_subreaper(platform, monkeypatch):
    monkeypatch.setattr(host_runner, "_subreaper", False)
    monkeypatch.setattr(host_runner, "sys", _Platform(sys, platform=platform))
    host_runner.become_subreaper()  # no prctl elsewhere: nothing is done, and nothing is remembered as done
    assert host_runner._subreaper is False
