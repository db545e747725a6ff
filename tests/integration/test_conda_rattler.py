"""The conda side with real parts: py-rattler solving against real conda metadata (tests/fixtures/conda: a real
pixi.lock and channels derived from it), locks read back by rattler, environments created from a local channel of
small conda packages built and indexed here, and the user's conda / mamba / micromamba when one is on PATH.

Nothing reaches the internet: every channel is a folder."""

from __future__ import annotations

import bz2
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pip
import pytest
import yaml

rattler = pytest.importorskip("rattler", reason="py-rattler (envpin[conda]) is not installed")

from rattler.explicit_environment import ExplicitEnvironmentSpec  # noqa: E402

from envpin.compat.loader import load_database  # noqa: E402
from envpin.conda.backends import find_tool  # noqa: E402
from envpin.conda.errors import CondaInputError, CondaSolveFailed  # noqa: E402
from envpin.conda.locks import LockedRecord  # noqa: E402
from envpin.conda.rattler_solve import _run, solve_environment  # noqa: E402
from envpin.conda.virtual import virtual_packages  # noqa: E402
from envpin.facts.host import Driver, Gpu, HostFacts, Libc, PythonInfo  # noqa: E402
from envpin.resolver.target import make_target  # noqa: E402
from tests.integration.loopback_index import Index, build_wheel  # noqa: E402

# slow: real conda solves and prefixes with py-rattler; one xdist worker runs the module, so its shared fixtures are made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("rattler")]

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "conda"  # where each file comes from: SOURCES.md there
LOCK_DERIVED = FIXTURES / "lock-derived"

GLIBC = "2.35"
TARGET = ["--os", "linux", "--arch", "x86_64", "--python", "3.12", "--compute-capability", "8.6", "--glibc", GLIBC]


def envpin(*args, cwd=None, env=None):
    environment = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "envpin", *args], capture_output=True, text=True, cwd=cwd,
                          env=environment, timeout=120)


def target_packages(driver: str | None):
    """The virtual packages envpin builds for a Linux x86_64 machine with this driver (or none) and glibc 2.35."""
    database = load_database()
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"),
                      driver=Driver(driver, None, "override") if driver else None,
                      gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", "8.6"),) if driver else (), libc=Libc("glibc", GLIBC))
    return virtual_packages(make_target(database, facts), facts.libc)


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    """rattler's cache for this module, for in-process calls and (RATTLER_CACHE_DIR) for the envpin processes, so
    nothing lands in the user's ~/.cache/rattler."""
    directory = tmp_path_factory.mktemp("rattler-cache")
    previous = os.environ.get("RATTLER_CACHE_DIR")
    os.environ["RATTLER_CACHE_DIR"] = str(directory)
    yield directory
    if previous is None:
        os.environ.pop("RATTLER_CACHE_DIR", None)
    else:
        os.environ["RATTLER_CACHE_DIR"] = previous


# ---------------------------------------------------------------- the pixi example, re-solved


def _pixi_environment(channels, dependencies) -> str:
    return yaml.safe_dump({"channels": channels, "dependencies": dependencies})


PIXI = {
    # environment: (pixi.toml feature as an environment.yml, the driver whose CUDA is the feature's `cuda`)
    "cf-channel": (_pixi_environment(["conda-forge"], ["pytorch"]), "530.30.02"),  # cuda = "12.1"
    "pytorch-channel": (_pixi_environment(["pytorch", "conda-forge"], ["pytorch", "pytorch-cuda", "numpy <2"]),
                        "530.30.02"),  # cuda = "12.1"
    "nvidia-channel": (_pixi_environment(["nvidia", "pytorch", "conda-forge"], ["pytorch", "pytorch-cuda", "numpy <2"]),
                       "470.82.01"),  # cuda = "11": R470 is CUDA 11.4
}


