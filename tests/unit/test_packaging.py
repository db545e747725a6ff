"""envpin as a published package: a LICENSE, complete metadata, one version source, the development tools as
PEP 735 dependency groups rather than an extra users can install, and workflow files that the CI host accepts
(checked against its published schema by check-jsonschema, of the dependency group `lint`). The build and clean
install themselves are scripts/release_check.py, which .ci/run and .github/workflows/release.yml run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envpin import __version__
from envpin.base import _toml

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = _toml.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def test_the_license_file_is_the_apache_2_0_text_the_metadata_declares():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert PYPROJECT["project"]["license"] == "Apache-2.0" and PYPROJECT["project"]["license-files"] == ["LICENSE"]


def test_the_metadata_is_complete():
    project = PYPROJECT["project"]
    assert project["authors"] == [{"name": "envpin developers"}]
    assert {"cuda", "gpu", "pytorch", "tensorflow", "jax"} <= set(project["keywords"])
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(project["urls"])
    classifiers = project["classifiers"]
    oldest = re.fullmatch(r">=3\.(\d+)", project["requires-python"])
    assert oldest, project["requires-python"]
    listed = sorted(int(c.rsplit(".", 1)[1]) for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert listed[0] == int(oldest.group(1)), "the classifiers start at the oldest Python requires-python admits"
    assert not [c for c in classifiers if c.startswith("License ::")], "PEP 639: the license expression alone"


def test_one_version_source():
    assert "version" not in PYPROJECT["project"] and PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "envpin/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_development_tools_are_dependency_groups_not_an_extra():
    assert "dev" not in PYPROJECT["project"]["optional-dependencies"]
    groups = PYPROJECT["dependency-groups"]
    assert groups["dev"] == [{"include-group": name} for name in ("test", "lint", "docs", "release")]
    named = {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0] for g in ("test", "lint", "docs", "release") for r in groups[g]}
    assert {"pytest", "pytest-xdist", "ruff", "mypy", "mkdocs", "build", "twine", "check-jsonschema"} <= named
    # scripts/test installs the group with pip >= 25.1, upgrading an older pip of the venv first
    venv_script = (REPO / "scripts" / "_venv.sh").read_text(encoding="utf-8")
    assert '--group "$group"' in venv_script and '"pip>=25.1"' in venv_script
    assert "ensure_venv dev" in (REPO / "scripts" / "test").read_text(encoding="utf-8")


def test_the_release_workflow_runs_the_release_check_and_publishes_a_tag_with_trusted_publishing():
    workflow = (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "python scripts/release_check.py --dist dist" in workflow
    assert "pypa/gh-action-pypi-publish@release/v1" in workflow and "id-token: write" in workflow
    assert "if: startsWith(github.ref, 'refs/tags/v')" in workflow
    assert "scripts/release-check" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.name for w in WORKFLOWS])
def test_each_workflow_validates_against_the_ci_hosts_schema(workflow):
    checker = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert checker, "check-jsonschema comes with the dependency group `lint` (scripts/test installs it)"
    result = subprocess.run([checker, "--builtin-schema", "vendor.github-workflows", workflow], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_workflow_the_schema_refuses_fails_the_check(tmp_path):
    checker = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert checker
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    step:\n      - run: true\n")
    result = subprocess.run([checker, "--builtin-schema", "vendor.github-workflows", broken], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1, result.stdout
