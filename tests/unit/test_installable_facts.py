"""Facts that decide whether a plan installs and imports, each checked against the live database.

Every test here names a fact found at a public source (cited in the database record it reads) that database
2026.11.29 got wrong, so each one fails on that data: the import-time CUDA check of a companion, a NumPy ABI
bound, WSL2's driver, Jetson. They name the releases they are about, so a refresh that adds newer ones leaves
them standing.
"""

from __future__ import annotations

import shutil

import pytest

from envpin.app.render import RenderOptions, render
from envpin.base.errors import EnvpinInputError
from envpin.check import check_text
from envpin.compat.drivers import minimum_driver
from envpin.compat.loader import validate_database
from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo
from envpin.resolver.builds import builds_of
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target
from tests.conftest import LIVE_DB_DIR


def _solve(database, frameworks=("torch",), specs=(), *, os="linux", arch="x86_64", python="3.12",
           driver="580.65.06", gpus=(("NVIDIA GeForce RTX 4090", None),), wsl=False) -> Plan | Unsatisfiable:
    facts = HostFacts(
        os=os,
        arch=arch,
        python=PythonInfo(python),
        driver=Driver(driver, None, "override") if driver else None,
        gpus=tuple(Gpu(i, name, cc) for i, (name, cc) in enumerate(gpus)),
        wsl=wsl,
    )
    return solve(database, make_target(database, facts), parse_request(list(frameworks), list(specs)))


def _plan(answer: Plan | Unsatisfiable) -> Plan:
    assert isinstance(answer, Plan), answer
    return answer


def _pins(plan: Plan) -> dict[str, str]:
    return {p.name: p.requirement for p in plan.packages}


# ---------------------------------------------------------------- WSL2 runs on the Windows driver


def test_wsl2_checks_the_windows_driver_minimum(live_database):
    """NVIDIA's CUDA 12.x minimum is 525.60.13 on Linux but 528.33 on Windows (CUDA toolkit release notes,
    Table 2/3); nvidia-smi under WSL2 prints the Windows driver, so 527.41 there cannot run a CUDA 12 build."""
    answer = _plan(_solve(live_database, driver="527.41", wsl=True, gpus=(("NVIDIA GeForce RTX 3090", None),)))
    torch = next(p for p in answer.packages if p.name == "torch")
    assert "+cu12" not in torch.version and "+cu13" not in torch.version, torch
    assert torch.version.endswith("+cu118"), torch  # CUDA 11.x minimum on Windows is 452.39
    native = _plan(_solve(live_database, driver="527.41", gpus=(("NVIDIA GeForce RTX 3090", None),)))
    assert next(p for p in native.packages if p.name == "torch").version.endswith("+cu126")


def test_wsl2_driver_cuda_comes_from_the_windows_table(live_database):
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"), driver=Driver("526.47", None, "smi"),
                      wsl=True)
    assert make_target(live_database, facts).driver_cuda == "11.8"
    assert make_target(live_database, HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"),
                                           driver=Driver("526.47", None, "smi"))).driver_cuda == "12.0"


# ---------------------------------------------------------------- NVIDIA's two Windows CUDA 12 figures

_WINDOWS_12_DOUBT = "NVIDIA's Table 2 (minor-version compatibility) has given the CUDA 12.x Windows minimum"


def test_the_windows_cuda_12_doubt_is_printed_only_where_it_decides(live_database):
    """NVIDIA's Table 2 has said 527.41 and 528.33 for CUDA 12.x on Windows; 528.33 is applied. A driver at or above
    528.33 passes under both readings, so its plan does not rest on the doubt and does not print it."""
    new = _plan(_solve(live_database, os="windows", python="3.12", driver="560.94"))
    assert next(p for p in new.packages if p.name == "torch").version.endswith("+cu126")
    assert not any(_WINDOWS_12_DOUBT in w for w in new.warnings), new.warnings
    disputed = _plan(_solve(live_database, os="windows", python="3.12", driver="528.02"))
    assert next(p for p in disputed.packages if p.name == "torch").version.endswith("+cu118")  # refused on 528.33
    requirement = minimum_driver(live_database, "12.6", "windows", "minor")
    assert requirement is not None and requirement.minimum == "528.33"
    assert _WINDOWS_12_DOUBT in str(requirement.provenance.unverified)
    assert [requirement.doubt_decides(d) for d in ("527.40", "527.41", "528.02", "528.33", "560.94", None)] == [
        False, True, True, False, False, True]


