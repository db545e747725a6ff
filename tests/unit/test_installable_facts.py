"""Facts that decide whether a plan installs and imports, each checked against the live database.

Every test here names a fact found at a public source (cited in the database record it reads) that an earlier
database got wrong, so each one fails on that data: the import-time CUDA check of a companion, a NumPy ABI
bound, WSL2's driver, Jetson.
"""

from __future__ import annotations

from envpin.facts import Driver, Gpu, HostFacts, PythonInfo
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target


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


def test_wsl2_checks_the_windows_driver_minimum(database):
    """NVIDIA's CUDA 12.x minimum is 525.60.13 on Linux but 528.33 on Windows (CUDA toolkit release notes,
    Table 2/3); nvidia-smi under WSL2 prints the Windows driver, so 527.41 there cannot run a CUDA 12 build."""
    answer = _plan(_solve(database, driver="527.41", wsl=True, gpus=(("NVIDIA GeForce RTX 3090", None),)))
    torch = next(p for p in answer.packages if p.name == "torch")
    assert "+cu12" not in torch.version and "+cu13" not in torch.version, torch
    assert torch.version.endswith("+cu118"), torch  # CUDA 11.x minimum on Windows is 452.39
    native = _plan(_solve(database, driver="527.41", gpus=(("NVIDIA GeForce RTX 3090", None),)))
    assert next(p for p in native.packages if p.name == "torch").version.endswith("+cu126")


def test_wsl2_driver_cuda_comes_from_the_windows_table(database):
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"), driver=Driver("526.47", None, "smi"),
                      wsl=True)
    assert make_target(database, facts).driver_cuda == "11.8"
    assert make_target(database, HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.12"),
                                           driver=Driver("526.47", None, "smi"))).driver_cuda == "12.0"
