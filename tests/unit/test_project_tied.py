"""Packages built for one torch release: each record of envpin.project.tied is what a recorded PyPI METADATA
says, and a project pinning one solves torch within it, or is refused naming the line."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.specifiers import SpecifierSet

from envpin.project.tied import TIED, cuda_major_of_requirement, tied_to, torch_specifiers

METADATA = Path(__file__).resolve().parents[1] / "fixtures" / "pypi-metadata"


def requires(path: Path, name: str) -> list[str]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(rf"Requires-Dist: {name} \(([^)]*)\)", line)
        if match:
            found.append(match.group(1))
    return found


def test_every_record_is_what_the_recorded_metadata_says():
    sources = (METADATA / "SOURCES.md").read_text(encoding="utf-8")
    for tied in TIED:
        wheels = re.findall(r"[^/ ]+\.whl", tied.source)
        assert all(w in sources for w in wheels), tied
        if tied.package == "triton":  # torch names triton: every torch release it allows requires this triton
            allowed = SpecifierSet(torch_specifiers(tied)[0])
            for wheel in wheels:
                version = wheel.split("-")[1]
                assert allowed.contains(version)
                assert requires(METADATA / f"{wheel}.METADATA", "triton") == [f"=={tied.version}"]
        else:
            [wheel] = wheels
            assert wheel.startswith(f"{tied.package}-{tied.version}-")
            assert requires(METADATA / f"{wheel}.METADATA", "torch") == [tied.torch]


def test_only_an_exact_pin_is_tied():
    torchdata, triton = tied_to("torchdata", "==0.6.1"), tied_to("triton", "==2.0.0")
    assert torchdata is not None and torchdata.torch == "==2.0.1"
    assert tied_to("torchdata", ">=0.6.1") is None and tied_to("torchdata", "==0.7.0") is None
    assert triton is not None and torch_specifiers(triton) == [">=2.0.0,<=2.0.1"]


def test_cuda_suffixed_packages_name_their_major():
    assert cuda_major_of_requirement("cuml-cu11", ()) == "11"
    assert cuda_major_of_requirement("cupy-cuda12x", ()) == "12"
    assert cuda_major_of_requirement("nvidia-cublas-cu12", ()) == "12"
    assert cuda_major_of_requirement("onnxruntime", ("cu12",)) == "12"
    assert cuda_major_of_requirement("numpy", ()) is None
