"""The TensorFlow and JAX releases' own requirement on numpy is what their wheels' METADATA says.

tests/fixtures/pypi-metadata/numpy-requirements.json is what scripts/record-numpy-requirements read on PyPI (each
wheel's URL beside its `numpy` Requires-Dist lines); the database's `numpy` fields are derived from it by
envpin.refresh.numpy_requires, offline, here again. A solve and `envpin check` weigh a project's numpy against them.
"""

from __future__ import annotations

import pytest

from envpin.check import check_text
from envpin.refresh.numpy_requires import fields_from_snapshot, load_snapshot
from envpin.resolver.numpy_fit import meet

SNAPSHOT = load_snapshot()


@pytest.mark.parametrize("which", ["live_database", "database"])
def test_every_release_records_what_its_wheels_metadata_says(which, request):
    database = request.getfixturevalue(which)
    derived = fields_from_snapshot(SNAPSHOT, database)
    for framework, releases in (("tensorflow", database.tensorflow_releases), ("jax", database.jax_releases)):
        for release in releases:
            field = derived.get((framework, str(release.version)))
            if field is None and release.added is not None:
                # a release a later refresh proposed: TensorFlow's field comes from the METADATA it read; JAX's
                # waits for scripts/record-numpy-requirements (the report asks for it)
                assert framework == "jax" or release.numpy is not None, f"{framework} {release.version}"
                continue
            if field is None and release.numpy is not None and "pypi-tensorflow-patches" in release.numpy.provenance.sources:
                # a release's `patches:` entry names the one wheel whose METADATA it was read in (tensorflow.yaml)
                assert release.numpy.wheels[0].startswith(f"tensorflow-{release.version}-"), release.version
                continue
            assert field is not None and release.numpy is not None, f"{framework} {release.version} has no numpy field"
            assert release.numpy.requires == field["requires"], f"{framework} {release.version}"
            assert dict(release.numpy.by_python) == field.get("python", {}), f"{framework} {release.version}"
            assert release.numpy.wheels == tuple(field["wheels"]), f"{framework} {release.version}"


def test_torch_and_the_jax_cuda_plugins_name_no_numpy():
    """So neither has a `numpy` field: torch's wheels (every release in torch.yaml) and the plugins say nothing."""
    for project in ("torch", "jax-cuda12-plugin", "jax-cuda13-plugin"):
        releases = SNAPSHOT["projects"][project]["releases"]
        assert releases and all(not wheel["numpy"] for wheels in releases.values() for wheel in wheels.values())


def test_the_recorded_facts_that_decide_multinerf(live_database):
    """tensorflow 2.21.0 and jax 0.12.0.1 (what a solve gave multinerf's unpinned lines) require numpy>=1.26.0 and
    >=2.2; TF 2.16.1's requirement moves with the Python (a python_version marker in its METADATA)."""
    tf = {str(r.version): r.numpy for r in live_database.tensorflow_releases}
    jax = {str(r.version): r.numpy for r in live_database.jax_releases}
    assert tf["2.21.0"].requires == ">=1.26.0" and tf["2.12.0"].requires == "<1.24,>=1.22"
    assert (tf["2.16.1"].on("3.11"), tf["2.16.1"].on("3.12")) == ("<2.0.0,>=1.23.5", "<2.0.0,>=1.26.0")
    assert jax["0.12.0.1"].requires == ">=2.2" and jax["0.4.30"].on("3.12") == ">=1.26.0"


@pytest.mark.parametrize("first, second, expected", [
    (">=1.26.0", "<1.24,>=1.22", False), ("<=1.24.3,>=1.22", "<1.24", True), (">=1.23.5", "==1.23.5", True),
    ("~=1.19.2", ">=1.20", False), ("~=1.19.2", ">=1.19", True), ("<2.0.0,>=1.23.5", ">1.23", True), ("<=1.24.3", ">1.24.3", False),
    (">=2.2", "<2", False),
])
def test_two_numpy_specifiers_meet_where_some_version_satisfies_both(first, second, expected):
    assert meet(first, second) is expected


def test_check_names_both_lines(database):
    text = "numpy>=1.22, <1.24\ntensorflow==2.21.0\njax\n"
    report = check_text("requirements.txt", text, load_database=lambda: database)
    found = [p for p in report.problems if p.id == "CHK-NUMPY-REQUIRES"]
    assert [p.where for p in found] == ["line 2"]  # unpinned jax: 0.4.20-0.4.30 allow numpy 1.22-1.23
    assert "numpy>=1.22, <1.24 (line 1)" in found[0].message and "tensorflow==2.21.0 requires numpy>=1.26.0" in found[0].message


def test_a_numpy_no_release_allows_on_any_python_is_reported_beside_the_target_python(database):
    """NVIDIA/tacotron2's requirements.txt: numpy==1.13.3 beside tensorflow==1.15.2, whose wheels (cp35-cp37)
    require numpy>=1.16.0 on every Python. On a Python 3.12 target TF 1.15.2 has no wheel (CHK-TARGET-PYTHON), and
    the numpy pin is a second error: no Python mends it. A release the target's Python has is judged on it alone."""
    from envpin.check.targets import configured_target  # noqa: PLC0415 - a target only for this case
    from envpin.machine.spec import NamedTarget, TargetSpec  # noqa: PLC0415 - the same

    spec = TargetSpec(detect=False, os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",),
                      python="3.12")
    target = configured_target(NamedTarget("t", spec), database)
    report = check_text("requirements.txt", "tensorflow==1.15.2\nnumpy==1.13.3\n", load_database=lambda: database,
                        targets=[target])
    found = {p.id: p for p in report.problems}
    assert {"CHK-NUMPY-REQUIRES", "CHK-TARGET-PYTHON"} <= set(found)
    assert found["CHK-NUMPY-REQUIRES"].where == "line 1" and "on Python" not in found["CHK-NUMPY-REQUIRES"].message
    assert "tensorflow==1.15.2 requires numpy<2.0,>=1.16.0" in found["CHK-NUMPY-REQUIRES"].message
    fits = check_text("requirements.txt", "tensorflow==1.15.2\nnumpy==1.16.6\n", load_database=lambda: database,
                      targets=[target])
    assert "CHK-NUMPY-REQUIRES" not in {p.id for p in fits.problems}
