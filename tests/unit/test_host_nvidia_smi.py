"""nvidia-smi parsers on recorded real outputs (tests/fixtures/host, see SOURCES.md)."""

from pathlib import Path

import pytest

from envpin.facts.host import Gpu
from envpin.host import locate, nvidia_smi
from envpin.host.nvidia_smi import SmiHeader, SmiParseError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "host"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------- table header, both generations

HEADERS = [
    ("smi_table_410.48_no_cuda_version_partial.txt", SmiHeader("410.48", "410.48", None)),
    ("smi_table_440.33.01_linux_8x_p100.txt", SmiHeader("440.33.01", "440.33.01", "10.2")),
    ("smi_table_470.63.01_linux.txt", SmiHeader("470.63.01", "470.63.01", "11.4")),
    ("smi_table_515.65.01_linux_titanv.txt", SmiHeader("515.65.01", "515.65.01", "11.7")),
    # WSL: the NVIDIA-SMI version is the Linux-side tool, the driver is the Windows one.
    ("smi_table_530.47_wsl_driver_531.68.txt", SmiHeader("530.47", "531.68", "12.1")),
    ("smi_table_545.46_wsl_cuda_err_partial.txt", SmiHeader("545.46", "546.80", None)),
    ("smi_table_550.127.05_linux_10x_a40.txt", SmiHeader("550.127.05", "550.127.05", "12.4")),
    ("smi_table_565.57.01_linux_8x_h100.txt", SmiHeader("565.57.01", "565.57.01", "12.7")),
    ("smi_table_580.65.06_linux_rtx4090.txt", SmiHeader("580.65.06", "580.65.06", "13.0")),
    ("smi_table_590.48.01_linux_h100.txt", SmiHeader("590.48.01", "590.48.01", "13.1")),
    ("smi_table_590.48.01_linux_h100_mig.txt", SmiHeader("590.48.01", "590.48.01", "13.1")),
    ("smi_table_591.86_windows_rtx2080s.txt", SmiHeader("591.86", "591.86", "13.1")),
    ("smi_table_595.71.05_linux_rtx4080s.txt", SmiHeader("595.71.05", "595.71.05", "13.2")),
    # R610+: "KMD Version" / "CUDA UMD Version" (sgl-project/sglang#27487)
    ("smi_table_610.43.02_linux_2x_b200_partial.txt", SmiHeader("610.43.02", "610.43.02", "13.3")),
    ("smi_table_610.57.04_linux_rtx2080s.txt", SmiHeader("610.57.04", "610.57.04", "13.3")),
    ("smi_table_610.62_windows_rtx2080s.txt", SmiHeader("610.62", "610.62", "13.3")),
]


@pytest.mark.parametrize(("name", "expected"), HEADERS, ids=[name for name, _ in HEADERS])
def test_parse_header(name, expected):
    assert nvidia_smi.parse_header(fixture(name)) == expected


def test_parse_header_without_banner_is_none():
    assert nvidia_smi.parse_header(fixture("smi_csv_compute_cap_invalid_field.txt")) is None
    assert nvidia_smi.parse_header("") is None


# ---------------------------------------------------------------- table GPUs: every GPU, no MIG rows

TABLE_GPUS = [
    ("smi_table_440.33.01_linux_8x_p100.txt", 8, "Tesla P100-SXM2...", 16280),
    ("smi_table_550.127.05_linux_10x_a40.txt", 10, "NVIDIA A40", 46068),
    ("smi_table_565.57.01_linux_8x_h100.txt", 8, "NVIDIA H100 80GB HBM3", 81559),
    ("smi_table_610.43.02_linux_2x_b200_partial.txt", 2, "NVIDIA B200", 183359),
    ("smi_table_590.48.01_linux_h100_mig.txt", 1, "NVIDIA H100 80GB HBM3", 81559),
    ("smi_table_530.47_wsl_driver_531.68.txt", 1, "NVIDIA GeForce RTX 3070", 8192),
    ("smi_table_610.62_windows_rtx2080s.txt", 1, "NVIDIA GeForce RTX 2080 ...", 8192),
]


@pytest.mark.parametrize(("name", "count", "gpu_name", "memory"), TABLE_GPUS, ids=[row[0] for row in TABLE_GPUS])
def test_parse_table_gpus(name, count, gpu_name, memory):
    gpus = nvidia_smi.parse_table_gpus(fixture(name))
    assert [gpu.index for gpu in gpus] == list(range(count))
    assert {gpu.name for gpu in gpus} == {gpu_name}
    assert {gpu.memory_mib for gpu in gpus} == {memory}


# ---------------------------------------------------------------- --query-gpu CSV

