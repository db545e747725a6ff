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


def test_gpu_unsupported_names_gpu_and_offers_the_nearest_release_first(database):
    # torch==2.6.* on an RTX 5090: 2.7.0+cu128 is the first release with sm_120, the least change to the request;
    # the newest that runs comes after it
    answer = run_case(database, Case("g", "", "", driver="570.124.06", gpus=(RTX5090,), specs=("torch==2.6.*",)))
    assert isinstance(answer, Unsatisfiable)
    assert "sm_120" in answer.message and "RTX 5090" in answer.message
    assert answer.fixes[0].startswith("torch==2.7.0+cu128 (cu128) is the release nearest to torch==2.6.*")
    assert "--spec 'torch==2.7.0'" in answer.fixes[0]
    assert "torch==2.13.0+cu129" in answer.fixes[1] and "newest that runs" in answer.fixes[1]


def test_a_pinned_build_the_driver_cannot_run_is_offered_the_same_release_in_another_build(database):
    # torch==2.5.1+cu124 on driver 520 (CUDA 11.8): installing a newer driver keeps the request whole, then the
    # same release's cu118 build changes only the build; other releases come after
    answer = run_case(database, Case("b", "", "", driver="520.61.05", specs=("torch==2.5.1+cu124",)))
    assert isinstance(answer, Unsatisfiable)
    assert answer.fixes[0] == "install NVIDIA driver 525.60.13 or newer to use torch 2.5.1+cu124"
    assert answer.fixes[1] == ("torch==2.5.1+cu118 (cu118): the same release, in a build that runs on this machine "
                               "(--spec 'torch==2.5.1+cu118')")
    assert not any("nearest" in fix for fix in answer.fixes)  # nothing is nearer than the same release
    assert "2.7.1+cu118" in answer.fixes[2] and "newest" in answer.fixes[2]


def test_no_fix_list_starts_with_an_alternative(database):
    # a Kepler GPU (sm_30): no CUDA build has code for it, the CPU build is the only fix, and it is not "or …"
    answer = run_case(database, Case("k", "", "", driver="470.82.01", gpus=("NVIDIA GeForce GTX 680",)))
    assert isinstance(answer, Unsatisfiable)
    assert answer.fixes == ("use the CPU build: --spec 'torch==2.7.1+cpu'",)


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
