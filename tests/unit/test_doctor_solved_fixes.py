"""Every doctor fix that names a build is an answer `envpin solve` gives for the machine diagnosed.

The property: for every replayed scenario and public thread in the suite, each fix line that pins a framework
build (`torch==2.7.0+cu128`, `jax[cuda12]==0.4.30`, `tensorflow==2.16.1`) names a build that the solve, asked for
exactly that pin on the machine as the doctor diagnosed it (envpin.doctor.solving.diagnosed_target: the facts'
GPUs and driver, else the ones the error text shows), answers with a plan holding that same build. A fix never
names a build the solve would refuse there. The machine is handed to the solve as target flags, parsed by the
real `envpin solve` parser, so the check is the command a user would run.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from envpin.app.planning import plan
from envpin.cli import build_parser
from envpin.commands.options import solve_options, target_spec
from envpin.doctor.engine import diagnose
from envpin.doctor.solving import diagnosed_target
from envpin.resolver.plan import Plan
from tests.unit.test_doctor_scenarios import SCENARIOS, case_of

THREADS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "doctor" / "threads").glob("*.yaml"))
# A pin of a framework in a pip command line: `torch==2.7.0+cu128`, `"jax[cuda12]==0.4.30"`, `tensorflow[and-cuda]==2.16.1`
_PIN = re.compile(r"(?<![\w.\-])(torch|tensorflow|tensorflow-cpu|jax|jaxlib)(?:\[[\w,\-]+\])?==([\w.+!]+)")

FRAMEWORK_OF = {"jaxlib": "jax", "tensorflow-cpu": "tensorflow"}  # the framework a pinned distribution belongs to


_INDEX = re.compile(r"--index-url (\S+)")


def pip_command(line: str) -> str:
    """The pip install command a fix line holds, without the words around it ('' when there is none)."""
    start = line.find("pip install ")
    if start < 0:
        return ""
    command = line[start:]
    for end in (" — ", " (", "`", "; "):
        command = command.split(end)[0]
    return command


def pinned_builds(line: str) -> list[tuple[str, str]]:
    """(name, version) of each framework the pip command of a fix line pins; [] for a line with no pip command."""
    return _PIN.findall(pip_command(line))


def same_build(pinned: str, line: str, answer: Plan, name: str) -> bool:
    """Whether `name==pinned` in a fix line installs the build the solve answered: the same version, or the public
    version where the index decides the build (`torch==2.1.0+cu121` is PyPI's `torch==2.1.0` when PyPI serves cu121)."""
    package = next((p for p in answer.packages if p.name == name), None)
    if package is None:
        return False
    if package.version == pinned:
        return True
    public, _, tag = pinned.partition("+")
    if package.version.partition("+")[0] != public:
        return False
    index = _INDEX.search(pip_command(line))
    if tag:  # a local version: PyPI's plain wheel is that build when the plan says so
        return package.index_url is None and (answer.accelerators or {}).get(name, answer.accelerator) == tag
    return index is not None and index.group(1) == package.index_url


def solve_answer(flags: str, database):
    """`envpin solve FLAGS` as the library behind the command answers it."""
    args = build_parser("solve").parse_args(["solve", *shlex.split(flags)])
    return plan(solve_options(args), target_spec(args), database).answer


def _cases(database):
    for scenario in SCENARIOS:
        yield scenario["name"], case_of(scenario, database)
    for path in THREADS:
        thread = yaml.safe_load(path.read_text(encoding="utf-8"))
        thread["name"] = path.stem
        thread["error_text"] = (thread.get("error_text") or "") + (thread.get("reported_text") or "")
        yield path.stem, case_of(thread, database)


def test_every_build_a_fix_names_is_an_ok_answer_of_solve_for_the_machine(database):
    checked, wrong = 0, []
    for name, case in _cases(database):
        lines = {line for finding in diagnose(case).findings for line in finding.fix}
        pins = {(pin, line) for line in lines for pin in pinned_builds(line)}
        if not pins:
            continue
        flags = diagnosed_target(case).spec.flags
        for (framework, version), line in sorted(pins):
            solved = FRAMEWORK_OF.get(framework, framework)
            # jaxlib is not asked for by itself: jax of the same release is, and brings its own jaxlib
            asked = "jax" if framework == "jaxlib" else framework
            answer = solve_answer(f"--framework {solved} --spec '{asked}=={version}' {flags}", database)
            checked += 1
            if not isinstance(answer, Plan):
                wrong.append(f"{name}: {framework}=={version} is refused for {flags}: {answer.message}")
                continue
            if not same_build(version, line, answer, framework if framework != "jaxlib" else "jax"):
                got = {p.name: p.version for p in answer.packages}
                wrong.append(f"{name}: {framework}=={version} ({pip_command(line)}), but the solve answers {got}")
    assert checked >= 30, checked  # the property is exercised, not vacuous
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("line", "pins"), [
    ('/usr/bin/python3 -m pip install --force-reinstall torch==2.7.0+cu128 --index-url https://download.pytorch.org/whl/cu128',
     [("torch", "2.7.0+cu128")]),
    ('python -m pip install --force-reinstall "jax[cuda12]==0.4.30"', [("jax", "0.4.30")]),
    ("the same release, in a build that runs here (--spec 'torch==2.5.1+cu118')", []),  # a sentence, not a command
    ("or keep the driver: python -m pip install torch==2.5.1+cu118 --index-url https://x/cu118 — solved by envpin "
     "(`envpin solve --framework torch --spec torch==2.5.1`)", [("torch", "2.5.1+cu118")]),
])
def test_pins_are_read_from_pip_commands_only(line, pins):
    assert pinned_builds(line) == pins


def test_where_the_solve_refuses_everything_the_fix_is_its_refusal_and_its_fixes(database):
    """A Tesla K40c (sm_35) on a driver of the 570 branch, which no CUDA build of any release in the database both
    runs on and has code for: the fix is the solve's own refusal and fixes, word for word, and no build."""
    from envpin.doctor.fixes import install_fix  # noqa: PLC0415 - the function under test, beside the property

    scenario = {"name": "kepler", "machine": "linux-rtx3060-570.124.04",
                "host": {"gpus": [{"index": 0, "name": "Tesla K40c", "compute_capability": None}]},
                "env": {"packages": {"pip": {"torch": "2.5.1+cu124"}}}}
    case = case_of(scenario, database)
    answer = solve_answer("--framework torch --spec torch==2.5.1 " + diagnosed_target(case).spec.flags, database)
    assert not isinstance(answer, Plan)
    lines = install_fix(case)
    assert lines[0] == f"no torch build fits this machine: {answer.message}"
    assert lines[1:1 + len(answer.fixes)] == list(answer.fixes)
    assert not any(pinned_builds(line) for line in lines)
