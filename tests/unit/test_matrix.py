"""`envpin matrix`: the grid and the solve agree, and every cell's reason is the fitness check that decided it.

The agreement is checked against `envpin.app.planning.plan`, the path `envpin solve` takes (resolve, then build the
Plan or explain the failure): for every target of the table, the first `ok` or `caveat` cell in preference order
is the build the solve pins, and a target the solve has no answer for has no such cell at all. The reasons are
checked against the fitness checks themselves: lifting the check a cell names (`assess(ignore={check})`) must
change that build's verdict, so the named check is the one that stopped it.
"""

from __future__ import annotations

import re

import pytest
from packaging.version import Version

from envpin.app.matrix import grids
from envpin.app.planning import SolveOptions, plan
from envpin.base.record import Record, record
from envpin.machine.spec import TargetSpec
from envpin.matrix.grid import CAVEAT, NO, OK, Cell, Grid, grid_json
from envpin.matrix.terminal import WIDTH, label_of, render
from envpin.resolver.fitness import CHECKS, assess
from envpin.resolver.plan import Plan, Unsatisfiable
from envpin.resolver.queries import make_provider

GTX1080TI, V100, RTX3090 = "NVIDIA GeForce GTX 1080 Ti", "Tesla V100-SXM2-16GB", "NVIDIA GeForce RTX 3090"
H100, RTX5090, T4 = "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 5090", "Tesla T4"


@record
class Machine(Record):
    id: str
    framework: str
    driver: str | None
    gpus: tuple[str, ...] = ()
    python: str = "3.11"
    os: str = "linux"
    arch: str = "x86_64"
    policy: str = "minor"
    amdgpu_driver: str | None = None
    macos: str | None = None

    @property
    def spec(self) -> TargetSpec:
        return TargetSpec(os=self.os, arch=self.arch, driver=self.driver or "none", gpus=self.gpus, python=self.python,
                          amdgpu_driver=self.amdgpu_driver, macos=self.macos)

    @property
    def options(self) -> SolveOptions:
        return SolveOptions(frameworks=(self.framework,), driver_policy=self.policy)