def test_a_build_of_an_x0_toolkit_runs_on_the_driver_that_toolkit_shipped_with(live_database):
    """Table 3's 11.0.2 GA row is 450.51.05 (Linux), below CUDA 11.x's minor-version minimum 450.80.02 (NVIDIA: 'CUDA
    11.0 was released with an earlier driver version'); TensorFlow 2.4's CUDA 11.0 build runs on it. Likewise a CUDA
    12.0 build on Windows needs 12.0 GA's 527.41, not 528.33."""
    answer = _plan(_solve(live_database, ("tensorflow",), ("tensorflow==2.4.4",), python="3.8", driver="450.51.06",
                          gpus=(("NVIDIA A100-SXM4-40GB", None),)))
    assert _pins(answer)["tensorflow"] == "tensorflow==2.4.4"
    assert any("CUDA 11.0 toolkit's driver" in reason for reason in answer.reasons), answer.reasons
    windows = minimum_driver(live_database, "12.0", "windows", "minor")
    assert windows is not None and windows.minimum == "527.41" and not windows.provenance.unverified
    assert minimum_driver(live_database, "12.1", "windows", "minor").minimum == "528.33"  # type: ignore[union-attr]
    # a CUDA 12 build whose minor is not known (doctor's "a CUDA 12 library") needs the major's minimum
    assert minimum_driver(live_database, "12", "windows", "minor").minimum == "528.33"  # type: ignore[union-attr]


# ---------------------------------------------------------------- CUDA 13.4 and 13.5: drivers known to run them


@pytest.mark.parametrize("driver, cuda", [
    ("610.43.02", "13.3"), ("615.71.09", "13.4"), ("616.92", "13.4"), ("620.70.06", "13.5"), ("625.11", "13.5")])
def test_a_driver_without_a_cuda_line_supports_what_nvidia_released_it_for(live_database, driver, cuda):
    """NVIDIA's manifest of driver 620.70.06 (2026-11-04) carries a forward-compatibility package for CUDA 13.5, so
    it runs 13.5; 615.71.09 came out on 13.4's GA day (paired with 13.4 by third parties). Without nvidia-smi's
    "CUDA Version" line these drivers were said to support CUDA 13.3 (database 2026.12.01)."""
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"), driver=Driver(driver, None, "smi"))
    assert make_target(live_database, facts).driver_cuda == cuda


def test_strict_policy_doubts_a_13_5_build_only_below_the_driver_made_for_13_5(live_database):
    """Table 3's 13.5 row was not read: under --driver-policy strict a 13.5 build is checked against R580 (its major's
    minimum), and the doubt that its own driver may be newer decides only for drivers below 620.70.06."""
    requirement = minimum_driver(live_database, "13.5", "linux", "strict")
    assert requirement is not None and requirement.minimum == "580"
    assert requirement.doubt_range == ("580", "620.70.06")
    assert [requirement.doubt_decides(d) for d in ("575.57.08", "595.45.04", "620.70.06", None)] == [
        False, True, False, True]
    assert "620.70.06" in str(requirement.provenance.unverified)
    # 13.4's supporting driver rests on third parties only: its doubt stays for every driver
    assert minimum_driver(live_database, "13.4", "linux", "strict").doubt_range is None  # type: ignore[union-attr]


# ---------------------------------------------------------------- companions: each build with its index, CUDA and check


