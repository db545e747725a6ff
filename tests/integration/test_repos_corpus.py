"""Real repositories' environment files (tests/fixtures/repos/, each copied verbatim at a commit, SOURCES.toml
says from where) checked and solved for two machines: a new GPU on Linux (RTX 5090, sm_120, driver 570, Python
3.12) and an old one on Windows (GTX 1080 Ti, sm_61, driver 472, Python 3.9).

expected.toml holds, per file and machine, the problems `envpin check` must give (id@where, exactly) and what
`envpin solve --project` must answer: the framework pins it prints, or the refusal's code; `why` says in a
sentence what someone who knows the field expects there. ENVPIN_UPDATE_EXPECTED=1 rewrites the check and solve
lines after a deliberate change (the `why` lines stay): review the diff.

Where envpin is wrong by primary facts (PyPI's file lists, uv's resolution, the vendors' tables), the entry holds the
right answer and `envpin_wrong` says what envpin gives instead and why that is wrong: such a case is an expected
failure, and a strict one: when envpin gives the right answer, the test fails until the marker is removed. The
update run leaves these entries as they are.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from envpin.base import _toml
from envpin.check import check_text, formats
from envpin.check.included import beside
from envpin.check.targets import configured_target
from envpin.cli import main
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.readers.rules import PROBLEMS
from envpin.resolver.plan import Unsatisfiable
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
SOURCES = _toml.loads((REPOS / "SOURCES.toml").read_text(encoding="utf-8"))
EXPECTED_FILE = REPOS / "expected.toml"
EXPECTED = _toml.loads(EXPECTED_FILE.read_text(encoding="utf-8"))
MACHINES: dict[str, dict] = {
    "rtx5090-linux": dict(os="linux", arch="x86_64", driver="570.86.10", gpus=("NVIDIA GeForce RTX 5090",),
                          python="3.12"),
    "gtx1080ti-windows": dict(os="windows", arch="x86_64", driver="472.12", gpus=("NVIDIA GeForce GTX 1080 Ti",),
                              python="3.9"),
}
FRAMEWORK_LINES = ("torch", "torchvision", "torchaudio", "tensorflow", "tensorflow-cpu", "jax", "jaxlib")
INCLUDED_ONLY = {  # read through another corpus file's `-r`
    "keras-team--keras/requirements-common.txt",
    "deepfakes--faceswap/requirements/_requirements_base.txt",
    "bmaltais--kohya_ss/requirements.txt",
    "openvinotoolkit--nncf/constraints.txt",  # through tests/torch/requirements.txt's `-c`
}
CASES = [(key, machine) for key in SOURCES if key not in INCLUDED_ONLY for machine in MACHINES]


def kind_of(key: str) -> str:
    name = Path(key).name
    if "pixi_tomls" in key or name == "pixi.toml":
        return "pixi.toml"
    if name == "pyproject.toml" or "pyproject_tomls" in key:
        return "pyproject.toml"
    if name in ("setup.py", "setup.cfg"):
        return name
    if name.endswith((".yml", ".yaml")):
        return "environment.yml"
    return formats.kind_of(key, (REPOS / key).read_text(encoding="utf-8")) or "requirements"  # or a conda spec list


def flags(machine: str) -> list[str]:
    m = MACHINES[machine]
    return ["--os", str(m["os"]), "--arch", str(m["arch"]), "--driver", str(m["driver"]), "--gpu", str(m["gpus"][0]),
            "--python", str(m["python"])]


def checked(key: str, machine: str, database) -> list[str]:
    target = configured_target(NamedTarget(machine, TargetSpec(detect=False, **MACHINES[machine])), database)
    report = check_text(key, (REPOS / key).read_text(encoding="utf-8"), load_database=lambda: database,
                        kind=kind_of(key), targets=[target], include=beside(REPOS / key))
    # a severity other than the id's default is part of the answer (`!warning`), as in tests/fixtures/check
    return sorted(f"{p.id}@{p.where}" + ("" if p.severity == PROBLEMS[p.id][0] else f"!{p.severity}")
                  for p in report.problems)


def solved(key: str, machine: str, tmp_path: Path, capsys) -> tuple[int, str, str]:
    kind = kind_of(key)
    if kind in ("requirements", "conda-specs"):
        where = ["-r", str(REPOS / key)]
    else:
        project = tmp_path / "project"
        project.mkdir()
        shutil.copy(REPOS / key, project / ("environment.yml" if kind == "environment.yml" else kind))
        where = ["--project", str(project)]
    code = main(["solve", *where, *flags(machine), "--format", "requirements.txt"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def answer_of(code: int, out: str, err: str) -> str:
    if code == 0:
        pins = [line for line in out.splitlines() if line.split("=")[0].split("[")[0] in FRAMEWORK_LINES]
        return "pins: " + " ".join(pins)
    refusal = next((line for line in out.splitlines() if line.startswith("no solution (")), None)
    if refusal:
        return "refused: " + refusal.split("(", 1)[1].split(")", 1)[0]
    return f"error: {err.strip().splitlines()[-1][:80] if err.strip() else code}"


def test_the_corpus_is_eighty_real_files_with_their_origin():
    keys = [k for k in SOURCES if k not in INCLUDED_ONLY]
    assert len(keys) >= 80
    for key, origin in SOURCES.items():
        assert (REPOS / key).is_file() and len(origin["commit"]) == 40 and "/" in origin["repo"], key
        assert (REPOS / key).stat().st_size == origin["bytes"], f"{key} is not the file as copied"
    kinds = {kind_of(k) for k in keys}
    assert kinds == {"requirements", "conda-specs", "environment.yml", "pyproject.toml", "pixi.toml", "setup.py",
                     "setup.cfg"}
    assert sorted(EXPECTED) == sorted(keys), "every corpus file has its expectations"
    for key, machines in EXPECTED.items():
        assert set(machines) == set(MACHINES), key
        for machine, entry in machines.items():
            assert entry.get("why"), f"{key} {machine} says why"
            assert isinstance(entry.get("envpin_wrong", ""), str) and entry.get("envpin_wrong") != "", (key, machine)


@pytest.mark.parametrize("key, machine", CASES, ids=[f"{k}-{m}" for k, m in CASES])
def test_check_and_solve_give_what_the_field_expects(key, machine, database, tmp_path, capsys):
    expected = EXPECTED[key][machine]
    found = checked(key, machine, database)
    code, out, err = solved(key, machine, tmp_path, capsys)
    answer = answer_of(code, out, err)
    if "envpin_wrong" in expected:
        # the right answer is recorded, not envpin's: strict, so a fix shows up as a failure to remove the marker
        if found == sorted(expected["check"]) and answer == expected["solve"]:
            pytest.fail(f"envpin now gives the expected answer: remove envpin_wrong from {key} {machine}")
        pytest.xfail(f"envpin_wrong: {expected['envpin_wrong']} (gives {found}, {answer!r})")
    if os.environ.get("ENVPIN_UPDATE_EXPECTED"):
        expected["check"], expected["solve"] = found, answer
        return
    assert found == sorted(expected["check"]), expected.get("why", "")
    assert answer == expected["solve"], expected.get("why", "")
    if code == 0 and out:
        # a translation never drops a package silently: what the output does not carry, stderr says
        assert "Traceback" not in err


@pytest.fixture(scope="module", autouse=True)
def _write_updates():
    yield
    if os.environ.get("ENVPIN_UPDATE_EXPECTED"):
        EXPECTED_FILE.write_text(_dump(EXPECTED), encoding="utf-8")


def _dump(expected: dict) -> str:
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["# Expected findings of `envpin check` and answers of `envpin solve --project` for each corpus file",
             "# (tests/integration/test_repos_corpus.py). `why` is the reviewer's reason; check and solve are asserted.", ""]
    for key in sorted(expected):
        for machine in MACHINES:
            entry = expected[key].get(machine, {})
            lines.append(f"[{quoted(key)}.{machine}]")
            if entry.get("why"):
                lines.append(f"why = {quoted(entry['why'])}")
            lines.append("check = [" + ", ".join(quoted(c) for c in entry.get("check", [])) + "]")
            lines.append(f"solve = {quoted(entry.get('solve', ''))}")
            if entry.get("envpin_wrong"):
                lines.append(f"envpin_wrong = {quoted(entry['envpin_wrong'])}")
            lines.append("")
    return "\n".join(lines)


def _solved_json(key: str, machine: str, tmp_path: Path, capsys) -> dict:
    kind = kind_of(key)
    if kind == "requirements":
        where = ["-r", str(REPOS / key)]
    else:
        project = tmp_path / "project"
        project.mkdir()
        shutil.copy(REPOS / key, project / ("environment.yml" if kind == "environment.yml" else kind))
        where = ["--project", str(project)]
    main(["solve", *where, *flags(machine), "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_a_refusal_names_the_framework_that_asked_for_the_gpu(tmp_path, capsys):
    """EasyLM's GPU environment asks for JAX's CUDA build (`jaxlib=0.3.15=*cuda*`); on native Windows JAX has no GPU
    build at all, and pip's tensorflow 2.11.0 there is a CPU build: the refusal names the jaxlib line."""
    answer = _solved_json("young-geng--EasyLM/scripts/gpu_environment.yml", "gtx1080ti-windows", tmp_path, capsys)
    error = answer["error"]
    assert error["code"] == "no-gpu-build"
    assert "jaxlib=0.3.15=*cuda* (environment.yml: dependencies[12]) asks for jax's NVIDIA GPU build" in error["message"]
    assert "no tensorflow" not in error["message"]
    assert any("WSL2" in fix and "--framework jax" in fix for fix in error["fixes"])


