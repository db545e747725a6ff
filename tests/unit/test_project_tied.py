"""Packages built for one torch release: the database's tied.yaml is what the recorded PyPI METADATA
(tests/fixtures/pypi-metadata/tied-packages.json, written by scripts/record-tied-packages) says, each record citing
the wheel it was read in; a bad record is named by `envpin db validate`; a project without such a package never
reads the file; and a range of such a package limits torch to the releases its own releases require."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from envpin.cli import main
from envpin.compat.loader import load_database, validate_database
from envpin.readers.tied import (
    built_from_source,
    cuda_major_of_requirement,
    framework_specifier,
    release_for,
    releases_of,
    tied_yaml,
)
from tests.conftest import LIVE_DB_DIR

SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "pypi-metadata" / "tied-packages.json"
TORCH = ["1.13.1", "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1", "2.4.0",
         "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0",
         "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]
def test_the_database_file_is_what_the_recorded_metadata_says(database):
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert tied_yaml(snapshot) == (LIVE_DB_DIR / "tied.yaml").read_text(encoding="utf-8")
    assert len(database.tied_releases) == 156 and len(database.built_from_source) == 4
    for record in database.tied_releases:
        assert record.read_in and all(url.startswith("https://files.pythonhosted.org/packages/") and url.endswith(".whl")
                                      for url in record.read_in), record
        for source in record.provenance.sources:  # each source is a wheel's URL or the project's files page
            assert re.match(r"^pypi-(wheel|files)-", source), source


def test_records_read_from_pypi(database):
    # each as its wheel's METADATA says (Requires-Dist), which the examples name
    by_release = {(t.package, t.version): t for t in database.tied_releases}
    assert by_release["torchdata", "0.6.1"].requires == "==2.0.1"
    assert by_release["torchdata", "0.7.1"].requires == ">=2"  # from 0.7.1 on torchdata names no one release
    assert by_release["torchtext", "0.16.0"].requires == "==2.1.0"
    assert by_release["xformers", "0.0.20"].requires == "==2.0.1"
    assert by_release["xformers", "0.0.20"].read_in == (
        "https://files.pythonhosted.org/packages/65/d4/5dbc2ef18400c677dfd6ddf469755997a945fbcbe428bdd6ee5302238040/"
        "xformers-0.0.20-cp39-cp39-manylinux2014_x86_64.whl",)
    assert by_release["xformers", "0.0.28.post3"].requires == "==2.5.1"
    assert by_release["xformers", "0.0.28.post3"].platforms == ("linux-x86_64",)  # no Windows wheel of it
    assert by_release["triton", "2.0.0"].requires == "==2.0.0||==2.0.1"  # what torch 2.0.0 and 2.0.1 require
    assert len(by_release["triton", "2.0.0"].read_in) == 2  # the two torch wheels
    assert built_from_source(database, "flash-attn") == "https://pypi.org/project/flash-attn/#files"
    assert built_from_source(database, "xformers") is None


@pytest.mark.parametrize("old, new, message", [
    ('version: "0.0.20", torch: "==2.0.1"', 'version: "0.0.20", torch: "=2.0.1"',
     r"tied.yaml: tied\[\d+\]\.torch: xformers 0.0.20: '=2.0.1' is not a version specifier"),
    ('package: xformers, version: "0.0.21"', 'package: xformers, version: "0.0.21x"',
     r"tied.yaml: tied\[\d+\]\.version: '0.0.21x' is not a version"),
    ('version: "0.0.22", torch: "==2.0.1", platforms: [linux-x86_64, windows-x86_64]',
     'version: "0.0.22", torch: "==2.0.1", platforms: [linux-x86_64, win64]',
     r"tied.yaml: tied\[\d+\]\.platforms: 'win64' is not one of"),
    ("sources: [pypi-wheel-xformers-0.0.23, pypi-files-xformers]", "sources: [pypi-wheel-xformers-0.0.99, pypi-files-xformers]",
     r"tied.yaml: tied\[\d+\]\.sources: unknown source id 'pypi-wheel-xformers-0.0.99'"),
    ("sources: [pypi-wheel-xformers-0.0.24, pypi-files-xformers]", "sources: [pypi-files-xformers]",
     r"tied.yaml: tied\[\d+\]\.sources: xformers 0.0.24: no source is the wheel whose METADATA was read"),
    ('{package: triton, version: "2.0.0", required_by', '{package: triton, version: "2.0.0", torch: "==2.0.0", required_by',
     r"tied.yaml: tied\[\d+\]\.torch: triton 2.0.0: torch names triton"),
    ("{package: torchtext, version: \"0.13.0\"", "{package: torchtxt, version: \"0.13.0\"",
     r"tied.yaml: tied\[\d+\]\.package: 'torchtxt' is not one of xformers, torchdata, torchtext, triton"),
    ("{package: flash-attn,", "{package: flash-atn,", r"tied.yaml: built_from_source\[1\]\.package: 'flash-atn'"),
    ("{package: mamba-ssm, sources", "{package: mamba-ssm, note: x, sources",
     r"tied.yaml: built_from_source\[2\]\.note: unknown key 'note'"),
], ids=["specifier", "version", "platform", "unknown-source", "no-wheel-source", "triton-torch", "package",
        "built-package", "unknown-key"])
def test_a_bad_record_is_named_with_its_file_record_and_field(db_copy, capsys, old, new, message):
    path = db_copy / "tied.yaml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    problems = validate_database(db_copy)
    assert len(problems) == 1 and re.search(message, problems[0]), problems
    assert main(["db", "validate", str(db_copy)]) == 1
    assert re.search(message, capsys.readouterr().out)


def test_a_source_id_of_tied_yaml_must_be_new_to_the_database(db_copy):
    text = (db_copy / "tied.yaml").read_text()
    (db_copy / "tied.yaml").write_text(text.replace("  pypi-files-xformers:\n", "  nvidia-cuda-gpus:\n", 1).replace(
        "pypi-files-xformers]", "nvidia-cuda-gpus]"))
    assert any("tied.yaml: sources.nvidia-cuda-gpus: source id 'nvidia-cuda-gpus' is defined twice" in p
               for p in validate_database(db_copy)), validate_database(db_copy)


def test_a_project_without_tied_packages_never_reads_tied_yaml(db_copy, tmp_path, capsys):
    """tied.yaml is a part of its own (envpin.compat.files.PARTS), its sources its own: a solve reads it only for
    a project that names one of its packages. A broken file shows where it is read, and nowhere else."""
    (db_copy / "tied.yaml").write_text("tied: {{{\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "requirements.txt").write_text("torch>=2.4\nnumpy\n")
    target = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "550.54.14", "--gpu", "RTX 4090"]
    assert main(["solve", "--db", str(db_copy), "--project", str(plain), *target]) == 0
    database = load_database(db_copy)
    assert "tied_releases" not in database.__dict__ and "built_from_source" not in database.__dict__  # never read
    tied = tmp_path / "tied"
    tied.mkdir()
    (tied / "requirements.txt").write_text("torch>=2.0\nxformers==0.0.20\n")
    capsys.readouterr()
    assert main(["solve", "--db", str(db_copy), "--project", str(tied), *target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tied.yaml" in err and "Traceback" not in err


def test_an_exact_pin_ties_torch_to_its_release(database):
    assert framework_specifier(releases_of(database, "torchdata", "==0.6.1"), TORCH) == "==2.0.1"
    assert framework_specifier(releases_of(database, "triton", "==2.0.0"), TORCH) == ">=2.0.0,<=2.0.1"
    assert framework_specifier(releases_of(database, "torchdata", "==0.7.1"), TORCH) == ">=2.0.0,<=2.15.0"  # its torch>=2
    assert framework_specifier(releases_of(database, "torchdata", "==0.7.1"), TORCH[1:]) is None  # every release allowed
    assert releases_of(database, "numpy", "==1.26.4") == []


def test_a_range_allows_the_torch_releases_its_releases_require(database):
    # xformers 0.0.20 ... 0.0.35: torch 2.0.1 ... 2.10.0 one release each, then torch>=2.10
    assert framework_specifier(releases_of(database, "xformers", ">=0.0.20"), TORCH) == ">=2.0.1,<=2.15.0"
    # up to 0.0.30 (torch 2.7.0): the releases none of them requires are left out
    assert framework_specifier(releases_of(database, "xformers", ">=0.0.20,<=0.0.30"), TORCH) == ">=2.0.1,<=2.7.0"
    assert framework_specifier(releases_of(database, "xformers", "<=0.0.25.post1,>=0.0.22.post7"), TORCH) == ">=2.1.0,<=2.2.2"
    assert framework_specifier(releases_of(database, "xformers", ">=0.0.18,<0.0.23"), TORCH) == ">=2.0.0,<=2.1.0"
    assert framework_specifier(releases_of(database, "xformers", "==0.0.16"), []) == "==1.13.1"


def version_for(database, package: str, specifier: str, torch: str, platform: str) -> str | None:
    found = release_for(releases_of(database, package, specifier), torch, platform)
    return found.version if found is not None else None


def test_the_release_pip_takes_beside_the_solved_torch(database):
    assert version_for(database, "xformers", ">=0.0.20", "2.5.1+cu124", "linux-x86_64") == "0.0.29.post1"
    # 0.0.28.post3 / 0.0.29.x have Linux wheels only: on Windows pip takes none of them
    assert version_for(database, "xformers", ">=0.0.20", "2.5.1", "windows-x86_64") is None
    assert version_for(database, "xformers", ">=0.0.20", "2.0.1+cu118", "windows-x86_64") == "0.0.22"
    assert version_for(database, "xformers", ">=0.0.20", "2.13.0+cu129", "linux-x86_64") == "0.0.35"
    assert version_for(database, "torchdata", "", "2.13.0", "linux-x86_64") == "0.11.0"
    assert version_for(database, "triton", "", "2.13.0", "linux-x86_64") == "3.7.1"


def test_cuda_suffixed_packages_name_their_major():
    assert cuda_major_of_requirement("cuml-cu11", ()) == "11"
    assert cuda_major_of_requirement("cupy-cuda12x", ()) == "12"
    assert cuda_major_of_requirement("nvidia-cublas-cu12", ()) == "12"
    assert cuda_major_of_requirement("onnxruntime", ("cu12",)) == "12"
    assert cuda_major_of_requirement("numpy", ()) is None