def test_the_channels_are_what_derive_channels_writes_from_the_lock():
    """lock-derived/ is generated data: derive_channels.py turns pixi.lock into exactly the committed files."""
    spec = importlib.util.spec_from_file_location("derive_channels", FIXTURES / "derive_channels.py")
    assert spec is not None and spec.loader is not None
    derive = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(derive)
    lock = yaml.safe_load((FIXTURES / "pixi-pytorch-example" / "pixi.lock").read_text(encoding="utf-8"))
    committed = {p.relative_to(LOCK_DERIVED): p.read_text(encoding="utf-8") for p in LOCK_DERIVED.rglob("*.json")}
    assert derive.channels(lock) == committed


@pytest.mark.parametrize("name", sorted(PIXI))
def test_pixi_environments_resolve_to_exactly_their_locked_packages(name, cache):
    text, driver = PIXI[name]
    packages = target_packages(driver)
    solution = solve_environment(text, LOCK_DERIVED, packages, "linux-64", cache_dir=cache)
    lock = rattler.LockFile.from_path(FIXTURES / "pixi-pytorch-example" / "pixi.lock")
    environment = lock.environment(name)
    platform = next(p for p in environment.platforms() if p.name == "linux-64")
    locked = {Path(str(r.url)).name for r in environment.conda_repodata_records_for_platform(platform)}
    assert {r.file_name for r in solution.records} == locked
    assert _record(solution, "pytorch").build.startswith(("cuda", "py3.12_cuda"))


def test_a_gpu_request_without_cuda_fails_with_a_clear_message(cache):
    text, _ = PIXI["cf-channel"]
    with pytest.raises(CondaSolveFailed) as raised:
        solve_environment(text, LOCK_DERIVED, target_packages(None), "linux-64", origin="env.yml", cache_dir=cache)
    message = str(raised.value)
    assert message.startswith("env.yml does not solve for linux-64: it asks for a CUDA build, which needs an NVIDIA "
                              "driver (the `__cuda` virtual package), and the target has none")
    assert "\n" not in message and raised.value.exit_code == 1


# ---------------------------------------------------------------- what envpin emits, solved