MACHINES = [
    # torch: Pascal, Volta, Ampere, Hopper, Blackwell; drivers from R450 to R610; every platform
    Machine("torch-1080ti-535", "torch", "535.104.05", (GTX1080TI,)),
    Machine("torch-1080ti-470-py310", "torch", "470.82.01", (GTX1080TI,), "3.10"),
    Machine("torch-1080ti-580-py312", "torch", "580.65.06", (GTX1080TI,), "3.12"),
    Machine("torch-1080ti-windows", "torch", "591.86", (GTX1080TI,), "3.11", "windows"),
    Machine("torch-v100-470-py39", "torch", "470.82.01", (V100,), "3.9"),
    Machine("torch-v100-535", "torch", "535.104.05", (V100,)),
    Machine("torch-v100-580-py312", "torch", "580.65.06", (V100,), "3.12"),
    Machine("torch-3090-535", "torch", "535.104.05", (RTX3090,)),
    Machine("torch-3090-535-strict", "torch", "535.104.05", (RTX3090,), policy="strict"),
    Machine("torch-3090-450.51-py310", "torch", "450.51.06", (RTX3090,), "3.10"),
    Machine("torch-3090-418", "torch", "418.39", (RTX3090,)),
    Machine("torch-3090-windows-551", "torch", "551.61", (RTX3090,), "3.12", "windows"),
    Machine("torch-h100-590-py313", "torch", "590.48.01", (H100,), "3.13"),
    Machine("torch-h100-525.60.13", "torch", "525.60.13", (H100,)),
    Machine("torch-h100-aarch64", "torch", "570.124.04", (H100,), "3.12", "linux", "aarch64"),
    Machine("torch-5090-570-py312", "torch", "570.124.04", (RTX5090,), "3.12"),
    Machine("torch-5090-580-py313", "torch", "580.65.06", (RTX5090,), "3.13"),
    Machine("torch-5090-windows", "torch", "576.02", (RTX5090,), "3.12", "windows"),
    Machine("torch-5090-550", "torch", "550.54.15", (RTX5090,)),
    Machine("torch-1080ti-and-h100", "torch", "580.65.06", (GTX1080TI, H100)),
    Machine("torch-no-gpu", "torch", None),
    Machine("torch-no-gpu-py38", "torch", None, (), "3.8"),
    Machine("torch-windows-no-gpu", "torch", None, (), "3.12", "windows"),
    Machine("torch-macos-arm64", "torch", None, (), "3.12", "macos", "arm64"),
    Machine("torch-macos-x86_64", "torch", None, (), "3.11", "macos", "x86_64"),
    Machine("torch-py314", "torch", "580.65.06", (RTX3090,), "3.14"),
    # torch on AMD (ROCm: the driver's ROCm support, the gfx kernels), Intel (XPU) and Apple silicon (the wheel's macOS)
    Machine("torch-mi300x", "torch", None, ("AMD Instinct MI300X",), "3.12"),
    Machine("torch-mi300x-driver-6.4", "torch", None, ("AMD Instinct MI300X",), amdgpu_driver="6.4"),
    Machine("torch-7900xtx", "torch", None, ("AMD Radeon RX 7900 XTX",), "3.12"),
    Machine("torch-arc-a770", "torch", None, ("Intel(R) Arc(TM) A770 Graphics",), "3.12"),
    Machine("torch-arc-a770-windows", "torch", None, ("Intel(R) Arc(TM) A770 Graphics",), "3.12", "windows"),
    Machine("torch-macos-13", "torch", None, (), "3.12", "macos", "arm64", macos="13.6"),
    # TensorFlow: [and-cuda], system CUDA, native Windows up to 2.10, CPU
    Machine("tf-3090-535", "tensorflow", "535.104.05", (RTX3090,)),
    Machine("tf-v100-470-py310", "tensorflow", "470.82.01", (V100,), "3.10"),
    Machine("tf-1080ti-windows-472-py39", "tensorflow", "472.12", (GTX1080TI,), "3.9", "windows"),
    Machine("tf-h100-590-py313", "tensorflow", "590.48.01", (H100,), "3.13"),
    Machine("tf-no-gpu-py312", "tensorflow", None, (), "3.12"),
    Machine("tf-macos-arm64", "tensorflow", None, (), "3.11", "macos", "arm64"),
    Machine("tf-5090-windows", "tensorflow", "576.02", (RTX5090,), "3.12", "windows"),
    Machine("tf-t4-418-py37", "tensorflow", "418.39", (T4,), "3.7"),
    # JAX: cuda13 / cuda12 extras with their stated minimums, CPU elsewhere
    Machine("jax-3090-535-py312", "jax", "535.104.05", (RTX3090,), "3.12"),
    Machine("jax-1080ti-580-py312", "jax", "580.65.06", (GTX1080TI,), "3.12"),
    Machine("jax-h100-590-py313", "jax", "590.48.01", (H100,), "3.13"),
    Machine("jax-3090-windows", "jax", "551.61", (RTX3090,), "3.12", "windows"),
    Machine("jax-5090-570", "jax", "570.124.04", (RTX5090,)),
    Machine("jax-v100-470-py310", "jax", "470.82.01", (V100,), "3.10"),
    Machine("jax-no-gpu", "jax", None),
    Machine("jax-h100-aarch64", "jax", "580.65.06", (H100,), "3.12", "linux", "aarch64"),
]


def machine_named(name: str) -> Machine:
    return next(m for m in MACHINES if m.id == name)


def grid_of(database, machine: Machine) -> Grid:
    (grid,) = grids(machine.options, machine.spec, database)
    return grid


def first_that_runs(grid: Grid) -> Cell | None:
    """The contract's reading of a grid: the first ok or caveat cell, rows in order, cells in order."""
    return next((cell for row in grid.rows for cell in row.cells if cell.verdict in (OK, CAVEAT)), None)


