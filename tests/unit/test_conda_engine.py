"""One decision engine for pip wheels and conda builds (issue 15).

The same machines solved with `--conda-source pip`, `conda-forge` and `pytorch-channel`: every answer comes
from the same resolvelib provider and the same fitness checks (`envpin.resolver.fitness.assess`), only the
builds differ. Where pip and a conda channel disagree in kind (a GPU build against a CPU build or no answer),
the table names the fitness check that decided it, and the test recomputes that from the builds of each side:
the losing side's builds are rejected by that check, and the winning side's build passed the same check, either
on the facts (`checked`) or without them (`unchecked`: conda.yaml has no Pythons and no GPU architecture lists,
which the answer's warnings say). The one reason that is no fitness check is `release`: the channel lacks the
release asked for, which the answer says in its own words.
"""

from __future__ import annotations

import pytest

from envpin.base.record import Record, record
from envpin.facts.host import Driver, Gpu, HostFacts, Libc, PythonInfo
from envpin.resolver.explain import CODES
from envpin.resolver.fitness import CHECKS, assess
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.queries import make_provider
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target

RTX3090, RTX4090, RTX5090 = "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 5090"
K80, GH200, RTX2080 = "Tesla K80", "NVIDIA GH200 480GB", "NVIDIA GeForce RTX 2080"
CHANNELS = ("pip", "conda-forge", "pytorch-channel")


@record
class Row(Record):
    id: str
    os: str
    arch: str
    driver: str | None
    gpu: str | None
    python: str
    spec: str
    answers: tuple[str, str, str]  # pip, conda-forge, pytorch-channel: the accelerator, or "none (error code)"
    # channel -> (the check that decided the difference from pip, how the better side passed it)
    why: tuple[tuple[str, str, str], ...] = ()
    policy: str = "minor"


ROWS = [
    Row("rtx3090-550", "linux", "x86_64", "550.54.15", RTX3090, "3.12", "torch==2.4.1", ("cu124", "cu120", "cu124")),
    Row("no-driver", "linux", "x86_64", None, None, "3.12", "torch==2.4.1", ("cpu", "cpu", "cpu")),
    # sm_37: the cu118 wheels have it, CUDA 11.8 can target it (conda-forge), the channel is checked with the wheel's list
    Row("k80-470", "linux", "x86_64", "470.82.01", K80, "3.10", "torch==2.5.1", ("cu118", "cu118", "cu118")),
    # CUDA 12 cannot target sm_37: conda-forge and the channel step down to their CUDA 11.8 builds, as pip does
    Row("k80-535", "linux", "x86_64", "535.104.05", K80, "3.10", "torch==2.1.2", ("cu118", "cu118", "cu118")),
    # conda-forge built 2.6.0 with CUDA 12.6 only; R470 is CUDA 11.4; the pytorch channel ended with 2.5.1
    Row("rtx3090-470", "linux", "x86_64", "470.82.01", RTX3090, "3.12", "torch==2.6.0",
        ("cu118", "none (driver-too-old)", "none (no-matching-release)"),
        why=(("conda-forge", "driver", "checked"), ("pytorch-channel", "release", "-"))),
    # conda-forge's 2.4.0 has no Windows builds
    Row("windows-4090", "windows", "x86_64", "560.94", RTX4090, "3.12", "torch==2.4.0",
        ("cu124", "none (no-gpu-build)", "cu124"), why=(("conda-forge", "platform", "checked"),)),
    Row("windows-no-driver", "windows", "x86_64", None, None, "3.12", "torch==2.4.0",
        ("cpu", "none (unsupported-platform)", "cpu"), why=(("conda-forge", "platform", "checked"),)),
    Row("macos-arm64", "macos", "arm64", None, None, "3.12", "torch==2.5.1",
        ("mps", "mps", "none (unsupported-platform)"), why=(("pytorch-channel", "platform", "checked"),)),
    # torch 2.4.1 has no cp313 wheels; conda.yaml does not say which Pythons the conda builds have
    Row("python-3.13", "linux", "x86_64", "550.54.15", RTX3090, "3.13", "torch==2.4.1",
        ("none (python-unsupported)", "cu120", "cu124"),
        why=(("conda-forge", "python", "unchecked"), ("pytorch-channel", "python", "unchecked"))),
    Row("gh200-aarch64", "linux", "aarch64", "550.54.15", GH200, "3.12", "torch==2.4.1",
        ("cu124", "cu120", "none (unsupported-platform)"), why=(("pytorch-channel", "platform", "checked"),)),
    # sm_120 is in no 2.6 wheel; conda-forge's arch lists are not in the database, only CUDA 12.6's oldest target
    Row("rtx5090-2.6", "linux", "x86_64", "570.124.06", RTX5090, "3.12", "torch==2.6.0",
        ("none (gpu-unsupported)", "cu126", "none (no-matching-release)"),
        why=(("conda-forge", "gpu", "unchecked"),)),
    Row("tensorflow", "linux", "x86_64", "550.54.15", RTX3090, "3.11", "tensorflow==2.17.0",
        ("cu123", "cu120", "none (no-matching-release)"), why=(("pytorch-channel", "release", "-"),)),
    Row("jax", "linux", "x86_64", "550.54.15", RTX3090, "3.12", "jax==0.4.31",
        ("cu12", "cu120", "none (no-matching-release)"), why=(("pytorch-channel", "release", "-"),)),
    Row("rtx2080-418", "linux", "x86_64", "418.87.01", RTX2080, "3.12", "torch==2.4.0",
        ("none (driver-too-old)", "none (driver-too-old)", "none (driver-too-old)")),
    Row("not-on-conda-forge", "linux", "x86_64", "550.54.15", RTX3090, "3.11", "torch==2.2.1",
        ("cu121", "none (no-matching-release)", "cu121"), why=(("conda-forge", "release", "-"),)),
    # strict: the driver's own CUDA 12.1; conda-forge's 12.0 build, the channel's 12.1
    Row("strict-530", "linux", "x86_64", "530.30.02", RTX3090, "3.12", "torch==2.5.1", ("cu121", "cu120", "cu121"),
        policy="strict"),
]

