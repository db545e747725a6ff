"""Pure parts of lock and install: engine commands, lock completion and checks, exports, backend commands,
progress parsing of recorded uv/pip output, relocation and recovery of a prefix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from packaging.pylock import is_valid_pylock_path

from envpin.base.errors import EnvpinError
from envpin.lock.engines import LockInput, engine_error, pip_lock_argv, uv_compile_argv, uv_input_project
from envpin.lock.export import requirements_text
from envpin.lock.indexes import index_name, index_plan
from envpin.lock.pylock import LockFacts, check_pins, complete, lock_file_name, lock_python, validate
from envpin.provision.atomic import leftovers, recover, relocate
from envpin.provision.backends import CondaBackend, InstallInputs, UvBackend, VenvBackend
from envpin.provision.check import compare
from envpin.provision.install import failure_line
from envpin.provision.progress import Progress, QuietProgress, event_of, make_progress
from envpin.resolver.plan import PinnedPackage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "provision"
CU124 = "https://download.pytorch.org/whl/cu124"
PINS = (PinnedPackage("torch", "2.5.1+cu124", CU124), PinnedPackage("torchvision", "0.20.1+cu124", CU124),
        PinnedPackage("jax", "0.6.0", None, ("cuda12",)))
INDEXES = index_plan(PINS)
LOCK_INPUT = LockInput(tuple(p.requirement for p in PINS), ("numpy>=2",), INDEXES, "3.11", "linux-x86_64")


def test_accelerator_packages_are_bound_to_their_index_only():
    project = uv_input_project(LOCK_INPUT)
    assert project["tool"]["uv"]["index"] == [{"name": "whl-cu124", "url": CU124, "explicit": True}]
    assert project["tool"]["uv"]["sources"] == {"torch": {"index": "whl-cu124"}, "torchvision": {"index": "whl-cu124"}}
    assert project["project"]["dependencies"] == ["torch==2.5.1+cu124", "torchvision==0.20.1+cu124", "jax[cuda12]==0.6.0",
                                                  "numpy>=2"]
    assert project["project"]["requires-python"] == "==3.11.*"
    assert INDEXES.index_for("Torch") == CU124 and INDEXES.index_for("jax") is None
    assert INDEXES.index_of("numpy", ("https://files.pythonhosted.org/x.whl",)) == "https://pypi.org/simple"


def test_uv_and_pip_commands():
    argv = uv_compile_argv("uv", LOCK_INPUT, Path("p/pyproject.toml"), Path("p/c.txt"), Path("p/pylock.toml"))
    assert argv[:4] == ["uv", "pip", "compile", "p/pyproject.toml"]
    for option in (["--constraints", "p/c.txt"], ["--default-index", "https://pypi.org/simple"],
                   ["--python-platform", "x86_64-unknown-linux-gnu"], ["--format", "pylock.toml"], ["--python-version", "3.11"]):
        assert argv[argv.index(option[0]) + 1] == option[1]
    assert "--no-config" in argv and "--generate-hashes" in argv
    pip = pip_lock_argv("py", LOCK_INPUT, Path("r.in"), Path("o.toml"))
    assert pip[:4] == ["py", "-m", "pip", "lock"]
    assert pip[pip.index("--extra-index-url") + 1] == CU124 and pip[pip.index("--index-url") + 1] == "https://pypi.org/simple"


@pytest.mark.parametrize(("accelerator", "name"), [("cu124", "pylock.cu124.toml"), ("rocm6.2", "pylock.rocm6-2.toml"),
                                                   ("cpu", "pylock.cpu.toml")])
def test_lock_file_names_are_pep_751_names(accelerator, name):
    assert lock_file_name(accelerator) == name and is_valid_pylock_path(Path(name))
    assert lock_file_name(accelerator, "requirements") == name.replace("pylock", "requirements").replace("toml", "txt")


def test_index_names():
    assert index_name("https://download.pytorch.org/whl/cu124") == "whl-cu124"
    assert index_name("http://127.0.0.1:8000/") == "accelerator"


ENGINE_LOCK = """
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"
[[packages]]
name = "torch"
version = "2.5.1+cu124"
wheels = [{ url = "https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl", hashes = { sha256 = "aa" } }]
[[packages]]
name = "filelock"
version = "3.16.1"
wheels = [{ url = "https://files.pythonhosted.org/f/filelock-3.16.1-py3-none-any.whl", hashes = { sha256 = "bb" } }]
"""


def facts(version="2.5.1+cu124"):
    return LockFacts("3.11", "linux-x86_64", index_plan(PINS[:1]), (("torch", version),), {"db-version": "2026.11.29"})


def test_an_engine_lock_is_completed_with_index_environments_and_the_envpin_table():
    document = complete(ENGINE_LOCK, facts())
    assert [p["index"] for p in document["packages"]] == ["https://pypi.org/simple", CU124]  # sorted by name
    assert document["created-by"] == "envpin" and document["requires-python"] == "==3.11.*"
    assert document["environments"] == ["sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '3.11'"]
    assert document["tool"]["envpin"] == {"db-version": "2026.11.29"}
    assert lock_python(document) == "3.11"


def test_a_lock_that_moved_a_pin_is_refused():
    with pytest.raises(EnvpinError, match=r"torch is 2.5.1\+cu124, not the pinned 2.5.1\+cu121"):
        complete(ENGINE_LOCK, facts("2.5.1+cu121"))
    document = complete(ENGINE_LOCK, facts())
    document["packages"][1]["index"] = "https://pypi.org/simple"
    assert check_pins(document, facts()) == [f"torch comes from https://pypi.org/simple, not {CU124}"]


def test_validation_collects_every_problem_with_its_path():
    document = complete(ENGINE_LOCK, facts())
    del document["packages"][0]["index"]
    document["packages"][1]["wheels"][0]["hashes"] = {"md5": "cc"}
    assert validate(document) == ["packages[0] (filelock): no index",
                                  "packages[1] (torch): https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp311-cp311-linux_x86_64.whl: no sha256 hash"]
    document["lock-version"] = "9"
    assert validate(document)[0].startswith("not PEP 751")


def test_requirements_export_pins_every_package_with_its_hashes():
    document = complete(ENGINE_LOCK, facts())
    document["tool"]["envpin"]["default-index"] = "https://pypi.org/simple"
    text = requirements_text(document, ["Generated by envpin"])
    assert text.splitlines() == [
        "# Generated by envpin", "--index-url https://pypi.org/simple", f"--extra-index-url {CU124}",
        "filelock==3.16.1 \\", "    --hash=sha256:bb", "torch==2.5.1+cu124 \\", "    --hash=sha256:aa"]


def test_engine_failures_are_one_line_with_the_right_exit_code():
    conflict = engine_error("uv", "  × No solution found when resolving dependencies:\n  ╰─▶ Because projdep>=3 …\n")
    assert conflict.exit_code == 1 and "no solution" in str(conflict) and "\n" not in str(conflict)
    offline = engine_error("uv", "error: Request failed after 3 retries\n  Caused by: Connection refused\n")
    assert offline.exit_code == 2 and str(offline) == (
        "an index is unreachable: uv: error: Request failed after 3 retries Caused by: Connection refused")


# ---------------------------------------------------------------- backends


def test_backend_commands(tmp_path):
    inputs = InstallInputs(python="3.11", lock_file=Path("w/pylock.toml"), requirements_file=Path("w/req.txt"))
    uv = UvBackend("uv").steps(Path("/e"), inputs)
    assert uv[0].argv == ("uv", "venv", "--no-config", "--no-python-downloads", "--quiet", "--python", "3.11", "/e")
    assert uv[1].argv == ("uv", "pip", "sync", "--no-config", "--require-hashes", "--python", "/e/bin/python", "w/pylock.toml")
    venv = VenvBackend("/usr/bin/python3.11").steps(Path("/e"), inputs)
    assert venv[0].argv == ("/usr/bin/python3.11", "-m", "venv", "/e")
    assert venv[1].argv[:6] == ("/e/bin/python", "-m", "pip", "install", "--require-hashes", "--no-deps")
    conda = CondaBackend("micromamba", "/opt/mm").steps(Path("/e"), inputs)
    assert conda[0].argv == ("/opt/mm", "create", "--yes", "--prefix", "/e", "--override-channels", "--channel",
                             "conda-forge", "python=3.11", "pip")
    assert conda[1].argv[-2:] == ("-r", "w/req.txt")
    assert conda[0].conda_target == () and conda[1].conda_target is None  # pip runs without CONDA_OVERRIDE_*
    environment_yml = tmp_path / "environment.yml"
    environment_yml.write_text("dependencies: [python]\n")
    from_file = InstallInputs(python="", environment_yml=environment_yml)
    assert CondaBackend("micromamba", "mm").steps(Path("/e"), from_file)[0].argv == (
        "mm", "create", "--yes", "--prefix", "/e", "--file", str(environment_yml))
    assert CondaBackend("mamba", "mamba").steps(Path("/e"), from_file)[0].argv == (
        "mamba", "env", "create", "--yes", "--prefix", "/e", "--file", str(environment_yml))


# ---------------------------------------------------------------- progress


def test_progress_events_from_recorded_uv_and_pip_output():
    uv = [e for e in map(event_of, (FIXTURES / "uv-pip-sync.txt").read_text().splitlines()) if e]
    assert uv[:2] == ["Downloading networkx (2.0MiB)", "Downloading sympy (6.0MiB)"]
    assert "Downloaded torch" in uv and uv[-1].startswith("Installed 10 packages in")
    pip = [e for e in map(event_of, (FIXTURES / "pip-install.txt").read_text().splitlines()) if e]
    assert "Downloading torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl (191.8 MB)" in pip
    assert pip[0] == "Collecting filelock==4.0.8" and pip[-1] == "Successfully installed"
    assert event_of("     ━━━━━━━━━━━━━━━━ 109.7/109.7 kB 17.3 MB/s eta 0:00:00") is None


def test_progress_is_plain_in_ci_and_silent_when_quiet(monkeypatch, tmp_path):
    class Tty(list):
        def isatty(self):
            return True

        def write(self, text):
            self.append(text)

        def flush(self):
            pass

    monkeypatch.setenv("CI", "true")
    assert type(make_progress(False, 3, Tty())) is Progress  # type: ignore[arg-type]  # Tty stands in for a terminal
    assert type(make_progress(True, 3, Tty())) is QuietProgress  # type: ignore[arg-type]
    monkeypatch.delenv("CI")
    monkeypatch.setenv("TERM", "xterm")
    stream = Tty()
    terminal = make_progress(False, 2, stream)  # type: ignore[arg-type]
    terminal.step("install")
    terminal.output("Downloading torch (182.9MiB)")
    assert stream[-1] == "\r\x1b[2K[1/2] install: Downloading torch (182.9MiB)"


def test_failure_line_keeps_the_telling_lines():
    tail = ("Collecting tinydep==1.0", "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.",
            "    tinydep==1.0 from http://x/tinydep-1.0-py3-none-any.whl:", "        Expected sha256 aa", "             Got        bb")
    assert failure_line(tail) == ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. "
                                  "Expected sha256 aa Got bb")


def test_compare_names_missing_and_wrong_versions_and_import_failures():
    document = {"packages": [{"name": "torch", "version": "2.5.1+cu124"}, {"name": "Typing_Extensions", "version": "4.12.2"}]}
    report = {"distributions": {"torch": "2.5.1"}, "frameworks": {"torch": {"import_ok": False,
              "import_error": "Traceback …\nImportError: libcudnn.so.9: cannot open shared object file"}}}
    assert compare(report, document) == ("torch is 2.5.1, the lock says 2.5.1+cu124", "Typing_Extensions 4.12.2 is not installed",
                                         "import torch fails: ImportError: libcudnn.so.9: cannot open shared object file")
    assert compare({"error": "the probe did not finish in 300 s"}, document) == ("the probe did not finish in 300 s",)


# ---------------------------------------------------------------- atomic moves


def test_relocation_rewrites_scripts_and_conda_prefix_records(tmp_path):
    old, new = str(tmp_path / "env.envpin-tmp-1234abcd"), str(tmp_path / "env")
    build = Path(old)
    (build / "bin").mkdir(parents=True)
    (build / "bin" / "tool").write_text(f"#!{old}/bin/python\nimport tool\n")
    os.chmod(build / "bin" / "tool", 0o755)
    (build / "bin" / "python").symlink_to("/usr/bin/python3")
    (build / "lib").mkdir()
    binary = f"\x7fELF\0{old}/lib\0rest".encode()
    (build / "lib" / "libx.so").write_bytes(binary)
    (build / "conda-meta").mkdir()
    (build / "conda-meta" / "x-1.0-0.json").write_text(json.dumps({"paths_data": {"paths": [
        {"_path": "lib/libx.so", "prefix_placeholder": "/opt/placeholder", "file_mode": "binary"}]}}))
    changed = relocate(build, old, new)
    assert sorted(p.name for p in changed) == ["libx.so", "tool"]
    assert (build / "bin" / "tool").read_text() == f"#!{new}/bin/python\nimport tool\n"
    assert os.access(build / "bin" / "tool", os.X_OK)
    patched = (build / "lib" / "libx.so").read_bytes()
    assert len(patched) == len(binary) and patched.startswith(f"\x7fELF\0{new}/lib\0".encode())


def test_recovery_after_a_kill(tmp_path):
    prefix = tmp_path / "env"
    (tmp_path / "env.envpin-tmp-aaaa").mkdir()  # a build that was under way
    (tmp_path / "env.envpin-old-bbbb").mkdir()  # the old environment, set aside when the kill came
    (tmp_path / "env.envpin-old-bbbb" / "pyvenv.cfg").write_text("")
    (tmp_path / "env-other.envpin-tmp-cccc").mkdir()  # another prefix's: not ours
    recover(prefix)
    assert (prefix / "pyvenv.cfg").exists()  # put back
    assert leftovers(prefix) == [] and (tmp_path / "env-other.envpin-tmp-cccc").exists()


def test_a_lock_from_another_tool_is_installable():
    document = {"lock-version": "1.0", "created-by": "uv", "requires-python": ">=3.10", "packages": [
        {"name": "filelock", "version": "3.16.1", "wheels": [{"url": "https://x/filelock-3.16.1-py3-none-any.whl",
                                                               "hashes": {"sha256": "bb"}}]}]}
    assert validate(document, own=False) == [] and validate(document) == ["packages[0] (filelock): no index"]
    assert lock_python(document, "3.11") == "3.11" and lock_python({**document, "requires-python": "<3.10"}, "3.11") is None
