"""`envpin lock` and `envpin install` as users run them: a real process, real uv and pip, a loopback
PEP 503/691 index (tests/integration/loopback_index.py) holding wheels built here and, in one test, the real
torch 2.13.0+cpu wheel from this machine's disk."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from packaging.pylock import Pylock

from envpin.base import _toml
from tests.conftest import DB_DIR
from tests.integration.loopback_index import Index, build_wheel, canonical, sha256_of

# slow: real uv and pip lock and install environments (~90 s in all); one xdist worker runs the module, so its shared fixtures are made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-installers")]

REPO = Path(__file__).resolve().parents[2]
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
CPU_TARGET = ["--os", "linux", "--arch", "x86_64", "--python", PYTHON, "--driver", "none"]
CUDA_TARGET = ["--os", "linux", "--arch", "x86_64", "--python", PYTHON, "--driver", "550.54.15",
               "--gpu", "NVIDIA GeForce RTX 3090"]


@pytest.fixture(scope="session")
def tool_env(tmp_path_factory):
    """The environment of every envpin run here: no pip/uv configuration of this machine (its find-links
    and extra indexes), a private uv cache, no pip cache, no downloads of Pythons, CI-style plain output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", UV_PYTHON_DOWNLOADS="never", CI="true",
               UV_CACHE_DIR=str(tmp_path_factory.mktemp("uv-cache")))
    return env


