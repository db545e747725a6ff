#!/usr/bin/env python3
"""The `envpin-check` pre-commit hook, run the way users run it: `pre-commit try-repo <envpin> envpin-check
--all-files` in a sample git repository.

pre-commit installs the hook repository into a virtualenv of its own (pip from PyPI: envpin's dependencies
and its build backend), which takes about a minute the first time, so this runs from `.ci/run` rather than in
the pytest suite. `try-repo` wants a git repository with the hook file committed: the working tree of this
checkout (tracked and untracked files, what .gitignore leaves out excepted) is copied into a temporary
repository and committed there, so this works from a fresh clone and with uncommitted changes; nothing in the
checkout is changed. `try-repo` builds the hook's environment afresh on every call (it uses a temporary
store), so this makes two calls. Shows:

1. the hook passes on a repository of good files (requirements, environment.yml, pylock, conda-lock, uv.lock);
2. it fails, naming the file, the field, the problem id and the fix, when a broken file is added;
3. on a hostile pull request (an include of /proc/self/environ, one of a file outside the repository, a line that
   names a secret `${AWS_SECRET_ACCESS_KEY}`), it refuses the includes in one line each and prints no value of
   the secret (docs/hardening.md, trust boundary).

(`[tool.envpin]` read from the checked repository's pyproject.toml is tested in tests/integration/test_check_cli.py.)

    .venv/bin/python scripts/check_precommit_hook.py      # needs pre-commit (pip install pre-commit)
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "fixtures" / "check"
GOOD = {
    "requirements.txt": CORPUS / "requirements" / "requirements-good-cu124.txt",
    "env/environment.yml": CORPUS / "environment" / "environment-good-pip-cu121.yml",
    "pylock.toml": CORPUS / "pylock" / "pylock.toml",
    "conda-lock.yml": CORPUS / "conda-lock" / "conda-lock.yml",
    "service/uv.lock": CORPUS / "uv-lock" / "good-cu124" / "uv.lock",
    "README.md": None,  # not a file the hook looks at
}
BROKEN = ("requirements-gpu.txt", CORPUS / "requirements" / "requirements-companion-mismatch.txt")
TIMEOUT_S = 600  # bounds the first run, which builds the hook's environment


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "envpin", "GIT_AUTHOR_EMAIL": "envpin@example.invalid",
                        "GIT_COMMITTER_NAME": "envpin", "GIT_COMMITTER_EMAIL": "envpin@example.invalid"})


def snapshot(target: Path) -> None:
    """This checkout's files (as git sees them, ignored ones left out) as a one-commit repository."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git("init", "-q", cwd=target)
    git("add", "-A", cwd=target)
    git("commit", "-q", "-m", "envpin snapshot for pre-commit try-repo", cwd=target)


SENTINEL = "SENTINEL-4b3c2d1e-not-for-logs"  # stands for a CI job's secret


def try_repo(envpin: Path, sample: Path, home: Path, extra_env: dict[str, str] | None = None) -> tuple[int, str, float]:
    git("add", "-A", cwd=sample)
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), **(extra_env or {})}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(envpin), "envpin-check",
                             "--all-files", "--color", "never"], cwd=sample, env=env, capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    return result.returncode, result.stdout + result.stderr, time.perf_counter() - start


def expect(condition: bool, what: str, output: str) -> None:
    if not condition:
        sys.exit(f"check_precommit_hook: FAILED: {what}\n--- pre-commit output ---\n{output}")
    print(f"ok: {what}")


def main() -> int:
    if importlib.util.find_spec("pre_commit") is None:
        print("check_precommit_hook: pre-commit is not installed in this Python (pip install pre-commit)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="envpin-hook-") as tmp:
        root = Path(tmp)
        envpin, sample, home = root / "envpin", root / "sample", root / "pre-commit-home"
        envpin.mkdir()
        sample.mkdir()
        snapshot(envpin)
        for name, source in GOOD.items():
            (sample / name).parent.mkdir(parents=True, exist_ok=True)
            (sample / name).write_text(source.read_text(encoding="utf-8") if source else "# sample\n", encoding="utf-8")
        git("init", "-q", cwd=sample)

        code, output, seconds = try_repo(envpin, sample, home)
        expect(code == 0 and "envpin check" in output and "Passed" in output,
               f"the hook passes on {len(GOOD) - 1} good files ({seconds:.0f} s, including building its environment)",
               output)

        name, source = BROKEN
        (sample / name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        code, output, seconds = try_repo(envpin, sample, home)
        expect(code == 1 and "Failed" in output
               and f"{name}:line 4: error CHK-TORCH-COMPANION-MISMATCH: torchvision==0.15.2+cu118 is built for "
                   "torch 2.0.1" in output
               and "fix: pin torchvision==0.16.0+cu118" in output,
               f"the hook fails on a broken {name} with the file, field, id and fix ({seconds:.0f} s)", output)

        (sample / name).unlink()
        secret = root / "credentials"  # a file of the CI machine, outside the repository
        secret.write_text(f"aws_secret_access_key={SENTINEL}\n", encoding="utf-8")
        (sample / "requirements-env.txt").write_text("-r /proc/self/environ\n", encoding="utf-8")
        (sample / "requirements-abs.txt").write_text(f"-r {secret}\n", encoding="utf-8")
        (sample / "requirements-var.txt").write_text("torch==${AWS_SECRET_ACCESS_KEY}\n", encoding="utf-8")
        code, output, seconds = try_repo(envpin, sample, home, {"AWS_SECRET_ACCESS_KEY": SENTINEL})
        expect(code != 0 and SENTINEL not in output and "aws_secret_access_key" not in output
               and "envpin never reads /proc" in output and "outside the repository" in output
               and "torch==${AWS_SECRET_ACCESS_KEY}" in output,
               f"the hook on a hostile pull request refuses its includes and prints no secret ({seconds:.0f} s)", output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
