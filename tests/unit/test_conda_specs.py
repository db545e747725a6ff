"""The conda side without rattler: conda.yaml, a solve on a conda channel written as conda specs, virtual packages,
the emitters, lock text and the conda-tool command lines. Pure functions over the real database."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import yaml

from envpin.base.errors import EnvpinInputError
from envpin.compat.loader import _read_documents, default_database_path
from envpin.compat.schema import build_database
from envpin.conda import render as conda_env
from envpin.conda.backends import create_command
from envpin.conda.envfile import parse_environment_yml
from envpin.conda.errors import CondaInputError
from envpin.conda.locks import LockedRecord, conda_lock_yml, explicit, relocate
from envpin.conda.render import render_virtual_packages
from envpin.conda.specs import conda_environment
from envpin.conda.target import conda_target
from envpin.conda.virtual import VirtualPackage, conda_lock_spec, override_environment, virtual_packages
from envpin.facts.host import Driver, Gpu, HostFacts, Libc, PythonInfo
from envpin.machine.spec import TargetSpec
from envpin.provision.backends import Step
from envpin.provision.install import step_environment
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target

GLIBC = Libc("glibc", "2.35")


def _live_version() -> str:
    """The live database's VERSION: its records may say they were `added` in it, never later."""
    return (default_database_path() / "VERSION").read_text(encoding="utf-8").strip()


def answer_for(database, specs=(), frameworks=(), driver="530.30.02", python="3.12", policy="minor", os_name="linux",
               arch="x86_64", gpu=("NVIDIA GeForce RTX 3090", None), channel="pip") -> Plan | Unsatisfiable:
    facts = HostFacts(os=os_name, arch=arch, python=PythonInfo(python),
                      driver=Driver(driver, None, "override") if driver else None,
                      gpus=(Gpu(0, gpu[0], gpu[1]),) if driver else (), libc=GLIBC)
    request = parse_request(list(frameworks), list(specs), policy, None, channel=channel)
    return solve(database, make_target(database, facts), request)


def plan_for(database, *args, **kwargs) -> Plan:
    answer = answer_for(database, *args, **kwargs)
    assert isinstance(answer, Plan), answer
    return answer


# ---------------------------------------------------------------- conda.yaml


def test_conda_yaml_records_both_strategies(database):
    forge = database.conda_release("conda-forge", "torch", "2.4.0")
    # the pixi example's lock holds pytorch-2.4.0-cuda120_py312h26b3cf7_301 from conda-forge
    assert "12.0" in forge.cuda["linux-x86_64"] and "linux-x86_64" in forge.cpu
    channel = database.conda_release("pytorch-channel", "torch", "2.5.1")
    assert channel.cuda_package == "pytorch-cuda" and channel.cuda["linux-x86_64"] == ("11.8", "12.1", "12.4")
    assert database.conda_release("pytorch-channel", "torch", "1.12.1").cuda_package == "cudatoolkit"
    assert database.conda_release("pytorch-channel", "torch", "2.6.0") is None  # the channel ended with 2.5.1
    assert database.conda_release("conda-forge", "tensorflow", "2.17.0").cuda == {"linux-x86_64": ("12.0",)}
    assert database.conda_release("conda-forge", "jax", "0.4.31") is not None
    for release in database.conda_releases:
        assert release.provenance.sources, release


def _problems(documents):
    database, problems = build_database(_live_version(), documents)
    assert database is None
    return problems


def test_conda_yaml_problems_are_collected_with_their_paths():
    documents = _read_documents(default_database_path())
    broken = copy.deepcopy(documents)
    forge = broken["conda.yaml"]["conda-forge"]
    forge["torch"][0]["cuda"]["linux-x86_64"] = ["12.0", "99.9"]  # no such toolkit in cuda.yaml
    forge["torch"][1]["cpu"] = ["linux-64"]  # a conda subdir, not an envpin platform
    broken["conda.yaml"]["pytorch-channel"]["torch"][0].pop("cuda_package")
    broken["conda.yaml"]["pytorch-channel"]["tensorflow"] = []
    broken["conda.yaml"]["pytorch"] = {}
    problems = _problems(broken)
    text = "\n".join(problems)
    assert "conda.yaml: conda-forge.torch[0].cuda.linux-x86_64[1]: CUDA 99.9 is not in cuda.yaml toolkits" in text
    assert "conda.yaml: conda-forge.torch[1].cpu: 'linux-64' is not one of" in text
    assert "conda.yaml: pytorch-channel.torch[0].cuda_package" in text
    assert "pytorch-channel records torch, not 'tensorflow'" in text
    assert "unknown key 'pytorch'" in text
    assert len(problems) == 5


