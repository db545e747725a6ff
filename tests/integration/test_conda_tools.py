"""`envpin install --backend conda|mamba|micromamba`: what envpin hands the user's tool and what it does with the
result, with a stand-in tool on PATH (these machines have no conda, mamba or micromamba; the real tools run in
test_conda_rattler.py::test_conda_tool_backend_creates_from_a_local_channel where they are installed).

The stand-in records its command line and its CONDA_* environment, then lays out a prefix as conda does: a
conda-meta record listing the files that hold the prefix (a text file, and a binary one whose path lies in a
NUL-padded string), a script in bin/. Or it fails, or it hangs, on request. envpin must hand it the target's
virtual packages (never the shell's CONDA_OVERRIDE_*), build beside the prefix, rewrite the staging path in what
the tool wrote, and swap; on failure or timeout keep the previous environment and leave nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

GLIBC = "2.35"
TARGET = ["--os", "linux", "--arch", "x86_64", "--python", "3.12", "--glibc", GLIBC]
SSL_FIELD = 255  # conda pads binary prefix placeholders to 255 bytes

if sys.platform != "linux":
    pytest.skip("the stand-in tool is a Linux script", allow_module_level=True)

STAND_IN = r'''#!PYTHON
import json, os, sys, time
from pathlib import Path

argv = sys.argv[1:]
prefix = Path(argv[argv.index("--prefix") + 1])
seen = {"argv": argv, "env": {k: v for k, v in os.environ.items() if k.startswith("CONDA_")}, "pid": os.getpid()}
Path(os.environ["STAND_IN_RECORD"]).write_text(json.dumps(seen))
mode = os.environ.get("STAND_IN_MODE", "ok")
(prefix / "conda-meta").mkdir(parents=True)
if mode == "fail":
    print("error    libmamba Could not solve for environment specs: nothing provides __cuda >=12.4")
    sys.exit(1)
if mode == "hang":
    time.sleep(600)
(prefix / "share").mkdir()
(prefix / "share" / "demo.txt").write_text(f"prefix={prefix}\n")
(prefix / "lib").mkdir()
field = f"{prefix}/etc/ssl".encode()
(prefix / "lib" / "libdemo.so").write_bytes(b"\x7fELF\0" + field + b"\0" * (SSL_FIELD - len(field)) + b"tail\0")
(prefix / "bin").mkdir()
(prefix / "bin" / "demo").write_text(f"#!{prefix}/bin/python\nprint('demo')\n")
paths = [{"_path": "share/demo.txt", "file_mode": "text", "prefix_placeholder": "/opt/anaconda1anaconda2anaconda3"},
         {"_path": "lib/libdemo.so", "file_mode": "binary", "prefix_placeholder": "/opt/anaconda1anaconda2anaconda3"}]
(prefix / "conda-meta" / "demo-1.0-0.json").write_text(json.dumps({"name": "demo", "paths_data": {"paths": paths}}))
(prefix / "conda-meta" / "history").write_text(f"==> cmd: {' '.join(argv)}\n")
'''


@pytest.fixture
def tool(tmp_path):
    """Put the stand-in on PATH under every conda tool's name; returns (environment for envpin, record file)."""
    bin_dir = tmp_path / "tools"
    bin_dir.mkdir()
    for name in ("conda", "mamba", "micromamba"):
        script = bin_dir / name
        script.write_text(STAND_IN.replace("PYTHON", sys.executable).replace("SSL_FIELD", str(SSL_FIELD)))
        script.chmod(0o755)
    record = tmp_path / "seen.json"
    environment = {k: v for k, v in os.environ.items() if k != "MAMBA_EXE"}
    environment.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", STAND_IN_RECORD=str(record), CI="true",
                       CONDA_OVERRIDE_CUDA="11.4", CONDA_OVERRIDE_GLIBC="2.17")  # the shell's stale values
    return environment, record


@pytest.fixture
def environment_yml(tmp_path):
    path = tmp_path / "environment.yml"
    path.write_text("channels: [conda-forge]\ndependencies:\n  - pytorch=*=cuda126*\n  - cuda-version=12.6\n")
    return path


def envpin(*args, env, timeout=120):
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def last_line(result) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    return result.stderr.strip().splitlines()[-1]


def leftovers(prefix: Path) -> list[str]:
    return sorted(p.name for p in prefix.parent.iterdir() if ".envpin-tmp-" in p.name or ".envpin-old-" in p.name)


