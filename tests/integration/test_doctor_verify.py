"""`envpin verify` and `envpin doctor` as users run them: real interpreters, real venvs, the real torch wheel.

The torch venv is made once per session with `python -m venv` and `pip install torch==2.13.0`; pip takes the
CPU wheel (torch-2.13.0+cpu) from this machine's find-links and the dependencies from the local indexes in
pip's configuration, never from the internet. Other environments are venvs with a package written into
site-packages: a torch whose import raises, crashes or hangs.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MACHINES = REPO / "tests" / "fixtures" / "doctor" / "machines"
PYTHON37 = Path("/root/.pyenv/versions/3.7.16/bin/python")
PYTHON38 = Path("/root/.pyenv/versions/3.8.18/bin/python")


def clean_env(**extra) -> dict:
    """The user's environment minus what would make results depend on the shell that runs the tests."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_VISIBLE_DEVICES", "PYTHONPATH")}
    env.update(extra)
    return env


def envpin(*args, stdin=None, timeout=180):
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, env=clean_env(),
                          input=stdin, timeout=timeout)


def local_indexes() -> dict:
    """PIP_INDEX_URL / PIP_EXTRA_INDEX_URL pointing only at the file:// indexes pip is configured with, so the
    install cannot reach the internet; nothing when none is configured."""
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    urls = []
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(("index-url", "extra-index-url")):
            urls += [u for u in shlex.split(value.strip().strip("'\"")) if u.startswith("file://")]
    urls = list(dict.fromkeys(urls))
    if not urls:
        return {}
    return {"PIP_INDEX_URL": urls[0], "PIP_EXTRA_INDEX_URL": " ".join(urls[1:])}


def make_venv(root: Path, with_pip: bool = False) -> Path:
    args = [sys.executable, "-m", "venv", str(root)] + ([] if with_pip else ["--without-pip"])
    subprocess.run(args, check=True, capture_output=True, timeout=120)
    return root


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3.*")) / "site-packages"


def fake_torch(venv: Path, version: str, body: str) -> None:
    """A torch package whose __init__ runs `body`, with the dist-info pip would have written."""
    packages = site_packages(venv)
    (packages / "torch").mkdir()
    (packages / "torch" / "__init__.py").write_text(textwrap.dedent(body))
    info = packages / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")


