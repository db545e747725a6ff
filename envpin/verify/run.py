"""Run the probe inside a target interpreter and read back its EnvFacts (the I/O edge of verify and doctor).

The probe file is copied into a fresh temporary directory and run from there, so the directory Python
puts first on sys.path holds nothing but the probe (not envpin's own modules, not the user's working
directory), and the child runs in its own process group under a hard timeout (envpin.host.runner).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import exit_status, shown
from envpin.facts.host import env_facts_from_json
from envpin.host.runner import CommandTimeout, SubprocessRunner

PROBE = Path(__file__).with_name("probe.py")
MARKER = "@@envpin-probe@@"
DEFAULT_IMPORT_TIMEOUT = 120.0  # seconds per framework import: a first CUDA init can take a minute


def interpreter_for(python: str | None = None, prefix: str | None = None) -> str:
    """The interpreter to probe: --interpreter PATH, the one inside --prefix DIR, or the one running envpin."""
    if python and prefix:
        raise EnvpinInputError("give --interpreter or --prefix, not both")
    if prefix:
        return _interpreter_in_prefix(prefix)
    if python:
        return _checked_interpreter(python, "--interpreter")
    return sys.executable


def _interpreter_in_prefix(prefix: str) -> str:
    root = Path(prefix)
    if not root.is_dir():
        raise EnvpinInputError(f"--prefix {prefix}: no such directory")
    # venv and conda on POSIX; conda (python.exe in the root) and venv (Scripts) on Windows.
    candidates = [root / "bin" / "python", root / "bin" / "python3", root / "python.exe", root / "Scripts" / "python.exe"]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise EnvpinInputError(f"--prefix {prefix}: no Python interpreter in it (looked for bin/python, python.exe, Scripts/python.exe)")


def _checked_interpreter(path: str, option: str) -> str:
    found = shutil.which(path) if os.sep not in path and "/" not in path else path
    if not found or not Path(found).exists():
        raise EnvpinInputError(f"{option} {path}: no such interpreter")
    if Path(found).is_dir():
        raise EnvpinInputError(f"{option} {path}: is a directory; use --prefix for an environment's root")
    if not os.access(found, os.X_OK):
        raise EnvpinInputError(f"{option} {path}: not executable")
    return found


def probe_limit(import_timeout: float) -> float:
    """The whole probe's time limit: three framework imports in sequence, each under `import_timeout` (--timeout),
    plus the package scan, allowed as long as one import but 5 s at least and 60 s at most. An interpreter that
    does not run the probe at all (a hung wrapper) is stopped at this bound, not at a fixed minute past it."""
    return import_timeout * 3 + min(60.0, max(5.0, import_timeout))


def run_probe(interpreter: str, *, import_timeout: float = DEFAULT_IMPORT_TIMEOUT, smoke: bool = True, runner=None):
    """EnvFacts of the environment `interpreter` belongs to; a one-line EnvpinInputError when it cannot tell."""
    runner = runner or SubprocessRunner()
    total = probe_limit(import_timeout)
    workdir = tempfile.mkdtemp(prefix="envpin-probe-")
    try:
        probe = Path(workdir) / "envpin_probe.py"
        shutil.copyfile(PROBE, probe)
        argv = [interpreter, str(probe), "--timeout", f"{import_timeout:g}"] + ([] if smoke else ["--no-smoke"])
        try:
            result = runner.run(argv, total)
        except CommandTimeout:
            raise EnvpinInputError(f"{interpreter}: the probe did not finish within {total:g} s") from None
        except OSError as error:
            raise EnvpinInputError(f"{interpreter}: cannot be run ({error.strerror or error})") from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    document = parse_probe_output(result.stdout)
    if document is None:
        detail = _last_line(result.stderr) or exit_status(result.returncode)
        raise EnvpinInputError(f"{interpreter}: did not print a probe report; is it a Python interpreter? ({detail})")
    if "error" in document:
        raise EnvpinInputError(f"{interpreter}: {document['error']}")
    return env_facts_from_json(document, origin=f"probe of {interpreter}")


def parse_probe_output(stdout: str) -> dict | None:
    """The JSON document after the last marker line; None when there is none or it is not JSON."""
    position = stdout.rfind(MARKER)
    if position < 0:
        return None
    lines = stdout[position + len(MARKER):].strip().splitlines()
    try:
        document = json.loads(lines[0]) if lines else None
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return shown(lines[-1], 300) if lines else ""