@pytest.mark.parametrize("name, command", [
    ("micromamba", ["create", "--yes"]),
    ("mamba", ["env", "create", "--yes"]),
    ("conda", ["env", "create"]),
])
def test_the_tool_gets_the_targets_virtual_packages_and_the_result_is_swapped_in(name, command, tool, environment_yml,
                                                                                  tmp_path):
    env, record = tool
    prefix = tmp_path / "envs" / "gpu"
    result = envpin("install", "--backend", name, "--environment-yml", str(environment_yml), "--prefix", str(prefix),
                    "--driver", "560.35.03", "--gpu", "NVIDIA GeForce RTX 4090", *TARGET, env=env)
    assert result.returncode == 0, result.stderr
    seen = json.loads(record.read_text())
    staging = Path(seen["argv"][len(command) + 1])
    assert seen["argv"] == [*command, "--prefix", str(staging), "--file", str(environment_yml)]
    assert staging.parent == prefix.parent and staging.name.startswith("gpu.envpin-tmp-")
    # driver 560 is CUDA 12.6; the shell's CONDA_OVERRIDE_CUDA=11.4 and _GLIBC=2.17 never reach the tool
    assert seen["env"] == {"CONDA_OVERRIDE_CUDA": "12.6", "CONDA_OVERRIDE_GLIBC": GLIBC, "CONDA_ALWAYS_YES": "true"}
    # what the tool wrote for the staging folder now names the prefix
    assert (prefix / "share" / "demo.txt").read_text() == f"prefix={prefix}\n"
    assert (prefix / "bin" / "demo").read_text().startswith(f"#!{prefix}/bin/python\n")
    binary = (prefix / "lib" / "libdemo.so").read_bytes()
    assert len(binary) == 5 + SSL_FIELD + 5  # the same length: the field is NUL-padded, as conda does it
    assert binary[5:].split(b"\0", 1)[0] == f"{prefix}/etc/ssl".encode() and binary.endswith(b"tail\0")
    assert leftovers(prefix) == []


def test_a_target_without_a_driver_is_an_empty_cuda_override(tool, environment_yml, tmp_path):
    env, record = tool
    result = envpin("install", "--backend", "micromamba", "--environment-yml", str(environment_yml), "--prefix",
                    str(tmp_path / "cpu"), "--driver", "none", *TARGET, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(record.read_text())["env"]["CONDA_OVERRIDE_CUDA"] == ""  # conda's "no CUDA driver here"


def test_a_failing_tool_keeps_the_previous_environment(tool, environment_yml, tmp_path):
    env, record = tool
    prefix = tmp_path / "env"
    first = envpin("install", "--backend", "mamba", "--environment-yml", str(environment_yml), "--prefix", str(prefix),
                   "--driver", "none", *TARGET, env=env)
    assert first.returncode == 0, first.stderr
    (prefix / "marker").write_text("the previous environment")
    failed = envpin("install", "--backend", "mamba", "--environment-yml", str(environment_yml), "--prefix", str(prefix),
                    "--driver", "none", *TARGET, env={**env, "STAND_IN_MODE": "fail"})
    assert failed.returncode == 2
    assert "nothing provides __cuda >=12.4" in last_line(failed)
    assert (prefix / "marker").read_text() == "the previous environment"
    assert leftovers(prefix) == []


def test_a_hanging_tool_is_stopped_and_leaves_nothing(tool, environment_yml, tmp_path):
    env, record = tool
    prefix = tmp_path / "env"
    started = time.monotonic()
    result = envpin("install", "--backend", "micromamba", "--environment-yml", str(environment_yml), "--prefix",
                    str(prefix), "--timeout", "3", "--driver", "none", *TARGET, env={**env, "STAND_IN_MODE": "hang"})
    assert result.returncode == 2 and "stopped after 3 s" in last_line(result)
    assert time.monotonic() - started < 60
    assert not prefix.exists() and leftovers(prefix) == []
    pid = json.loads(record.read_text())["pid"]
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_an_explicit_lock_goes_to_the_tool_and_a_pixi_lock_does_not(tool, tmp_path):
    env, record = tool
    explicit = tmp_path / "conda-linux-64.lock.txt"
    explicit.write_text("# platform: linux-64\n@EXPLICIT\nhttps://conda.anaconda.org/conda-forge/noarch/demo-1.0-0.conda#0a\n")
    result = envpin("install", "--backend", "conda", "--lock", str(explicit), "--prefix", str(tmp_path / "env"),
                    "--driver", "none", *TARGET, env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(record.read_text())["argv"][:2] == ["create", "--yes"]  # no solve: exactly those URLs
    pixi = tmp_path / "pixi.lock"
    pixi.write_text("version: 6\n")
    refused = envpin("install", "--backend", "conda", "--lock", str(pixi), "--prefix", str(tmp_path / "other"),
                     "--driver", "none", *TARGET, env=env)
    assert refused.returncode == 2
    assert last_line(refused) == f"envpin: error: {pixi}: pixi.lock files are installed with --backend rattler (not conda)"


def test_a_tool_that_is_missing_or_a_foreign_target_is_one_line(tool, environment_yml, tmp_path):
    env, _ = tool
    bare = {**env, "PATH": os.path.dirname(sys.executable)}
    missing = envpin("install", "--backend", "micromamba", "--environment-yml", str(environment_yml), "--prefix",
                     str(tmp_path / "env"), "--driver", "none", *TARGET, env=bare)
    assert missing.returncode == 2
    assert last_line(missing).endswith("`micromamba` is not on PATH; install it, or use --backend rattler")
    foreign = envpin("install", "--backend", "conda", "--environment-yml", str(environment_yml), "--prefix",
                     str(tmp_path / "env"), "--os", "windows", "--arch", "x86_64", "--python", "3.12", "--driver",
                     "none", env=env)
    assert foreign.returncode == 2 and "the target is win-64" in last_line(foreign)
    assert not (tmp_path / "env").exists()