def test_cu132_torch_gets_a_torchaudio_that_imports(live_database):
    """torchaudio 2.11.0 (the PyPI wheel is CUDA 13.0) raises RuntimeError at import unless torch's CUDA major.minor
    is 13.0, and the cu132 index has no torchaudio 2.11; 2.11.1 (PyPI, CUDA 13.2) checks the major only
    (pytorch/audio#4226) and declares torch>=2.11."""
    for torch in ("2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1"):
        plan = _plan(_solve(live_database, specs=(f"torch=={torch}+cu132",)))
        pins = _pins(plan)
        assert pins["torch"] == f"torch=={torch}+cu132"
        assert pins["torchaudio"] == "torchaudio==2.11.1", (torch, pins)
        audio = next(p for p in plan.packages if p.name == "torchaudio")
        assert audio.index_url is None  # PyPI: the cu132 index has no such wheel


def test_cu130_and_cu126_torch_keep_the_torchaudio_of_their_own_cuda(live_database):
    pypi = _pins(_plan(_solve(live_database, specs=("torch==2.13.0+cu130",))))
    assert pypi["torch"] == "torch==2.13.0" and pypi["torchaudio"] == "torchaudio==2.11.0"  # both CUDA 13.0
    cu126 = _plan(_solve(live_database, specs=("torch==2.13.0+cu126",)))
    audio = next(p for p in cu126.packages if p.name == "torchaudio")
    assert audio.requirement == "torchaudio==2.11.0+cu126" and str(audio.index_url).endswith("/cu126")


def test_no_companion_is_printed_that_no_index_serves(live_database):
    """Windows has no CUDA 13.2 torchaudio at all (PyPI's 2.11.1 Windows wheel is a CPU build): left out, said."""
    plan = _plan(_solve(live_database, specs=("torch==2.13.0+cu132",), os="windows", driver="581.80"))
    assert "torchaudio" not in _pins(plan)
    assert any("no torchaudio build" in reason and "left out" in reason for reason in plan.reasons)


def test_every_paired_companion_build_imports_beside_its_torch(live_database):
    """The invariant the resolver keeps: a pip torch build's companions are served where that torch comes from and
    pass their recorded import check against its CUDA."""
    for build in builds_of(live_database, "torch"):
        release, variant = build.torch_record
        for name, pairing in build.companions.items():
            for platform in pairing.platforms:
                from_pypi = platform.startswith("macos") or release.pypi.get(platform) == variant.name
                for paired in pairing.builds[platform]:
                    assert paired.imports_beside(variant), (build.label, name, paired)
                    assert paired.index in (("pypi",) if from_pypi else (variant.name, "pypi")), (build.label, paired)


def test_a_companion_build_the_release_excludes_is_a_schema_error(tmp_path):
    db_copy = tmp_path / "db"
    shutil.copytree(LIVE_DB_DIR, db_copy)
    path = db_copy / "torch.yaml"
    text = path.read_text(encoding="utf-8")
    bad = text.replace('cuda_check: major, torch: ">=2.11", sources: [pypi-torchaudio-2.11.1-wheels, audio-pr-4226]}',
                       'cuda_check: sometimes, torch: ">=2.16", sources: [pypi-torchaudio-2.11.1-wheels, audio-pr-4226]}', 1)
    assert bad != text
    path.write_text(bad, encoding="utf-8")
    problems = validate_database(db_copy)
    assert any("'sometimes' is not one of none, major, minor" in p for p in problems), problems
    assert any("torch>=2.16 excludes torch 2.12.0" in p for p in problems), problems


# ---------------------------------------------------------------- NumPy 1.x ABI


def _numpy(plan: Plan) -> str | None:
    return next((p.requirement for p in plan.packages if p.name == "numpy"), None)