def envpin(*args, env, cwd=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


def one_line_error(result):
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr, result.stderr
    assert lines and lines[-1].startswith("envpin: error: "), result.stderr
    return lines[-1]


def leftovers(prefix: Path) -> list[str]:
    return sorted(p.name for p in prefix.parent.iterdir() if ".envpin-tmp-" in p.name or ".envpin-old-" in p.name)


def load_lock(path: Path) -> dict:
    document = _toml.loads(path.read_text())
    Pylock.from_dict(document)  # raises unless it is valid PEP 751
    return document


def locked(document: dict, name: str) -> dict:
    return next(p for p in document["packages"] if canonical(p["name"]) == name)


# ---------------------------------------------------------------- small wheels, built here


def fake_torch(directory: Path, version: str, cuda: str | None, label: str | None = None) -> Path:
    files = {"torch/__init__.py": f"from . import version\n__version__ = {label or version!r}\n",
             "torch/version.py": f"cuda = {cuda!r}\n"}
    return build_wheel(directory, "torch", version, files, requires=("tinydep>=1.0",))


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    """Default index `simple` (tinydep with a console script, projdep, slowpkg, and a *poisoned* torch
    2.13.0+cu129 — the same version as the accelerator's, other bytes); accelerator indexes `whl/cu129` and
    `whl/cpu` with torch 2.13.0 builds."""
    root = tmp_path_factory.mktemp("small-index")
    wheels = root / "built"
    index = Index(root / "served")
    index.add("whl/cu129", fake_torch(wheels / "cu129", "2.13.0+cu129", "12.9"))
    index.add("whl/cpu", fake_torch(wheels / "cpu", "2.13.0+cpu", None))
    index.add("simple", fake_torch(wheels / "poisoned", "2.13.0+cu129", None, label="poisoned"))
    index.add("simple", build_wheel(wheels, "tinydep", "1.0", {"tinydep/__init__.py": "def main():\n    print('hello from tinydep')\n"},
                                    scripts={"tiny-hello": "tinydep:main"}))
    index.add("simple", build_wheel(wheels, "projdep", "2.0", {"projdep.py": "VALUE = 2\n"}))
    index.add("simple", build_wheel(wheels, "slowpkg", "1.0", {"slowpkg.py": "# padding\n" * 2000}))
    server = index.start()
    yield index
    server.shutdown()


def index_args(index: Index) -> list[str]:
    return ["--torch-index-url", f"{index.url}/whl", "--index-url", f"{index.url}/simple"]


def test_lock_binds_the_accelerator_index(small_index, tool_env, tmp_path):
    result = envpin("lock", "--spec", "torch==2.13.0", *CUDA_TARGET, *index_args(small_index), env=tool_env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = load_lock(tmp_path / "pylock.cu129.toml")  # one lock per accelerator, named as PEP 751 allows
    torch = locked(document, "torch")
    assert torch["version"] == "2.13.0+cu129"
    assert torch["index"] == f"{small_index.url}/whl/cu129"
    accelerator_wheel = small_index.projects["whl/cu129"]["torch"][0]
    poisoned_wheel = small_index.projects["simple"]["torch"][0]
    assert [w["hashes"]["sha256"] for w in torch["wheels"]] == [small_index.hashes[accelerator_wheel]]
    assert small_index.hashes[poisoned_wheel] not in (tmp_path / "pylock.cu129.toml").read_text()
    assert locked(document, "tinydep")["index"] == f"{small_index.url}/simple"
    assert document["created-by"] == "envpin" and document["requires-python"] == f"=={PYTHON}.*"
    assert document["environments"] == [f"sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '{PYTHON}'"]
    tool = document["tool"]["envpin"]
    assert tool["db-version"] == (DB_DIR / "VERSION").read_text().strip()
    assert tool["accelerator"] == "cu129" and tool["pins"] == ["torch==2.13.0+cu129"]
    assert tool["target"]["driver"] == "550.54.15"
    assert tool["target"]["gpus"] == [{"name": "NVIDIA GeForce RTX 3090", "compute-capability": "8.6"}]
    assert tool["locker"].startswith("uv ")
    for package in document["packages"]:  # every file is pinned by hash, and the hash is the served file's
        for wheel in package["wheels"]:
            path = small_index.root / "files" / wheel["url"].split("/files/", 1)[1].replace("%2B", "+")
            assert wheel["hashes"]["sha256"] == sha256_of(path)
    assert tool["regenerate"].startswith("envpin lock --spec torch==2.13.0 --os linux")


def test_project_requirements_are_locked_and_exported_with_hashes(small_index, tool_env, tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nprojdep>=2\n")
    result = envpin("lock", "-r", "requirements.txt", *CPU_TARGET, *index_args(small_index), "--format", "requirements",
                    env=tool_env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "requirements.cpu.txt").read_text()
    assert f"--index-url {small_index.url}/simple" in text and f"--extra-index-url {small_index.url}/whl/cpu" in text
    pins = dict(re.findall(r"^([a-z0-9-]+)==(\S+) \\$", text, re.MULTILINE))
    assert pins == {"projdep": "2.0", "tinydep": "1.0", "torch": "2.13.0+cpu"}
    cpu_wheel = small_index.projects["whl/cpu"]["torch"][0]
    assert f"--hash=sha256:{small_index.hashes[cpu_wheel]}" in text
    assert text.count("--hash=sha256:") == 3


def test_pip_locker_makes_the_same_lock(small_index, tool_env, tmp_path):
    result = envpin("lock", "--spec", "torch==2.13.0", *CPU_TARGET, *index_args(small_index), "--locker", "pip",
                    "-o", "pylock.toml", env=tool_env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = load_lock(tmp_path / "pylock.toml")
    assert document["tool"]["envpin"]["locker"].startswith("pip ")
    torch = locked(document, "torch")
    assert torch["version"] == "2.13.0+cpu" and torch["index"] == f"{small_index.url}/whl/cpu"
    assert torch["wheels"][0]["hashes"]["sha256"] == small_index.hashes[small_index.projects["whl/cpu"]["torch"][0]]
    assert {p["name"] for p in document["packages"]} == {"torch", "tinydep"}


@pytest.mark.parametrize("macos", ["14.5", None])
def test_a_mac_lock_is_resolved_for_its_macos(macos, tool_env, tmp_path):
    # torch 2.15.0's arm64 wheels are tagged macosx_14_0 (the database's wheel_macos), and uv resolves a macOS
    # platform for macOS 13.0 unless told: the lock is for the Mac's macOS, or the one the solved wheel needs
    index = Index(tmp_path / "served")
    index.add("simple", build_wheel(tmp_path / "built", "torch", "2.15.0", {"torch/__init__.py": ""},
                                    tag="cp311-none-macosx_14_0_arm64"))
    server = index.start()
    try:
        result = envpin("lock", "--spec", "torch==2.15.0", "--os", "macos", "--arch", "arm64", "--python", "3.11",
                        *(["--macos", macos] if macos else []), "--index-url", f"{index.url}/simple", "-o", "pylock.toml",
                        env={**tool_env, "MACOSX_DEPLOYMENT_TARGET": "12.0"}, cwd=tmp_path)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    torch = locked(load_lock(tmp_path / "pylock.toml"), "torch")
    assert torch["version"] == "2.15.0" and torch["wheels"][0]["url"].endswith("macosx_14_0_arm64.whl")


@pytest.fixture(scope="module")
def cpu_lock(small_index, tool_env, tmp_path_factory):
    directory = tmp_path_factory.mktemp("cpu-lock")
    result = envpin("lock", "--spec", "torch==2.13.0", *CPU_TARGET, *index_args(small_index), env=tool_env, cwd=directory)
    assert result.returncode == 0, result.stderr
    return directory / "pylock.cpu.toml"


def run_in(prefix: Path, code: str) -> str:
    return subprocess.run([str(prefix / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_install_with_uv_then_venv_replaces_the_environment(cpu_lock, tool_env, tmp_path):
    prefix = tmp_path / "env"
    first = envpin("install", "--prefix", str(prefix), "--lock", str(cpu_lock), "--backend", "uv", env=tool_env)
    assert first.returncode == 0, first.stderr
    assert "[4/4] move into place" in first.stderr and "torch 2.13.0+cpu imports (CPU build)" in first.stderr
    assert run_in(prefix, "import torch; print(torch.__version__)") == "2.13.0+cpu"
    # the environment was built elsewhere and moved: its scripts must point at the prefix, not the build
    hello = subprocess.run([str(prefix / "bin" / "tiny-hello")], capture_output=True, text=True)
    assert hello.stdout.strip() == "hello from tinydep", hello.stderr
    assert ".envpin-tmp-" not in (prefix / "bin" / "activate").read_text()
    (prefix / "first-marker").write_text("")

    second = envpin("install", "--prefix", str(prefix), "--lock", str(cpu_lock), "--backend", "venv", env=tool_env)
    assert second.returncode == 0, second.stderr
    assert not (prefix / "first-marker").exists()  # replaced whole
    assert run_in(prefix, "import torch, pip; print(torch.__version__)") == "2.13.0+cpu"
    assert subprocess.run([str(prefix / "bin" / "tiny-hello")], capture_output=True, text=True).returncode == 0
    assert subprocess.run([str(prefix / "bin" / "pip"), "--version"], capture_output=True, text=True).returncode == 0
    assert leftovers(prefix) == []


@pytest.fixture
def existing_env(cpu_lock, tool_env, tmp_path):
    prefix = tmp_path / "env"
    result = envpin("install", "--prefix", str(prefix), "--lock", str(cpu_lock), "--quiet", env=tool_env)
    assert result.returncode == 0 and result.stderr == "", result.stderr  # --quiet: nothing on success
    (prefix / "marker").write_text("the previous environment")
    return prefix


def assert_intact(prefix: Path) -> None:
    assert (prefix / "marker").read_text() == "the previous environment"
    assert run_in(prefix, "import torch, tinydep; print(torch.__version__)") == "2.13.0+cpu"


@pytest.mark.parametrize("backend", ["uv", "venv"])
def test_a_corrupted_wheel_leaves_the_previous_environment(small_index, existing_env, cpu_lock, tool_env, tmp_path, backend):
    tinydep = small_index.projects["simple"]["tinydep"][0].name
    small_index.corrupted[tinydep] = build_wheel(tmp_path / "tampered", "tinydep", "1.0", {"tinydep/__init__.py": "evil = 1\n"})
    try:
        fresh_cache = {**tool_env, "UV_CACHE_DIR": str(tmp_path / "cold-cache")}  # a download, not uv's cache
        result = envpin("install", "--prefix", str(existing_env), "--lock", str(cpu_lock), "--backend", backend,
                        env=fresh_cache)
    finally:
        del small_index.corrupted[tinydep]
    assert result.returncode == 2
    assert re.search(r"hash", one_line_error(result), re.IGNORECASE)
    assert_intact(existing_env)
    assert leftovers(existing_env) == []


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _start_slow_install(small_index, existing_env, tool_env, tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nslowpkg\n")
    result = envpin("lock", "-r", "requirements.txt", *CPU_TARGET, *index_args(small_index), "-o", "pylock.toml",
                    env=tool_env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    slow = small_index.projects["simple"]["slowpkg"][0].name
    small_index.slow.add(slow)
    small_index.requests.clear()
    (tmp_path / "tmp").mkdir()  # the run's temporary directory, to see that nothing is left there
    env = {**tool_env, "UV_CACHE_DIR": str(tmp_path / "cold-cache"), "TMPDIR": str(tmp_path / "tmp")}
    process = subprocess.Popen([sys.executable, "-m", "envpin", "install", "--prefix", str(existing_env), "--lock",
                                str(tmp_path / "pylock.toml")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 60
    while not any(slow in r for r in small_index.requests):  # mid-download
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    assert leftovers(existing_env)  # the build is under way beside the prefix
    return process, slow


def test_sigterm_mid_install_removes_the_build_and_keeps_the_environment(small_index, existing_env, tool_env, tmp_path):
    process, slow = _start_slow_install(small_index, existing_env, tool_env, tmp_path)
    try:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        small_index.slow.discard(slow)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert_intact(existing_env)
    assert leftovers(existing_env) == []


def test_sigkill_mid_install_keeps_the_environment_and_the_next_run_cleans_up(
        small_index, existing_env, cpu_lock, tool_env, tmp_path):
    process, slow = _start_slow_install(small_index, existing_env, tool_env, tmp_path)
    try:
        installers = _children(process.pid)
        process.kill()  # SIGKILL: no handler runs; then the installer too, as the OOM killer or a power cut would
        process.communicate(timeout=30)
        for child in installers:
            os.killpg(child, signal.SIGKILL)
    finally:
        small_index.slow.discard(slow)
    assert_intact(existing_env)
    # What SIGKILL leaves: a temporary build and the installers' inputs beside the prefix (never a half environment
    # at the prefix, nothing in the temporary directory), which the next run holding the prefix's lock removes.
    left = [name.removeprefix(existing_env.name) for name in leftovers(existing_env)]
    assert any(name.startswith(".envpin-tmp-inputs-") for name in left), left
    assert [path.name for path in (tmp_path / "tmp").iterdir() if path.name.startswith("envpin-")] == []
    result = envpin("install", "--prefix", str(existing_env), "--lock", str(cpu_lock), env=tool_env)
    assert result.returncode == 0, result.stderr
    assert leftovers(existing_env) == []


def test_bad_input_is_one_line_and_exit_2(small_index, cpu_lock, tool_env, tmp_path):
    garbage = tmp_path / "pylock.toml"
    garbage.write_text("lock-version = [not toml")
    result = envpin("install", "--prefix", str(tmp_path / "env"), "--lock", str(garbage), env=tool_env)
    assert result.returncode == 2 and "not TOML" in one_line_error(result)

    incomplete = tmp_path / "pylock.nohash.toml"
    incomplete.write_text(re.sub(r"(?m)^\[packages\.wheels\.hashes\]\nsha256 = .*\n", "", cpu_lock.read_text()))
    result = envpin("install", "--prefix", str(tmp_path / "env"), "--lock", str(incomplete), env=tool_env)
    assert result.returncode == 2 and "packages[0].wheels[0].hashes" in one_line_error(result)

    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("")
    result = envpin("install", "--prefix", str(project), "--lock", str(cpu_lock), env=tool_env)
    assert result.returncode == 2 and "not a Python environment" in one_line_error(result)
    assert (project / "main.py").exists()

    closed = ["--torch-index-url", "http://127.0.0.1:9/whl", "--index-url", "http://127.0.0.1:9/simple"]
    no_retries = {**tool_env, "UV_HTTP_RETRIES": "0"}  # the error, not uv's patience, is under test
    result = envpin("lock", "--spec", "torch==2.13.0", *CPU_TARGET, *closed, env=no_retries, cwd=tmp_path)
    assert result.returncode == 2 and "127.0.0.1:9" in one_line_error(result)
    assert not list(tmp_path.glob("pylock.cpu.toml"))

    result = envpin("lock", "-r", "missing.txt", *CPU_TARGET, *index_args(small_index), env=tool_env, cwd=tmp_path)
    assert result.returncode == 2 and "missing.txt" in one_line_error(result)


def test_a_conflict_in_the_project_is_exit_1(small_index, tool_env, tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nprojdep>=3\n")
    result = envpin("lock", "-r", "requirements.txt", *CPU_TARGET, *index_args(small_index), env=tool_env, cwd=tmp_path)
    assert result.returncode == 1 and "no solution" in one_line_error(result)


# ---------------------------------------------------------------- the real torch 2.13.0+cpu wheel


def _local_wheel_dirs() -> list[Path]:
    dirs = [Path(p) for p in os.environ.get("PIP_FIND_LINKS", "").split()] + [Path("/opt/wheels")]
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def _local_simple_dirs() -> list[Path]:
    return [p for p in sorted(Path("/opt").glob("pypi*/simple")) if p.is_dir()]


def _local_files(name: str) -> list[Path]:
    """A project's wheels in this machine's local file indexes (the extra-index-urls of `pip config list`)."""
    found = []
    for simple in _local_simple_dirs():
        page = simple / canonical(name) / "index.html"
        if page.is_file():
            for href in re.findall(r'href="([^"#]+)', page.read_text()):
                path = (page.parent / href).resolve()
                if path.suffix == ".whl" and path.is_file():
                    found.append(path)
    return found


def _requirements_of(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    return [re.split(r"[\s\[<>=!~;(]", line.split(":", 1)[1].strip(), maxsplit=1)[0]
            for line in lines if line.startswith("Requires-Dist:") and "extra ==" not in line]


@pytest.fixture(scope="module")
def real_torch_index(tmp_path_factory):
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the local torch 2.13.0+cpu wheel is cp311")
    wheels = [w for d in _local_wheel_dirs() for w in d.glob("torch-2.13.0*-cp311-cp311-*linux*_x86_64.whl")]
    if not wheels:
        pytest.skip("no torch 2.13.0 cp311 Linux wheel in this machine's find-links folder")
    torch = wheels[0]
    index = Index(tmp_path_factory.mktemp("real-index"))
    index.add("whl/cpu", torch)
    queue, seen = _requirements_of(torch), set()
    while queue:  # torch's dependencies, and theirs, from the same local indexes
        name = canonical(queue.pop())
        if name in seen:
            continue
        seen.add(name)
        files = _local_files(name)
        assert files, f"{name} (a dependency of torch) is not in the local indexes"
        for wheel in files:
            index.add("simple", wheel)
            queue += _requirements_of(wheel)
    server = index.start()
    yield index, torch
    server.shutdown()


def test_real_torch_lock_install_verify(real_torch_index, tool_env, tmp_path):
    """One real-torch test (torch is 192 MB, 700 MB installed): lock, install with uv, verify. The venv + pip
    backend installs the same lock in the small-wheel tests above, and real torch in scripts/bench_install.py
    (about a minute on 2 cores, too long for the suite)."""
    index, torch_wheel = real_torch_index
    version = torch_wheel.name.split("-")[1]  # "2.13.0+cpu": served under the name it has
    result = envpin("lock", "--spec", "torch==2.13.0", *CPU_TARGET, *index_args(index), env=tool_env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lock = tmp_path / "pylock.cpu.toml"
    document = load_lock(lock)
    torch = locked(document, "torch")
    assert torch["version"] == version and torch["index"] == f"{index.url}/whl/cpu"
    served = {f.name: h for f, h in index.hashes.items()}
    for package in document["packages"]:  # the lock's hashes are the files' hashes
        for wheel in package["wheels"]:
            name = wheel["url"].rsplit("/", 1)[1].replace("%2B", "+")
            assert wheel["hashes"]["sha256"] == served[name] == sha256_of(next(f for f in index.hashes if f.name == name))
    assert torch["wheels"][0]["hashes"]["sha256"] == sha256_of(torch_wheel)

    prefix = tmp_path / "env"
    result = envpin("install", "--prefix", str(prefix), "--lock", str(lock), "--backend", "uv", env=tool_env)
    assert result.returncode == 0, result.stderr
    assert f"torch {version} imports (CPU build)" in result.stderr
    report = run_in(prefix, "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(),"
                            " float(torch.ones(2, 2).matmul(torch.ones(2, 2)).sum()))")
    assert report == f"{version} None False 8.0"
    assert leftovers(prefix) == []
    verified = envpin("verify", "--prefix", str(prefix), "--lock", str(lock), "--no-smoke", "--format", "json",
                      env=tool_env)
    checks = json.loads(verified.stdout)["checks"]
    assert any("installed at its locked version" in c["message"] and c["status"] == "ok" for c in checks), checks
