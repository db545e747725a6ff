"""What a user reads in an answer: companions, reasons, fixes and warnings."""

from envpin.resolver.plan import Plan, Unsatisfiable
from tests.unit.test_solve_torch import GTX1080TI, RTX3090, RTX5090, Case, run_case


def test_torch_2_5_1_pairs_with_torchvision_0_20_1_and_torchaudio_2_5_1(database):
    plan = run_case(database, Case("pair", "", "", specs=("torch==2.5.1+cu121",)))
    assert isinstance(plan, Plan)
    pins = {p.name: p.version for p in plan.packages}
    assert pins == {"torch": "2.5.1+cu121", "torchvision": "0.20.1+cu121", "torchaudio": "2.5.1+cu121"}
    assert {p.index_url for p in plan.packages} == {"https://download.pytorch.org/whl/cu121"}


def test_reasons_name_driver_rule_and_gpu_coverage(database):
    plan = run_case(database, Case("r", "", ""))
    assert isinstance(plan, Plan)
    text = "\n".join(plan.reasons)
    assert "minor-version compatibility" in text and "525.60.13" in text
    assert "sm_86" in text and "cubin" in text
    assert "torch 2.15.0 was passed over" in text and "580" in text


def test_windows_answer_says_pypi_is_cpu_only(database):
    plan = run_case(database, Case("w", "", "", os="windows", driver="560.94"))
    assert isinstance(plan, Plan)
    assert any("CPU-only" in reason for reason in plan.reasons)
    assert plan.index_url is not None and plan.index_url.startswith("https://download.pytorch.org/whl/cu")


def test_gpu_unsupported_names_gpu_and_offers_newest_working_release(database):
    answer = run_case(database, Case("g", "", "", driver="570.124.06", gpus=(RTX5090,), specs=("torch==2.6.*",)))
    assert isinstance(answer, Unsatisfiable)
    assert "sm_120" in answer.message and "RTX 5090" in answer.message
    assert any("torch==2.13.0+cu129" in fix and "newest that runs" in fix for fix in answer.fixes)


def test_driver_too_old_names_the_driver_to_install(database):
    answer = run_case(database, Case("d", "", "", driver="418.39"))
    assert isinstance(answer, Unsatisfiable)
    assert "418.39" in answer.message
    assert any(fix.startswith("install NVIDIA driver") for fix in answer.fixes)


def test_old_driver_for_a_new_release_names_the_driver(database):
    answer = run_case(database, Case("d2", "", "", driver="535.104.05", specs=("torch==2.15.0",)))
    assert isinstance(answer, Unsatisfiable)
    assert answer.code == "driver-too-old"
    assert any("install NVIDIA driver 580" in fix for fix in answer.fixes)


def test_python_unsupported_names_the_python_to_use(database):
    answer = run_case(database, Case("p", "", "", python="3.8", specs=("torch==2.5.1",)))
    assert isinstance(answer, Unsatisfiable)
    assert any("use Python 3.9" in fix for fix in answer.fixes)


def test_several_gpus_are_all_checked(database):
    answer = run_case(database, Case("m", "", "", driver="575.57.08", gpus=(RTX5090, GTX1080TI)))
    assert isinstance(answer, Unsatisfiable)
    assert "GTX 1080 Ti" in answer.message or "RTX 5090" in answer.message


def test_no_driver_says_cpu_build_and_why(database):
    plan = run_case(database, Case("c", "", "", driver=None, gpus=()))
    assert isinstance(plan, Plan)
    assert plan.accelerator == "cpu"
    assert any("no NVIDIA driver" in reason for reason in plan.reasons)


def test_answers_are_deterministic(database):
    first = run_case(database, Case("x", "", "", gpus=(RTX3090, GTX1080TI)))
    second = run_case(database, Case("x", "", "", gpus=(RTX3090, GTX1080TI)))
    assert first == second
