"""scripts/audit-plans in CI (marked `audit`: it needs pypi.org; `pytest -m audit`): every plan of the matrix
resolves with real uv against the real PyPI or the recorded download.pytorch.org snapshot, and the audit fails
on a plan that does not (a file missing from the index, a wheel for a newer macOS than the target's)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.conftest import LIVE_DB_DIR, REPO

pytestmark = pytest.mark.audit


def _script(name: str):
    """A script of scripts/ as a module (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


audit = _script("audit_plans")


def test_every_plan_of_the_matrix_resolves(tmp_path):
    outcomes = audit.run_audit(str(LIVE_DB_DIR), jobs=2, work=tmp_path)
    failed = [f"{o.target.name}: {o.status}: {o.detail}" for o in outcomes if o.status != "resolved"]
    assert not failed, "\n".join(failed)
    on_pypi = [o for o in outcomes if o.where == "PyPI"]
    from_torch_index = [o for o in outcomes if o.where.startswith("download.pytorch.org")]
    assert len(on_pypi) >= 40 and len(from_torch_index) >= 3, audit.report(outcomes)
    platforms = {o.target.platform for o in on_pypi}
    assert platforms == {"linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64", "macos-x86_64"}
    assert any("tensorflow" in o.detail for o in on_pypi) and any("jax" in o.detail for o in on_pypi)
    assert any("torch" in o.detail and "jax" in o.detail for o in on_pypi)  # several frameworks together


def test_a_plan_whose_file_the_index_lacks_fails(tmp_path):
    snapshot = json.loads(audit.SNAPSHOT.read_text())
    files = snapshot["indexes"]["whl/cu124"]["torch"]
    snapshot["indexes"]["whl/cu124"]["torch"] = [f for f in files if "cp312-cp312-win" not in f["filename"]]
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    outcomes = audit.run_audit(str(LIVE_DB_DIR), jobs=1, only="torch==2.5.1+cu124-windows-py3.1", work=tmp_path,
                               snapshot=path)
    status = {o.target.name: o.status for o in outcomes}
    assert status == {"torch==2.5.1+cu124-windows-py3.10": "resolved", "torch==2.5.1+cu124-windows-py3.11": "resolved",
                      "torch==2.5.1+cu124-windows-py3.12": "failed"}, audit.report(outcomes)


def test_a_wheel_for_a_newer_macos_than_the_targets_fails(tmp_path, monkeypatch):
    # torch 2.15.0's arm64 wheel is tagged macosx_14_0: for macOS 13 the same plan does not resolve
    monkeypatch.setattr(audit, "MACOS_ARM64_VERSION", "13.0")
    outcomes = audit.run_audit(str(LIVE_DB_DIR), jobs=1, only="torch-macos-arm64-py3.12", work=tmp_path)
    assert [o.status for o in outcomes] == ["failed"]
    assert "torch==2.15.0" in outcomes[0].detail and "platform" in outcomes[0].detail