def test_builds_compiled_against_numpy_below_2_pin_numpy_below_2(live_database):
    """torch <= 2.2 and TensorFlow <= 2.17 wheels were compiled against NumPy 1.x (torch's libraries name only
    numpy.core._multiarray_umath; TF 2.18's notes: 'compiled with NumPy 2.0 by default'), and the metadata of
    torch (no numpy requirement) and of TensorFlow 2.10.1 (numpy>=1.20) lets pip take NumPy 2."""
    intel_mac = _plan(_solve(live_database, os="macos", arch="x86_64", python="3.11", driver=None, gpus=()))
    assert _pins(intel_mac)["torch"] == "torch==2.2.2" and _numpy(intel_mac) == "numpy<2"
    windows_tf = _plan(_solve(live_database, ("tensorflow",), os="windows", python="3.10", driver="537.13",
                              gpus=(("NVIDIA GeForce RTX 3090", None),)))
    assert _pins(windows_tf)["tensorflow"] == "tensorflow==2.10.1" and _numpy(windows_tf) == "numpy<2"
    old_jax = _plan(_solve(live_database, ("jax",), ("jax==0.4.25",), driver=None, gpus=()))
    assert _numpy(old_jax) == "numpy<2"


def test_numpy2_builds_and_capped_metadata_get_no_bound(live_database):
    assert _numpy(_plan(_solve(live_database, specs=("torch==2.3.0",), driver=None, gpus=()))) is None
    assert _numpy(_plan(_solve(live_database, ("jax",), ("jax==0.4.26",), driver=None, gpus=()))) is None
    # Windows wheels of 2.3.0-2.4.0 were still built against NumPy 1.x (pytorch/pytorch#131668); 2.4.1 is not
    assert _numpy(_plan(_solve(live_database, specs=("torch==2.4.0",), os="windows", driver=None, gpus=()))) == "numpy<2"
    assert _numpy(_plan(_solve(live_database, specs=("torch==2.4.1",), os="windows", driver=None, gpus=()))) is None
    # TensorFlow 2.15's own metadata says numpy<2.0.0: nothing to add
    assert _numpy(_plan(_solve(live_database, ("tensorflow",), ("tensorflow==2.15.1",), python="3.11", driver=None,
                               gpus=()))) is None


def test_every_output_format_carries_the_numpy_bound(live_database):
    plan = _plan(_solve(live_database, os="macos", arch="x86_64", python="3.11", driver=None, gpus=()))
    request = parse_request(["torch"], [])  # the Intel Mac's newest torch is 2.2.2, whatever a refresh adds
    for fmt in ("requirements.txt", "environment.yml", "pip", "uv", "json", "text"):
        assert "numpy<2" in render(plan, request, RenderOptions(format=fmt), live_database), fmt


# ---------------------------------------------------------------- Jetson (Tegra)


def test_jax_on_a_jetson_orin_is_refused_and_told_what_works(live_database):
    """JAX's aarch64 CUDA plugin has no sm_87 code and Tegra runs no other cubin (jax-ml/jax#40487, #40492): before,
    an Orin got jax[cuda12] because 'every GPU qualifies' under JAX's stated minimum."""
    answer = _solve(live_database, ("jax",), os="linux", arch="aarch64", python="3.10", driver="540.4.0",
                    gpus=(("Orin (nvgpu)", "8.7"),))
    assert isinstance(answer, Unsatisfiable) and answer.code == "gpu-unsupported", answer
    assert "do not run on Jetson (Tegra) GPUs" in answer.message
    assert any("--driver none" in fix for fix in answer.fixes)


def test_tensorflow_on_a_jetson_names_nvidias_jetson_builds(live_database):
    plan = _plan(_solve(live_database, ("tensorflow",), os="linux", arch="aarch64", python="3.10", driver="540.4.0",
                        gpus=(("Jetson AGX Orin", None),)))
    assert plan.accelerator == "cpu"
    assert any(r.startswith("on Jetson:") and "developer.download.nvidia.com/compute/redist/jp" in r
               for r in plan.reasons), plan.reasons


def test_the_same_jax_runs_on_a_server_arm_gpu(live_database):
    plan = _plan(_solve(live_database, ("jax",), os="linux", arch="aarch64", python="3.12", driver="580.65.06",
                        gpus=(("NVIDIA GH200 480GB", None),)))
    assert plan.accelerator.startswith("cu")


# ---------------------------------------------------------------- arch lists, each with how it was read


def _archs(database, version: str, variant: str, platform: str):
    release = database.torch_release(version)
    return release.variants[variant].archs[platform]


