"""AMD, Intel and Apple detection: the pure parsers on recorded real outputs (tests/fixtures/host/SOURCES.md), and
the ordered sources through a real subprocess runner, fake tools on PATH and a sysfs tree under a temporary root."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from envpin.facts.checks import amdgpu_dkms_release, amdgpu_module_of
from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo, from_json, to_json
from envpin.host import detect_host, other_gpus
from envpin.host.runner import SubprocessRunner
from envpin.host.summary import render_summary
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
    assert other_gpus.parse_kfd_properties("cpu_cores_count 16\nsimd_count 0\n") is None


def test_rocminfo_gpu_and_cpu_agents():
    gpus = other_gpus.parse_rocminfo(fixture("amd/rocminfo_cpu_agent_ollama11420.txt")
                                     + fixture("amd/rocminfo_rx7900xtx_agent_ollama3158.txt"))
    assert gpus == [other_gpus.FoundGpu("Radeon RX 7900 XTX", "gfx1100", None)]
    assert other_gpus.parse_rocminfo(fixture("amd/rocminfo_cpu_agent_ollama11420.txt")) == []


def test_amd_smi_static_text_forms():
    # ROCm 7.x (IFWI, DRIVER with OS_KERNEL_VERSION) and ROCm 6.3's changelog example of an MI308X partition
    assert other_gpus.parse_amd_smi_static(fixture("amd/amd_smi_static_text_mi350x_rocm_systems_2987_partial.txt")) == [
        other_gpus.FoundGpu("AMD Instinct MI350X", "gfx950", device_id="0x75a0", driver="6.18.3")]
    assert other_gpus.parse_amd_smi_static(fixture("amd/amd_smi_static_asic_text_mi308x_amdsmi_changelog_6.3.txt")) == [
        other_gpus.FoundGpu("MI308X", "gfx942", device_id="0x74a2")]


def test_amd_smi_static_json_forms():
    # amd-smi 26 (gpu_data, vbios, vram.size as value/unit, driver.version the in-tree kernel's banner: no module)
    mi210 = other_gpus.parse_amd_smi_static(fixture("amd/amd_smi_static_json_mi210_device_metrics_exporter.json"))
    assert mi210 == [other_gpus.FoundGpu("AMD Instinct MI210", "gfx90a", memory_mib=65520, device_id="0x740f")]
    # Python warnings before the document are skipped; this recording was cut inside the document
    with pytest.raises(ValueError):
        other_gpus.parse_amd_smi_static(fixture("amd/amd_smi_static_json_rx7800xt_ajean_39_partial.txt"))


def test_amd_smi_static_json_of_older_releases():
    # the field names of ROCm 6.0 (vram_size_mb, driver_version; no target) and 6.1/6.2 (size, version; no target),
    # read from ROCm/amdsmi's amdsmi_commands.py at the rocm-6.0.0 and rocm-6.1.0 tags: not recordings
    v60 = ('[{"gpu": 0, "asic": {"market_name": "AMD Instinct MI210", "device_id": "0x740f"}, '
           '"vram": {"vram_type": "HBM", "vram_vendor": "N/A", "vram_size_mb": 65520}, '
           '"driver": {"driver_name": "amdgpu", "driver_version": "6.3.6", "driver_date": "2015/01/01 00:00"}}]')
    v61 = ('[{"gpu": 0, "asic": {"market_name": "N/A", "device_id": "0x74a1"}, '
           '"vram": {"type": "HBM", "vendor": "N/A", "size": {"value": 196592, "unit": "MB"}}, '
           '"driver": {"name": "amdgpu", "version": "6.7.0"}}]')
    assert other_gpus.parse_amd_smi_static(v60) == [
        other_gpus.FoundGpu("AMD Instinct MI210", None, memory_mib=65520, device_id="0x740f", driver="6.3.6")]
    assert other_gpus.parse_amd_smi_static(v61) == [
        other_gpus.FoundGpu("AMD GPU (PCI 0x74a1)", None, memory_mib=196592, device_id="0x74a1", driver="6.7.0")]


def test_rocm_smi_product_names():
    json_7900 = other_gpus.parse_rocm_smi_product(fixture("amd/rocm_smi_productname_json_rx7900xt_marimo_9237.txt"))
    csv_7900 = other_gpus.parse_rocm_smi_product(fixture("amd/rocm_smi_productname_csv_rx7900xt_marimo_9237.txt"))
    assert json_7900 == csv_7900 == [other_gpus.FoundGpu("Radeon RX 7900 XT", "gfx1100", memory_mib=20464,
                                                         device_id="0x744c")]
    # an MI250X's gfx90a printed as "gfx9010" (decimal stepping), ROCm/rocm_smi_lib#159
    assert other_gpus.parse_rocm_smi_product(fixture("amd/rocm_smi_productname_json_mi250x_rocm_smi_lib_159.txt")) == [
        other_gpus.FoundGpu("AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "gfx90a", device_id="0x7408")]
    # an older rocm-smi: a family with the name in brackets, no GFX Version
    assert other_gpus.parse_rocm_smi_product(fixture("amd/rocm_smi_productname_csv_2x_mi100_easybuild_3978.txt")) == [
        other_gpus.FoundGpu("AMD Instinct MI100", None, device_id="0x0c34")] * 2


# the numbers rocm_smi_lib's formula before its commit 94dca70 gives for KFD's 90010, 90008, 90006, 90012, 110000,
# 90402, 110501, 120001 and 100300, and the hex form after it
@pytest.mark.parametrize("printed, gfx", [("gfx9010", "gfx90a"), ("gfx9008", "gfx908"), ("gfx9006", "gfx906"),
                                          ("gfx9012", "gfx90c"), ("gfx1100", "gfx1100"), ("gfx942", "gfx942"),
                                          ("gfx1151", "gfx1151"), ("gfx1201", "gfx1201"), ("gfx1030", "gfx1030"),
                                          ("gfx90a", "gfx90a"), ("N/A", None)])
def test_printed_gfx_versions(printed, gfx):
    assert other_gpus.parse_rocm_smi_product(json.dumps({"card0": {"GFX Version": printed}}))[0].gfx == gfx
    document = {"gpu_data": [{"gpu": 0, "asic": {"market_name": "AMD Instinct MI250X", "target_graphics_version": printed}}]}
    assert other_gpus.parse_amd_smi_static(json.dumps(document))[0].gfx == gfx


def test_rocminfo_agents_of_apus_and_instinct():
    assert other_gpus.parse_rocminfo(fixture("amd/rocminfo_8060s_gfx1151_agent_ds4_475_partial.txt")) == [
        other_gpus.FoundGpu("AMD Radeon 8060S Graphics", "gfx1151")]
    # excerpts cut before the Device Type line: an agent named by a target is a GPU; the generic name is an APU's
    assert other_gpus.parse_rocminfo(fixture("amd/rocminfo_780m_gfx1103_agent_therock_5897_partial.txt")) == [
        other_gpus.FoundGpu("AMD Radeon 780M Graphics", "gfx1103")]
    assert other_gpus.parse_rocminfo(fixture("amd/rocminfo_raphael_gfx1036_agent_rocblas_1415_partial.txt")) == [
        other_gpus.FoundGpu("AMD Radeon Graphics", "gfx1036")]  # integrated by its target (below), not its name
    assert other_gpus.parse_rocminfo(fixture("amd/rocminfo_cpu_agent_ollama11420.txt")) == []
    mi300x = "*******\nAgent 3\n*******\n" + fixture("amd/rocminfo_mi300x_agent_rocm_4414_partial.txt")
    assert other_gpus.parse_rocminfo(mi300x) == [other_gpus.FoundGpu("AMD Instinct MI300X", "gfx942")]


@pytest.mark.parametrize("name, targets", [
    ("rocm_agent_enumerator_gfx803_gfx902_llamacpp_11209.txt", ["gfx803", "gfx902"]),
    ("rocm_agent_enumerator_gfx900_rocm_223.txt", ["gfx900"]),
    ("rocm_agent_enumerator_8x_mi300x_iree_22283.txt", ["gfx942"] * 8),
])
def test_rocm_agent_enumerator_recordings(name, targets):
    assert other_gpus.parse_rocm_agent_enumerator(fixture(f"amd/{name}")) == targets


def test_amdgpu_module_from_a_sysfs_tree(tmp_path):
    # DKMS: the version amdgpu-dkms 6.16.6 printed on ROCm 7.1.1 (ROCm/legacy-rocm-build#5624)
    (tmp_path / "sys" / "module" / "amdgpu").mkdir(parents=True)
    (tmp_path / "sys" / "module" / "amdgpu" / "version").write_text("6.16.6\n", encoding="utf-8")
    assert other_gpus.amdgpu_module(str(tmp_path)) == "6.16.6"
    # in-tree: the module directory without a version file; the kernel release of easybuild#3978's rocm-smi
    (tmp_path / "sys" / "module" / "amdgpu" / "version").unlink()
    (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
    release = fixture("amd/rocm_smi_driverversion_csv_easybuild_3978.txt").splitlines()[1].split(",")[1]
    (tmp_path / "proc" / "sys" / "kernel" / "osrelease").write_text(release + "\n", encoding="utf-8")
    assert other_gpus.amdgpu_module(str(tmp_path)) == "in-tree 4.18.0-348.12.2.el8_5.x86_64"
    assert other_gpus.amdgpu_module(str(tmp_path / "nothing")) is None


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
    assert other_gpus.parse_xpu_smi_discovery(fixture("intel/xpu_smi_discovery_flex170_xpumanager_69_partial.txt")) == [
        "Intel(R) Data Center GPU Flex 170"]
    assert other_gpus.parse_xpu_smi_discovery(
        fixture("intel/xpu_smi_discovery_arc_pro_b60_sglang_38873_partial.txt")) == ["Intel(R) Arc(TM) Pro B60 Graphics"]
    # Intel's own guide: the same discovery as a table and as -j JSON (whose `device_name` was read as nothing before)
    for name in ("intel/xpu_smi_discovery_xpumanager_smi_user_guide.txt",
                 "intel/xpu_smi_discovery_json_xpumanager_smi_user_guide.json"):
        assert other_gpus.parse_xpu_smi_discovery(fixture(name)) == ["Intel(R) Graphics [0x020a]"], name
    assert other_gpus.parse_xpu_smi_discovery('{"device_list": [{"device_id": 0}]') == []  # cut: not a document
    assert other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_cpu_only_stable_diffusion_cpp_330.txt")) == []
    # llama.cpp's SYCL guide: a newer sycl-ls (Unified Runtime, device version 12.55.8), the Windows form of an older
    # one ([ext_oneapi_level_zero:gpu:0]), and a CUDA-only machine, whose GPU is not Intel's
    assert other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_arc_a770_uhd730_llamacpp_sycl_doc.txt")) == [
        "Intel(R) Arc(TM) A770 Graphics", "Intel(R) UHD Graphics 730"]
    assert other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_windows_iris_xe_llamacpp_sycl_doc.txt")) == [
        "Intel(R) Iris(R) Xe Graphics"]
    assert other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_nvidia_a100_llamacpp_sycl_doc.txt")) == []


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
    _tool(bin_dir, "amd-smi", fixture("amd/amd_smi_static_text_mi350x_rocm_systems_2987_partial.txt"))
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
    assert document["amdgpu_module"] is None  # no /sys/module/amdgpu in this tree
    # the DKMS module of ROCm 6.1.0 as rocminfo names it ("ROCk module version 6.7.0 is loaded", ROCm/hip#3464)
    (root / "sys" / "module" / "amdgpu").mkdir(parents=True)
    (root / "sys" / "module" / "amdgpu" / "version").write_text("6.7.0\n", encoding="utf-8")
    facts = detect_host(runner=SubprocessRunner(), environ={"PATH": path}, fs_root=str(root), nvml_module=False,
                        probe_environment=False)
    assert to_json(facts)["amdgpu_module"] == "6.7.0" and from_json(to_json(facts)) == facts


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


def test_a_cut_amd_smi_document_falls_to_rocm_smi(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    _kfd_node(root, 1, "gfx_target_version 110000\n")
    (root / "sys" / "module" / "amdgpu").mkdir(parents=True)
    (root / "sys" / "module" / "amdgpu" / "version").write_text("6.16.6\n", encoding="utf-8")
    _tool(bin_dir, "amd-smi", fixture("amd/amd_smi_static_json_rx7800xt_ajean_39_partial.txt"))
    _tool(bin_dir, "rocm-smi", fixture("amd/rocm_smi_productname_json_rx7900xt_marimo_9237.txt"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert [(g.name, g.gfx, g.memory_mib) for g in report.gpus] == [("Radeon RX 7900 XT", "gfx1100", 20464)]
    assert report.amdgpu_module == "6.16.6"
    assert any("amd-smi printed something envpin cannot read" in note for note in report.notes)


def test_a_detected_amdgpu_dkms_module_gives_the_target_its_driver_release(tmp_path, monkeypatch, database):
    # amdgpu-dkms 6.12.12 is driver 6.4's (AMD's driver docs of 6.4 print amdgpu/6.12.12 in `dkms status`), and
    # driver 6.4 supports ROCm 6.1-7.1: the solve checks it without --amdgpu-driver and leaves the rocm7.2 build
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    _kfd_node(root, 1, "gfx_target_version 110000\n")
    (root / "sys" / "module" / "amdgpu").mkdir(parents=True)
    (root / "sys" / "module" / "amdgpu" / "version").write_text("6.12.12\n", encoding="utf-8")
    _tool(bin_dir, "rocm-smi", fixture("amd/rocm_smi_productname_json_rx7900xt_marimo_9237.txt"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), gpus=tuple(report.gpus),
                      amdgpu_module=report.amdgpu_module)
    target = make_target(database, facts)
    assert (target.amdgpu_module, target.amdgpu_driver, target.amdgpu_driver_module) == ("6.12.12", "6.4", "6.12.12")
    answer = _solve(database, facts)
    assert isinstance(answer, Plan) and answer.accelerator == "rocm7.1", answer
    assert any("AMD GPU driver 6.4 supports ROCm 7.1" in reason for reason in answer.reasons), answer.reasons


def test_the_installed_amdgpu_dkms_package_of_the_loaded_module_is_read(tmp_path, monkeypatch, database):
    # ROCm 6.2.0's amdgpu-dkms (ROCm/rocm-install-on-linux#293) with its module 6.8.5 loaded: the package version
    # carries the release (60200: 6.2), which the solve uses as the driver; a package whose module is not the loaded
    # one (installed, not booted into) is not used, and said
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    _kfd_node(root, 1, "gfx_target_version 110000\n")
    (root / "sys" / "module" / "amdgpu").mkdir(parents=True)
    (root / "sys" / "module" / "amdgpu" / "version").write_text("6.8.5\n", encoding="utf-8")
    _tool(bin_dir, "rocm-smi", fixture("amd/rocm_smi_productname_json_rx7900xt_marimo_9237.txt"))
    _tool(bin_dir, "dpkg-query", fixture("amd/dpkg_query_amdgpu_dkms_6.8.5_rocm_install_293.txt"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert (report.amdgpu_module, report.amdgpu_dkms) == ("6.8.5", "1:6.8.5.60200-2009582.24.04")
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), gpus=tuple(report.gpus),
                      amdgpu_module=report.amdgpu_module, amdgpu_dkms=report.amdgpu_dkms)
    assert from_json(to_json(facts)) == facts
    assert "AMD:      amdgpu module 6.8.5, amdgpu-dkms 1:6.8.5.60200-2009582.24.04" in render_summary(facts)
    target = make_target(database, facts)
    assert (target.amdgpu_driver, target.amdgpu_driver_package) == ("6.2", "1:6.8.5.60200-2009582.24.04")
    answer = _solve(database, facts)
    assert isinstance(answer, Plan) and any(
        "amdgpu-dkms 1:6.8.5.60200-2009582.24.04 is of AMD GPU driver 6.2" in r for r in answer.reasons), answer.reasons
    (root / "sys" / "module" / "amdgpu" / "version").write_text("6.3.6\n", encoding="utf-8")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert (report.amdgpu_module, report.amdgpu_dkms) == ("6.3.6", None)
    assert any("is not the loaded amdgpu module 6.3.6" in note for note in report.notes), report.notes


def test_windows_wmic_table_of_an_intel_igpu_beside_an_nvidia_card():
    adapters = other_gpus.parse_video_controllers(
        fixture("windows/video_controller_wmic_name_uhd630_gtx1080ti_presentmon_159.txt"))
    assert [(a.name, a.vendor) for a in adapters] == [("Intel(R) UHD Graphics 630", "intel"),
                                                      ("NVIDIA GeForce GTX 1080 Ti", "nvidia")]


def _solve(database, facts):
    return solve(database, make_target(database, facts), parse_request(["torch"], []))


def test_mixed_vendor_hosts_pick_the_accelerator(database):
    # an Intel UHD 630 beside an NVIDIA GTX 1080 Ti (PresentMon#159's adapters), the NVIDIA driver answering
    adapters = other_gpus.parse_video_controllers(
        fixture("windows/video_controller_wmic_name_uhd630_gtx1080ti_presentmon_159.txt"))
    gpus = tuple(Gpu(i, a.name, "6.1" if a.vendor == "nvidia" else None, vendor=a.vendor) for i, a in enumerate(adapters))
    windows = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.11"), gpus=gpus,
                        driver=Driver("591.86", "13.1", "nvidia-smi"))
    answer = _solve(database, windows)
    assert isinstance(answer, Plan) and answer.accelerator.startswith("cu")
    # an AMD APU (rocminfo's Radeon 8060S agent) beside an NVIDIA card on Linux: CUDA, not ROCm
    apu = other_gpus.parse_rocminfo(fixture("amd/rocminfo_8060s_gfx1151_agent_ds4_475_partial.txt"))[0]
    linux_nvidia = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"),
                             driver=Driver("590.48.01", "13.1", "nvidia-smi"),
                             gpus=(Gpu(0, "NVIDIA H100 80GB HBM3", "9.0"),
                                   Gpu(1, apu.name, None, vendor="amd", gfx=apu.gfx, integrated=True)))
    answer = _solve(database, linux_nvidia)
    assert isinstance(answer, Plan) and answer.accelerator.startswith("cu")
    # an Intel iGPU known only by its i915 card beside an AMD card (rocm-smi's RX 7900 XT): ROCm for the card
    card = other_gpus.parse_rocm_smi_product(fixture("amd/rocm_smi_productname_json_rx7900xt_marimo_9237.txt"))[0]
    linux_amd = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), amdgpu_driver="6.4",
                          gpus=(Gpu(0, "Intel GPU (i915 driver, PCI 0x9bc4)", None, vendor="intel"),
                                Gpu(1, card.name, None, card.memory_mib, vendor="amd", gfx=card.gfx)))
    answer = _solve(database, linux_amd)
    assert isinstance(answer, Plan) and answer.accelerator.startswith("rocm")


def test_a_detected_amdgpu_module_is_named_where_the_driver_was_not_given(database):
    card = Gpu(0, "Radeon RX 7900 XT", None, vendor="amd", gfx="gfx1100")
    for module, words in (("6.16.6", "the loaded amdgpu-dkms module 6.16.6 is the one AMD GPU driver 30.20 ships"),
                          ("6.16.13", "amdgpu-dkms module is 6.16.13, and which AMD GPU driver release ships it is unknown"),
                          ("in-tree 6.8.0-45-generic", "kernel's own")):
        facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), gpus=(card,), amdgpu_module=module)
        answer = _solve(database, facts)
        assert isinstance(answer, Plan) and any(words in reason for reason in answer.reasons), answer.reasons


def test_the_detect_summary_names_the_amd_facts():
    card = other_gpus.parse_rocm_smi_product(fixture("amd/rocm_smi_productname_json_rx7900xt_marimo_9237.txt"))[0]
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"), rocm="6.2.4", amdgpu_module="6.16.6",
                      gpus=(Gpu(0, card.name, None, card.memory_mib, vendor="amd", gfx=card.gfx),))
    text = render_summary(facts)
    assert "GPU 0:    Radeon RX 7900 XT (gfx1100, 20 GiB)" in text
    assert "AMD:      amdgpu module 6.16.6, ROCm 6.2.4" in text


def test_an_amd_smi_without_targets_takes_them_from_a_uniform_kfd_topology(tmp_path, monkeypatch):
    bin_dir, root = tmp_path / "bin", tmp_path / "root"
    bin_dir.mkdir()
    # two MI100 nodes as KFD numbers gfx908; rocm-smi of that era names them without a GFX Version
    _kfd_node(root, 0, "cpu_cores_count 16\nsimd_count 0\n")
    _kfd_node(root, 1, "gfx_target_version 90008\n")
    _kfd_node(root, 2, "gfx_target_version 90008\n")
    _tool(bin_dir, "rocm-smi", fixture("amd/rocm_smi_productname_csv_2x_mi100_easybuild_3978.txt"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert [(g.name, g.gfx) for g in report.gpus] == [("AMD Instinct MI100", "gfx908")] * 2
    # a topology of two different targets is not matched by position: the names stay without one
    (root / other_gpus.KFD_NODES / "2" / "properties").write_text("gfx_target_version 90010\n", encoding="utf-8")
    report = other_gpus.detect_other_gpus(SubprocessRunner(), "linux", str(root), timeout=5)
    assert [g.gfx for g in report.gpus] == [None, None]


def test_an_amd_igpu_beside_an_amd_card_solves_for_the_card(database):
    # rocminfo's agents of two machines put on one host: a Ryzen 7 7700's iGPU (rocBLAS#1415) and an RX 7900 XTX
    # (ollama#3158); the iGPU's gfx1036 has no kernels in any torch wheel, so it must not decide the build
    text = (fixture("amd/rocminfo_raphael_gfx1036_agent_rocblas_1415_partial.txt")
            + fixture("amd/rocminfo_rx7900xtx_agent_ollama3158.txt"))
    found = other_gpus.parse_rocminfo(text)
    gpus = tuple(Gpu(i, g.name, None, vendor="amd", gfx=g.gfx, integrated=g.integrated) for i, g in enumerate(found))
    answer = _solve(database, HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), gpus=gpus,
                                        amdgpu_driver="6.4"))
    assert isinstance(answer, Plan) and answer.accelerator.startswith("rocm")
    assert any("an integrated GPU beside a discrete one" in reason for reason in answer.reasons), answer.reasons


def test_an_apu_the_name_table_lacks_is_integrated_by_its_target(database):
    # rocminfo's "AMD Radeon 8060S Graphics" is not a name amd_gpus.yaml lists; gfx1151 is only APUs there
    apu = other_gpus.parse_rocminfo(fixture("amd/rocminfo_8060s_gfx1151_agent_ds4_475_partial.txt"))[0]
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"),
                      gpus=(Gpu(0, apu.name, None, vendor="amd", gfx=apu.gfx),))
    assert make_target(database, facts).amd_gpus[0].integrated is True


@pytest.mark.parametrize("gfx, integrated", [
    ("gfx1036", True),   # a Ryzen 7 7700's iGPU (ROCm/rocBLAS#1415): gfx1036 is only APUs' in amd_gpus.yaml
    ("gfx906", False),   # an MI50 under ROCm 7.2 prints the same generic name (AlphaMine-Tech/alpha-miner#5)
    (None, True),        # nothing but the name: most APUs go by it
])
def test_the_generic_amd_name_is_weighed_after_its_target(database, gfx, integrated):
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"),
                      gpus=(Gpu(0, "AMD Radeon Graphics", None, vendor="amd", gfx=gfx),))
    assert make_target(database, facts).amd_gpus[0].integrated is integrated


def test_an_intel_igpu_beside_an_arc_card_solves_for_the_card(database):
    names = other_gpus.parse_sycl_ls(fixture("intel/sycl_ls_arc_a770_uhd730_llamacpp_sycl_doc.txt"))
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"),
                      gpus=tuple(Gpu(i, name, None, vendor="intel") for i, name in enumerate(names)))
    answer = _solve(database, facts)
    assert isinstance(answer, Plan) and answer.accelerator == "xpu"
    # the display-only UHD 730 alone is no XPU target: the CPU build
    alone = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), gpus=(Gpu(0, names[1], None, vendor="intel"),))
    answer = _solve(database, alone)
    assert isinstance(answer, Plan) and answer.accelerator == "cpu"


@pytest.mark.parametrize(("version", "module", "release"), [
    ("1:6.3.6.60001-1710620.22.04", "6.3.6", "6.0"),  # apt's log of the 6.0.1 install, ROCm/legacy-rocm-build#2451
    ("1:6.8.5.60200-2009582.24.04", "6.8.5", "6.2"),  # ROCm 6.2.0's, ROCm/rocm-install-on-linux#293
    ("1:5.18.13.50403-1538762.22.04", "5.18.13", "5.4"),  # `dpkg -l` of ROCm 5.4.3 (the gist in rocm.yaml)
    ("6.10.5.30100200-2109964.24.04", "6.10.5", "30.10"),  # AMD's blog's example of the 30.10.2 scheme
    ("6.14.14-2204008.24.04", "6.14.14", None),  # `dkms status` (AMD's driver docs of 30.10): no release field
    ("6.12.12", "6.12.12", None),  # /sys/module/amdgpu/version
    ("30.10", None, None),  # a release, not an amdgpu-dkms version
])
def test_amdgpu_dkms_versions(version, module, release):
    assert (amdgpu_module_of(version), amdgpu_dkms_release(version)) == (module, release)
