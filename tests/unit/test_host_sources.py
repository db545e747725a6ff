"""procfs, platform, toolkit, library and NVML parsers on recorded real outputs."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from envpin.facts.host import Driver, Gpu, HostFacts, Libc, PythonInfo, Toolkit, from_json, to_json
from envpin.host import libraries, nvml, platform_info, procfs, toolkits
from envpin.host.summary import render_summary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "host"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------- /proc and /sys

@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("proc_driver_nvidia_version_384.98_proprietary.txt", "384.98"),
        ("proc_driver_nvidia_version_565.57.01_open.txt", "565.57.01"),
        ("proc_driver_nvidia_version_525.60.11_open_arch.txt", "525.60.11"),
    ],
)
def test_parse_proc_driver_version(name, version):
    assert procfs.parse_proc_driver_version(fixture(name)) == version


@pytest.mark.parametrize("text", ["", "GCC version:  gcc version 12.2.0 (GCC)\n", fixture("proc_version_wsl2.txt")])
def test_parse_proc_driver_version_rejects_other_text(text):
    assert procfs.parse_proc_driver_version(text) is None


def test_parse_sys_module_version():
    assert procfs.parse_sys_module_version("535.104.05\n") == "535.104.05"
    assert procfs.parse_sys_module_version("garbage") is None


# ---------------------------------------------------------------- WSL, OS, arch, env type

@pytest.mark.parametrize(
    ("name", "wsl"),
    [
        ("proc_version_wsl2.txt", True),
        ("proc_version_wsl2_early.txt", True),
        ("proc_version_wsl1.txt", True),
        ("proc_version_this_machine.txt", False),
    ],
)
def test_is_wsl(name, wsl):
    assert platform_info.is_wsl(fixture(name)) is wsl


def test_is_wsl_without_proc_version():
    assert platform_info.is_wsl(None) is False


@pytest.mark.parametrize(("system", "name"), [("Linux", "linux"), ("Windows", "windows"), ("Darwin", "macos")])
def test_os_name(system, name):
    assert platform_info.os_name(system) == name


@pytest.mark.parametrize(("machine", "arch"), [("AMD64", "x86_64"), ("x86_64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "arm64")])
def test_arch_name(machine, arch):
    assert platform_info.arch_name(machine) == arch


def test_env_type(tmp_path):
    prefix = tmp_path / "env"
    prefix.mkdir()
    assert platform_info.env_type({}, prefix=str(prefix), base_prefix=str(tmp_path / "base")) == "venv"
    assert platform_info.env_type({}, prefix=str(prefix), base_prefix=str(prefix)) == "system"
    assert platform_info.env_type({"CONDA_PREFIX": str(prefix)}, prefix=str(prefix), base_prefix=str(prefix)) == "conda"
    (prefix / "conda-meta").mkdir()
    assert platform_info.env_type({}, prefix=str(prefix), base_prefix=str(prefix)) == "conda"


def test_container_marker(tmp_path):
    assert platform_info.container_marker(str(tmp_path)) is None
    (tmp_path / ".dockerenv").write_text("")
    assert platform_info.container_marker(str(tmp_path)) == "/.dockerenv"


# ---------------------------------------------------------------- toolkit versions

@pytest.mark.parametrize(
    ("name", "version", "full"),
    [
        ("nvcc_13.0_this_machine.txt", "13.0", "13.0.88"),
        ("nvcc_12.5.txt", "12.5", "12.5.82"),
        ("nvcc_11.1.txt", "11.1", "11.1.105"),
        ("nvcc_11.0.txt", "11.0", "11.0.194"),
        ("nvcc_10.1.txt", "10.1", "10.1.243"),  # no "Build" line before CUDA 11 (k2-fsa/k2#584)
    ],
)
def test_parse_nvcc_version(name, version, full):
    text = fixture(name)
    assert toolkits.parse_nvcc_version(text) == version
    assert toolkits.parse_nvcc_full_version(text) == full


def test_parse_nvcc_version_garbage():
    assert toolkits.parse_nvcc_version("nvcc: command not found") is None


def test_parse_version_json():
    assert toolkits.parse_version_json(fixture("cuda_version_11.5.json")) == "11.5"
    assert toolkits.parse_version_json("{}") is None
    assert toolkits.parse_version_json("not json") is None


def test_parse_version_txt():
    # The format CUDA <= 11.0 shipped (a single line); 11.1+ ship version.json instead.
    assert toolkits.parse_version_txt("CUDA Version 10.2.89\n") == "10.2"
    assert toolkits.parse_version_txt("") is None


@pytest.mark.parametrize(
    ("path", "version"),
    [("/usr/local/cuda-12.4", "12.4"), (r"C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8", "11.8"), ("/usr/local/cuda", None)],
)
def test_version_from_directory_name(path, version):
    assert toolkits.version_from_directory_name(path) == version


# ---------------------------------------------------------------- runtime library names

@pytest.mark.parametrize(
    "name",
    [
        "cublas64_12.dll", "cublasLt64_12.dll", "cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudart64_12.dll",
        "cudart64_110.dll", "nvrtc64_120_0.dll", "cupti64_2023.1.0.dll", "nvcuda.dll", "vcruntime140.dll",
        "vcruntime140_1.dll", "msvcp140.dll", "nvJitLink_120_0.dll",
    ],
)
def test_windows_runtime_libraries(name):
    assert libraries.is_runtime_library(name, "windows")


@pytest.mark.parametrize(
    "name",
    ["libcudart.so.12", "libcublas.so.12", "libcudnn.so.9", "libnvJitLink.so.12", "libcuda.so.1", "libcudnn_ops.so.9", "libnvidia-ml.so.1"],
)
def test_linux_runtime_libraries(name):
    assert libraries.is_runtime_library(name, "linux")


@pytest.mark.parametrize("name", ["libcurl.so.4", "libcudart_static.a", "kernel32.dll", "libc.so.6", "cudart.lib"])
def test_not_runtime_libraries(name):
    assert not libraries.is_runtime_library(name, "linux")
    assert not libraries.is_runtime_library(name, "windows")


def test_runtime_libraries_from_a_real_listing():
    names = [line.split()[8] for line in fixture("ls_cuda_lib64_12.4_torch_memory_saver11_partial.txt").splitlines()]
    assert libraries.runtime_libraries(names, "linux") == [
        "libcublas.so.12", "libcublas.so.12.4.5.8", "libcudart.so", "libcudart.so.12", "libcudart.so.12.4.127",
        "libcufft.so", "libcufft.so.11", "libcufft.so.11.2.1.3", "libcufftw.so", "libcufftw.so.11", "libcufftw.so.11.2.1.3",
    ]


def test_search_dirs_order():
    assert libraries.search_dirs("linux", ["/bin"], ["/a", "/b"], ["/cuda/lib64", "/a"], "/usr/lib/wsl/lib") == [
        "/a", "/b", "/cuda/lib64", "/usr/lib/wsl/lib"]
    assert libraries.search_dirs("windows", [r"C:\x", r"C:\y"], ["/ignored"], ["/ignored"], None) == [r"C:\x", r"C:\y"]


def test_scan_keeps_only_directories_with_libraries(tmp_path):
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "libcudart.so.12").write_text("")
    (tmp_path / "cuda" / "libcudart_static.a").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "libz.so.1").write_text("")
    dirs = [str(tmp_path / "cuda"), str(tmp_path / "other"), str(tmp_path / "missing")]
    assert libraries.scan(dirs, "linux") == {str(tmp_path / "cuda"): ["libcudart.so.12"]}


# ---------------------------------------------------------------- NVML adapters

@pytest.mark.parametrize(("value", "text"), [(12040, "12.4"), (13030, "13.3"), (11080, "11.8"), (10020, "10.2"), (0, None)])
def test_cuda_version_from_int(value, text):
    assert nvml.cuda_version_from_int(value) == text


def test_nvml_without_library_is_absent_not_an_error():
    pynvml = pytest.importorskip("pynvml")
    report = nvml.probe(pynvml)
    if report.driver:  # a GPU machine: NVML really answered
        pytest.skip("this machine has an NVIDIA driver")
    assert report.absent and report.failure is not None and "NVML" in report.failure


class _NvmlNotFound(Exception):
    pass


def test_nvml_init_failure_becomes_a_report():
    def fail():
        raise _NvmlNotFound("NVML Shared Library Not Found")

    report = nvml.probe(SimpleNamespace(nvmlInit=fail))  # type: ignore[arg-type]  # a stand-in for pynvml
    assert report.driver is None and report.absent
    assert report.failure == "NVML unavailable (NVML Shared Library Not Found)"


def test_nvml_reads_bytes_and_str_and_survives_a_bad_gpu():
    # The shapes pynvml returns (bytes on old releases, str on new); GPU 1 fails like a lost GPU does.
    def handle(index):
        if index == 1:
            raise RuntimeError("GPU is lost")
        return index

    module = SimpleNamespace(
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlSystemGetDriverVersion=lambda: b"535.104.05",
        nvmlSystemGetCudaDriverVersion_v2=lambda: 12020,
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetHandleByIndex=handle,
        nvmlDeviceGetName=lambda h: "NVIDIA GeForce RTX 3090",
        nvmlDeviceGetCudaComputeCapability=lambda h: (8, 6),
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(total=25769803776),
    )
    report = nvml.probe(module)  # type: ignore[arg-type]  # a stand-in for pynvml
    assert (report.driver, report.cuda) == ("535.104.05", "12.2")
    assert report.gpus == [Gpu(0, "NVIDIA GeForce RTX 3090", "8.6", 24576)]
    assert report.notes == ["NVML could not read GPU 1 (GPU is lost)"]


# ---------------------------------------------------------------- summary

def test_render_summary_full():
    facts = HostFacts(
        os="linux", arch="x86_64", wsl=True, libc=Libc("glibc", "2.35"),
        python=PythonInfo("3.11.7", "/usr/bin/python3", "venv"),
        driver=Driver("610.43.02", "13.3", "nvidia-smi"),
        gpus=(Gpu(0, "NVIDIA B200", "10.0", 183359), Gpu(1, "NVIDIA B200", "10.0", 183359)),
        toolkits=(Toolkit("13.0", "/usr/local/cuda-13.0", "/usr/local/cuda-13.0/bin/nvcc"),),
        notes=("NVML unavailable (NVML Shared Library Not Found)",),
    )
    assert render_summary(facts) == "\n".join([
        "System:   linux x86_64 (WSL), glibc 2.35",
        "Python:   3.11.7 (venv) /usr/bin/python3",
        "Driver:   NVIDIA 610.43.02, supports CUDA up to 13.3 (from nvidia-smi)",
        "GPU 0:    NVIDIA B200 (compute capability 10.0, 179 GiB)",
        "GPU 1:    NVIDIA B200 (compute capability 10.0, 179 GiB)",
        "Toolkit:  CUDA 13.0 (/usr/local/cuda-13.0)",
        "Note:     NVML unavailable (NVML Shared Library Not Found)",
    ])


def test_render_summary_without_gpu():
    facts = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.12.1"))
    text = render_summary(facts)
    assert "Driver:   no NVIDIA driver" in text
    assert "GPUs:     none seen" in text
    assert "Toolkit:  no CUDA toolkit found" in text


def test_detected_facts_round_trip_through_json():
    facts = HostFacts(
        os="linux", arch="x86_64", python=PythonInfo("3.11.7", None, "system"),
        driver=Driver("384.98", None, "procfs"), gpus=(Gpu(0, "NVIDIA A40", None, 46068),),
    )
    assert from_json(json.loads(json.dumps(to_json(facts)))) == facts
