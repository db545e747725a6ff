"""`envpin check` and `envpin solve --project` share their judgement (issue 28): over the project's own corpus of
real repositories' files (tests/fixtures/repos, each file × its machines in expected.toml), a GPU framework line
that check reports as an error is one that solve refuses, or one whose pin solve changes (the plan writes another
build or release than the line, with the reason in its answer), never the same line answered `ok` in silence; and
a file solve refuses is one that check is not silent about. Each disagreement is listed by file."""

from __future__ import annotations

import shutil
from pathlib import Path

from envpin.base.errors import EnvpinInputError
from envpin.check import check_text
from envpin.check.included import beside
from envpin.check.targets import configured_target
from envpin.cli import main
from envpin.machine.spec import NamedTarget, TargetSpec
from envpin.project.collect import collect_project
from tests.integration.test_repos_corpus import CASES, EXPECTED, MACHINES, REPOS, flags, kind_of


def _project_lines(key: str, kind: str, folder: Path) -> tuple[list[str], list]:
    """(the solve's arguments, the GPU framework lines it reads, with their origins)."""
    if kind in ("requirements", "conda-specs"):
        return ["-r", str(REPOS / key)], list(collect_project(None, (str(REPOS / key),), (), ()).gpu_requirements)
    folder.mkdir()
    shutil.copy(REPOS / key, folder / ("environment.yml" if kind == "environment.yml" else kind))
    return ["--project", str(folder)], list(collect_project(folder, (), (), ()).gpu_requirements)


def _line_of(where: str, lines: list):
    """The GPU line a check finding is at: `line 3` is `FILE:3`, `dependencies[9].pip[53]` is `FILE: dependencies…`."""
    where = where.split(" (")[0]
    for line in lines:
        if (where.startswith("line ") and line.origin.endswith(f":{where[5:]}")) or line.origin.endswith(f": {where}"):
            return line
    return None


def _own_python_refused(kind: str, answer: str) -> bool:
    """A solve refusal on the machine's Python (`--python`) of a conda environment file, which creates its own
    Python (CompVis/latent-diffusion's python=3.8.5 beside pytorch=1.7.0, on a machine whose Python is 3.9): the
    environment never runs on the machine's, so check, judging it on its own Python, rightly finds nothing there."""
    return kind == "environment.yml" and "(python-unsupported)" in answer


def test_check_errors_are_solve_refusals_or_changed_pins(database, tmp_path, capsys):
    disagreements, judged, refused = [], 0, 0
    for number, (key, machine) in enumerate(CASES):
        kind = kind_of(key)
        target = configured_target(NamedTarget(machine, TargetSpec(detect=False, **MACHINES[machine])), database)
        report = check_text(key, (REPOS / key).read_text(encoding="utf-8"), load_database=lambda: database, kind=kind,
                            targets=[target], include=beside(REPOS / key))
        try:
            where, lines = _project_lines(key, kind, tmp_path / f"project-{number}")
        except EnvpinInputError:
            continue  # a file solve cannot read as a project (kohya_ss's four requirements on one line): exit 2
        code = main(["solve", *where, *flags(machine), "--format", "requirements.txt"])
        captured = capsys.readouterr()
        out = captured.out
        if code == 2:
            continue  # not a project solve answers (no GPU framework among its lines, a workspace for another OS)
        # the findings that judge a line against the target (CHK-TARGET-*); where pip finds a pin (CHK-INDEX-*) is
        # what every solve answer writes anew, with its index
        errors = [(p, line) for p in report.problems if p.severity == "error" and p.id.startswith("CHK-TARGET-")
                  and (line := _line_of(p.where, lines)) is not None]
        pins = {row.split("==")[0].split("[")[0]: row for row in out.splitlines() if "==" in row and row[0] != "#"}
        judged += len(errors)
        refused += code == 1
        for found, line in errors:
            if code == 0 and pins.get(line.name) == line.text:
                disagreements.append(f"{key} on {machine}: check {found.id}@{found.where} ({line.text}) but solve "
                                     f"answers ok with that very pin")
        # a case expected.toml marks envpin_wrong is a known wrong answer (a strict xfail there): its refusal may
        # be the wrong one (jantic/DeOldify on Windows: no-gpu-build where the Python decides)
        known_wrong = "envpin_wrong" in EXPECTED[key][machine]
        if code == 1 and not report.problems and not known_wrong and not _own_python_refused(kind, captured.out + captured.err):
            disagreements.append(f"{key} on {machine}: solve refuses it, check finds nothing")
    assert not disagreements, "\n".join(disagreements)
    print(f"{len(CASES)} cases: {judged} line errors of check, {refused} refusals of solve")
    assert judged >= 30 and refused >= 30, (judged, refused)  # the corpus holds both kinds, many times


def test_a_variant_check_reports_unusable_is_a_refusal_of_solve(tmp_path, capsys):
    """torch==2.7.1+rocm6.3 (or +xpu) on an NVIDIA RTX 4090: an error of check (CHK-TARGET-GPU) and a refusal of
    solve --project, whose fix is the same release in a build that runs; +cpu, asked for by name, is neither."""
    target = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "570.124.06", "--gpu",
              "NVIDIA GeForce RTX 4090"]
    for variant, unusable in (("rocm6.3", True), ("xpu", True), ("cpu", False)):
        requirements = tmp_path / f"requirements-{variant}.txt"
        requirements.write_text(f"--extra-index-url https://download.pytorch.org/whl/{variant}\ntorch==2.7.1+{variant}\n")
        checked = main(["check", str(requirements), *target])
        check_out = capsys.readouterr().out
        solved = main(["solve", "-r", str(requirements), *target])
        solve_out = capsys.readouterr().out
        if unusable:
            assert checked == 1 and "CHK-TARGET-GPU" in check_out, check_out
            assert solved == 1 and "no solution (gpu-unsupported)" in solve_out, solve_out
            assert "to torch==2.7.1+cu12" in solve_out and "the same release, in a build that runs" in solve_out
        else:
            assert checked == 0 and solved == 0, (check_out, solve_out)
    capsys.readouterr()
    # on the command line the variant is the user's choice: answered, with the reason it was taken
    assert main(["solve", "--spec", "torch==2.7.1+rocm6.3", *target]) == 0
    assert "ROCm (rocm6.3) was asked for by name" in capsys.readouterr().out


def test_an_old_torch_pin_check_reports_is_one_solve_answers_with_the_same_releases_build(database, tmp_path, capsys):
    # torch 1.11.0 from PyPI is its CUDA 10.2 build (no sm_89 code); its cu115 build on the PyTorch index runs an
    # RTX 4090 through its sm_86 cubin: check says the line fails there, solve --project answers that build
    (tmp_path / "requirements.txt").write_text("torch==1.11.0\n", encoding="utf-8")
    machine: dict = dict(os="linux", arch="x86_64", driver="550.54.14", gpus=("NVIDIA GeForce RTX 4090",), python="3.9")
    target = configured_target(NamedTarget("rtx-4090", TargetSpec(detect=False, **machine)), database)
    report = check_text("requirements.txt", "torch==1.11.0\n", load_database=lambda: database, targets=[target])
    assert [p.id for p in report.problems if p.severity == "error"] == ["CHK-TARGET-GPU"]
    code = main(["solve", "--project", str(tmp_path), "--os", "linux", "--arch", "x86_64", "--driver", "550.54.14",
                 "--gpu", "NVIDIA GeForce RTX 4090", "--python", "3.9", "--format",
                 "requirements.txt"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "torch==1.11.0+cu115" in out and "https://download.pytorch.org/whl/cu115" in out, out
