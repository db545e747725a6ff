"""AMD, Intel and Apple detection: the pure parsers on recorded real outputs (tests/fixtures/host/SOURCES.md), and
the ordered sources through a real subprocess runner, fake tools on PATH and a sysfs tree under a temporary root."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from envpin.facts import Gpu, HostFacts, PythonInfo, to_json
from envpin.host import detect_host, other_gpus
from envpin.host.runner import SubprocessRunner
from envpin.resolver.plan import Plan
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "host"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("value, gfx", [(110000, "gfx1100"), (90402, "gfx942"), (90010, "gfx90a"), (90006, "gfx906"),
                                        (100300, "gfx1030"), (120001, "gfx1201"), (110501, "gfx1151"), (0, None),
                                        (91600, None)])
def test_kfd_target_versions(value, gfx):
    assert other_gpus.gfx_from_target_version(value) == gfx


def test_kfd_properties_of_real_nodes():
    assert other_gpus.parse_kfd_properties(fixture("amd/kfd_properties_mi300x_line_rocm_cli_343.txt")) == "gfx942"
    assert other_gpus.parse_kfd_properties(fixture("amd/kfd_properties_radeon_vii_rocm_systems_922.txt")) == "gfx906"
    assert other_gpus.parse_kfd_properties("cpu_cores_count 16\nsimd_count 0\n") is None


def test_rocminfo_gpu_and_cpu_agents():
    gpus = other_gpus.parse_rocminfo(fixture("amd/rocminfo_cpu_agent_ollama11420.txt")
                                     + fixture("amd/rocminfo_rx7900xtx_agent_ollama3158.txt"))
    assert gpus == [other_gpus.FoundGpu("Radeon RX 7900 XTX", "gfx1100", None)]
    assert other_gpus.parse_rocminfo(fixture("amd/rocminfo_cpu_agent_ollama11420.txt")) == []


def test_amd_smi_static_text_and_json():
    text = fixture("amd/amd_smi_static_mi350x_rocm_systems_2987.txt")
    assert other_gpus.parse_amd_smi_static(text) == [other_gpus.FoundGpu("AMD Instinct MI350X", "gfx950")]
    # the JSON shapes: a list (older amd-smi) and {"gpu_data": [...]} (newer); not recordings, see SOURCES.md
    listed = '[{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "target_graphics_version": "gfx942"}}]'
    wrapped = '{"gpu_data": [{"gpu": 0, "asic": {"market_name": "N/A", "target_graphics_version": "gfx1201"}}]}'
    assert other_gpus.parse_amd_smi_static(listed) == [other_gpus.FoundGpu("AMD Instinct MI300X", "gfx942")]
    assert other_gpus.parse_amd_smi_static(wrapped) == [other_gpus.FoundGpu("gfx1201", "gfx1201")]


def test_rocm_agent_enumerator_and_version_file():
    assert other_gpus.parse_rocm_agent_enumerator("gfx000\ngfx1030\n") == ["gfx1030"]
    assert other_gpus.parse_rocm_version("6.2.4-120\n") == "6.2.4"
    assert other_gpus.parse_rocm_version("garbage") is None


def test_intel_tools():
    assert other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_arc_a770_compute_runtime_764.txt")) == [
        "Intel(R) Arc(TM) A770 Graphics"]
    assert other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_arc_a750_llvm_17535.txt")) == [
        "Intel(R) Arc(TM) A750 Graphics"]
    assert other_gpus.parse_xpu_smi_discovery(fixture("intel/xpu_smi_discovery_arc_a770_llamacpp_28725.txt")) == [
        "Intel(R) Arc(TM) A770 Graphics"]


def test_apple_tools():
    assert other_gpus.parse_sw_vers(fixture("apple/sw_vers_12.7.6_pytorch_139425.txt")) == "12.7.6"
    assert other_gpus.parse_sw_vers("14.5\n") == "14.5"
    assert other_gpus.parse_cpu_brand("Apple M2 Max\n") == "Apple M2 Max"
    assert other_gpus.parse_cpu_brand("Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz") is None


def _tool(directory: Path, name: str, output: str, status: int = 0) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\nexit {status}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _kfd_node(root: Path, node: int, text: str) -> None:
    directory = root / other_gpus.KFD_NODES / str(node)
    directory.mkdir(parents=True)
    (directory / "properties").write_text(text, encoding="utf-8")


def test_sources_in_order_with_real_processes(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    _kfd_node(root, 0, "cpu_cores_count 16\nsimd_count 0\n")
    _kfd_node(root, 1, fixture("amd/kfd_properties_mi300x_line_rocm_cli_343.txt"))
    (root / "opt" / "rocm-6.2.4" / ".info").mkdir(parents=True)
    (root / "opt" / "rocm-6.2.4" / ".info" / "version").write_text("6.2.4-120\n", encoding="utf-8")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    runner = SubprocessRunner()
    # no ROCm tool installed: the KFD topology names the target
    report = other_gpus.detect_other_gpus(runner, "linux", str(root), timeout=5)
    assert [(g.vendor, g.name, g.gfx) for g in report.gpus] == [("amd", "AMD GPU (gfx942)", "gfx942")]
    assert report.rocm == "6.2.4"
    # rocminfo answers first when amd-smi fails
    _tool(bin_dir, "amd-smi", "Error: not supported", status=1)
    _tool(bin_dir, "rocminfo", fixture("amd/rocminfo_rx7900xtx_agent_ollama3158.txt"))
    report = other_gpus.detect_other_gpus(runner, "linux", str(root), timeout=5)
    assert [(g.name, g.gfx) for g in report.gpus] == [("Radeon RX 7900 XTX", "gfx1100")]
    assert any("amd-smi failed" in note for note in report.notes)
    # amd-smi first when it works
    _tool(bin_dir, "amd-smi", fixture("amd/amd_smi_static_mi350x_rocm_systems_2987.txt"))
    report = other_gpus.detect_other_gpus(runner, "linux", str(root), timeout=5)
    assert [(g.name, g.gfx) for g in report.gpus] == [("AMD Instinct MI350X", "gfx950")]


def test_a_hung_tool_is_a_note(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    _kfd_node(root, 1, "gfx_target_version 110000\n")
    (bin_dir / "amd-smi").write_text("#!/bin/sh\nsleep 30\n", encoding="utf-8")
    (bin_dir / "amd-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=0.5)
    assert any("timed out" in note for note in report.notes)
    assert [g.gfx for g in report.gpus] == ["gfx1100"]


def test_no_amd_device_runs_no_rocm_tool(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "rocminfo", fixture("amd/rocminfo_rx7900xtx_agent_ollama3158.txt"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(tmp_path / "empty"), timeout=5)
    assert report.gpus == [] and report.notes == []


def test_intel_card_in_sysfs_then_its_tools(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    device = root / "sys" / "class" / "drm" / "card0" / "device"
    device.mkdir(parents=True)
    (device / "vendor").write_text("0x8086\n", encoding="utf-8")
    (device / "device").write_text("0x56a0\n", encoding="utf-8")
    driver = root / "sys" / "bus" / "pci" / "drivers" / "i915"
    driver.mkdir(parents=True)
    os.symlink(driver, device / "driver")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert [g.name for g in report.gpus] == ["Intel GPU (i915 driver, PCI 0x56a0)"]
    _tool(bin_dir, "sycl-ls", fixture("intel/sycl_ls_arc_a770_compute_runtime_764.txt"))
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert [(g.vendor, g.name) for g in report.gpus] == [("intel", "Intel(R) Arc(TM) A770 Graphics")]


def test_detect_host_reports_the_amd_gpu_beside_no_nvidia(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    (root / "dev").mkdir(parents=True)
    (root / "dev" / "kfd").write_text("", encoding="utf-8")
    _kfd_node(root, 1, "gfx_target_version 110000\n")
    _tool(bin_dir, "rocminfo", fixture("amd/rocminfo_rx7900xtx_agent_ollama3158.txt"))
    path = f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"
    monkeypatch.setenv("PATH", path)
    facts = detect_host(runner=SubprocessRunner(), environ={"PATH": path}, fs_root=str(root), nvml_module=False,
                        probe_environment=False)
    document = to_json(facts)
    assert facts.driver is None
    assert [(g["vendor"], g["name"], g["gfx"]) for g in document["gpus"]] == [("amd", "Radeon RX 7900 XTX", "gfx1100")]


def test_windows_display_adapters_in_the_three_forms():
    table = other_gpus.parse_video_controllers(fixture("windows/video_controller_table_ollama_5124.txt"))
    assert [(a.name, a.vendor, a.driver_version) for a in table] == [
        ("AMD Radeon(TM) Graphics", "amd", "31.0.24019.1006"), ("AMD Radeon RX 7900 XTX", "amd", "31.0.24019.1006")]
    listed = other_gpus.parse_video_controllers(fixture("windows/video_controller_fl_intel_uhd_systeminformation_790.txt"))
    assert [(a.name, a.vendor) for a in listed] == [("Intel(R) UHD Graphics", "intel")]
    value = other_gpus.parse_video_controllers(fixture("windows/video_controller_wmic_value_dd_monitor_44.txt"))
    assert [(a.name, a.vendor, a.driver_version) for a in value] == [
        ("Intel(R) HD Graphics 5500", "intel", "20.19.15.5058")]


def test_a_windows_apu_beside_a_card_solves_for_the_card(database):
    adapters = other_gpus.parse_video_controllers(fixture("windows/video_controller_table_ollama_5124.txt"))
    gpus = tuple(Gpu(i, a.name, None, vendor=a.vendor, integrated=True if "(TM) Graphics" in a.name else None)
                 for i, a in enumerate(adapters))
    facts = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.11"), gpus=gpus)
    answer = solve(database, make_target(database, facts), parse_request(["torch"], []))
    assert isinstance(answer, Plan) and answer.accelerator == "cpu"
    assert any("none for Windows" in reason for reason in answer.reasons)


def test_windows_adapters_through_powershell(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "powershell", fixture("windows/video_controller_table_ollama_5124.txt"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "windows", str(tmp_path), timeout=5)
    assert [(g.vendor, g.name, g.integrated) for g in report.gpus] == [
        ("amd", "AMD Radeon(TM) Graphics", True), ("amd", "AMD Radeon RX 7900 XTX", None)]
