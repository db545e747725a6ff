"""torch.yaml's releases 1.0.0-1.11.0 agree with what PyPI says of them, as scripts/record-torch-history read it
(tests/fixtures/pypi-metadata/torch-history.json): each release's first upload, its Pythons per platform (the wheel
tags), the CUDA of PyPI's build per platform (torch/version.py of the wheel) and the torchvision and torchaudio
whose METADATA pins it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECORDED = json.loads((REPO / "tests" / "fixtures" / "pypi-metadata" / "torch-history.json").read_text(encoding="utf-8"))
PLATFORM_TAGS = (("manylinux", "x86_64", "linux-x86_64"), ("manylinux", "aarch64", "linux-aarch64"),
                 ("win_amd64", "", "windows-x86_64"), ("macosx", "arm64", "macos-arm64"),
                 ("macosx", "x86_64", "macos-x86_64"))
VERSIONS = sorted(RECORDED["torch"], key=lambda v: tuple(int(p) for p in v.split(".")))


def _platform(filename: str) -> str:
    tag = filename[:-len(".whl")].split("-")[-1]
    return next(platform for prefix, arch, platform in PLATFORM_TAGS if prefix in tag and arch in tag)


def _pythons(filenames: list[str]) -> dict[str, tuple[str, ...]]:
    """CPython 3 minors per platform from the wheel tags (the cp27 wheels of 1.0-1.4 are not recorded)."""
    found: dict[str, set[int]] = {}
    for name in filenames:
        match = re.fullmatch(r"cp3(\d+)", name.split("-")[2])
        if match:
            found.setdefault(_platform(name), set()).add(int(match.group(1)))
    return {platform: tuple(f"3.{m}" for m in sorted(minors)) for platform, minors in found.items()}


def _tag(cuda: str | None) -> str:
    return "cpu" if cuda is None else "cu" + "".join(cuda.split(".")[:2])


def test_the_record_holds_every_release_from_1_0_0_to_1_11_0():
    assert VERSIONS[0] == "1.0.0" and VERSIONS[-1] == "1.11.0" and len(VERSIONS) == 20


@pytest.mark.parametrize("version", VERSIONS)
def test_an_old_release_is_what_its_pypi_wheels_say(live_database, version):
    recorded = RECORDED["torch"][version]
    release = live_database.torch_release(version)
    assert release is not None, version
    assert release.released == recorded["first_upload"][:10]
    pythons = _pythons(recorded["wheels"])
    for platform, minors in pythons.items():
        assert release.python[platform] == minors, (version, platform)
    # PyPI's build per platform: its torch/version.py `cuda` (None: a CPU build)
    assert release.pypi == {platform: _tag(read["cuda"]) for platform, read in recorded["cuda"].items()}
    # a Windows record beside no Windows wheel on PyPI (before 1.7.0) says its Pythons are not PyPI's
    if "windows-x86_64" in release.python and "windows-x86_64" not in pythons:
        assert "Windows wheels" in (release.provenance.unverified or "")


@pytest.mark.parametrize("version", VERSIONS)
def test_an_old_releases_companions_are_the_ones_whose_metadata_pins_it(live_database, version):
    release = live_database.torch_release(version)
    for name in ("torchvision", "torchaudio"):
        pinning = sorted(v for v, read in RECORDED[name].items() if read["requires_torch"] == [f"torch (=={version})"])
        companion = release.companions.get(name)
        if companion is None:
            assert not pinning, (version, name, pinning)  # no companion recorded where one pins this release
        elif pinning:
            assert companion.version in pinning, (version, name, pinning)
        else:  # torchvision 0.2.x (an unpinned torch) and 0.3.0 (torch>=1.1.0): previous-versions pairs them
            assert RECORDED[name][companion.version]["requires_torch"] in (["torch"], ["torch (>=1.1.0)"])


@pytest.mark.parametrize("version", [v for v in VERSIONS if RECORDED["torch"][v]["cuda"]["linux-x86_64"].get("arch_flags")])
def test_pypis_linux_build_has_the_arch_list_its_wheel_names(live_database, version):
    # CUDA_ARCH_FLAGS of the wheel's libtorch_python.so (torch.cuda.get_arch_list(); from 1.6.0): SASS only
    [flags] = RECORDED["torch"][version]["cuda"]["linux-x86_64"]["arch_flags"]
    release = live_database.torch_release(version)
    archs = release.variants[release.pypi["linux-x86_64"]].archs["linux-x86_64"]
    assert archs.ptx == () and " ".join(c.sm for c in archs.sass) == flags
    assert "wheel" in archs.read_from
