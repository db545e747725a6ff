"""A solve for a fully described target must not import heavy or unrelated modules (issue 9).

`envpin solve` runs in pre-commit hooks and CI, where every import is paid on every run. With the target
given by flags nothing probes the machine (no pynvml), nothing goes to the network (no requests), the
database comes from its validated cache or, without one, is read by envpin's own YAML reader (no yaml
either way), and nothing needs rattler or rich. Measured with `python -X importtime`, which lists every
module the interpreter imported, in a real process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FULL_TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090",
               "--python", "3.11"]
HEAVY = ("requests", "yaml", "rattler", "rich", "pynvml")


def imported_modules(*args: str, env: dict[str, str] | None = None, exit_code: int = 0) -> set[str]:
    """Every module a fresh `python -X importtime -m envpin ARGS` imported."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "envpin", *args], capture_output=True, text=True,
                            cwd=REPO, env={**os.environ, **(env or {})}, timeout=60)
    assert result.returncode == exit_code, result.stderr[-2000:]
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                modules.add(name)
    assert "envpin.cli" in modules, "no -X importtime output was read"
    return modules


def heavy_among(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


@pytest.fixture(scope="module", autouse=True)
def warm_cache():
    # The validated database is cached per user; a solve after the first reads the cache, not the YAML.
    subprocess.run([sys.executable, "-m", "envpin", "solve", "--framework", "torch", *FULL_TARGET], cwd=REPO,
                   capture_output=True, timeout=60, check=True)


@pytest.mark.parametrize("output", [[], ["--format", "json"], ["--format", "requirements.txt"], ["-o", "{tmp}/environment.yml"]],
                         ids=["text", "json", "requirements", "environment.yml-file"])
def test_solve_with_full_target_flags_imports_nothing_heavy(tmp_path, output):
    args = [part.replace("{tmp}", str(tmp_path)) for part in output]
    modules = imported_modules("solve", "--framework", "torch", *FULL_TARGET, *args)
    assert heavy_among(modules) == []
    assert sorted(m for m in modules if m.startswith("envpin.matrix")) == []  # `envpin matrix` is not on the solve path


def test_the_measurement_sees_the_matrix_modules_where_they_are_imported():
    modules = imported_modules("matrix", "--framework", "torch", *FULL_TARGET)
    assert {"envpin.matrix.grid", "envpin.matrix.terminal"} <= modules and heavy_among(modules) == []


def test_a_solve_without_the_cache_reads_the_shipped_yaml_without_pyyaml():
    # The database's own YAML is read by envpin.compat.yaml_subset; PyYAML only for a text outside it.
    modules = imported_modules("solve", "--framework", "torch", *FULL_TARGET, env={"ENVPIN_NO_CACHE": "1"})
    assert "envpin.compat.yaml_subset" in modules and heavy_among(modules) == []
    # The database's specifiers are plain comparisons, read without packaging.specifiers (envpin.compat.schema)
    assert "packaging.specifiers" not in modules


def test_the_measurement_sees_yaml_when_a_database_file_needs_pyyaml(tmp_path):
    # A database file with an anchor (outside the reader's subset) goes to PyYAML: proof that the checks
    # above can see an import of yaml.
    database = tmp_path / "db"
    shutil.copytree(REPO / "data" / "compat_matrix", database)
    sources = database / "sources.yaml"
    sources.write_text(sources.read_text(encoding="utf-8").replace("sources:", "sources: &all", 1), encoding="utf-8")
    modules = imported_modules("solve", "--framework", "torch", *FULL_TARGET, "--db", str(database),
                               env={"ENVPIN_NO_CACHE": "1"})
    assert "yaml" in heavy_among(modules)


# What a solve for a described target has no use for: `dataclasses` (which imports inspect, ast, dis and
# tokenize; the solve path's values are `envpin.base.record` classes), shutil (argparse measures the terminal
# without it here), the host probes, the project readers and the conda model.
UNUSED_BY_A_SOLVE = {"dataclasses", "inspect", "shutil", "envpin.host", "envpin.project.collect", "envpin.conda.specs"}


def test_a_solve_for_a_described_target_imports_only_what_it_uses():
    modules = imported_modules("solve", "--framework", "torch", *FULL_TARGET)
    assert sorted(UNUSED_BY_A_SOLVE & modules) == []


def test_the_measurement_sees_the_project_readers_when_a_solve_reads_a_project(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.5.1\nnumpy\n", encoding="utf-8")
    modules = imported_modules("solve", *FULL_TARGET, "--project", str(tmp_path))
    assert {"envpin.project.collect", "dataclasses"} <= modules


# What `envpin check` of a requirements file has no use for (issue 34): the conda solve (envpin.conda's solver
# with rattler and asyncio: only `check --solve` of an environment.yml), locking, provisioning, fleets, the
# resolver's solve (with resolvelib), the target checks (only with targets), `dataclasses` (the check's values are
# records) and packaging's requirement parser (with its markers and packaging.tags), which a file of `NAME` and
# `NAME==VERSION` lines does without.
UNUSED_BY_A_REQUIREMENTS_CHECK = ("envpin.conda", "envpin.lock", "envpin.provision", "envpin.fleet",
                                  "envpin.resolver.solve", "envpin.check.targets", "asyncio", "resolvelib",
                                  "dataclasses", "packaging.requirements", *HEAVY)
# torch and torchvision as facebookresearch/audiocraft pins them, numpy as google-deepmind/alphafold does, and lines
# of bmaltais/kohya_ss (tests/fixtures/repos): the GPU pins make the check read the database
PINS = "torch==2.1.0\ntorchvision==0.16.0\nnumpy==1.24.3\nlycoris_lora==2.1.0.post3\nopencv-python==4.7.0.68\neinops\n"


def unused_by_a_requirements_check(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in UNUSED_BY_A_REQUIREMENTS_CHECK))


def test_a_requirements_check_imports_only_what_its_file_needs(tmp_path):
    (tmp_path / "requirements.txt").write_text(PINS, encoding="utf-8")
    imported_modules("check", "--no-config", str(tmp_path / "requirements.txt"))  # the cache of the parts it reads
    modules = imported_modules("check", "--no-config", str(tmp_path / "requirements.txt"))
    assert "envpin.compat.cache" in modules  # the database was read: the torch pins were judged
    assert unused_by_a_requirements_check(modules) == []


def test_the_measurement_sees_what_a_check_imports_where_its_options_and_lines_need_it(tmp_path):
    (tmp_path / "requirements.txt").write_text(PINS + "jax ; sys_platform == 'linux'\n", encoding="utf-8")
    modules = imported_modules("check", "--no-config", *FULL_TARGET, str(tmp_path / "requirements.txt"))
    assert {"envpin.check.targets", "packaging.requirements"} <= modules  # a target; a line with a marker
    (tmp_path / "environment.yml").write_text("name: x\ndependencies:\n  - numpy\n", encoding="utf-8")
    modules = imported_modules("check", "--no-config", "--solve", "--glibc", "2.35", *FULL_TARGET,
                               str(tmp_path / "environment.yml"), exit_code=2)  # no channels: said after the import
    assert {"envpin.conda.target", "asyncio"} <= modules
