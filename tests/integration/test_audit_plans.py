"""scripts/audit-plans in CI (marked `audit`: it needs pypi.org; `pytest -m audit`): every plan of the matrix
resolves with real uv against the real PyPI or the recorded download.pytorch.org snapshot, and the audit fails
on a plan that does not (a file missing from the index, a wheel for a newer macOS than the target's)."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from tests.conftest import LIVE_DB_DIR, REPO

pytestmark = pytest.mark.audit


def _script(name: str):
    """A script of scripts/ as a module (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
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


# ---------------------------------------------------------------- import-time rules, as the database records them


def _resolve_with_rules(tmp_path, name: str, change) -> Any:
    """The matrix target `name`, planned from the live database and resolved by uv, judged by the import-time
    rules of the live database's documents after `change(documents)`."""
    from envpin.compat.loader import _read_documents  # noqa: PLC0415 - the documents the audit reads

    documents = _read_documents(LIVE_DB_DIR)
    change(documents)
    target = next(t for t in audit._targets() if t.name == name)
    cache = tmp_path / "uv-cache"
    cache.mkdir(parents=True)
    with audit.serve_snapshot(audit.SNAPSHOT) as url:
        planned = audit.make_plan(target, str(LIVE_DB_DIR), url)
    return audit.audit_one(audit.find_uv(), target, planned, cache, documents)


def _torch_release(documents, version="2.15.0") -> dict:
    return next(r for r in documents["torch.yaml"]["releases"] if r["version"] == version)


def test_a_build_compiled_against_numpy_1_that_gets_numpy_2_fails_at_import(tmp_path):
    # were torch 2.15.0's Linux wheel built against NumPy 1.x, the plan (no numpy pin) would resolve numpy 2
    def numpy_1(documents):
        _torch_release(documents)["numpy_below_2"] = ["linux-x86_64"]

    outcome = _resolve_with_rules(tmp_path, "torch-linux-h100-py3.12", numpy_1)
    assert outcome.status == "failed" and "compiled against NumPy 1.x" in outcome.detail, outcome
    assert _resolve_with_rules(tmp_path / "b", "torch-linux-h100-py3.12", lambda documents: None).status == "resolved"


@pytest.mark.parametrize(("check", "status"), [("minor", "failed"), ("major", "resolved")])
def test_a_companion_that_checks_the_cuda_minor_beside_another_minor_fails_at_import(tmp_path, check, status):
    # PyPI's torch 2.15.0 is CUDA 13.2; a torchaudio 2.11.1 wheel built for 13.0 imports beside it only if it
    # compares the major (2.11.1 does), not the minor (2.11.0 raised RuntimeError)
    def built_for_13_0(documents):
        _torch_release(documents)["torchaudio"]["builds"] = [
            {"version": "2.11.1", "index": "pypi", "platforms": ["linux-x86_64"], "cuda": "13.0", "cuda_check": check}]

    outcome = _resolve_with_rules(tmp_path, "torch-linux-h100-py3.12", built_for_13_0)
    assert outcome.status == status, outcome
    if status == "failed":
        assert "checks the CUDA minor at import" in outcome.detail and "13.2" in outcome.detail



# ---------------------------------------------------------------- project mode (`--projects`)


def test_project_mode_says_ok_only_for_plans_uv_resolved():
    # google-research/bert's requirements.txt (`tensorflow >= 1.11.0`): on both machines a TensorFlow plan whose
    # whole environment resolves on PyPI
    outcomes = audit.run_project_audit(only="google-research--bert/")
    assert [(o.machine, o.status) for o in outcomes] == [("rtx5090-linux", "ok"), ("gtx1080ti-windows", "ok")]
    assert "tensorflow[and-cuda]==2.21.0" in outcomes[0].detail
    assert audit.project_report(outcomes).endswith("2/2 answers are plans uv resolved end to end; 0 plans not "
                                                   "resolved, 0 refusals, 0 errors")


def test_project_mode_names_a_line_no_index_serves():
    # theAIGuysCode/yolov4-deepsort pins opencv-python==4.1.1.26, which has no wheel for Python 3.9 on Windows
    outcomes = audit.run_project_audit(only="theAIGuysCode--yolov4-deepsort/")
    windows = next(o for o in outcomes if o.machine == "gtx1080ti-windows")
    assert windows.status == "refused" and windows.detail.startswith("unresolvable: the index serves no file for "
                                                                      "opencv-python==4.1.1.26")