RANK = {"none": 0, "cpu": 1, "cuda": 2}


def _target(database, row: Row):
    facts = HostFacts(os=row.os, arch=row.arch, python=PythonInfo(row.python),
                      driver=Driver(row.driver, None, "override") if row.driver else None,
                      gpus=(Gpu(0, row.gpu, None),) if row.gpu else (),
                      libc=Libc("glibc", "2.35") if row.os == "linux" else None)
    return make_target(database, facts)


def _shown(answer: Plan | Unsatisfiable) -> str:
    return f"none ({answer.code})" if isinstance(answer, Unsatisfiable) else answer.accelerator


def _kind(answer: Plan | Unsatisfiable) -> str:
    if isinstance(answer, Unsatisfiable):
        return "none"
    return "cuda" if any(b.kind == "cuda" for b in answer.builds.values()) else "cpu"


def _why_not(database, target, request, kind: str) -> set[str]:
    """The fitness checks that rejected every build of `kind` of the release asked for on the request's channel
    ({"release"} when the channel has no such build of it)."""
    provider = make_provider(database, target, request)
    framework = request.solved_frameworks[0]
    spec = request.specifiers[framework]
    builds = [b for b in provider.builds(framework) if b.kind == kind and spec.contains(str(b.version))]
    if not builds:
        return {"release"}
    verdicts = [assess(database, target, b, policy=request.policy, allowed_kinds=frozenset({kind})) for b in builds]
    return {v.rejection.check if v.rejection else "fits" for v in verdicts}


def _codes(checks: set[str]) -> set[str]:
    codes = {CODES[c] for c in checks if c in CODES}
    if "platform" in checks:
        codes.add("no-gpu-build")  # no build of the GPU kind for the platform
    if "driver" in checks:
        codes.add("no-driver")
    if "release" in checks:
        codes.add("no-matching-release")
    return codes


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_pip_and_conda_channels_differ_only_by_fitness_checks(database, row):
    target = _target(database, row)
    requests = {c: parse_request([], [row.spec], row.policy, None, channel=c) for c in CHANNELS}
    answers = {c: solve(database, target, requests[c]) for c in CHANNELS}
    assert tuple(_shown(answers[c]) for c in CHANNELS) == row.answers

    found = []
    for channel in CHANNELS[1:]:
        pip, conda = answers["pip"], answers[channel]
        if _kind(pip) == _kind(conda):
            continue
        better, worse = (pip, conda) if RANK[_kind(pip)] > RANK[_kind(conda)] else (conda, pip)
        worse_request = requests["pip" if worse is pip else channel]
        kind = _kind(better)
        checks = _why_not(database, target, worse_request, kind)
        assert len(checks) == 1 and checks <= set(CHECKS) | {"release"}, checks
        (check,) = checks
        if isinstance(worse, Unsatisfiable):
            assert worse.code in _codes(checks), (worse.code, checks)
        how = "-"
        if check in CHECKS:
            assert isinstance(better, Plan)
            (build,) = [b for b in better.builds.values() if b.kind == kind]
            verdict = assess(database, target, build, policy=row.policy, allowed_kinds=frozenset({kind}))
            assert verdict.fits
            how = "unchecked" if check in verdict.unchecked else "checked"
            if how == "unchecked":  # said, not hidden: the answer warns that the check had no facts
                assert any(text in better.warnings for text in (f"unverified: {u}" for u in verdict.unverified))
        found.append((channel, check, how))
    assert tuple(found) == row.why


def test_the_table_covers_enough_machines():
    assert len(ROWS) >= 12
    decided = {check for row in ROWS for _, check, _ in row.why}
    assert {"platform", "python", "driver", "gpu"} <= decided


def test_the_same_check_rejects_the_same_way_on_both_sides(database):
    # R470 and a CUDA 12 build: pip's cu124 wheel and conda-forge's cuda120 build are refused by one driver rule
    row = Row("driver", "linux", "x86_64", "470.82.01", RTX3090, "3.12", "torch==2.4.0", ("", "", ""))
    target = _target(database, row)
    refusals = {}
    for channel in ("pip", "conda-forge"):
        provider = make_provider(database, target, parse_request([], [row.spec], "minor", None, channel=channel))
        build = next(b for b in provider.builds("torch") if str(b.version) == "2.4.0" and b.cuda_major == "12")
        rejection = provider.verdict(build).rejection
        assert rejection is not None
        refusals[channel] = rejection
    assert {r.check for r in refusals.values()} == {"driver"}
    assert {r.needs_driver for r in refusals.values()} == {"525.60.13"}
    assert refusals["conda-forge"].message.startswith("conda-forge's pytorch 2.4.0 cuda120 needs driver ≥ 525.60.13")