def cell(grid: Grid, release: str, build: str) -> Cell:
    row = next(row for row in grid.rows if row.release == release)
    return next(c for c in row.cells if c.build == build)


def test_the_table_is_wide_enough():
    assert len(MACHINES) >= 30
    assert {m.framework for m in MACHINES} == {"torch", "tensorflow", "jax"}
    assert {m.os for m in MACHINES} == {"linux", "windows", "macos"}


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.id)
def test_the_first_cell_that_runs_is_what_solve_picks(database, machine):
    grid = grid_of(database, machine)
    answer = plan(machine.options, machine.spec, database).answer
    first = first_that_runs(grid)
    if isinstance(answer, Unsatisfiable):
        assert first is None and grid.pick is None, f"solve: {answer.message}; grid: {first}"
        return
    assert isinstance(answer, Plan)
    assert first is not None, f"solve picks {answer.builds[machine.framework].label}, the grid has nothing that runs"
    assert first.label == answer.builds[machine.framework].label
    assert grid.pick == first and first.picked
    assert sum(c.picked for row in grid.rows for c in row.cells) == 1


def test_the_table_has_answers_and_failures(database):
    answers = [plan(m.options, m.spec, database).answer for m in MACHINES]
    assert sum(isinstance(a, Plan) for a in answers) >= 25
    assert sum(isinstance(a, Unsatisfiable) for a in answers) >= 3


@pytest.mark.parametrize("machine", MACHINES[::3], ids=lambda m: m.id)
def test_each_reason_is_the_check_that_stopped_the_build(database, machine):
    """Lifting the check a `no` cell names changes that build's verdict: it fits, or fails a later check. A cell
    that runs fits with nothing lifted."""
    grid = grid_of(database, machine)
    target = machine.spec.resolve(database)
    provider = make_provider(database, target, plan(machine.options, machine.spec, database).request)
    builds = {}
    for build in provider.builds(machine.framework):  # TensorFlow's plain GPU build: one per platform, one label
        if build.label not in builds or target.platform in build.platforms:
            builds[build.label] = build
    allowed = provider.allowed_kinds[machine.framework]
    for row in grid.rows:
        for c in row.cells:
            verdict = assess(database, target, builds[c.label], policy=machine.policy, allowed_kinds=allowed)
            if c.verdict in (OK, CAVEAT):
                assert verdict.fits and (c.verdict == CAVEAT) == bool(verdict.caveats), c
                continue
            assert c.check in CHECKS and verdict.why_not.check == c.check and verdict.why_not.brief == c.reason
            lifted = assess(database, target, builds[c.label], policy=machine.policy, allowed_kinds=allowed,
                            ignore=frozenset({c.check}))
            assert lifted.fits or CHECKS.index(lifted.why_not.check) > CHECKS.index(c.check), c


def test_gtx_1080_ti_keeps_pascal_in_cu126_and_not_in_cu128(database):
    grid = grid_of(database, machine_named("torch-1080ti-535"))  # R535, Python 3.11
    assert cell(grid, "2.14.1", "cu126").verdict == OK and cell(grid, "2.14.1", "cu126").picked
    for release in ("2.7.1", "2.8.0", "2.9.1", "2.10.0", "2.11.0"):
        cu128 = cell(grid, release, "cu128")
        assert (cu128.verdict, cu128.check, cu128.reason) == (NO, "gpu", "no sm_61 kernels")
        assert cell(grid, release, "cu126").verdict == OK
    assert cell(grid, "2.15.0", "cu132").reason == "driver below 580"


def test_rtx_5090_runs_nothing_before_2_7_on_linux(database):
    grid = grid_of(database, machine_named("torch-5090-570-py312"))  # R570, Python 3.12
    for row in grid.rows:
        gpu_cells = [c for c in row.cells if c.build.startswith("cu")]
        if Version(row.release) < Version("2.7"):
            assert all(c.verdict == NO for c in row.cells), row
            assert {c.reason for c in gpu_cells} <= {"no sm_120 kernels", "no wheel for Python 3.12 on linux-x86_64"}
    assert cell(grid, "2.7.0", "cu128").verdict == OK and cell(grid, "2.7.0", "cu126").reason == "no sm_120 kernels"
    assert grid.pick is not None and grid.pick == first_that_runs(grid) and grid.pick.label == "torch 2.13.0+cu129"