def test_a_database_without_conda_yaml_still_loads():
    documents = _read_documents(default_database_path())
    documents.pop("conda.yaml")
    database, problems = build_database(_live_version(), documents)
    assert problems == [] and database is not None and database.conda_releases == ()


# ---------------------------------------------------------------- strategies


@dataclass
class Case:
    id: str
    strategy: str
    specs: tuple
    expect: tuple  # dependencies after python=X
    channels: tuple = ("conda-forge",)
    frameworks: tuple = ()
    driver: str | None = "530.30.02"  # CUDA 12.1
    policy: str = "minor"
    python: str = "3.12"
    gpu: tuple = ("NVIDIA GeForce RTX 3090", None)


CASES = [
    Case("cf-12.1-minor", "conda-forge", ("torch==2.4.0",), ("pytorch=2.4.0=cuda120*", "cuda-version>=12.0,<13")),
    Case("cf-12.1-strict", "conda-forge", ("torch==2.4.0",), ("pytorch=2.4.0=cuda120*", "cuda-version>=12.0,<=12.1"),
         policy="strict"),
    Case("cf-470-cuda11", "conda-forge", ("torch==2.4.0",), ("pytorch=2.4.0=cuda118*", "cuda-version>=11.8,<12"),
         driver="470.82.01"),
    Case("cf-no-driver", "conda-forge", ("torch==2.4.0",), ("pytorch=2.4.0=cpu*",), driver=None),
    Case("cf-companions", "conda-forge", ("torch==2.4.1",),
         ("pytorch=2.4.1=cuda120*", "torchvision=0.19.1", "torchaudio=2.4.1", "cuda-version>=12.0,<13"),
         frameworks=("torch",)),
    Case("cf-tensorflow", "conda-forge", ("tensorflow==2.17.0",), ("tensorflow=2.17.0=cuda120*", "cuda-version>=12.0,<13")),
    Case("cf-jax", "conda-forge", ("jax==0.4.31",), ("jax=0.4.31", "jaxlib=0.4.31=cuda120*", "cuda-version>=12.0,<13")),
    Case("cf-torch-and-jax", "conda-forge", ("torch==2.4.0", "jax==0.4.31"),
         ("pytorch=2.4.0=cuda120*", "jax=0.4.31", "jaxlib=0.4.31=cuda120*", "cuda-version>=12.0,<13")),
    Case("pt-2.5.1", "pytorch-channel", ("torch==2.5.1",), ("pytorch=2.5.1=*cuda12.4*", "pytorch-cuda=12.4"),
         channels=("pytorch", "nvidia", "conda-forge")),
    Case("pt-2.5.1-strict", "pytorch-channel", ("torch==2.5.1",), ("pytorch=2.5.1=*cuda12.1*", "pytorch-cuda=12.1"),
         channels=("pytorch", "nvidia", "conda-forge"), policy="strict"),
    Case("pt-2.0.0-conda-pairs", "pytorch-channel", ("torch==2.0.0",),
         ("pytorch=2.0.0=*cuda11.8*", "pytorch-cuda=11.8", "torchvision=0.15.0", "torchaudio=2.0.0"),
         channels=("pytorch", "nvidia", "conda-forge"), frameworks=("torch",), python="3.10"),
    Case("pt-1.12-cudatoolkit", "pytorch-channel", ("torch==1.12.1",),
         ("pytorch=1.12.1=*cuda11.6*", "cudatoolkit=11.6"), channels=("pytorch", "conda-forge"), python="3.10"),
    Case("pt-cpu", "pytorch-channel", ("torch==2.3.1",), ("pytorch=2.3.1", "cpuonly"), channels=("pytorch", "conda-forge"),
         driver=None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_strategy(database, case):
    # The solve chooses among the channel's own builds; conda_environment only writes them as match specs.
    plan = plan_for(database, case.specs, case.frameworks, case.driver, case.python, case.policy, gpu=case.gpu,
                    channel=case.strategy)
    assert plan.channel == case.strategy and all(b.channel == case.strategy for b in plan.builds.values())
    environment = conda_environment(plan, database, case.strategy, case.policy)
    assert environment.dependencies == (f"python={case.python}",) + case.expect
    assert environment.channels == case.channels
    assert environment.reasons


def test_pip_strategy_is_what_environment_yml_writes_today(database):
    plan = plan_for(database, ("torch==2.4.0",))
    environment = conda_environment(plan, database, "pip")
    assert environment.dependencies == ("python=3.12", "pip")
    assert environment.pip == ("--extra-index-url https://download.pytorch.org/whl/cu124", "torch==2.4.0+cu124")


@pytest.mark.parametrize("strategy, specs, frameworks, says, fix", [
    ("pytorch-channel", ("torch==2.6.0",), (), "the pytorch channel ended with pytorch 2.5.1", "--spec 'torch<=2.5.1'"),
    ("conda-forge", ("torch==2.2.1",), (), "conda-forge has no pytorch 2.2.1",
     "--spec 'torch==2.1.2' (the nearest release conda-forge has)"),
    ("conda-forge", ("torch==2.4.0",), ("torch",), "conda-forge has no torchaudio 2.4.0",
     "ask for torch alone (--spec 'torch==…' without --framework torch)"),
    ("pytorch-channel", ("tensorflow==2.17.0",), (), "the pytorch channel has only PyTorch",
     "--conda-source conda-forge: conda-forge's tensorflow 2.17.0 cuda120"),
    # conda-forge built torchvision 0.22.1 for CUDA 12.9 only and torchaudio 2.7.1 for 12.6 only
    ("conda-forge", ("torch==2.7.1",), ("torch",), "torchaudio 2.7.1 is built for CUDA 12.6 on linux-x86_64, and "
                                                   "pytorch 2.7.1 and torchvision 0.22.1 leave CUDA 12.9",
     "--conda-source pip: torch==2.7.1+cu128 (cu128)"),
])
def test_unavailable_answers_name_the_fact_and_the_way_out(database, strategy, specs, frameworks, says, fix):
    # What conda_environment once raised after the fact is now the solve's own unsatisfiable answer (exit 1),
    # explained by envpin.resolver.explain like any other, with the other channels that do answer among the fixes.
    answer = answer_for(database, specs, frameworks, channel=strategy)
    assert isinstance(answer, Unsatisfiable), answer
    assert says in answer.message and fix in answer.fixes, (answer.message, answer.fixes)


def test_a_driver_too_old_for_every_cuda_build_of_the_release(database):
    # conda-forge built pytorch 2.6.0 with CUDA 12.6 only; R470 is CUDA 11.4. pip still has cu118 wheels.
    answer = answer_for(database, ("torch==2.6.0",), driver="470.82.01", channel="conda-forge")
    assert isinstance(answer, Unsatisfiable) and answer.code == "driver-too-old"
    assert answer.message == ("conda-forge's pytorch 2.6.0 does not fit this machine: its cuda126 build needs driver "
                              "≥ 525.60.13 (CUDA 12.x by minor-version compatibility); this machine has 470.82.01")
    assert "install NVIDIA driver 525.60.13 or newer to use conda-forge's pytorch 2.6.0 cuda126" in answer.fixes
    assert "or use the CPU build: --spec 'torch==2.6.0+cpu'" in answer.fixes
    assert "--conda-source pip: torch==2.6.0+cu118 (cu118)" in answer.fixes


def test_no_cpu_build_for_the_platform(database):
    # conda-forge's pytorch 2.4.0 has no Windows builds at all; the pytorch channel has a CPU one
    answer = answer_for(database, ("torch==2.4.0",), driver=None, os_name="windows", channel="conda-forge")
    assert isinstance(answer, Unsatisfiable) and answer.code == "unsupported-platform"
    assert answer.message == "conda-forge's pytorch 2.4.0 does not fit this machine: its cpu build is not built for windows-x86_64"
    assert "--conda-source pytorch-channel: the pytorch channel's pytorch 2.4.0 cpu" in answer.fixes


def test_a_gpu_older_than_the_toolkit_can_target_gets_an_older_cuda_build(database):
    # conda-forge's 2.1.2 has cuda112, cuda118 and cuda120 builds; driver 535 runs all three, but CUDA 12 cannot
    # target a Kepler K80 (sm_37), so the newest build that can run is cuda118. The GPU check is fitness's, for
    # a build without an arch list: the oldest compute capability its CUDA toolkit targets.
    plan = plan_for(database, ("torch==2.1.2",), driver="535.104.05", python="3.10", gpu=("Tesla K80", None),
                    channel="conda-forge")
    environment = conda_environment(plan, database, "conda-forge")
    assert environment.dependencies[1:] == ("pytorch=2.1.2=cuda118*", "cuda-version>=11.8,<12")
    assert ("conda-forge's pytorch 2.1.2 cuda120 was passed over: conda-forge's pytorch 2.1.2 cuda120 was built with "
            "CUDA 12.0, which targets compute capability 5.0 and newer; Tesla K80 is 3.7") in plan.reasons
    assert ("unverified: conda-forge's pytorch builds: their GPU architecture lists are not in the database, so the "
            "compute capability was checked only against what the CUDA toolkit can target") in environment.warnings


def test_a_plan_renders_only_under_the_channel_it_was_solved_for(database):
    pip_plan = plan_for(database, ("torch==2.4.0",))
    with pytest.raises(CondaInputError, match="solved for pip builds, not conda-forge"):
        conda_environment(pip_plan, database, "conda-forge")
    forge_plan = plan_for(database, ("torch==2.4.0",), channel="conda-forge")
    assert conda_environment(forge_plan, database).strategy == "conda-forge"
    with pytest.raises(CondaInputError, match="solved for conda-forge builds, not pip"):
        conda_environment(forge_plan, database, "pip")


# ---------------------------------------------------------------- virtual packages


def _target(database, os_name="linux", driver="530.30.02", arch="x86_64"):
    facts = HostFacts(os=os_name, arch=arch, python=PythonInfo("3.12"),
                      driver=Driver(driver, None, "override") if driver else None,
                      gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", None),) if driver else ())
    return make_target(database, facts)


def test_virtual_packages_come_from_the_target(database):
    packages = virtual_packages(_target(database), GLIBC)
    assert [str(p) for p in packages] == ["__unix=0=0", "__linux=0=0", "__glibc=2.35=0", "__archspec=1=x86_64",
                                          "__cuda=12.1=0"]
    assert "__cuda" not in {p.name for p in virtual_packages(_target(database, driver=None), GLIBC)}
    windows = virtual_packages(_target(database, os_name="windows", driver="560.94"), None)
    assert [p.name for p in windows] == ["__win", "__archspec", "__cuda"]


def test_virtual_packages_refuse_to_guess(database):
    with pytest.raises(CondaInputError, match="glibc version is unknown"):
        virtual_packages(_target(database), None)
    with pytest.raises(CondaInputError, match="macOS version is unknown"):
        virtual_packages(_target(database, os_name="macos", driver=None, arch="arm64"), None)
    mac = virtual_packages(_target(database, os_name="macos", driver=None, arch="arm64"), None, macos_version="14.5")
    assert [str(p) for p in mac] == ["__unix=0=0", "__osx=14.5=0", "__archspec=1=arm64"]
    assert [p.name for p in virtual_packages(_target(database), Libc("musl", "1.2.4"))] == [
        "__unix", "__linux", "__archspec", "__cuda"]


def test_conda_overrides_replace_what_the_shell_carries():
    packages = (VirtualPackage("__glibc", "2.35"), VirtualPackage("__cuda", "12.1"))
    environment = override_environment({"PATH": "/bin", "CONDA_OVERRIDE_CUDA": "11.4", "CONDA_OVERRIDE_ARCHSPEC": "x"},
                                       packages)
    assert environment == {"PATH": "/bin", "CONDA_OVERRIDE_CUDA": "12.1", "CONDA_OVERRIDE_GLIBC": "2.35"}
    assert override_environment({"CONDA_OVERRIDE_CUDA": "12.4"}, ())["CONDA_OVERRIDE_CUDA"] == ""  # no driver


def test_conda_lock_spec_shape():
    packages = (VirtualPackage("__glibc", "2.17"), VirtualPackage("__archspec", "1", "x86_64"),
                VirtualPackage("__cuda", "12.4"))
    assert conda_lock_spec(packages, "linux-64") == {
        "subdirs": {"linux-64": {"packages": {"__glibc": "2.17", "__archspec": "1 x86_64", "__cuda": "12.4"}}}}


# ---------------------------------------------------------------- emitters


def test_environment_yml_for_conda_forge(database):
    plan = plan_for(database, ("torch==2.4.0",), channel="conda-forge")
    request = parse_request([], ["torch==2.4.0"], "minor", None, channel="conda-forge")
    environment = conda_environment(plan, database, "conda-forge")
    text = conda_env.render(environment, plan, request, "environment.yml", name="gpu")
    lines = text.splitlines()
    assert lines[0].startswith("# Generated by envpin") and lines[1].startswith("# Target: linux-x86_64")
    assert lines[2].startswith("# Regenerate: envpin solve --spec torch==2.4.0 ")
    assert lines[2].endswith(" --conda-source conda-forge --name gpu -o environment.yml")
    document = yaml.safe_load(text)
    assert document == {"name": "gpu", "channels": ["conda-forge"],
                        "dependencies": ["python=3.12", "pytorch=2.4.0=cuda120*", "cuda-version>=12.0,<13"]}


def test_virtual_packages_yml_reads_as_conda_lock_expects(database):
    packages = virtual_packages(_target(database), GLIBC)
    text = render_virtual_packages(packages, "linux-64", ["Generated by envpin (test)."])
    assert yaml.safe_load(text) == {"subdirs": {"linux-64": {"packages": {
        "__unix": "0", "__linux": "0", "__glibc": "2.35", "__archspec": "1 x86_64", "__cuda": "12.1"}}}}


# ---------------------------------------------------------------- environment files, lock text, tool commands


def test_environment_file_problems_are_collected():
    with pytest.raises(CondaInputError) as raised:
        parse_environment_yml("channels: [conda-forge, 3]\ndependencies:\n  - python=3.12\n  - 1.5\n  - {foo: 1}\n",
                              "env.yml")
    message = str(raised.value)
    assert message.startswith("env.yml: channels[1]: expected a non-empty string")
    assert "dependencies[1]: 1.5 is a number" in message and "dependencies[2]: expected a package spec" in message
    with pytest.raises(CondaInputError, match=r"env.yml line 3: malformed YAML"):
        parse_environment_yml("dependencies:\n  - [unclosed\n", "env.yml")
    parsed = parse_environment_yml("channels: [conda-forge]\ndependencies: [python=3.12, {pip: [requests]}]\n")
    assert parsed.dependencies == ("python=3.12",) and parsed.pip == ("requests",)


def test_lock_text():
    records = (
        LockedRecord("libzlib", "1.3.1", "h4ab18f5_1", "linux-64",
                     "file:///mirror/conda-forge/linux-64/libzlib-1.3.1-h4ab18f5_1.conda", "57d7", "aa",
                     ("libgcc-ng >=12",)),
        LockedRecord("_openmp_mutex", "4.5", "2_kmp_llvm", "linux-64",
                     "file:///mirror/conda-forge/linux-64/_openmp_mutex-4.5-2_kmp_llvm.tar.bz2", "562b", "84",
                     ("_libgcc_mutex 0.1 conda_forge", "llvm-openmp >=9.0.1", "python")),
    )
    moved = relocate(records, {"file:///mirror/conda-forge/": "https://conda.anaconda.org/conda-forge/"})
    assert moved[0].url == "https://conda.anaconda.org/conda-forge/linux-64/libzlib-1.3.1-h4ab18f5_1.conda"
    document = yaml.safe_load(conda_lock_yml(moved, "linux-64", ("conda-forge",), "abc", ["made by a test"]))
    assert document["metadata"]["platforms"] == ["linux-64"] and document["version"] == 1
    mutex = document["package"][0]
    assert mutex["name"] == "_openmp_mutex" and mutex["manager"] == "conda" and mutex["version"] == "4.5"
    assert mutex["dependencies"] == {"_libgcc_mutex": "0.1", "llvm-openmp": ">=9.0.1", "python": ""}
    assert mutex["hash"] == {"md5": "562b", "sha256": "84"}
    text = explicit(moved, "linux-64", ["made by a test"])
    assert text.splitlines()[1:4] == ["# platform: linux-64", "@EXPLICIT",
                                      "https://conda.anaconda.org/conda-forge/linux-64/libzlib-1.3.1-h4ab18f5_1.conda#57d7"]


def test_conda_tool_commands(tmp_path):
    env_file = tmp_path / "environment.yml"
    env_file.write_text("dependencies: [python]\n")
    lock = tmp_path / "conda-linux-64.lock"
    lock.write_text("# platform: linux-64\n@EXPLICIT\nhttps://x/y.conda#abc\n")
    prefix = tmp_path / "env"
    assert create_command("conda", "/opt/conda/bin/conda", env_file, prefix) == (
        "/opt/conda/bin/conda", "env", "create", "--prefix", str(prefix), "--file", str(env_file))
    assert create_command("micromamba", "mm", env_file, prefix) == (
        "mm", "create", "--yes", "--prefix", str(prefix), "--file", str(env_file))
    assert create_command("mamba", "mamba", lock, prefix) == (
        "mamba", "create", "--yes", "--prefix", str(prefix), "--file", str(lock))
    with pytest.raises(CondaInputError, match="expected one of conda, mamba, micromamba"):
        create_command("pip", "pip", env_file, prefix)
    user = {"CONDA_OVERRIDE_CUDA": "13.0", "CONDA_OVERRIDE_GLIBC": "2.17", "HOME": "/root"}
    step = Step("create", ("conda",), conda_target=(VirtualPackage("__cuda", "12.1"), VirtualPackage("__glibc", "2.35")))
    assert step_environment(user, step) == {"HOME": "/root", "CONDA_OVERRIDE_CUDA": "12.1",
                                            "CONDA_OVERRIDE_GLIBC": "2.35", "CONDA_ALWAYS_YES": "true"}
    no_driver = Step("create", ("conda",), conda_target=(VirtualPackage("__glibc", "2.35"),))
    assert step_environment(user, no_driver)["CONDA_OVERRIDE_CUDA"] == ""  # conda's "no CUDA driver"
    assert step_environment(user, Step("pip", ("python",))) is user  # not a conda step: untouched


def test_a_conda_target_takes_the_facts_a_solve_already_made(database, tmp_path):
    """install's conda backends solve, then make the conda target: from the solve's facts, not a second detection
    (here a facts file that is gone by then, so reading the spec again fails)."""
    spec = TargetSpec(facts_file=str(tmp_path / "gone.json"))
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), libc=Libc("glibc", "2.35"),
                      driver=Driver("550.54.15", "12.4", "nvidia-smi"), gpus=(Gpu(0, "NVIDIA GeForce RTX 4090", "8.9"),))
    found = conda_target(spec, database, facts)
    assert found.subdir == "linux-64"
    assert VirtualPackage("__glibc", "2.35") in found.virtual_packages
    with pytest.raises(EnvpinInputError):
        conda_target(spec, database)