def test_torch_2_7_cu128_lists(live_database):
    """2.7's build_cuda.sh gives 12.8 '7.5;8.0;8.6;9.0;10.0;12.0+PTX' (PTX in a release build), its cuda128.bat
    '5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0;10.0;12.0'; 2.8's cuda126.bat starts at 6.1, 2.9's again at 5.0 with 6.1."""
    for version in ("2.7.0", "2.7.1"):
        linux = _archs(live_database, version, "cu128", "linux-x86_64")
        assert [str(c) for c in linux.sass] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
        assert [str(c) for c in linux.ptx] == ["12.0"]
        windows = _archs(live_database, version, "cu128", "windows-x86_64")
        assert [str(c) for c in windows.sass][:4] == ["5.0", "6.0", "6.1", "7.0"] and not windows.ptx
    assert [str(c) for c in _archs(live_database, "2.8.0", "cu126", "windows-x86_64").sass][0] == "6.1"
    for version in ("2.9.0", "2.11.0", "2.14.1"):
        assert "6.1" in [str(c) for c in _archs(live_database, version, "cu126", "windows-x86_64").sass], version


def test_a_gtx_1080_ti_on_windows_gets_2_7s_cu128_build(live_database):
    plan = _plan(_solve(live_database, specs=("torch==2.7.*",), os="windows", driver="576.02",
                        gpus=(("NVIDIA GeForce GTX 1080 Ti", None),)))
    assert _pins(plan)["torch"] == "torch==2.7.1+cu128"


def test_every_arch_list_says_how_it_was_read(live_database):
    for name, archs in live_database.arch_sets.items():
        assert archs.read_from, name


# ---------------------------------------------------------------- GPU names as nvidia-smi prints them


def test_gpu_names_nvidia_smi_cuts_short_or_suffixes(live_database):
    def capability(name: str) -> str:
        facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"), driver=Driver("580.65.06", None, "smi"),
                          gpus=(Gpu(0, name, None),))
        return str(make_target(live_database, facts).gpus[0].compute_capability)

    assert capability("NVIDIA GeForce RTX 4090 Lap...") == "8.9"  # every name that starts so is 8.9
    assert capability("Orin (nvgpu)") == "8.7"  # JetPack 6's nvidia-smi
    assert capability("NVIDIA Thor") == "11.0"
    assert capability("NVIDIA GeForce RTX 40...") == "8.9"
    for cut in ("NVIDIA GeForce ...", "NVIDIA GeForce GTX 1..."):  # nothing left; GTX 1080 is 6.1, GTX 1650 7.5
        with pytest.raises(EnvpinInputError, match="cut short by nvidia-smi's table.*--compute-capability"):
            capability(cut)


def test_cuda_13_4_and_13_5_are_known_toolkits(live_database):
    for version in ("13.4", "13.5"):
        toolkit = live_database.toolkits[version]
        assert "10.7" in [str(c) for c in toolkit.targets]
        assert toolkit.driver_linux is None  # NVIDIA's Table 3 row was not found: not guessed
        assert set(toolkit.driver_not_read) == {"linux", "windows"}  # ... and the database says it lacks it


def test_a_toolkit_driver_the_database_lacks_is_not_called_absent(live_database):
    """NVIDIA prints N/A for the Windows driver of CUDA 13.0-13.3 (so Table 2's R580 is NVIDIA's answer there), but
    the 13.4/13.5 rows were not read: under the strict policy the R580 floor is only a lower bound, and the answer
    says so as a doubt instead of claiming NVIDIA gives no driver (database 2026.11.29 claimed that)."""
    for os_name in ("linux", "windows"):
        requirement = minimum_driver(live_database, "13.4", os_name, "strict")
        assert requirement is not None and requirement.minimum == "580"
        assert "not in the database" in requirement.rule
        assert "may be newer" in (requirement.provenance.unverified or "")
        assert "NVIDIA gives no" not in (requirement.provenance.unverified or "")
    windows_13_3 = minimum_driver(live_database, "13.3", "windows", "strict")
    assert windows_13_3 is not None and "NVIDIA gives no windows driver" in (windows_13_3.provenance.unverified or "")
    minor = minimum_driver(live_database, "13.4", "linux", "minor")
    assert minor is not None and minor.provenance.unverified is None  # Table 2's R580: read at NVIDIA