def test_csv_with_header_610_takes_driver_and_compute_capability():
    rows = nvidia_smi.parse_query_csv_with_header(fixture("smi_csv_header_610.57.04_linux_rtx2080s.txt"))
    assert nvidia_smi.gpus_from_rows(rows) == [Gpu(0, "NVIDIA GeForce RTX 2080 SUPER", "7.5", 8192)]
    assert nvidia_smi.driver_versions_from_rows(rows) == ["610.57.04"]
    assert rows[0]["kmd_version"] == "610.57.04"
    assert rows[0]["serial"] is None  # "[N/A]"
    assert rows[0]["display_mode"] is None  # "[Requested functionality has been deprecated]"


@pytest.mark.parametrize(
    ("name", "gpu", "driver"),
    [
        ("smi_csv_header_590.48.01_linux_h100.txt", Gpu(0, "NVIDIA H100 80GB HBM3", "9.0", 81559), "590.48.01"),
        ("smi_csv_header_591.86_windows_rtx2080s.txt", Gpu(0, "NVIDIA GeForce RTX 2080 SUPER", "7.5", 8192), "591.86"),
        ("smi_csv_header_595.71.05_linux_rtx4080s.txt", Gpu(0, "NVIDIA GeForce RTX 4080 SUPER", "8.9", 16376), "595.71.05"),
        ("smi_csv_header_610.62_windows_rtx2080s.txt", Gpu(0, "NVIDIA GeForce RTX 2080 SUPER", "7.5", 8192), "610.62"),
    ],
)
def test_csv_with_header_single_gpu(name, gpu, driver):
    rows = nvidia_smi.parse_query_csv_with_header(fixture(name))
    assert nvidia_smi.gpus_from_rows(rows) == [gpu]
    assert nvidia_smi.driver_versions_from_rows(rows) == [driver]


def test_csv_two_different_gpus_are_both_reported():
    rows = nvidia_smi.parse_query_csv_with_header(fixture("smi_csv_header_2gpu_mixed_triton8070.txt"))
    assert nvidia_smi.gpus_from_rows(rows) == [
        Gpu(0, "NVIDIA TITAN V", "7.0", None),
        Gpu(1, "NVIDIA RTX 5880 Ada Generation", "8.9", None),
    ]
    assert nvidia_smi.driver_versions_from_rows(rows) == ["570.86.15"]


def test_csv_one_driver_line_per_gpu_is_one_driver():
    # astral-sh/uv#14647: two GPUs print the driver twice; that is one driver, not a parse error.
    rows = nvidia_smi.parse_query_csv(fixture("smi_csv_driver_version_2gpu_wsl_uv14647.txt"), ["driver_version"])
    assert len(rows) == 2
    assert nvidia_smi.driver_versions_from_rows(rows) == ["572.60"]


@pytest.mark.parametrize(
    "name", ["smi_csv_noheader_nounits_na_i3pystatus776.txt", "smi_csv_noheader_nounits_not_supported_i3pystatus776.txt"]
)
def test_csv_unavailable_markers_become_none(name):
    fields = ["memory.total", "memory.free", "memory.used", "temperature.gpu", "fan.speed", "utilization.gpu", "utilization.memory"]
    (row,) = nvidia_smi.parse_query_csv(fixture(name), fields)
    assert row == {
        "memory.total": "2004", "memory.free": "2004", "memory.used": "0", "temperature.gpu": "44",
        "fan.speed": None, "utilization.gpu": "0", "utilization.memory": "0",
    }
    assert nvidia_smi.memory_mib(row["memory.total"]) == 2004


def test_csv_name_with_spaces_and_bare_na():
    fields = [
        "power.limit", "power.min_limit", "power.max_limit", "memory.total", "vbios_version", "driver_version", "name",
        "gpu_uuid", "power.draw", "temperature.gpu", "temperature.memory", "clocks.current.graphics", "clocks.sm",
        "clocks.mem", "utilization.gpu", "utilization.memory", "fan.speed", "pcie.link.width.current", "pstate",
    ]
    rows = nvidia_smi.parse_query_csv(fixture("smi_csv_noheader_nounits_rickslab83.txt"), fields)
    assert nvidia_smi.gpus_from_rows(rows) == [Gpu(0, "GeForce RTX 2080", None, 7979)]
    assert nvidia_smi.driver_versions_from_rows(rows) == ["440.64"]
    assert rows[0]["temperature.memory"] is None


def test_csv_old_driver_refuses_compute_cap():
    text = fixture("smi_csv_compute_cap_invalid_field.txt")
    assert nvidia_smi.invalid_query_field(text) == "compute_cap"
    with pytest.raises(SmiParseError, match="compute_cap"):
        nvidia_smi.parse_query_csv(text, nvidia_smi.QUERY_FIELDS)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        fixture("smi_table_470.63.01_linux.txt"),
        "0, only two",
    ],
)
def test_csv_garbage_raises_parse_error(garbage):
    with pytest.raises(SmiParseError):
        nvidia_smi.gpus_from_rows(nvidia_smi.parse_query_csv(garbage, nvidia_smi.QUERY_FIELDS))