def test_driver_470_leaves_cuda_11_and_older(database):
    grid = grid_of(database, machine_named("torch-v100-470-py39"))  # V100, R470, Python 3.9
    cuda_12_and_13 = [c for row in grid.rows for c in row.cells if c.build.startswith("cu1") and int(c.build[2:4]) >= 12]
    assert all(c.verdict == NO and c.check in ("python", "driver") for c in cuda_12_and_13)
    assert "driver below 525.60.13" in {c.reason for c in cuda_12_and_13 if c.check == "driver"}
    running = {c.build for row in grid.rows for c in row.cells if c.verdict == OK}
    # CUDA 11.x, and the CUDA 9.x/10.x builds of torch 1.x
    assert running and all(b.startswith("cu") and int(b[2:-1]) <= 11 for b in running)
    assert {"cu118", "cu102"} <= running
    assert grid.pick is not None and grid.pick.label == "torch 2.7.1+cu118"


def test_windows_cu118_reaches_blackwell_only_through_ptx(database):
    grid = grid_of(database, machine_named("torch-5090-windows"))  # Windows, RTX 5090
    ptx = cell(grid, "2.6.0", "cu118")
    assert (ptx.verdict, ptx.caveat) == (CAVEAT, "ptx") and "JIT from compute_37 PTX" in ptx.reason
    assert label_of(ptx) == "ptx"
    assert cell(grid, "2.6.0", "cu126").reason == "no sm_120 kernels"


def test_no_driver_no_cuda_and_other_platforms_say_so(database):
    no_gpu = grid_of(database, machine_named("torch-no-gpu"))
    assert cell(no_gpu, "2.14.1", "cu126").reason == "a CUDA build, and no NVIDIA driver here"
    assert cell(no_gpu, "2.15.0", "cpu").verdict == OK and cell(no_gpu, "2.15.0", "cpu").picked
    assert cell(no_gpu, "1.12.1", "cpu").reason == "no wheel for Python 3.11 on linux-x86_64"
    mac = grid_of(database, machine_named("torch-macos-arm64"))
    assert cell(mac, "2.14.1", "cu126").reason == "not built for macos-arm64"
    windows_tf = grid_of(database, machine_named("tf-1080ti-windows-472-py39"))
    # TensorFlow 2.10.0's arch list (build_info.py of its wheel) has sm_60, which a GTX 1080 Ti (sm_61) runs
    assert cell(windows_tf, "2.10.0", "cuda").verdict == OK
    assert cell(windows_tf, "2.11.0", "cpu").verdict == NO and cell(windows_tf, "2.11.0", "cpu").check == "kind"


def test_a_release_that_cannot_install_and_a_gpu_below_the_stated_minimum(database):
    tf = grid_of(database, machine_named("tf-3090-535"))
    assert cell(tf, "2.15.0", "and-cuda").check == "installable"
    assert cell(tf, "2.15.0", "and-cuda").reason.startswith("cannot install: ")
    jax = grid_of(database, machine_named("jax-1080ti-580-py312"))  # GTX 1080 Ti on R580
    assert cell(jax, "0.10.2", "cuda13").reason == "needs compute capability ≥ 7.5; sm_61 is older"
    assert cell(jax, "0.10.2", "cuda12").verdict == OK


