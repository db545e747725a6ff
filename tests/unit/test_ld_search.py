"""The Linux loader model on a directory tree: LD_LIBRARY_PATH is searched before the wheels' DT_RUNPATH."""

from __future__ import annotations

from pathlib import Path

from envpin.doctor import ld_search
from envpin.doctor.engine import diagnose
from envpin.doctor.model import Case
from envpin.facts.host import Driver, EnvFacts, EnvPython, FrameworkFacts, Gpu, HostFacts, Packages, PythonInfo
from envpin.host.libraries import scan


def tree(root: Path, layout: dict[str, list[str]]) -> dict[str, str]:
    made = {}
    for relative, names in layout.items():
        directory = root / relative
        directory.mkdir(parents=True, exist_ok=True)
        for name in names:
            (directory / name).write_bytes(b"\x7fELF")
        made[relative] = str(directory)
    return made


def test_ld_library_path_wins_over_runpath_and_runpath_over_the_cache(tmp_path):
    dirs = tree(tmp_path, {
        "usr/local/cuda-12.1/lib64": ["libnvJitLink.so.12", "libnvJitLink.so.12.1.105", "libcudart.so.12"],
        "venv/site-packages/nvidia/nvjitlink/lib": ["libnvJitLink.so.12"],
        "usr/lib/x86_64-linux-gnu": ["libcudnn.so.9", "libcudnn.so.9.1.0"],
    })
    listing = ld_search.listing_from_facts(scan(dirs.values(), "linux"))
    wheel = dirs["venv/site-packages/nvidia/nvjitlink/lib"]
    shadowed = ld_search.LinuxLoader(ld_library_path=(dirs["usr/local/cuda-12.1/lib64"],), listing=listing)
    winner = ld_search.resolve(shadowed, "libnvJitLink.so.12", runpath=(wheel,))
    assert winner.directory == dirs["usr/local/cuda-12.1/lib64"] and winner.how == "LD_LIBRARY_PATH entry 1"
    assert winner.version == (12, 1, 105) and winner.candidates == (dirs["usr/local/cuda-12.1/lib64"], wheel)
    assert ld_search.shadowing(shadowed, "libnvJitLink.so.12", wheel) == winner
    clean = ld_search.LinuxLoader(listing=listing, ld_cache=(dirs["usr/lib/x86_64-linux-gnu"],))
    assert ld_search.resolve(clean, "libnvJitLink.so.12", runpath=(wheel,)).how == "DT_RUNPATH"
    assert ld_search.shadowing(clean, "libnvJitLink.so.12", wheel) is None
    assert ld_search.resolve(clean, "libcudnn.so.9").how == "ld.so.cache"
    rpath_only = ld_search.resolve(shadowed, "libnvJitLink.so.12", rpath=(wheel,))
    assert rpath_only.how == "DT_RPATH"  # legacy DT_RPATH (no RUNPATH) still beats LD_LIBRARY_PATH


def test_the_doctor_names_the_toolkit_that_shadows_the_wheel(tmp_path, database):
    dirs = tree(tmp_path, {
        "usr/local/cuda-12.1/lib64": ["libnvJitLink.so.12", "libnvJitLink.so.12.1.105"],
        "venv/lib/python3.11/site-packages/nvidia/nvjitlink/lib": ["libnvJitLink.so.12"],
        "venv/lib/python3.11/site-packages/nvidia/cusparse/lib": ["libcusparse.so.12"],
    })
    toolkit = dirs["usr/local/cuda-12.1/lib64"]
    host = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.9"),
                     driver=Driver("570.124.04", "12.8", "nvml"), gpus=(Gpu(0, "NVIDIA GeForce RTX 3060", "8.6"),),
                     env={"LD_LIBRARY_PATH": [toolkit]}, files=scan([toolkit], "linux"))
    wheels = {d: sorted(p.name for p in Path(d).iterdir()) for k, d in dirs.items() if "site-packages" in k}
    env = EnvFacts(python=EnvPython("3.11.9", executable=str(tmp_path / "venv/bin/python"), env_type="venv"),
                   packages=Packages(pip={"torch": "2.4.0", "nvidia-nvjitlink-cu12": "12.4.127"}),
                   torch=FrameworkFacts(import_ok=False, import_error=(
                       f"ImportError: {dirs['venv/lib/python3.11/site-packages/nvidia/cusparse/lib']}/libcusparse.so.12: "
                       "undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12")),
                   library_dirs=wheels)
    finding = diagnose(Case(host=host, env=env, database=database)).findings[0]
    assert finding.id == "LNX-NVJITLINK-SHADOWED"
    assert any(toolkit in line and "libnvJitLink.so.12.1.105" in line for line in finding.evidence)
    assert any("nvJitLink ≥ 12.4" in line for line in finding.evidence)
    assert finding.fix[0].startswith(f"remove {toolkit} from LD_LIBRARY_PATH")