def _emit(tmp_path, *args) -> Path:
    result = envpin("solve", *args, "-o", "environment.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "environment.yml"


@pytest.fixture(scope="module")
def conda_forge_file(tmp_path_factory) -> Path:
    """What `envpin solve --conda-source conda-forge` writes for torch 2.4.0 on a driver whose CUDA is 12.1."""
    return _emit(tmp_path_factory.mktemp("conda-forge-file"), "--spec", "torch==2.4.0", "--conda-source",
                 "conda-forge", "--driver", "530.30.02", *TARGET[:8])


def test_conda_forge_file_for_cuda_12_1_solves_to_a_cuda_build(conda_forge_file, cache):
    text = conda_forge_file.read_text()
    assert "  - pytorch=2.4.0=cuda120*\n" in text and "--conda-source conda-forge" in text.splitlines()[2]
    packages = target_packages("530.30.02")
    assert [str(p) for p in packages if p.name == "__cuda"] == ["__cuda=12.1=0"]
    solution = solve_environment(text, LOCK_DERIVED, packages, "linux-64", cache_dir=cache)
    for name in ("pytorch", "libtorch"):
        assert _record(solution, name).build.startswith("cuda12"), solution.record(name)
    assert _record(solution, "cuda-version").version.startswith("12.")
    # Without the build string the solver is free to pick whatever it likes; with it, a CPU build cannot come in.
    assert not any(r.build.startswith("cpu") for r in solution.records)


def test_the_same_file_through_the_cli_and_under_the_strict_policy(tmp_path, conda_forge_file):
    result = envpin("conda", "solve", str(conda_forge_file), "--format", "json", "--channels", str(LOCK_DERIVED),
                    "--driver", "530.30.02", *TARGET)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert "__cuda=12.1=0" in document["virtual_packages"]
    assert next(p for p in document["packages"] if p["name"] == "pytorch")["build"].startswith("cuda120")
    # strict: conda-forge's CUDA libraries may not pass the driver's CUDA 12.1, and this mirror has only 12.4/12.6
    strict = _emit(tmp_path, "--spec", "torch==2.4.0", "--conda-source", "conda-forge", "--driver", "530.30.02",
                   "--driver-policy", "strict", *TARGET[:8])
    assert "  - cuda-version>=12.0,<=12.1\n" in strict.read_text()
    result = envpin("conda", "solve", str(strict), "--channels", str(LOCK_DERIVED), "--driver", "530.30.02", *TARGET)
    assert result.returncode == 1
    assert "does not solve for linux-64" in result.stderr and "cuda-version" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_pytorch_channel_file_solves_to_the_cuda_build_it_names(tmp_path, cache):
    emitted = _emit(tmp_path, "--spec", "torch==2.4.1", "--conda-source", "pytorch-channel", "--driver", "530.30.02",
                    *TARGET[:8])
    text = emitted.read_text()
    assert "  - pytorch=2.4.1=*cuda12.4*\n  - pytorch-cuda=12.4\n" in text
    # pixi solved its pytorch-channel environment without the nvidia channel, so the mirror has no nvidia records
    # for CUDA 12.4: an empty nvidia channel stands in for it, and conda-forge supplies the CUDA libraries.
    empty = tmp_path / "nvidia" / "noarch"
    empty.mkdir(parents=True)
    (empty / "repodata.json").write_text(json.dumps({"info": {"subdir": "noarch"}, "packages": {}}))
    channels = {"pytorch": str(LOCK_DERIVED / "pytorch"), "nvidia": str(tmp_path / "nvidia"),
                "conda-forge": str(LOCK_DERIVED / "conda-forge")}
    solution = solve_environment(text, channels, target_packages("530.30.02"), "linux-64", cache_dir=cache)
    assert _record(solution, "pytorch").build.startswith("py3.12_cuda12.4")
    assert _record(solution, "pytorch-cuda").version == "12.4"


def test_unknown_channel_folders_and_bad_specs_are_input_errors(tmp_path, cache):
    with pytest.raises(CondaInputError, match="channel\\(s\\) bioconda have no folder in"):
        solve_environment("channels: [bioconda]\ndependencies: [samtools]\n", LOCK_DERIVED, (), "linux-64")
    result = envpin("conda", "solve", str(tmp_path / "missing.yml"), "--channels", str(LOCK_DERIVED), "--driver",
                    "none", *TARGET)
    assert result.returncode == 2 and "missing.yml: cannot be read" in result.stderr


# ---------------------------------------------------------------- locks, read back by rattler


@pytest.mark.parametrize("output", ["pixi.lock", "conda-lock.yml", "explicit.txt"])
def test_locks_read_back_by_rattler(tmp_path, output, conda_forge_file):
    result = envpin("conda", "lock", str(conda_forge_file), "-o", output, "--public-urls", "--channels", str(LOCK_DERIVED),
                    "--driver", "530.30.02", *TARGET, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    locked = tmp_path / output
    locked_records = Path(FIXTURES / "pixi-pytorch-example" / "pixi.lock")
    expected = {Path(str(r.url)).name for r in _records(rattler.LockFile.from_path(locked_records), "cf-channel")}
    if output == "explicit.txt":
        spec = ExplicitEnvironmentSpec.from_path(locked)
        urls = [entry.url.partition("#")[0] for entry in spec.packages]
        assert str(spec.platform) == "linux-64"
    else:
        urls = [str(r.url) for r in _records(rattler.LockFile.from_path(locked), "default")]
    assert {Path(u).name for u in urls} == expected
    assert all(u.startswith("https://conda.anaconda.org/conda-forge/") for u in urls)
    if output == "pixi.lock":
        assert "__cuda=12.1=0" in locked.read_text()


def _record(solution, name: str) -> LockedRecord:
    """The solution's record of a package, which the test expects to be there."""
    record = solution.record(name)
    assert record is not None, f"no {name} in the solution"
    return record


def _records(lock, name):
    environment = lock.environment(name)
    platform = next(p for p in environment.platforms() if p.name == "linux-64")
    return environment.conda_repodata_records_for_platform(platform)


# ---------------------------------------------------------------- creating an environment from a local channel

PLACEHOLDER = "/opt/anaconda1anaconda2anaconda3"  # conda's prefix placeholder, replaced by the prefix at link time


def _conda_package(channel: Path, name: str, version: str, depends: list[str], files: dict[str, bytes],
                   with_prefix: tuple[str, ...] = (), links: dict[str, str] | None = None) -> Path:
    """A minimal noarch conda package (.tar.bz2): info/index.json, info/paths.json, info/files, its files and its
    symbolic links (`links`: path -> where it points)."""
    index = {"name": name, "version": version, "build": "0", "build_number": 0, "depends": depends,
             "subdir": "noarch", "noarch": "generic", "license": "BSD-3-Clause"}
    paths = []
    for path, content in files.items():
        entry = {"_path": path, "path_type": "hardlink", "sha256": hashlib.sha256(content).hexdigest(),
                 "size_in_bytes": len(content)}
        if path in with_prefix:
            entry.update(file_mode="text", prefix_placeholder=PLACEHOLDER)
        paths.append(entry)
    paths += [{"_path": path, "path_type": "softlink"} for path in links or {}]
    members = {"info/index.json": json.dumps(index).encode(),
               "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}).encode(),
               "info/files": "".join(f"{p}\n" for p in [*files, *(links or {})]).encode(), **files}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for member, content in members.items():
            info = tarfile.TarInfo(member)
            info.size, info.mtime, info.mode = len(content), 0, 0o755 if member.startswith("bin/") else 0o644
            archive.addfile(info, io.BytesIO(content))
        for member, pointing_to in (links or {}).items():
            info = tarfile.TarInfo(member)
            info.type, info.linkname, info.mtime = tarfile.SYMTYPE, pointing_to, 0
            archive.addfile(info)
    target = channel / "noarch" / f"{name}-{version}-0.tar.bz2"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(bz2.compress(buffer.getvalue()))
    return target


@pytest.fixture
def local_channel(tmp_path):
    """`channels/demo`: demo-app 2.0 depending on demo-lib >=1.0 (whose file embeds the prefix), indexed by rattler."""
    channel = tmp_path / "channels" / "demo"
    _conda_package(channel, "demo-lib", "1.0", [], {"share/demo/lib.txt": f"prefix={PLACEHOLDER}\n".encode()},
                   with_prefix=("share/demo/lib.txt",))
    _conda_package(channel, "demo-app", "2.0", ["demo-lib >=1.0"], {"share/demo/app.txt": b"hello from demo-app\n"})
    _run(rattler.index.index_fs(channel, write_zst=False, write_shards=False))  # the one rattler event loop helper
    environment = tmp_path / "environment.yml"
    environment.write_text("name: demo\nchannels: [demo]\ndependencies:\n  - demo-app 2.*\n")
    return tmp_path / "channels", environment


def test_create_from_a_local_channel_atomically(tmp_path, local_channel):
    channels, environment = local_channel
    prefix = tmp_path / "envs" / "demo"
    prefix.parent.mkdir()
    result = envpin("conda", "create", str(environment), "--prefix", str(prefix), "--channels", str(channels),
                    "--cache-dir", str(tmp_path / "cache"), "--driver", "none", *TARGET)
    assert result.returncode == 0, result.stderr
    assert (prefix / "share/demo/app.txt").read_text() == "hello from demo-app\n"
    # the placeholder became the final prefix, not the staging folder rattler linked into
    assert (prefix / "share/demo/lib.txt").read_text() == f"prefix={prefix}\n"
    assert sorted(p.name for p in (prefix / "conda-meta").glob("*.json")) == ["demo-app-2.0-0.json", "demo-lib-1.0-0.json"]
    assert [p.name for p in prefix.parent.iterdir() if not p.name.endswith(".envpin-lock")] == ["demo"]
    assert not any(".envpin-tmp-" in p.read_text() for p in prefix.rglob("*") if p.is_file())
    # the same again replaces the environment whole, in one swap
    (prefix / "marker").write_text("old")
    again = envpin("install", "--backend", "rattler", "--environment-yml", str(environment), "--prefix", str(prefix),
                   "--channels", str(channels), "--cache-dir", str(tmp_path / "cache"), "--driver", "none", *TARGET)
    assert again.returncode == 0, again.stderr
    assert "[2/4] link the conda packages (rattler)" in again.stderr
    assert again.stderr.strip().splitlines()[-1] == f"installed {prefix} (rattler): 2 conda packages"
    assert not (prefix / "marker").exists() and (prefix / "share/demo/lib.txt").read_text() == f"prefix={prefix}\n"
    # a folder that is not an environment is never replaced
    project = tmp_path / "project"
    project.mkdir()
    (project / "keep.txt").write_text("mine")
    refused = envpin("conda", "create", str(environment), "--prefix", str(project), "--channels", str(channels),
                     "--driver", "none", *TARGET)
    assert refused.returncode == 2 and "is not a Python environment" in refused.stderr, refused.stderr
    assert (project / "keep.txt").read_text() == "mine"


def test_a_failed_create_leaves_the_previous_environment(tmp_path, local_channel):
    channels, environment = local_channel
    prefix = tmp_path / "envs" / "demo"
    first = envpin("install", "--environment-yml", str(environment), "--prefix", str(prefix), "--channels",
                   str(channels), "--cache-dir", str(tmp_path / "cache"), "--driver", "none", *TARGET)
    assert first.returncode == 0, first.stderr  # rattler is the backend of a conda input when none is named
    (channels / "demo" / "noarch" / "demo-lib-1.0-0.tar.bz2").unlink()  # indexed, solved, then gone
    failed = envpin("install", "--environment-yml", str(environment), "--prefix", str(prefix), "--channels",
                    str(channels), "--cache-dir", str(tmp_path / "empty-cache"), "--driver", "none", *TARGET)
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.strip().splitlines()[-1].startswith("envpin: error: rattler could not link the environment")
    assert (prefix / "share/demo/app.txt").read_text() == "hello from demo-app\n"
    assert sorted(p.name for p in prefix.parent.iterdir() if not p.name.endswith(".envpin-lock")) == ["demo"]


def test_create_from_a_pixi_lock_written_by_envpin(tmp_path, local_channel):
    channels, environment = local_channel
    lock = tmp_path / "pixi.lock"
    result = envpin("conda", "lock", str(environment), "-o", str(lock), "--channels", str(channels), "--driver", "none",
                    *TARGET)
    assert result.returncode == 0, result.stderr
    prefix = tmp_path / "from-lock"
    result = envpin("conda", "create", str(lock), "--prefix", str(prefix), "--cache-dir", str(tmp_path / "cache"),
                    "--driver", "none", *TARGET)
    assert result.returncode == 0, result.stderr
    assert (prefix / "share/demo/lib.txt").read_text() == f"prefix={prefix}\n"


# ---------------------------------------------------------------- a PEP 751 lock into a conda Python, with rattler

PYTHON_VERSION = "{}.{}.{}".format(*sys.version_info[:3])
SITE_PACKAGES = "lib/python{}.{}/site-packages".format(*sys.version_info[:2])
THIS_PYTHON = ["--os", "linux", "--arch", "x86_64", "--python", "{}.{}".format(*sys.version_info[:2]), "--glibc", GLIBC]


@pytest.fixture(scope="module")
def python_channel(tmp_path_factory):
    """`channels/conda-forge` with a `python` package laid out as a venv of the Python running these tests (its
    interpreter a symbolic link, as venv makes it) and a `pip` package holding this environment's own pip."""
    channel = tmp_path_factory.mktemp("python-channel") / "channels" / "conda-forge"
    base = Path(sys._base_executable)  # type: ignore[attr-defined]  # CPython's, not in typeshed
    config = f"home = {base.parent}\ninclude-system-site-packages = false\nversion = {PYTHON_VERSION}\n"
    _conda_package(channel, "python", PYTHON_VERSION, [], {"pyvenv.cfg": config.encode()},
                   links={"bin/python": str(base)})
    site = Path(pip.__file__).parent.parent
    pip_files = [*Path(pip.__file__).parent.rglob("*"), *site.glob(f"pip-{pip.__version__}.dist-info/*")]
    _conda_package(channel, "pip", pip.__version__, ["python"],
                   {f"{SITE_PACKAGES}/{path.relative_to(site).as_posix()}": path.read_bytes()
                    for path in pip_files if path.is_file() and "__pycache__" not in path.parts})
    _run(rattler.index.index_fs(channel, write_zst=False, write_shards=False))
    return channel.parent


@pytest.fixture(scope="module")
def tinydep_index(tmp_path_factory):
    """A loopback index serving tinydep 1.0 (with a console script)."""
    root = tmp_path_factory.mktemp("tinydep-index")
    index = Index(root / "served")
    index.add("simple", build_wheel(root / "wheels", "tinydep", "1.0",
                                    {"tinydep/__init__.py": "def main():\n    print('hello from tinydep')\n"},
                                    scripts={"tiny-hello": "tinydep:main"}))
    server = index.start()
    yield index
    server.shutdown()


NO_PIP_CONFIG = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", "CI": "true"}


def assert_works_at(prefix: Path) -> None:
    """pip's script was written in the staging folder and must point at the prefix after the swap."""
    hello = subprocess.run([str(prefix / "bin" / "tiny-hello")], capture_output=True, text=True)
    assert hello.stdout.strip() == "hello from tinydep", hello.stderr
    where = subprocess.run([str(prefix / "bin" / "python"), "-c", "import sys, tinydep; print(sys.prefix)"],
                           capture_output=True, text=True)
    assert where.stdout.strip() == str(prefix), where.stderr
    assert [p.name for p in prefix.parent.iterdir() if ".envpin-tmp-" in p.name] == []


def test_a_pep751_lock_installed_into_a_conda_python_with_rattler(tmp_path, python_channel, tinydep_index):
    wheel = tinydep_index.projects["simple"]["tinydep"][0]
    lock = tmp_path / "pylock.toml"
    lock.write_text(f'''lock-version = "1.0"
requires-python = "=={THIS_PYTHON[5]}.*"
created-by = "a test"

[[packages]]
name = "tinydep"
version = "1.0"
index = "{tinydep_index.url}/simple"
wheels = [{{ url = "{tinydep_index.file_url("simple", wheel.name)}", hashes = {{ sha256 = "{tinydep_index.hashes[wheel]}" }} }}]
''')
    prefix = tmp_path / "env"
    result = envpin("install", "--backend", "rattler", "--lock", str(lock), "--prefix", str(prefix), "--channels",
                    str(python_channel), "--cache-dir", str(tmp_path / "cache"), "--driver", "none", *THIS_PYTHON,
                    env=NO_PIP_CONFIG)
    assert result.returncode == 0, result.stderr
    assert f"[1/5] solve python={THIS_PYTHON[5]} and pip for linux-64 (rattler)" in result.stderr
    assert "[3/5] install the lock (pip --require-hashes)" in result.stderr
    assert sorted(p.name.rsplit("-", 2)[0] for p in (prefix / "conda-meta").glob("*.json")) == ["pip", "python"]
    assert_works_at(prefix)


def test_an_environment_yml_with_a_pip_section_with_rattler(tmp_path, python_channel, tinydep_index):
    environment = tmp_path / "environment.yml"
    environment.write_text(yaml.safe_dump({"channels": ["conda-forge"], "dependencies": [
        f"python {THIS_PYTHON[5]}.*", "pip", {"pip": [f"--index-url {tinydep_index.url}/simple", "tinydep==1.0"]}]}))
    prefix = tmp_path / "env"
    result = envpin("install", "--environment-yml", str(environment), "--prefix", str(prefix), "--channels",
                    str(python_channel), "--cache-dir", str(tmp_path / "cache"), "--driver", "none", *THIS_PYTHON,
                    env=NO_PIP_CONFIG)
    assert result.returncode == 0, result.stderr
    assert "[3/5] install the pip: section (pip, no hashes)" in result.stderr
    assert f"2 conda packages, Python {PYTHON_VERSION}," in result.stderr.strip().splitlines()[-1]
    assert_works_at(prefix)


def test_virtual_packages_file_for_conda_lock(tmp_path):
    result = envpin("conda", "virtual-packages", "-o", "virtual-packages.yml", "--driver", "550.54.14", *TARGET,
                    cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document = yaml.safe_load((tmp_path / "virtual-packages.yml").read_text())
    assert document["subdirs"]["linux-64"]["packages"]["__cuda"] == "12.4"  # not conda-lock's assumed 11.4
    assert document["subdirs"]["linux-64"]["packages"]["__glibc"] == GLIBC


def _glibc_here() -> str | None:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").split()[1]  # "glibc 2.36"
    except (AttributeError, ValueError, OSError, IndexError):
        return None


@pytest.mark.skipif(_glibc_here() is None, reason="this machine has no glibc")
def test_virtual_packages_of_this_machine_name_its_glibc(tmp_path):
    # docs/conda.md's `envpin conda virtual-packages -o virtual-packages.yml`, on this machine: its own glibc (a
    # solve's detection leaves the C library out, and the command refused with "glibc version is unknown")
    result = envpin("conda", "virtual-packages", "-o", "virtual-packages.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    packages = next(iter(yaml.safe_load((tmp_path / "virtual-packages.yml").read_text())["subdirs"].values()))["packages"]
    assert packages["__glibc"] == _glibc_here()


# ---------------------------------------------------------------- the user's conda, mamba, micromamba


@pytest.mark.parametrize("tool", ["conda", "mamba", "micromamba"])
def test_conda_tool_backend_creates_from_a_local_channel(tool, tmp_path, local_channel):
    if find_tool(tool) is None:
        pytest.skip(f"`{tool}` is not on PATH: its backend's real run is tested where it is installed")
    channels, _ = local_channel
    environment = tmp_path / "tool-environment.yml"
    environment.write_text(yaml.safe_dump({"channels": [(channels / "demo").as_uri(), "nodefaults"],
                                           "dependencies": ["demo-app 2.*"]}))
    prefix = tmp_path / f"{tool}-env"
    result = envpin("conda", "create", str(environment), "--prefix", str(prefix), "--backend", tool,
                    "--driver", "none", *TARGET, env={"CONDA_OVERRIDE_CUDA": "11.4", "CONDA_PKGS_DIRS": str(tmp_path / "pkgs")})
    assert result.returncode == 0, result.stderr
    assert (prefix / "share/demo/lib.txt").read_text() == f"prefix={prefix}\n"


def test_check_solve_reports_an_environment_that_does_not_solve_for_the_target(tmp_path, conda_forge_file):
    ok = envpin("check", str(conda_forge_file), "--solve", "--channels", str(LOCK_DERIVED), "--driver", "530.30.02",
                *TARGET)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The same file on a machine without a driver: conda-forge's CUDA builds need __cuda.
    failed = envpin("check", str(conda_forge_file), "--solve", "--format", "json", "--channels", str(LOCK_DERIVED),
                    "--driver", "none", *TARGET[:6], "--glibc", GLIBC)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    problems = json.loads(failed.stdout)["files"][0]["problems"]
    assert [p["id"] for p in problems if p["id"] == "CHK-CONDA-UNSOLVABLE"] == ["CHK-CONDA-UNSOLVABLE"]


def test_check_solve_assumes_pixis_and_conda_locks_glibc_where_the_target_flags_give_none(conda_forge_file):
    flags = [f for f in TARGET if f not in ("--glibc", GLIBC)]
    result = envpin("check", str(conda_forge_file), "--solve", "--format", "json", "--channels", str(LOCK_DERIVED),
                    "--driver", "530.30.02", *flags)
    assert result.returncode == 0, result.stdout + result.stderr
    [assumed] = [p for p in json.loads(result.stdout)["files"][0]["problems"] if p["id"] == "CHK-SOLVE-ASSUMED"]
    assert assumed["severity"] == "info" and "glibc 2.28" in assumed["message"] and "--glibc" in assumed["message"]
