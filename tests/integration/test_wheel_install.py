"""envpin installed as a tool, as users install it: the wheel built from this tree (`uv build --wheel`, with
the dev environment's hatchling, no build environment fetched), installed by `uv tool install` into a fresh
virtual environment of its own (its dependencies from the package index, as pipx or uv would get them), then
run through the `envpin` that the tool's bin directory links, with no uv on PATH: `solve`, `check`, `db info`,
and `lock` and `install` against a loopback index (tests/integration/loopback_index.py) with the uv that was
installed with envpin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from uv import find_uv_bin  # uv is a dependency of envpin, so the dev environment has it too

from envpin.base import _toml
from envpin.base.record import Record, record
from tests.integration.loopback_index import Index, build_wheel

# slow: builds envpin's wheel and installs it as a uv tool; one xdist worker runs the module, so its shared fixtures are made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("envpin-wheel")]

REPO = Path(__file__).resolve().parents[2]
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
GPU_TARGET = ["--os", "linux", "--arch", "x86_64", "--driver", "550.54.15", "--gpu", "NVIDIA GeForce RTX 3090",
              "--python", "3.11"]
CPU_TARGET = ["--os", "linux", "--arch", "x86_64", "--python", PYTHON, "--driver", "none"]


def uv_of_this_environment() -> str:
    return find_uv_bin()


def run(argv, env=None, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")  # never inside the tree
    result = run([uv_of_this_environment(), "build", "--wheel", "--no-build-isolation", "--python", sys.executable,
                  "--out-dir", out, REPO])
    assert result.returncode == 0, result.stderr
    (built,) = out.glob("envpin-*.whl")
    return built


@record
class Tool(Record):
    envpin: Path  # the link in the tool bin directory, what a user's PATH finds
    venv: Path  # the tool's own environment
    env: dict[str, str]  # for running it: PATH without any uv, private caches
    home: Path

    def __call__(self, *args, cwd=None) -> subprocess.CompletedProcess:
        return run([self.envpin, *args], env=self.env, cwd=cwd or self.home)


def path_without_uv() -> str:
    kept = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "uv").exists() and not (Path(d) / "envpin").exists()]
    return os.pathsep.join(kept)


@pytest.fixture(scope="module")
def tool(wheel, tmp_path_factory) -> Tool:
    root = tmp_path_factory.mktemp("tool")
    install_env = {**os.environ, "UV_TOOL_DIR": str(root / "tools"), "UV_TOOL_BIN_DIR": str(root / "bin"),
                   "UV_PYTHON_DOWNLOADS": "never"}
    result = run([uv_of_this_environment(), "tool", "install", "--python", sys.executable, wheel], env=install_env)
    assert result.returncode == 0, result.stderr
    home = root / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "ENVPIN_", "PYTHON"))}
    env.update(PATH=os.pathsep.join([str(root / "bin"), path_without_uv()]), ENVPIN_CACHE_DIR=str(root / "cache"),
               UV_CACHE_DIR=str(root / "uv-cache"), UV_PYTHON_DOWNLOADS="never", PIP_CONFIG_FILE=os.devnull, CI="true")
    assert shutil.which("uv", path=env["PATH"]) is None
    assert shutil.which("envpin", path=env["PATH"]) == str(root / "bin" / "envpin")
    return Tool(root / "bin" / "envpin", root / "tools" / "envpin", env, home)


def tool_python(tool: Tool, code: str) -> str:
    result = run([tool.venv / "bin" / "python", "-c", code], env=tool.env, cwd=tool.home)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_wheel_carries_the_database_and_uv(wheel, tool):
    database = sorted(p.name for p in (REPO / "data" / "compat_matrix").iterdir() if p.is_file())
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("envpin/data/compat_matrix/")) == database
    assert "Requires-Dist: uv>=0.13\n" in metadata  # a plain dependency: `envpin lock` and `install` need it
    assert "Requires-Dist: tomli>=2.4\n" in metadata  # TOML 1.1 manifests, and all TOML on 3.10
    # the tool runs its own copy, not this checkout
    installed = Path(tool_python(tool, "import envpin; print(envpin.__file__)"))
    assert tool.venv in installed.parents, installed
    shipped = installed.parent / "data" / "compat_matrix" / "VERSION"
    assert shipped.read_text() == (REPO / "data" / "compat_matrix" / "VERSION").read_text()


def test_solve_check_and_db_info(tool):
    solved = tool("solve", "--framework", "torch", *GPU_TARGET, "--format", "json")
    assert solved.returncode == 0, solved.stderr
    plan = json.loads(solved.stdout)
    assert plan["status"] == "ok" and plan["accelerator"].startswith("cu"), plan
    assert plan["db_version"] == (REPO / "data" / "compat_matrix" / "VERSION").read_text().strip()

    requirements = tool.home / "requirements.txt"
    requirements.write_text(f"torch=={plan['packages'][0]['version']}\n--extra-index-url {plan['index_url']}\nnumpy<3\n")
    good = tool("check", requirements, *GPU_TARGET)
    assert good.returncode == 0 and "no problems in 1 file" in good.stdout, good.stdout + good.stderr
    old_driver = ["470.82.01" if arg == "550.54.15" else arg for arg in GPU_TARGET]  # too old for CUDA 12
    bad = tool("check", requirements, *old_driver, "--format", "json")
    assert bad.returncode == 1, bad.stderr
    assert [p["id"] for p in json.loads(bad.stdout)["files"][0]["problems"]] == ["CHK-TARGET-DRIVER"]

    info = tool("db", "info")
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith(f"compatibility database {plan['db_version']}\n"), info.stdout[:200]


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    """torch 2.13.0+cpu on the accelerator index `whl/cpu`, the dependency it needs on the default index."""
    root = tmp_path_factory.mktemp("tool-index")
    index = Index(root / "served")
    files = {"torch/__init__.py": "from . import version\n__version__ = '2.13.0+cpu'\n", "torch/version.py": "cuda = None\n"}
    index.add("whl/cpu", build_wheel(root / "built", "torch", "2.13.0+cpu", files, requires=("tinydep>=1.0",)))
    index.add("simple", build_wheel(root / "built", "tinydep", "1.0", {"tinydep/__init__.py": "VALUE = 1\n"}))
    server = index.start()
    yield index
    server.shutdown()


def test_lock_and_install_use_the_uv_installed_with_envpin(tool, small_index):
    found = tool_python(tool, "from envpin.lock.engines import find_uv; print(find_uv())")
    assert Path(found).parent == tool.venv / "bin", found  # not on PATH: next to the tool's Python
    assert tool("lock", "--help").returncode == 0

    indexes = ["--torch-index-url", f"{small_index.url}/whl", "--index-url", f"{small_index.url}/simple"]
    locked = tool("lock", "--spec", "torch==2.13.0", *CPU_TARGET, *indexes)
    assert locked.returncode == 0, locked.stderr
    lock = tool.home / "pylock.cpu.toml"
    document = _toml.loads(lock.read_text(encoding="utf-8"))
    uv_version = run([found, "--version"]).stdout.split(" (")[0]
    assert document["tool"]["envpin"]["locker"] == uv_version
    assert {p["name"]: p["version"] for p in document["packages"]} == {"torch": "2.13.0+cpu", "tinydep": "1.0"}
    checked = tool("check", lock, *CPU_TARGET)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    prefix = tool.home / "env"
    installed = tool("install", "--prefix", prefix, "--lock", lock)
    assert installed.returncode == 0, installed.stderr
    assert "(uv venv)" in installed.stderr and "torch 2.13.0+cpu imports (CPU build)" in installed.stderr
    result = run([prefix / "bin" / "python", "-c", "import torch, tinydep; print(torch.__version__)"])
    assert result.stdout.strip() == "2.13.0+cpu", result.stderr
