"""detect_host through real subprocesses: a fake nvidia-smi on PATH, a fake /proc under fs_root."""

import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest

from envpin.facts.host import Driver, Gpu, from_json, to_json
from envpin.host import detect_host

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "host"
PROC_VERSION = (FIXTURES / "proc_driver_nvidia_version_565.57.01_open.txt").read_text()

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fake executables are POSIX scripts")


def fake_nvidia_smi(bin_dir: Path, body: str) -> Path:
    """A real executable named nvidia-smi; `body` is Python that sees the arguments in `args`."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "nvidia-smi"
    script.write_text(f"#!{sys.executable}\nimport sys, time\nargs = sys.argv[1:]\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def printing(**outputs: str) -> str:
    """Body that prints a recorded fixture depending on the command line."""
    lines = []
    for key, name in outputs.items():
        condition = {"query": "any(a.startswith('--query-gpu') for a in args)", "xml": "'-x' in args", "table": "not args"}[key]
        lines.append(f"if {condition}:\n    sys.stdout.write(open({str(FIXTURES / name)!r}).read()); sys.exit(0)")
    lines.append("sys.exit(9)")
    return "\n".join(lines)


@pytest.fixture
def host(tmp_path):
    """An environment with only our bin dir on PATH and an fs_root with a fake /proc."""
    root = tmp_path / "root"
    (root / "proc" / "driver" / "nvidia").mkdir(parents=True)
    (root / "proc" / "driver" / "nvidia" / "version").write_text(PROC_VERSION)
    (root / "proc" / "version").write_text((FIXTURES / "proc_version_this_machine.txt").read_text())
    bin_dir = tmp_path / "bin"
    environ = {"PATH": str(bin_dir)}
    return bin_dir, environ, str(root)


def detect(environ, fs_root, timeout=5.0):
    return detect_host(environ=environ, fs_root=fs_root, timeout=timeout, nvml_module=False)


def test_normal_output_reports_every_gpu(host):
    bin_dir, environ, fs_root = host
    # A 10-GPU table and a 2-GPU query answer: the CSV wins, both its GPUs are kept, CUDA from the table.
    csv = "0, NVIDIA TITAN V, 570.86.15, 7.0, 12288\n1, NVIDIA RTX 5880 Ada Generation, 570.86.15, 8.9, 49140\n"
    (bin_dir.parent / "query.csv").write_text(csv)
    fake_nvidia_smi(
        bin_dir,
        f"if any(a.startswith('--query-gpu') for a in args):\n    print(open({str(bin_dir.parent / 'query.csv')!r}).read(), end=''); sys.exit(0)\n"
        + printing(table="smi_table_580.65.06_linux_rtx4090.txt"),
    )
    facts = detect(environ, fs_root)
    assert facts.driver == Driver("570.86.15", "13.0", "nvidia-smi")
    assert facts.gpus == (Gpu(0, "NVIDIA TITAN V", "7.0", 12288), Gpu(1, "NVIDIA RTX 5880 Ada Generation", "8.9", 49140))
    assert from_json(to_json(facts)) == facts


def test_r610_header_gives_cuda_version(host):
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(bin_dir, printing(table="smi_table_610.43.02_linux_2x_b200_partial.txt"))
    facts = detect(environ, fs_root)
    # Query and XML fail (exit 9): the R610 table still gives driver, CUDA and both GPUs.
    assert facts.driver == Driver("610.43.02", "13.3", "nvidia-smi")
    assert [gpu.name for gpu in facts.gpus] == ["NVIDIA B200", "NVIDIA B200"]


def test_xml_fills_in_when_query_is_refused(host):
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(
        bin_dir,
        "if any(a.startswith('--query-gpu') and 'compute_cap' in a for a in args):\n"
        "    print('Field \"compute_cap\" is not a valid field to query.'); sys.exit(2)\n"
        + printing(xml="smi_xml_590.44.01_2x_a5000.xml"),
    )
    facts = detect(environ, fs_root)
    assert facts.driver == Driver("590.44.01", "13.1", "nvidia-smi")
    assert facts.gpus == (Gpu(0, "NVIDIA RTX A5000", None, 24564), Gpu(1, "NVIDIA RTX A5000", None, 24564))


def test_old_driver_without_compute_cap_is_asked_again(host):
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(
        bin_dir,
        "if any(a.startswith('--query-gpu') for a in args):\n"
        "    if 'compute_cap' in args[0]:\n"
        "        print('Field \"compute_cap\" is not a valid field to query.'); sys.exit(2)\n"
        "    print('0, Tesla P100-SXM2-16GB, 470.63.01, 16280'); sys.exit(0)\n"
        + printing(table="smi_table_470.63.01_linux.txt"),
    )
    facts = detect(environ, fs_root)
    assert facts.driver == Driver("470.63.01", "11.4", "nvidia-smi")
    assert facts.gpus == (Gpu(0, "Tesla P100-SXM2-16GB", None, 16280),)


def test_garbage_output_is_a_note_and_procfs_answers(host):
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(bin_dir, "print('\\x00\\x01 segmentation of the ectoplasm, \\xff'); sys.exit(0)")
    facts = detect(environ, fs_root)
    assert facts.driver == Driver("565.57.01", None, "procfs")
    assert facts.gpus == ()
    assert any(n.startswith("nvidia-smi printed unexpected output") and n.endswith("; used /proc/driver/nvidia/version") for n in facts.notes)


def test_nonzero_exit_is_a_note(host):
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(
        bin_dir,
        "print(\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"); sys.exit(9)",
    )
    facts = detect(environ, fs_root)
    assert facts.driver == Driver("565.57.01", None, "procfs")
    assert (
        "nvidia-smi failed (exit status 9): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.;"
        " used /proc/driver/nvidia/version"
    ) in facts.notes


def test_hang_is_killed_within_the_timeout(host):
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(bin_dir, "time.sleep(60)")
    started = time.monotonic()
    facts = detect(environ, fs_root, timeout=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 6, f"detect_host took {elapsed:.1f} s"
    assert facts.driver == Driver("565.57.01", None, "procfs")
    assert "nvidia-smi timed out after 1 s; used /proc/driver/nvidia/version" in facts.notes


def test_hang_of_a_forking_wrapper_is_killed_too(host):
    # The child spawns a grandchild holding stdout; killing only the child would block on the pipe.
    bin_dir, environ, fs_root = host
    fake_nvidia_smi(bin_dir, "import subprocess\nsubprocess.Popen(['sleep', '60'])\ntime.sleep(60)")
    started = time.monotonic()
    facts = detect(environ, fs_root, timeout=1.0)
    assert time.monotonic() - started < 6
    assert "nvidia-smi timed out after 1 s; used /proc/driver/nvidia/version" in facts.notes


def test_no_driver_anywhere(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / ".dockerenv").write_text("")
    facts = detect({"PATH": str(tmp_path / "bin")}, str(root))
    assert facts.driver is None and facts.gpus == ()
    assert any(n.startswith("no NVIDIA driver found (nvidia-smi not found;") for n in facts.notes)
    assert any(n.startswith("running in a container (/.dockerenv) without the NVIDIA driver mounted") for n in facts.notes)


def test_open_kernel_module_from_sysfs_when_proc_is_missing(tmp_path):
    root = tmp_path / "root"
    (root / "sys" / "module" / "nvidia").mkdir(parents=True)
    (root / "sys" / "module" / "nvidia" / "version").write_text("565.57.01\n")
    facts = detect({"PATH": str(tmp_path / "bin")}, str(root))
    assert facts.driver == Driver("565.57.01", None, "sysfs")


def test_wsl_finds_nvidia_smi_and_libraries_in_usr_lib_wsl_lib(tmp_path):
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "version").write_text((FIXTURES / "proc_version_wsl2.txt").read_text())
    wsl_lib = root / "usr" / "lib" / "wsl" / "lib"
    fake_nvidia_smi(wsl_lib, printing(table="smi_table_530.47_wsl_driver_531.68.txt"))
    (wsl_lib / "libcuda.so.1").write_text("")
    (wsl_lib / "libnvidia-ml.so.1").write_text("")
    if sys.platform != "linux":
        pytest.skip("WSL detection only runs on Linux")
    facts = detect({"PATH": str(tmp_path / "bin")}, str(root))
    assert facts.wsl is True
    assert facts.driver == Driver("531.68", "12.1", "nvidia-smi")
    assert facts.files[str(wsl_lib)] == ["libcuda.so.1", "libnvidia-ml.so.1"]


def test_toolkits_are_deduplicated_by_resolved_root(tmp_path):
    root = tmp_path / "root"
    toolkit = root / "usr" / "local" / "cuda-11.5"
    (toolkit / "lib64").mkdir(parents=True)
    shutil.copy(FIXTURES / "cuda_version_11.5.json", toolkit / "version.json")
    (toolkit / "lib64" / "libcudart.so.11.0").write_text("")
    os.symlink(toolkit, root / "usr" / "local" / "cuda")
    environ = {"PATH": str(tmp_path / "bin"), "CUDA_HOME": str(root / "usr" / "local" / "cuda"), "LD_LIBRARY_PATH": ""}
    facts = detect(environ, str(root))
    assert [(t.version, t.root) for t in facts.toolkits] == [("11.5", str(toolkit))]
    assert facts.files == {str(toolkit / "lib64"): ["libcudart.so.11.0"]}
    assert facts.env["CUDA_HOME"] == str(root / "usr" / "local" / "cuda")
    assert facts.env["LD_LIBRARY_PATH"] == []


# ---------------------------------------------------------------- this machine, unfaked

def test_this_machine_has_no_driver_and_a_real_toolkit():
    facts = detect_host(timeout=10.0)
    if Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi"):
        pytest.skip("this machine has an NVIDIA driver")
    assert facts.driver is None
    assert facts.gpus == ()
    assert facts.python.version.count(".") == 2
    assert from_json(to_json(facts)) == facts
    if not Path("/usr/local/cuda-13.0").exists():
        pytest.skip("no /usr/local/cuda-13.0 here")
    assert "13.0" in [t.version for t in facts.toolkits]
    assert any("libcudart.so.13" in names for names in facts.files.values())
