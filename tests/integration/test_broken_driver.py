"""A broken NVIDIA driver is never a silent CPU answer: detection records the state, `envpin solve` exits 3.

Each fake nvidia-smi prints a failure exactly as users quote it in public threads (cited beside each text) and
exits with the status nvidia-smi documents for it (`nvidia-smi -h`, "RETURN VALUE": 6 a query was
unsuccessful, 9 the NVIDIA driver is not loaded, 255 another error; 18 is what the version mismatch returns).
The sysfs and procfs trees are small fixtures under a root prefix, as detection reads them in tests.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from envpin.facts.host import DriverTrouble, from_json, to_json
from envpin.host import detect_host
from envpin.host.gpu_presence import classify, driver_trouble, nvidia_pci_gpus, signs

from .test_detect_host import fake_nvidia_smi

REPO = Path(__file__).resolve().parents[2]
PROC_VERSION = (REPO / "tests/fixtures/host/proc_version_this_machine.txt").read_text()

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fake executables are POSIX scripts")

FAILURES = [
    # (state, exit status, what nvidia-smi prints, where users quote it)
    ("driver-library-mismatch", 18, "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.144",
     "https://github.com/intel/llvm/issues/17614"),
    ("driver-library-mismatch", 18, "Failed to initialize NVML: Driver/library version mismatch",
     "https://github.com/illinois-scicomp/machine-shop-maintenance/issues/60"),
    ("no-devices", 6, "No devices were found", "https://github.com/pytorch/pytorch/issues/163658"),
    ("module-not-loaded", 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
     "the latest NVIDIA driver is installed and running.", "https://github.com/ci-for-research/self-hosted-runners/issues/40"),
    ("nvml-error", 255, "Failed to initialize NVML: Unknown Error", "https://github.com/NVIDIA/nvidia-docker/issues/1671"),
]


def failing(text: str, status: int) -> str:
    return f"sys.stdout.write({text + chr(10)!r}); sys.exit({status})"


def bare_root(tmp_path: Path) -> Path:
    """A filesystem root with /proc/version and nothing NVIDIA."""
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "version").write_text(PROC_VERSION)
    return root


def pci_device(root: Path, address: str, vendor: str, device_class: str) -> None:
    device = root / "sys" / "bus" / "pci" / "devices" / address
    device.mkdir(parents=True)
    (device / "vendor").write_text(vendor + "\n")
    (device / "class").write_text(device_class + "\n")


def detect(tmp_path, root):
    return detect_host(environ={"PATH": str(tmp_path / "bin")}, fs_root=str(root), timeout=5.0, nvml_module=False)


@pytest.mark.parametrize(("state", "status", "text", "source"), FAILURES, ids=[f"{f[0]}-{f[1]}" for f in FAILURES])
def test_each_failure_text_is_a_typed_state(tmp_path, state, status, text, source):
    fake_nvidia_smi(tmp_path / "bin", failing(text, status))
    facts = detect(tmp_path, bare_root(tmp_path))
    assert facts.driver is None
    assert facts.driver_trouble is not None, facts.notes
    assert facts.driver_trouble.state == state
    assert text.splitlines()[0][:60] in facts.driver_trouble.message
    assert from_json(to_json(facts)) == facts  # the state survives `detect --format json` and `--facts`


def test_a_mismatch_with_the_module_still_loaded_keeps_the_procfs_driver_and_the_state(tmp_path):
    # zzzhouuu/truenas-nvidia-drivers#19: /proc says the loaded module is 580.173.02, nvidia-smi the mismatch.
    root = bare_root(tmp_path)
    (root / "proc" / "driver" / "nvidia").mkdir(parents=True)
    (root / "proc" / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Tue Jun 23 08:38:17 UTC 2026\n"
        "GCC version:  gcc version 14.2.0 (Ubuntu 14.2.0-4ubuntu2~24.04.1)\n")
    fake_nvidia_smi(tmp_path / "bin", failing("Failed to initialize NVML: Driver/library version mismatch\n"
                                              "NVML library version: 580.178", 18))
    facts = detect(tmp_path, root)
    assert facts.driver is not None and facts.driver.version == "580.173.02" and facts.driver.source == "procfs"
    assert facts.driver_trouble is not None and facts.driver_trouble.state == "driver-library-mismatch"
    assert "the NVIDIA kernel module is loaded (/proc/driver/nvidia)" in facts.driver_trouble.evidence


def test_a_pci_gpu_without_any_driver_is_no_driver(tmp_path):
    root = bare_root(tmp_path)
    pci_device(root, "0000:00:02.0", "0x8086", "0x030000")  # the Intel iGPU
    pci_device(root, "0000:01:00.0", "0x10de", "0x030000")  # an NVIDIA VGA controller
    pci_device(root, "0000:01:00.1", "0x10de", "0x040300")  # its HDMI audio function: not a GPU
    assert nvidia_pci_gpus(str(root)) == ["0000:01:00.0"]
    facts = detect(tmp_path, root)
    assert facts.driver is None
    assert facts.driver_trouble == DriverTrouble(
        "no-driver", "an NVIDIA GPU is on the PCI bus, but no NVIDIA driver is installed or loaded",
        ("PCI display device of vendor 0x10de (NVIDIA): 0000:01:00.0",))


def test_a_data_centre_3d_controller_in_a_container_without_gpus(tmp_path):
    root = bare_root(tmp_path)
    (root / ".dockerenv").write_text("")
    pci_device(root, "0000:3b:00.0", "0x10de", "0x030200")  # a Tesla/H100 is a "3D controller"
    facts = detect(tmp_path, root)
    assert facts.driver_trouble is not None and facts.driver_trouble.state == "container-without-gpu"
    assert "/.dockerenv" in facts.driver_trouble.message


def test_wsl_with_the_windows_driver_but_no_answer(tmp_path):
    root = bare_root(tmp_path)
    (root / "proc" / "version").write_text((REPO / "tests/fixtures/host/proc_version_wsl2.txt").read_text())
    (root / "dev").mkdir()
    (root / "dev" / "dxg").write_text("")
    wsl_lib = root / "usr" / "lib" / "wsl" / "lib"
    wsl_lib.mkdir(parents=True)
    (wsl_lib / "libcuda.so.1").write_text("")
    if sys.platform != "linux":
        pytest.skip("WSL detection only runs on Linux")
    facts = detect(tmp_path, root)
    assert facts.wsl and facts.driver is None
    assert facts.driver_trouble is not None and facts.driver_trouble.state == "wsl-driver-unreachable"
    assert any("/dev/dxg" in line for line in facts.driver_trouble.evidence)


def test_a_machine_without_nvidia_has_no_trouble(tmp_path):
    root = bare_root(tmp_path)
    pci_device(root, "0000:00:02.0", "0x8086", "0x030000")
    pci_device(root, "0000:03:00.0", "0x1002", "0x030000")  # an AMD card
    facts = detect(tmp_path, root)
    assert facts.driver is None and facts.driver_trouble is None


class _NVMLError(Exception):
    pass


@pytest.mark.parametrize(("words", "state"), [("Driver Not Loaded", "module-not-loaded"),
                                              ("RM has detected an NVML/RM version mismatch.", "driver-library-mismatch")])
def test_an_nvml_init_error_is_a_state_too(tmp_path, words, state):
    # NVML's own error strings (nvmlErrorString) for NVML_ERROR_DRIVER_NOT_LOADED and NVML_ERROR_LIB_RM_VERSION_MISMATCH
    def fail():
        raise _NVMLError(words)

    nvml_module = SimpleNamespace(nvmlInit=fail)  # a stand-in for pynvml, as tests/unit/test_host_sources.py does
    facts = detect_host(environ={"PATH": str(tmp_path / "bin")}, fs_root=str(bare_root(tmp_path)), timeout=5.0,
                        nvml_module=nvml_module)
    assert facts.driver is None
    assert facts.driver_trouble is not None and facts.driver_trouble.state == state
    assert words in facts.driver_trouble.message


def test_windows_nvcuda_without_an_answer_is_trouble(tmp_path):
    system32 = tmp_path / "Windows" / "System32"
    system32.mkdir(parents=True)
    (system32 / "nvcuda.dll").write_bytes(b"")
    evidence = signs(str(tmp_path), "windows", False, {"SystemRoot": str(tmp_path / "Windows")})
    assert evidence == [f"{system32 / 'nvcuda.dll'}: the NVIDIA display driver (WDDM) is installed"]
    trouble = driver_trouble([], evidence, driver_found=False, container=None, wsl=False)
    assert trouble is not None and trouble.state == "tool-failed"
    assert signs(str(tmp_path), "windows", False, {"SystemRoot": str(tmp_path / "Nowhere")}) == []


def test_classify_leaves_an_unknown_failure_unnamed():
    assert classify("nvidia-smi failed (exit status 3): segmentation of the ectoplasm") is None
    assert classify("NVML unavailable (Driver Not Loaded)") == "module-not-loaded"
    assert classify("NVML unavailable (RM has detected an NVML/RM version mismatch.)") == "driver-library-mismatch"


# ---------------------------------------------------------------- envpin solve on this machine, with a fake nvidia-smi

def envpin(*args, path: Path):
    environment = {**os.environ, "PATH": f"{path}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, env=environment,
                          timeout=60, cwd=REPO)


@pytest.fixture
def nvidia_free_machine():
    if any(os.path.exists(p) for p in ("/proc/driver/nvidia", "/dev/nvidiactl", "/usr/lib/wsl/lib")):
        pytest.skip("this machine has an NVIDIA driver of its own")


@pytest.mark.parametrize(("state", "status", "text", "source"), FAILURES, ids=[f"{f[0]}-{f[1]}" for f in FAILURES])
def test_solve_refuses_the_cpu_answer_and_exits_3(tmp_path, nvidia_free_machine, state, status, text, source):
    fake_nvidia_smi(tmp_path / "bin", failing(text, status))
    result = envpin("solve", "--python", "3.11", path=tmp_path / "bin")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "not answering the CPU build" in result.stdout and "envpin doctor" in result.stdout
    assert "+cpu" not in result.stdout and "torch==" not in result.stdout
    document = json.loads(envpin("solve", "--python", "3.11", "--format", "json", path=tmp_path / "bin").stdout)
    assert document["status"] == "unsatisfiable" and document["error"]["code"] == "driver-broken"
    assert text.splitlines()[0][:40] in document["error"]["message"]


def test_solve_with_driver_given_solves_for_the_gpu(tmp_path, nvidia_free_machine):
    fake_nvidia_smi(tmp_path / "bin", failing(FAILURES[0][2], 18))
    result = envpin("solve", "--python", "3.11", "--driver", "550.144.03", "--gpu", "NVIDIA GeForce RTX 3060",
                    "--format", "json", path=tmp_path / "bin")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["accelerator"].startswith("cu12")


@pytest.mark.parametrize("ask", [["--driver", "none"], ["torch==2.5.1+cpu"]])
def test_solve_gives_the_cpu_build_when_asked_for_it(tmp_path, nvidia_free_machine, ask):
    fake_nvidia_smi(tmp_path / "bin", failing(FAILURES[2][2], 6))
    result = envpin("solve", "--python", "3.11", *ask, "--format", "json", path=tmp_path / "bin")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["accelerator"] == "cpu"


def test_solve_for_a_facts_file_with_trouble_exits_3_too(tmp_path):
    machine = json.loads((REPO / "tests/fixtures/doctor/machines/linux-no-nvidia.json").read_text())
    machine["driver_trouble"] = {"state": "no-devices", "message": "nvidia-smi failed (exit status 6): No devices were found",
                                 "evidence": []}
    (tmp_path / "node.json").write_text(json.dumps(machine))
    result = envpin("solve", "--facts", str(tmp_path / "node.json"), path=tmp_path)
    assert result.returncode == 3
    assert "No devices were found" in result.stdout
    machine["driver_trouble"]["state"] = "bogus"
    (tmp_path / "node.json").write_text(json.dumps(machine))
    result = envpin("solve", "--facts", str(tmp_path / "node.json"), path=tmp_path)
    assert result.returncode == 2 and "driver_trouble.state" in result.stderr


# ---------------------------------------------------------------- a fleet, and the commands that solve on the way

def troubled_machine(name: str, state: str = "no-devices",
                     message: str = "nvidia-smi failed (exit status 6): No devices were found") -> dict:
    machine = json.loads((REPO / "tests/fixtures/doctor/machines/linux-no-nvidia.json").read_text())
    return {**machine, "name": name, "driver_trouble": {"state": state, "message": message, "evidence": []}}


def healthy_machine(name: str) -> dict:
    return {**json.loads((REPO / "tests/fixtures/doctor/machines/linux-h100-590.48.01.json").read_text()), "name": name}


def test_a_fleet_refuses_each_machine_whose_driver_is_broken_and_answers_the_others(tmp_path):
    mismatch_with_procfs = {**healthy_machine("gpu-c"), "driver_trouble": {
        "state": "driver-library-mismatch", "message": "Failed to initialize NVML: Driver/library version mismatch",
        "evidence": []}}  # the driver still read from /proc: solved for, as a single solve does
    fleet = [healthy_machine("gpu-a"), troubled_machine("gpu-b"), mismatch_with_procfs,
             troubled_machine("gpu-d", "module-not-loaded", "nvidia-smi failed (exit status 9): NVIDIA-SMI has failed "
                                                            "because it couldn't communicate with the NVIDIA driver")]
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(fleet))
    result = envpin("solve", "--targets", str(inventory), "--format", "json", path=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    by_names = {tuple(r["targets"]): r for r in json.loads(result.stdout)["results"]}
    assert set(by_names) == {("gpu-a", "gpu-c"), ("gpu-b",), ("gpu-d",)}
    assert by_names[("gpu-a", "gpu-c")]["status"] == "ok"
    assert by_names[("gpu-a", "gpu-c")]["accelerator"].startswith("cu")
    for name, words in ((("gpu-b",), "No devices were found"), (("gpu-d",), "couldn't communicate")):
        refused = by_names[name]
        assert refused["status"] == "unsatisfiable" and refused["error"]["code"] == "driver-broken"
        assert words in refused["error"]["message"] and "packages" not in refused
        assert any("envpin doctor" in fix for fix in refused["error"]["fixes"])
    text = envpin("solve", "--targets", str(inventory), path=tmp_path)
    assert text.returncode == 3
    block = text.stdout.split("== gpu-b\n", 1)[1].split("\n== ", 1)[0]
    assert "not answering the CPU build" in block and "torch==" not in block
    written = envpin("solve", "--targets", str(inventory), "-o", str(tmp_path / "environment.yml"), path=tmp_path)
    assert written.returncode == 3
    assert sorted(p.name for p in tmp_path.glob("environment*.yml")) == ["environment.cu132.yml"]
    assert "== gpu-b" in written.stdout and "== gpu-d" in written.stdout


def test_a_fleet_asked_for_the_cpu_build_answers_it_everywhere(tmp_path):
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps([troubled_machine("gpu-b"), healthy_machine("gpu-a")]))
    result = envpin("solve", "--targets", str(inventory), "--driver", "none", "--format", "json", path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [r["accelerator"] for r in json.loads(result.stdout)["results"]] == ["cpu"]


@pytest.mark.parametrize("command", [["init", "{dir}"], ["lock", "-o", "{dir}/pylock.toml"],
                                     ["install", "--prefix", "{dir}/env"]])
def test_init_lock_and_install_exit_3_as_solve_does(tmp_path, command):
    (tmp_path / "node.json").write_text(json.dumps(troubled_machine("node")))
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text("torch\n")  # what init reads
    words = [word.format(dir=project) for word in command]
    result = envpin(*words, "--facts", str(tmp_path / "node.json"), path=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "not answering the CPU build" in result.stdout and "No devices were found" in result.stdout
    assert [p.name for p in project.iterdir()] == ["requirements.txt"]  # nothing written, no environment made


def test_a_cluster_class_is_solved_without_its_broken_nodes_and_a_class_of_them_only_is_refused(tmp_path):
    def node(machine: dict, partition: str) -> dict:
        return {**machine, "partition": partition}

    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps({"targets": [
        node(healthy_machine("h100-1"), "h100"), node(troubled_machine("h100-2"), "h100"),
        node(healthy_machine("h100-3"), "h100"), node(troubled_machine("old-1"), "old")]}))
    result = envpin("fleet", "status", "--targets", str(inventory), "--format", "json", path=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    classes = {entry["class"]: entry for entry in json.loads(result.stdout)["classes"]}
    h100 = classes["h100"]
    assert h100["nodes"] == ["h100-1", "h100-2", "h100-3"]  # provisioned and verified with its class
    assert h100["answer"]["status"] == "ok" and h100["answer"]["accelerator"].startswith("cu")  # not the CPU build
    [named] = h100["differences"]
    assert named.startswith("node h100-2: its NVIDIA driver does not answer (nvidia-smi runs but finds no GPU")
    assert "envpin doctor" in named
    old = classes["old"]
    assert old["answer"]["status"] == "unsatisfiable" and old["answer"]["code"] == "driver-broken"
    assert "No devices were found" in old["answer"]["message"]
    cpu = envpin("fleet", "status", "--targets", str(inventory), "--driver", "none", path=tmp_path)
    assert cpu.returncode == 0, cpu.stdout + cpu.stderr  # the CPU build asked for: nothing is refused
