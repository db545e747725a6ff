"""Packages built for one torch release: envpin/project/tied_packages.json is what the recorded PyPI METADATA
(tests/fixtures/pypi-metadata/tied-packages.json, written by scripts/record-tied-packages) says, and a range of
such a package limits torch to the releases its own releases require."""

from __future__ import annotations

import json
from pathlib import Path

from envpin.project.tied import (
    FACTS_FILE,
    built_from_source,
    cuda_major_of_requirement,
    facts_from_snapshot,
    release_for,
    releases_of,
    tied_facts,
    torch_specifier,
)

SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "pypi-metadata" / "tied-packages.json"
TORCH = ["1.13.1", "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1", "2.4.0",
         "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0",
         "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]


def test_the_facts_are_what_the_recorded_metadata_says():
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert facts_from_snapshot(snapshot) == json.loads(FACTS_FILE.read_text(encoding="utf-8"))
    for record in tied_facts():
        assert record.source.startswith("https://files.pythonhosted.org/packages/"), record


def test_records_read_from_pypi():
    # each as its wheel's METADATA says (Requires-Dist), which the examples name
    by_release = {(t.package, t.version): t for t in tied_facts()}
    assert by_release["torchdata", "0.6.1"].torch == "==2.0.1"
    assert by_release["torchdata", "0.7.1"].torch == ">=2"  # from 0.7.1 on torchdata names no one release
    assert by_release["torchtext", "0.16.0"].torch == "==2.1.0"
    assert by_release["xformers", "0.0.20"].torch == "==2.0.1"
    assert by_release["xformers", "0.0.28.post3"].torch == "==2.5.1"
    assert by_release["xformers", "0.0.28.post3"].platforms == ("linux-x86_64",)  # no Windows wheel of it
    assert by_release["triton", "2.0.0"].torch == "==2.0.0||==2.0.1"  # what torch 2.0.0 and 2.0.1 require
    assert len(tied_facts()) >= 70
    assert built_from_source("flash-attn") is not None and built_from_source("xformers") is None


def test_an_exact_pin_ties_torch_to_its_release():
    assert torch_specifier(releases_of("torchdata", "==0.6.1"), TORCH) == "==2.0.1"
    assert torch_specifier(releases_of("triton", "==2.0.0"), TORCH) == ">=2.0.0,<=2.0.1"
    assert torch_specifier(releases_of("torchdata", "==0.7.1"), TORCH) == ">=2.0.0,<=2.15.0"  # its torch>=2
    assert torch_specifier(releases_of("torchdata", "==0.7.1"), TORCH[1:]) is None  # every release allowed
    assert releases_of("numpy", "==1.26.4") == []


def test_a_range_allows_the_torch_releases_its_releases_require():
    # xformers 0.0.20 ... 0.0.35: torch 2.0.1 ... 2.10.0 one release each, then torch>=2.10
    assert torch_specifier(releases_of("xformers", ">=0.0.20"), TORCH) == ">=2.0.1,<=2.15.0"
    # up to 0.0.30 (torch 2.7.0): the releases none of them requires are left out
    assert torch_specifier(releases_of("xformers", ">=0.0.20,<=0.0.30"), TORCH) == ">=2.0.1,<=2.7.0"
    assert torch_specifier(releases_of("xformers", "<=0.0.25.post1,>=0.0.22.post7"), TORCH) == ">=2.1.0,<=2.2.2"
    assert torch_specifier(releases_of("xformers", ">=0.0.18,<0.0.23"), TORCH) == ">=2.0.0,<=2.1.0"
    assert torch_specifier(releases_of("xformers", "==0.0.16"), []) == "==1.13.1"


def version_for(package: str, specifier: str, torch: str, platform: str) -> str | None:
    found = release_for(releases_of(package, specifier), torch, platform)
    return found.version if found is not None else None


def test_the_release_pip_takes_beside_the_solved_torch():
    assert version_for("xformers", ">=0.0.20", "2.5.1+cu124", "linux-x86_64") == "0.0.29.post1"
    # 0.0.28.post3 / 0.0.29.x have Linux wheels only: on Windows pip takes none of them
    assert version_for("xformers", ">=0.0.20", "2.5.1", "windows-x86_64") is None
    assert version_for("xformers", ">=0.0.20", "2.0.1+cu118", "windows-x86_64") == "0.0.22"
    assert version_for("xformers", ">=0.0.20", "2.13.0+cu129", "linux-x86_64") == "0.0.35"
    assert version_for("torchdata", "", "2.13.0", "linux-x86_64") == "0.11.0"
    assert version_for("triton", "", "2.13.0", "linux-x86_64") == "3.7.1"


def test_cuda_suffixed_packages_name_their_major():
    assert cuda_major_of_requirement("cuml-cu11", ()) == "11"
    assert cuda_major_of_requirement("cupy-cuda12x", ()) == "12"
    assert cuda_major_of_requirement("nvidia-cublas-cu12", ()) == "12"
    assert cuda_major_of_requirement("onnxruntime", ("cu12",)) == "12"
    assert cuda_major_of_requirement("numpy", ()) is None