def test_gpu_names_seen_since_the_table_was_written(live_database):
    def capability(name: str) -> str:
        facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"), driver=Driver("580.65.06", None, "smi"),
                          gpus=(Gpu(0, name, None),))
        return str(make_target(live_database, facts).gpus[0].compute_capability)

    assert capability("NVIDIA B300 SXM6 AC") == "10.3"  # torch.cuda.get_device_name() on a B300
    assert capability("NVIDIA RTX PRO 2000 Blackwell Generation Laptop GPU") == "12.0"
    assert capability("NVIDIA RTX PRO 5000 Blackwell Generation Laptop GPU") == "12.0"


# ---------------------------------------------------------------- doubts only where they decide, once, grouped


def _doubts(plan: Plan) -> list[str]:
    return [w for w in plan.warnings if w.startswith("unverified: ")]


def test_plans_from_read_wheels_print_no_doubt(live_database):
    """torch 2.15.0's PyPI wheels were read (Windows/macOS CPU, Linux cu132): a plan that takes them rests on no
    unverified fact, so it prints none (database 2026.11.29 printed two lines on every CPU solve)."""
    for os, arch in (("macos", "arm64"), ("windows", "x86_64")):
        plan = _plan(_solve(live_database, specs=("torch==2.15.0",), os=os, arch=arch, driver=None, gpus=()))
        assert _doubts(plan) == [], os
    assert _doubts(_plan(_solve(live_database, specs=("torch==2.15.0",)))) == []  # RTX 4090 on R580: PyPI's cu132


def test_a_doubt_that_decides_the_plan_is_said_once_under_one_heading(live_database):
    plan = _plan(_solve(live_database, specs=("torch==2.15.0",), driver=None, gpus=()))  # the cpu index's, not read
    [doubt] = _doubts(plan)
    assert "download.pytorch.org/whl/cpu" in doubt
    text = render(plan, parse_request(["torch"], []), RenderOptions(format="text"), live_database)
    assert text.count("not confirmed at a primary source, and this plan rests on it:") == 1
    assert "unverified: " not in text


def test_the_cuda_12_minimum_doubts_only_the_windows_figure(live_database):
    """NVIDIA's cuDNN support matrix gives >=525.60.13 on Linux for every CUDA 12.x build (read): a Linux CUDA 12 plan
    rests on no doubt about it. On Windows and WSL2 the doubt (527.41 or 528.33) is the plan's only where the driver
    lies between the two; 560.94 passes under both (database 2026.11.29 printed it on every CUDA 12 plan, Linux
    included, and 2026.12.01 on every Windows one)."""
    def minimum_doubts(plan: Plan) -> list[str]:
        return [d for d in _doubts(plan) if "528.33" in d]

    linux = _plan(_solve(live_database, specs=("torch==2.14.1+cu126",), driver="535.104.05"))
    assert minimum_doubts(linux) == []
    for wsl in (False, True):
        plan = _plan(_solve(live_database, specs=("torch==2.14.1+cu126",), os="linux" if wsl else "windows",
                            driver="560.94", wsl=wsl))
        assert minimum_doubts(plan) == [], wsl


# ---------------------------------------------------------------- bounds beside a build (jax[cuda12] and cuDNN 9)