def test_columns_are_in_preference_order(database):
    grid = grid_of(database, machine_named("torch-3090-535"))
    columns = list(grid.columns)
    cuda = [c for c in columns if c.startswith("cu")]
    assert cuda == sorted(cuda, key=lambda c: (-int(c[2:-1]), -int(c[-1])))
    rocm = [c for c in columns if c.startswith("rocm")]
    assert columns == cuda + rocm + ["xpu", "cpu"]
    assert rocm.index("rocm6.2.4") < rocm.index("rocm6.2") < rocm.index("rocm6.1")
    for row in grid.rows:  # each row's cells keep the columns' order
        positions = [columns.index(c.build) for c in row.cells]
        assert positions == sorted(positions)
    tf = grid_of(database, machine_named("tf-3090-535"))
    # rocm: tensorflow-rocm (tensorflow.yaml `rocm:`); it is in 2.14.0, whose GPU build is and-cuda, before 2.13's cuda
    assert tf.columns == ("and-cuda", "rocm", "cuda", "cpu")
    assert grid_of(database, machine_named("jax-3090-535-py312")).columns == ("cuda13", "cuda12", "rocm", "cpu")


def test_json_has_exactly_the_contract_keys(database):
    document = grid_json(grid_of(database, machine_named("torch-3090-535")))
    assert list(document) == ["framework", "target", "rows"]
    assert document["framework"] == "torch" and document["target"]["gpus"][0]["name"] == RTX3090
    for row in document["rows"]:
        assert list(row) == ["release", "cells"]
        for item in row["cells"]:
            assert list(item) == ["build", "verdict", "reason"] and item["verdict"] in (OK, CAVEAT, NO)
            assert item["reason"]


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.id)
def test_the_terminal_grid_fits_80_columns(database, machine):
    grid = grid_of(database, machine)
    text = render([grid])
    assert all(len(line) <= WIDTH for line in text.splitlines()), max(text.splitlines(), key=len)
    assert "\x1b" not in text
    shown = {(line.split()[0]) for line in text.splitlines() if line[:1].isdigit()}
    assert shown == {row.release for row in grid.rows}  # every release is in some block


def test_wide_grids_fold_by_release_range_and_colour_is_only_on_request(database):
    grid = grid_of(database, machine_named("torch-3090-535"))
    plain = render([grid])
    assert plain.count("\nrelease ") >= 3  # torch's thirty flavors do not fit one header
    coloured = render([grid], colour=True)
    assert "\x1b[32m" in coloured and "\x1b[31m" in coloured
    assert [len(line) for line in _strip_colour(coloured).splitlines()] == [len(line) for line in plain.splitlines()]


def test_a_gpu_name_from_a_facts_file_cannot_drive_the_terminal(database):
    spec = TargetSpec(os="linux", arch="x86_64", driver="535.104.05", gpus=("evil\x1b[2J\nname",),
                      compute_capabilities=("8.6",), python="3.11")
    (grid,) = grids(SolveOptions(frameworks=("torch",)), spec, database)
    text = render([grid])
    assert "\x1b" not in text and "evil\\x1b[2J\\nname" in text


def _strip_colour(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_an_amd_machine_is_judged_by_its_driver_and_gfx_kernels(database):
    grid = grid_of(database, machine_named("torch-mi300x-driver-6.4"))  # AMD driver 6.4: ROCm 6.1-7.1
    assert cell(grid, "2.13.0", "rocm7.2").reason == "the AMD driver does not support ROCm 7.2"
    assert cell(grid, "2.13.0", "rocm7.2").check == "driver"
    assert cell(grid, "2.13.0", "cu126").reason == "a CUDA build, and no NVIDIA driver here"
    assert grid.pick is not None and grid.pick.build.startswith("rocm") and grid.pick.reason.startswith("runs: ")
    assert tuple(int(p) for p in grid.pick.build[4:].split(".")[:2]) <= (7, 1)  # what driver 6.4 supports
    old = grid_of(database, machine_named("torch-mi300x"))
    assert cell(old, "2.2.2", "rocm5.7").reason == "no gfx942 kernels"
    assert cell(old, "2.6.0", "rocm6.2.4").reason == "no gfx list known for this build"
    assert cell(old, "2.14.1", "rocm7.2").reason.startswith("runs: ")  # rocm.yaml's previous-release rule, said