def test_a_framework_beside_the_gpu_one_takes_its_cpu_build_where_it_has_no_gpu_build(tmp_path, capsys):
    """sinner's requirements-pc-cuda.txt: torch from the cu121 index is the GPU framework; tensorflow>=2.13.0 has no
    GPU build on native Windows, and pip installs its CPU build there: so does the plan, which says why."""
    answer = _solved_json("pozitronik--sinner/requirements-pc-cuda.txt", "gtx1080ti-windows", tmp_path, capsys)
    assert answer["status"] == "ok" and answer["accelerators"] == {"torch": "cu118", "tensorflow": "cpu"}
    assert any(r.startswith("tensorflow>=2.13.0 has no NVIDIA GPU build for windows-x86_64: this is its CPU build")
               and "--extra-index-url https://download.pytorch.org/whl/cu121" in r for r in answer["reasons"])


def test_a_conda_spec_list_is_named_by_its_own_lines(tmp_path, capsys):
    """ChangeFormer's requirements.txt is a `conda list --export`: `check` names its pytorch line (77), and so does
    the refusal of `solve --project`, never `dependencies[N]` (a place only an environment.yml has)."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPOS / "wgcban--ChangeFormer/requirements.txt", project / "requirements.txt")
    main(["solve", "--project", str(project), *flags("rtx5090-linux"), "--format", "json"])
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert "pytorch==1.10.1.* (requirements.txt:77)" in message and "torchvision==0.11.2.* (requirements.txt:89)" in message
    assert "dependencies[" not in message


def test_a_conda_spec_lists_pip_packages_are_named_by_their_lines(tmp_path, capsys):
    """The `pypi_0` lines (what pip installed into that environment) keep their line numbers too: this spec list
    is written here in `conda list --export`'s layout (header, NAME=VERSION=BUILD lines), not taken from a repository."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.txt").write_text(
        "# This file may be used to create an environment using:\n# $ conda create --name <env> --file <this file>\n"
        "# platform: linux-64\n_libgcc_mutex=0.1=main\npython=3.12.4=h5148396_1\n"
        "pytorch=2.5.1=py3.12_cuda12.4_cudnn9.1.0_0\nxformers=0.0.28.post3=pypi_0\n", encoding="utf-8")
    main(["solve", "--project", str(project), *flags("rtx5090-linux"), "--format", "json"])
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert "pytorch==2.5.1.* (requirements.txt:6)" in message and "xformers==0.0.28.post3 (requirements.txt:7)" in message


