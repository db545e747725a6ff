"""The Windows DLL search-order model on directory trees laid out like real Windows installs.

The trees are real directories in tmp_path (System32, two CUDA toolkits, a python.org Python with torch in
site-packages, PyQt5's Qt5\\bin); the model reads them as `envpin detect` would and answers where a load
lands. It works on paths, not on the OS, so it runs here on Linux.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envpin.doctor import dll_search
from envpin.doctor.dll_search import ERROR_DLL_INIT_FAILED, ERROR_MOD_NOT_FOUND, normalise, process_from_disk
from envpin.doctor.engine import diagnose
from envpin.doctor.model import Case
from envpin.facts.host import EnvFacts, EnvPython, HostFacts, Packages, PythonInfo
from envpin.host.libraries import scan

SYSTEM32 = ["kernel32.dll", "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll", "nvcuda.dll", "nvml.dll"]
TOOLKIT_118 = ["cublas64_11.dll", "cublasLt64_11.dll", "cudart64_110.dll", "cudnn64_8.dll", "cudnn_ops_infer64_8.dll",
               "cudnn_cnn_infer64_8.dll", "nvcc.exe"]
TOOLKIT_121 = ["cublas64_12.dll", "cublasLt64_12.dll", "cudart64_12.dll", "nvrtc64_120_0.dll", "nvcc.exe"]
TORCH_LIB = ["asmjit.dll", "c10.dll", "fbgemm.dll", "libiomp5md.dll", "shm.dll", "torch_cpu.dll", "torch_python.dll"]


def make_tree(root: Path, layout: dict[str, list[str]]) -> dict[str, Path]:
    paths = {}
    for relative, names in layout.items():
        directory = root.joinpath(*relative.split("\\"))
        directory.mkdir(parents=True, exist_ok=True)
        for name in names:
            (directory / name).write_bytes(b"MZ")  # the model reads names, never contents
        paths[relative] = directory
    return paths


@pytest.fixture
def windows(tmp_path):
    """C:\\ as a directory: Windows\\System32, CUDA v11.8 and v12.1, Python311 with torch, PyQt5."""
    layout = {
        "Windows\\System32": SYSTEM32,
        "Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin": TOOLKIT_118,
        "Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\bin": TOOLKIT_121,
        "Python311": ["python.exe", "python3.dll", "python311.dll", "vcruntime140.dll", "vcruntime140_1.dll"],
        "Python311\\Lib\\site-packages\\torch\\lib": TORCH_LIB,
        "Python311\\Lib\\site-packages\\PyQt5\\Qt5\\bin": ["msvcp140.dll", "vcruntime140.dll", "Qt5Core.dll"],
        "tools\\cudnn-8.9\\bin": ["cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_cnn_infer64_8.dll", "cudnn_adv_infer64_8.dll"],
    }
    return {key: str(path) for key, path in make_tree(tmp_path, layout).items()}


def process(windows, path_keys, **settings):
    dirs = list(windows.values())
    return process_from_disk(
        windows["Python311"], dirs, system_dir=windows["Windows\\System32"], windows_dir=str(Path(windows["Windows\\System32"]).parent),
        path=tuple(windows[key] for key in path_keys), **settings)


V118, V121 = "Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin", "Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\bin"


def test_an_older_toolkit_first_on_path_cannot_hide_a_file_it_does_not_have(windows):
    proc = process(windows, [V118, V121, "Windows\\System32"])
    cublas = dll_search.resolve(proc, "cublas64_12.dll")
    assert cublas.path == str(Path(windows[V121]) / "cublas64_12.dll")
    assert cublas.how == "PATH entry 2"
    loaded = dll_search.load(proc, "cublas64_12.dll")
    assert loaded.ok and [r.how for r in loaded.resolutions] == ["PATH entry 2", "PATH entry 2"]  # its cublasLt too


def test_path_order_decides_between_files_of_the_same_name(windows):
    layout = dict(windows)
    Path(layout[V121], "cudnn64_8.dll").write_bytes(b"MZ")  # a second cuDNN 8, copied into v12.1
    proc = process(layout, [V118, V121])
    cudnn = dll_search.resolve(proc, "cudnn64_8.dll")
    assert cudnn.path is not None
    assert cudnn.path.startswith(windows[V118]) and cudnn.how == "PATH entry 1"
    assert dll_search.where(proc, "cudnn64_8.dll") == [str(Path(windows[V118]) / "cudnn64_8.dll"),
                                                       str(Path(windows[V121]) / "cudnn64_8.dll")]
    swapped = dll_search.resolve(process(layout, [V121, V118]), "cudnn64_8.dll")
    assert swapped.path is not None
    assert swapped.path.startswith(windows[V121])


def test_python_38_secure_search_ignores_path(windows):
    proc = process(windows, [V121])
    assert dll_search.resolve(proc, "cublas64_12.dll", "secure").found is False
    assert "not PATH" in dll_search.resolve(proc, "cublas64_12.dll", "secure").how
    added = process(windows, [], dll_directories=(windows[V121],))
    assert dll_search.resolve(added, "cublas64_12.dll", "secure").how == "a directory added with os.add_dll_directory()"


def test_standard_search_does_not_look_beside_the_loading_dll(windows):
    cudnn_dir = windows["tools\\cudnn-8.9\\bin"]
    imports = {"cudnn64_8.dll": ("cudnn_ops_infer64_8.dll",)}
    proc = process(windows, ["Windows\\System32"], imports=imports)
    standard = dll_search.load(proc, str(Path(cudnn_dir) / "cudnn64_8.dll"), "standard")
    assert standard.error == ERROR_MOD_NOT_FOUND and standard.culprit == "cudnn_ops_infer64_8.dll"
    secure = dll_search.load(proc, str(Path(cudnn_dir) / "cudnn64_8.dll"), "secure")  # LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR
    assert secure.ok
    assert secure.resolutions[1].how == "the loading DLL's own directory"


def test_cudnn_copied_into_the_wrong_folder_is_diagnosed(windows, database):
    # Only cudnn64_8.dll was copied into the toolkit's bin; its sub-libraries stayed in tools\cudnn-8.9 (not on PATH).
    Path(windows[V121], "cudnn64_8.dll").write_bytes(b"MZ")
    path = [windows[V121], windows["Windows\\System32"]]
    host = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.11.9", str(Path(windows["Python311"]) / "python.exe")),
                     env={"PATH": path, "CUDA_PATH": str(Path(windows[V121]).parent)}, files=scan(path, "windows"))
    proc = process(windows, [V121, "Windows\\System32"])
    assert dll_search.resolve(proc, "cudnn64_8.dll").found
    assert not dll_search.resolve(proc, "cudnn_ops_infer64_8.dll").found
    case = Case(host=host, env=None, database=database,
                error_text="Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!")
    finding = diagnose(case).findings[0]
    assert finding.id == "WIN-CUDNN8-SUBLIB-NOT-FOUND"
    assert any("only part of cuDNN was copied" in line and "v12.1" in line for line in finding.evidence)
    assert any("complete cuDNN 8.x" in line for line in finding.fix)


def test_missing_vcruntime140_1_fails_torch_import_with_126(windows, database):
    Path(windows["Windows\\System32"], "vcruntime140_1.dll").unlink()
    Path(windows["Python311"], "vcruntime140_1.dll").unlink()
    torch_lib = windows["Python311\\Lib\\site-packages\\torch\\lib"]
    proc = process(windows, ["Windows\\System32"])
    failure = dll_search.torch_preload(proc, torch_lib, TORCH_LIB)
    assert failure is not None
    assert failure.error == ERROR_MOD_NOT_FOUND
    assert failure.target.endswith("c10.dll") and failure.culprit == "vcruntime140_1.dll"
    assert failure.message().startswith("[WinError 126] The specified module could not be found. Error loading")
    # the doctor, from the facts detect and the probe would report for this tree
    system32 = windows["Windows\\System32"]
    host = HostFacts(os="windows", arch="x86_64", python=PythonInfo("3.11.9"), env={"PATH": [system32]},
                     files=scan([system32], "windows"))
    env = EnvFacts(python=EnvPython("3.11.9", executable=str(Path(windows["Python311"]) / "python.exe"), env_type="system"),
                   packages=Packages(pip={"torch": "2.5.1"}), library_dirs={torch_lib: TORCH_LIB})
    finding = diagnose(Case(host=host, env=env, database=database)).findings[0]
    assert finding.id == "WIN-VCREDIST-MISSING" and finding.severity == "error"
    assert any("lacks vcruntime140_1.dll" in line for line in finding.evidence)
    assert any("c10.dll imports vcruntime140_1.dll" in line for line in finding.evidence)
    assert any("vc_redist.x64.exe" in line for line in finding.fix)


def test_with_the_runtime_present_torch_loads(windows):
    proc = process(windows, ["Windows\\System32"])
    assert dll_search.torch_preload(proc, windows["Python311\\Lib\\site-packages\\torch\\lib"], TORCH_LIB) is None


def test_first_loaded_wins_an_old_msvcp140_makes_c10_fail_with_1114(windows):
    qt = str(Path(windows["Python311\\Lib\\site-packages\\PyQt5\\Qt5\\bin"]) / "msvcp140.dll")
    system = str(Path(windows["Windows\\System32"]) / "msvcp140.dll")
    versions = {normalise(qt): (14, 26, 28720), normalise(system): (14, 42, 34433)}
    minimums = {("c10.dll", "msvcp140.dll"): dll_search.TORCH29_MSVCP_MINIMUM}
    torch_lib = windows["Python311\\Lib\\site-packages\\torch\\lib"]
    clean = process(windows, ["Windows\\System32"], versions=versions, minimums=minimums)
    assert dll_search.torch_preload(clean, torch_lib, TORCH_LIB) is None  # import torch first: System32's copy
    after_qt = dll_search.load(clean, qt, "standard").process  # `import PyQt5` loaded Qt's copy by full path
    assert after_qt.loaded_path("msvcp140.dll") == qt
    failure = dll_search.torch_preload(after_qt, torch_lib, TORCH_LIB)
    assert failure is not None
    assert failure.error == ERROR_DLL_INIT_FAILED and failure.culprit == "c10.dll"
    assert failure.detail is not None
    assert "already loaded (first loaded wins)" in failure.detail and "14.26.28720" in failure.detail
    assert failure.message().startswith("[WinError 1114]")


def test_a_directory_envpin_did_not_list_is_unknown_not_empty(windows):
    proc = dll_search.WindowsProcess(app_dir="C:\\Python311", listing=dll_search.listing_from_facts({"C:\\CUDA\\bin": ["cudart64_12.dll"]}))
    assert proc.holds("C:\\Elsewhere", "cudart64_12.dll") is None
    assert proc.holds("C:\\CUDA\\bin", "cublas64_12.dll") is False  # detect lists every CUDA library it sees
    assert proc.holds("C:\\CUDA\\bin", "Qt5Core.dll") is None  # ...but not other DLLs