def test_jax_cuda12_0_4_25_plans_keep_cudnn_8(live_database):
    """jax[cuda12] 0.4.23-0.4.25 ask for nvidia-cudnn-cu12>=8.9 with no cap, so pip takes cuDNN 9, while their
    plugin's XLA refuses a cuDNN of another major than it was built with (its error text, read in the three
    xla_cuda_plugin.so files): the plan adds nvidia-cudnn-cu12<9, and `check` asks for it (database 2026.11.29
    printed jax[cuda12]==0.4.25 alone)."""
    for version in ("0.4.23", "0.4.24", "0.4.25"):
        plan = _plan(_solve(live_database, frameworks=("jax",), specs=(f"jax=={version}",), python="3.11",
                            driver="550.54.15", gpus=(("NVIDIA GeForce RTX 3090", None),)))
        assert _pins(plan).get("nvidia-cudnn-cu12") == "nvidia-cudnn-cu12<9", version
    newer = _plan(_solve(live_database, frameworks=("jax",), specs=("jax==0.4.26",), python="3.11",
                         driver="550.54.15", gpus=(("NVIDIA GeForce RTX 3090", None),)))
    assert "nvidia-cudnn-cu12" not in _pins(newer)


def test_check_asks_for_the_bound_a_plan_adds(live_database):
    def found(text: str) -> list[tuple[str, str]]:
        report = check_text("requirements.txt", text, load_database=lambda: live_database, targets=[])
        return [(p.id, p.severity) for p in report.problems if p.id == "CHK-PLAN-BOUND"]

    assert found("jax[cuda12]==0.4.25\nnumpy<2\n") == [("CHK-PLAN-BOUND", "warning")]
    assert found("jax[cuda12]==0.4.25\nnumpy<2\nnvidia-cudnn-cu12==9.1.0.70\n") == [("CHK-PLAN-BOUND", "error")]
    assert found("jax[cuda12]==0.4.25\nnumpy<2\nnvidia-cudnn-cu12<9\n") == []
    assert found("jax[cuda12]==0.4.25\nnumpy<2\nnvidia-cudnn-cu12>=8.9,<9.0\n") == []
    assert found("jax[cuda12]==0.4.26\n") == []


# ---------------------------------------------------------------- arch lists read in each release's own code

# PYTORCH_RELEASES_CODE_CC in torch/cuda/__init__.py of each release's PyPI wheel (torch-<v>-cp312-cp312-
# manylinux_2_28_x86_64.whl, read with scripts/wheel_member.py on 2026-12-01): the TORCH_CUDA_ARCH_LIST of the
# release's build scripts per CUDA and host arch (2.12 gives x86_64 and aarch64 together, as their union)
_RELEASE_TABLES = {
    "2.12.0": {"cu126": {"union": {50, 60, 70, 75, 80, 86, 90}}},
    "2.12.1": {"cu126": {"union": {50, 60, 70, 75, 80, 86, 90}}},
    "2.13.0": {"cu126": {"linux-x86_64": {50, 60, 70, 75, 80, 86, 90}, "linux-aarch64": {80, 90}},
               "cu129": {"linux-x86_64": {75, 80, 86, 90, 100, 120}}},
    "2.14.0": {"cu126": {"linux-x86_64": {50, 60, 70, 75, 80, 86, 90}, "linux-aarch64": {80, 90}}},
    "2.14.1": {"cu126": {"linux-x86_64": {50, 60, 70, 75, 80, 86, 90}, "linux-aarch64": {80, 90}}},
}


@pytest.mark.parametrize("version", sorted(_RELEASE_TABLES))
def test_index_only_linux_arch_lists_are_the_releases_own(live_database, version):
    """The cu126 builds of 2.12.0-2.14.1 and the cu129 build of 2.13.0 are served only by download.pytorch.org; their
    Linux arch lists are read in the release's own table, so a plan on them prints no doubt about it (database
    2026.12.01 took them from the 2.14.1 wheel's table and said so on 122 default plans)."""
    release = live_database.torch_release(version)
    for name, table in _RELEASE_TABLES[version].items():
        variant = release.variants[name]
        assert variant.provenance.unverified is None, (version, name)
        lists = {platform: {c.major * 10 + c.minor for c in variant.archs[platform].sass}
                 for platform in ("linux-x86_64", "linux-aarch64") if platform in variant.archs}
        if "union" in table:
            assert set().union(*lists.values()) == table["union"], (version, name, lists)
        else:
            assert lists == table, (version, name, lists)