def test_csv_table_mistaken_for_csv_is_rejected_by_gpus():
    # A line with exactly five commas is still not a GPU unless it has a name.
    with pytest.raises(SmiParseError):
        nvidia_smi.gpus_from_rows(nvidia_smi.parse_query_csv("0, , 535.104.05, 8.6, 24576", nvidia_smi.QUERY_FIELDS))


# ---------------------------------------------------------------- -q -x XML

XML = [
    ("smi_xml_515.105.01_tesla_t4.xml", "515.105.01", "11.7", [Gpu(0, "Tesla T4", None, 15360)]),
    ("smi_xml_570.124.04_rtx3060.xml", "570.124.04", "12.8", [Gpu(0, "NVIDIA GeForce RTX 3060", None, 12288)]),
    (
        "smi_xml_590.44.01_2x_a5000.xml",
        "590.44.01",
        "13.1",
        [Gpu(0, "NVIDIA RTX A5000", None, 24564), Gpu(1, "NVIDIA RTX A5000", None, 24564)],
    ),
    ("smi_xml_trimmed_gtx1070ti.xml", None, None, [Gpu(0, "GeForce GTX 1070 Ti", None, 4096)]),
]


@pytest.mark.parametrize(("name", "driver", "cuda", "gpus"), XML, ids=[row[0] for row in XML])
def test_parse_xml(name, driver, cuda, gpus):
    parsed = nvidia_smi.parse_xml(fixture(name))
    assert (parsed.driver, parsed.cuda, list(parsed.gpus)) == (driver, cuda, gpus)


def test_parse_xml_rejects_text():
    with pytest.raises(SmiParseError):
        nvidia_smi.parse_xml(fixture("smi_table_580.65.06_linux_rtx4090.txt"))


# ---------------------------------------------------------------- --version

VERSIONS = [
    ("smi_version_590.48.01_linux_h100.txt", SmiHeader("590.48.01", "590.48.01", "13.1")),
    ("smi_version_591.86_windows_rtx2080s.txt", SmiHeader("591.86", "591.86", "13.1")),
    ("smi_version_595.71.05_linux_rtx4080s.txt", SmiHeader("595.71.05", "595.71.05", "13.2")),
    # R610 prints 'DRIVER version : Deprecated, see "KMD version" instead'
    ("smi_version_610.57.04_linux_rtx2080s.txt", SmiHeader("610.57.04", "610.57.04", "13.3")),
    ("smi_version_610.62_windows_rtx2080s.txt", SmiHeader("610.62", "610.62", "13.3")),
]


@pytest.mark.parametrize(("name", "expected"), VERSIONS, ids=[name for name, _ in VERSIONS])
def test_parse_version_output(name, expected):
    assert nvidia_smi.parse_version_output(fixture(name)) == expected


# ---------------------------------------------------------------- locating nvidia-smi

def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    path.chmod(0o755)
    return path


def test_windows_candidates_cover_system32_nvsmi_and_driverstore(tmp_path):
    system_root = tmp_path / "Windows"
    program_files = tmp_path / "Program Files"
    store = _touch(system_root / "System32" / "DriverStore" / "FileRepository" / "nvlti.inf_amd64_abc" / "nvidia-smi.exe")
    nvsmi = _touch(program_files / "NVIDIA Corporation" / "NVSMI" / "nvidia-smi.exe")
    environ = {"PATH": str(tmp_path / "empty"), "SYSTEMROOT": str(system_root), "ProgramFiles": str(program_files)}
    assert locate.candidate_paths("windows", environ) == [str(nvsmi), str(store)]
    system32 = _touch(system_root / "System32" / "nvidia-smi.exe")
    assert locate.candidate_paths("windows", environ)[0] == str(system32)


def test_wsl_looks_in_usr_lib_wsl_lib(tmp_path):
    smi = _touch(tmp_path / "usr" / "lib" / "wsl" / "lib" / "nvidia-smi")
    environ = {"PATH": str(tmp_path / "bin")}
    assert locate.candidate_paths("linux", environ, wsl=True, fs_root=str(tmp_path)) == [str(smi)]
    assert locate.candidate_paths("linux", environ, wsl=False, fs_root=str(tmp_path)) == []


def test_path_comes_first(tmp_path):
    on_path = _touch(tmp_path / "bin" / "nvidia-smi")
    wsl = _touch(tmp_path / "usr" / "lib" / "wsl" / "lib" / "nvidia-smi")
    environ = {"PATH": str(tmp_path / "bin")}
    assert locate.candidate_paths("linux", environ, wsl=True, fs_root=str(tmp_path)) == [str(on_path), str(wsl)]