def test_a_refusal_that_moves_torch_moves_the_lines_built_for_the_old_one(tmp_path, capsys):
    """magic-animate's Linux export pins torch==2.0.1 and xformers==0.0.22 (whose wheel requires torch==2.0.1): on
    Python 3.12 no 2.0.1 wheel exists, and the fix moves torch to 2.7.0, the nearest release that runs. Followed
    alone it would leave xformers==0.0.22, which pip cannot install beside it: the next fix names the xformers made
    for 2.7.0 (0.0.30, the Requires-Dist of its wheel in the database's tied.yaml)."""
    error = _solved_json("magic-research--magic-animate/environment.yaml", "rtx5090-linux", tmp_path, capsys)["error"]
    # the pip lines are named as `check` names them (CHK-TARGET-GPU@dependencies[55].pip[123] in expected.toml)
    assert "torch==2.0.1 (environment.yml: dependencies[55].pip[123])" in error["message"]
    fixes = error["fixes"]
    moved = next(n for n, fix in enumerate(fixes) if "--spec 'torch==2.7.0'" in fix)
    assert fixes[moved + 1].startswith("environment.yml: dependencies[55].pip[125]: change xformers==0.0.22 to xformers==0.0.30 "
                                       "(torch==2.7.0), the release made for torch 2.7.0")


def test_a_fix_that_moves_torch_carries_the_release_as_data(database):
    """The release a fix moves torch to is a field of the refusal (issue 28), which the tied lines' fixes read, not
    a sentence parsed back: the sentence may change, the release stays."""
    target = TargetSpec(os="linux", arch="x86_64", python="3.12", driver="570.124.06",
                        gpus=("NVIDIA GeForce RTX 5090",), detect=False).resolve(database)
    answer = solve(database, target, parse_request(["torch"], ["torch==2.0.1"]))
    assert isinstance(answer, Unsatisfiable), answer
    moved = [(fix, answer.moves[fix]) for fix in answer.fixes if fix in answer.moves]
    assert moved and moved[0][1] == ("torch", "2.7.0"), moved
    assert all(f"torch=={version}" in fix for fix, (_, version) in moved)