@pytest.fixture(scope="session")
def torch_venv(tmp_path_factory):
    venv = make_venv(tmp_path_factory.mktemp("torch") / "venv", with_pip=True)
    started = time.monotonic()
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-compile", "--disable-pip-version-check", "torch==2.13.0"],
        capture_output=True, text=True, env=clean_env(**local_indexes()), timeout=600)
    seconds = time.monotonic() - started
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # Import once with bytecode writing on, as a user's first `import torch` does (pip ran with --no-compile to
    # save time, and PYTHONDONTWRITEBYTECODE may be set here): every probe after this reads the cached bytecode.
    warm = {k: v for k, v in clean_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([str(venv / "bin" / "python"), "-c", "import torch"], env=warm, capture_output=True, timeout=300, check=True)
    print(f"\ntorch venv: pip install torch==2.13.0 took {seconds:.0f} s")
    return venv


@pytest.fixture(scope="session")
def torch_verify(torch_venv):
    result = envpin("verify", "--prefix", str(torch_venv), "--format", "json")
    return result


# ---------------------------------------------------------------- the real torch 2.13.0+cpu


def test_verify_reports_the_real_cpu_torch(torch_verify, torch_venv):
    assert torch_verify.returncode == 0, torch_verify.stderr
    report = json.loads(torch_verify.stdout)
    torch = report["torch"]
    assert torch["version"] == "2.13.0+cpu" and torch["import_ok"] is True and torch["cuda"] is None
    assert torch["is_available"] is False and torch["arch_list"] == [] and torch["device_count"] == 0
    assert torch["file"].startswith(str(torch_venv))
    assert any("libtorch_cpu.so" in path for path in torch["loaded"])  # what /proc/self/maps showed after import
    assert report["packages"]["pip"]["torch"] == "2.13.0+cpu" and "typing-extensions" in report["packages"]["pip"]
    assert report["python"]["executable"] == str(torch_venv / "bin" / "python") and report["python"]["env_type"] == "venv"
    assert report["tensorflow"] is None and report["jax"] is None
    assert report["ok"] is True
    assert any("CPU build, and this machine has no NVIDIA driver" in c["message"] for c in report["checks"])


def test_doctor_on_the_real_cpu_torch_says_what_a_gpu_machine_needs(torch_venv):
    result = envpin("doctor", "--interpreter", str(torch_venv / "bin" / "python"), "--format", "json")
    assert result.returncode == 0, result.stderr
    findings = json.loads(result.stdout)["findings"]
    first = findings[0]
    assert set(first) == {"id", "severity", "title", "evidence", "fix"}
    assert first["id"] == "TORCH-CPU-WHEEL" and first["severity"] == "info"
    assert "CPU build" in first["title"] and "no NVIDIA driver" in first["title"]
    assert "torch 2.13.0+cpu: torch.version.cuda is None (probe)" in first["evidence"]
    fixes = "\n".join(first["fix"])
    assert "on a GPU machine with driver ≥ 525.60.13" in fixes and "torch 2.13.0+cu126" in fixes
    assert "on a GPU machine with driver ≥ 580" in fixes
    # builds for another machine are no install command here: the solve on (or for) that machine gives it
    assert "pip install" not in fixes and "`envpin solve --framework torch --spec torch==2.13.0`" in fixes


def test_doctor_replays_a_gpu_machine_against_the_real_torch(torch_venv):
    result = envpin("doctor", "--facts", str(MACHINES / "linux-rtx4080s-595.71.05.json"), "--prefix", str(torch_venv))
    assert result.returncode == 1, result.stderr
    text = result.stdout
    assert "1. [error] torch 2.13.0+cpu is a CPU-only build on a machine with an NVIDIA GPU  (TORCH-CPU-WHEEL)" in text
    python = str(torch_venv / "bin" / "python")
    assert f"{python} -m pip install --force-reinstall torch==2.13.0" in text
    assert "NVIDIA GeForce RTX 4080 SUPER (sm_89)" in text
    assert text.rstrip().splitlines()[-1].startswith("verdict: 1 problem found; most likely: torch 2.13.0+cpu is a CPU-only build")


def test_verify_output_plus_detect_output_is_a_doctor_facts_file(torch_verify, tmp_path):
    detected = envpin("detect", "--format", "json")
    assert detected.returncode == 0, detected.stderr
    verified = json.loads(torch_verify.stdout)
    merged = {**json.loads(detected.stdout), **{k: verified[k] for k in ("packages", "torch", "tensorflow", "jax", "library_dirs")}}
    merged["python"] = {**merged["python"], **verified["python"]}
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(merged))
    replay = envpin("doctor", "--facts", str(facts), "--format", "json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["findings"][0]["id"] == "TORCH-CPU-WHEEL"


# ---------------------------------------------------------------- environments without torch, or whose torch breaks


def test_an_environment_without_torch(tmp_path):
    venv = make_venv(tmp_path / "empty")
    verified = envpin("verify", "--prefix", str(venv))
    assert verified.returncode == 1
    assert f"no torch, tensorflow or jax is installed for {venv}/bin/python" in verified.stdout
    assert "torch: not installed" in verified.stdout
    doctor = envpin("doctor", "--prefix", str(venv), "--format", "json")
    assert doctor.returncode == 0, doctor.stderr
    first = json.loads(doctor.stdout)["findings"][0]
    assert first["id"] == "ENV-INTERPRETER-MISMATCH" and first["severity"] == "warning"
    assert first["title"] == f"torch is not installed in this environment ({venv}/bin/python)"
    assert any(f"{venv}/bin/python -m pip install torch==" in fix for fix in first["fix"])


def test_an_environment_whose_torch_import_fails(tmp_path):
    venv = make_venv(tmp_path / "broken")
    fake_torch(venv, "2.0.1", """\
        raise ImportError("libcudnn.so.8: cannot open shared object file: No such file or directory")
        """)
    verified = envpin("verify", "--prefix", str(venv), "--format", "json")
    assert verified.returncode == 1 and not verified.stderr
    report = json.loads(verified.stdout)
    assert report["torch"]["import_ok"] is False
    assert report["torch"]["import_error"].startswith("Traceback (most recent call last)")
    assert "ImportError: libcudnn.so.8: cannot open shared object file" in report["torch"]["import_error"]
    assert report["verdict"] == "NOT OK: import torch failed: ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory"
    doctor = envpin("doctor", "--prefix", str(venv), "--format", "json")
    assert doctor.returncode == 1
    first = json.loads(doctor.stdout)["findings"][0]
    assert first["id"] == "LNX-TORCH201-NO-NVIDIA-WHEELS"
    assert "import torch (probe): ImportError: libcudnn.so.8: cannot open shared object file" in first["evidence"][0]


def test_imports_that_crash_or_hang_are_reported_not_fatal(tmp_path):
    crashing = make_venv(tmp_path / "crash")
    fake_torch(crashing, "2.9.0", """\
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
        """)
    result = envpin("verify", "--prefix", str(crashing), "--format", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["torch"]["import_error"].startswith("import torch killed its process with SIGSEGV")
    hanging = make_venv(tmp_path / "hang")
    fake_torch(hanging, "2.9.0", """\
        import time
        time.sleep(600)
        """)
    started = time.monotonic()
    result = envpin("verify", "--prefix", str(hanging), "--timeout", "2")
    assert result.returncode == 1 and time.monotonic() - started < 60
    assert "NOT OK: import torch failed: import torch did not finish within 2 s" in result.stdout


@pytest.mark.skipif(not PYTHON38.exists(), reason="needs a Python 3.8 interpreter")
def test_the_probe_runs_on_python_38():
    result = envpin("verify", "--interpreter", str(PYTHON38), "--format", "json")
    report = json.loads(result.stdout)
    assert report["python"]["version"].startswith("3.8.") and report["packages"]["pip"]["pip"]


# ---------------------------------------------------------------- bad input: one line, exit 2


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    not_json = tmp_path / "facts.json"
    not_json.write_text("{not json")
    bad_env = tmp_path / "bad-env.json"
    bad_env.write_text(json.dumps({**json.loads((MACHINES / "linux-no-nvidia.json").read_text()),
                                   "torch": {"arch_list": "sm_86", "import_ok": "yes"}, "packages": {"pip": []}}))
    empty_dir = tmp_path / "no-python"
    empty_dir.mkdir()
    true = shutil.which("true")
    assert true is not None
    cases = [
        (["verify", "--interpreter", str(tmp_path / "missing")], "--interpreter " + str(tmp_path / "missing") + ": no such interpreter"),
        (["verify", "--prefix", str(empty_dir)], "no Python interpreter in it"),
        (["verify", "--interpreter", true], "did not print a probe report; is it a Python interpreter?"),
        (["doctor", "--facts", str(not_json)], f"--facts {not_json}: not JSON"),
        (["doctor", "--facts", str(bad_env)], "torch.arch_list: expected a list of strings; torch.import_ok"),
        (["doctor", "--facts", str(MACHINES / "linux-no-nvidia.json"), "--error-text", str(tmp_path / "nope.txt")],
         "--error-text " + str(tmp_path / "nope.txt") + ": cannot be read"),
        (["verify", "--timeout", "0"], "argument --timeout: '0' is not a positive number of seconds"),
    ]
    if PYTHON37.exists():
        cases.append((["verify", "--interpreter", str(PYTHON37)], "envpin's probe needs Python >= 3.8"))
    for args, words in cases:
        result = envpin(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stdout == "" and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, (args, result.stderr)
        assert words in result.stderr, (args, result.stderr)
    assert "packages.pip: expected an object" in envpin("doctor", "--facts", str(bad_env)).stderr


def test_error_text_from_stdin_with_a_replayed_machine():
    error = "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11070)."
    facts = MACHINES / "linux-t4-515.105.01.json"
    result = envpin("doctor", "--facts", str(facts), "--error-text", "-", "--format", "json", stdin=error)
    assert result.returncode == 1, result.stderr
    first = json.loads(result.stdout)["findings"][0]
    assert first["id"] == "DRV-TOO-OLD-FOR-TORCH-WHEEL"
    assert any("CUDA 11.7" in line for line in first["evidence"])


# ---------------------------------------------------------------- ROCm, XPU and MPS builds (issue 20)

FAKE_HIP_TORCH = """\
    # a ROCm build's surface as the probe reads it: torch.cuda is HIP, devices have a gcnArchName, and a kernel
    # launch fails as on a GPU whose target the wheel lacks (pytorch/pytorch#132570)
    import types
    __version__ = "2.5.1+rocm6.2"
    version = types.SimpleNamespace(cuda=None, hip="6.2.41133")
    class _Props:
        gcnArchName = "gfx1031"
    def _no_kernel(*args, **kwargs):
        raise RuntimeError("HIP error: invalid device function")
    cuda = types.SimpleNamespace(
        get_arch_list=lambda: ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100", "gfx942"],
        is_available=lambda: True, device_count=lambda: 1, get_device_name=lambda i: "AMD Radeon RX 6700 XT",
        get_device_properties=lambda i: _Props())
    backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: None))
    class _C:
        pass
    ones = _no_kernel
    """


def test_verify_and_doctor_on_a_rocm_build_without_the_gpus_kernels(tmp_path):
    venv = make_venv(tmp_path / "rocm")
    fake_torch(venv, "2.5.1+rocm6.2", FAKE_HIP_TORCH)
    verified = envpin("verify", "--prefix", str(venv), "--format", "json")
    report = json.loads(verified.stdout)
    torch = report["torch"]
    assert torch["hip"] == "6.2.41133" and torch["devices"][0]["gfx"] == "gfx1031"
    assert torch["smoke"]["matmul"] == "RuntimeError: HIP error: invalid device function"
    checks = [check["message"] for check in report["checks"]]
    assert any("has no kernels for AMD Radeon RX 6700 XT (gfx1031)" in message for message in checks), checks
    assert verified.returncode == 1
    doctor = envpin("doctor", "--prefix", str(venv), "--format", "json")
    first = json.loads(doctor.stdout)["findings"][0]
    assert first["id"] == "ROCM-HIP-INVALID-DEVICE-FUNCTION"
    assert any("--gfx gfx1031" in fix for fix in first["fix"]) and any("HSA_OVERRIDE_GFX_VERSION=10.3.0" in fix
                                                                       for fix in first["fix"])
