"""`envpin solve --project` and `envpin init` on repositories laid out the way real ones are.

Each layout × target gives the whole environment.yml (or the whole answer when nothing fits), compared with
a reviewed file in tests/fixtures/projects/expected/. Set ENVPIN_UPDATE_EXPECTED=1 to rewrite those files
after a deliberate change, then review the diff.
"""

import os
import shutil
from pathlib import Path

import pytest

from envpin.cli import main
from envpin.project.collect import collect_project

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "projects"
EXPECTED = LAYOUTS / "expected"
TARGETS = {
    "rtx3090-535": ["--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090"],
    "rtx5090-570": ["--driver", "570.124.06", "--gpu", "NVIDIA GeForce RTX 5090"],
}
OPTIONS = {"pyproject-gpu-extra": ["--extra", "gpu"], "dependency-groups": ["--group", "train"]}
CASES = [(layout.name, target) for layout in sorted(LAYOUTS.iterdir()) if layout.is_dir() and layout.name != "expected"
         for target in TARGETS]


def solve_layout(directory: Path, target: str, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.chdir(directory)
    code = main(["solve", "--project", "--os", "linux", "--arch", "x86_64", *TARGETS[target],
                 "--format", "environment.yml", *OPTIONS.get(directory.name, [])])
    return code, capsys.readouterr().out


def test_at_least_ten_layouts():
    assert len({layout for layout, _ in CASES}) >= 10


@pytest.mark.parametrize("layout, target", CASES, ids=[f"{layout}-{target}" for layout, target in CASES])
def test_layout_gives_the_expected_environment(layout, target, capsys, monkeypatch):
    code, output = solve_layout(LAYOUTS / layout, target, capsys, monkeypatch)
    expected_file = EXPECTED / f"{layout}.{target}.yml"
    if os.environ.get("ENVPIN_UPDATE_EXPECTED"):
        expected_file.write_text(output)
    assert output == expected_file.read_text()
    assert code == (1 if output.startswith("envpin ") else 0)


def test_regeneration_is_byte_identical_and_follows_changes(tmp_path, capsys, monkeypatch):
    project = tmp_path / "yolo"
    shutil.copytree(LAYOUTS / "yolo", project)
    first = solve_layout(project, "rtx3090-535", capsys, monkeypatch)[1]
    assert solve_layout(project, "rtx3090-535", capsys, monkeypatch)[1] == first
    lines = (project / "requirements.txt").read_text().splitlines()
    (project / "requirements.txt").write_text("\n".join(reversed(lines)) + "\nrich\n")
    changed = solve_layout(project, "rtx3090-535", capsys, monkeypatch)[1]
    added = set(changed.splitlines()) - set(first.splitlines())
    assert added == {"      - rich"}  # reordering changes nothing; only the new requirement shows


def test_init_writes_then_refuses_to_overwrite_without_force(tmp_path, capsys):
    project = tmp_path / "repo"
    shutil.copytree(LAYOUTS / "yolo", project)
    target = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", *TARGETS["rtx3090-535"]]
    assert main(["init", str(project), *target]) == 0
    out = capsys.readouterr().out
    assert "id: envpin-check" in out
    written = (project / "environment.yml").read_text()
    assert "torch==2.14.1+cu126" in written
    assert main(["init", str(project), *target]) == 0  # unchanged: nothing to do
    other = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", *TARGETS["rtx5090-570"]]
    assert main(["init", str(project), *other]) == 1
    diff = capsys.readouterr().out
    assert "-      - torch==2.14.1+cu126" in diff and "+      - torch==2.13.0+cu129" in diff
    assert (project / "environment.yml").read_text() == written
    assert main(["init", str(project), *other, "--force"]) == 0
    assert "torch==2.13.0+cu129" in (project / "environment.yml").read_text()


def test_envpin_output_is_never_read_back_as_the_project(tmp_path, capsys, monkeypatch):
    project = tmp_path / "repo"
    shutil.copytree(LAYOUTS / "yolo", project)
    target = ["--os", "linux", "--arch", "x86_64", "--python", "3.11", *TARGETS["rtx3090-535"]]
    main(["init", str(project), *target])
    capsys.readouterr()
    code, output = solve_layout(project, "rtx5090-570", capsys, monkeypatch)
    assert code == 0 and "torch==2.13.0+cu129" in output


def test_project_without_a_gpu_framework_is_a_clear_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "requirements.txt").write_text("requests\n")
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "--project"]) == 2
    assert "no GPU framework" in capsys.readouterr().err


@pytest.mark.parametrize(
    "files, words",
    [
        ({"requirements.txt": "-r missing.txt\ntorch\n"}, "missing.txt"),
        ({"requirements.txt": "torch>>2\n"}, "requirements.txt:1"),
        ({"requirements.txt": "-r requirements.txt\n"}, "includes itself"),
        ({"pyproject.toml": "[project\nname = 'x'"}, "not valid TOML"),
        ({"environment.yml": "dependencies: [pytorch=1.12, {pip: ['torch==']}]\n"}, "environment.yml"),
    ],
)
def test_broken_project_files_are_one_line_errors(tmp_path, capsys, monkeypatch, files, words):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "--project", "--os", "linux", "--arch", "x86_64", "--python", "3.11", "--driver", "none"]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


@pytest.mark.parametrize("name, text, expected", [
    ("environment.yml", "dependencies:\n  - jaxlib=0.3.15=*cuda*\n  - pytorch-cpu=1.13.0\n  - pip:\n    - tensorflow==2.11.0\n",
     {"jax": "jaxlib=0.3.15=*cuda* (environment.yml: dependencies[0])"}),
    ("requirements.txt", "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.1.2\ntensorflow>=2.13\n",
     {"torch": "--extra-index-url https://download.pytorch.org/whl/cu121"}),
    ("requirements.txt", "tensorflow[and-cuda]==2.17.1\njax[cuda12]\ntorch\n",
     {"tensorflow": "tensorflow[and-cuda]==2.17.1 (requirements.txt:1)", "jax": "jax[cuda12] (requirements.txt:2)"}),
    ("requirements.txt", "tensorflow-gpu==2.6.0\ntorch==2.5.1+cu124\ntensorflow-cpu\n",
     {"tensorflow": "tensorflow-gpu==2.6.0 (requirements.txt:1)", "torch": "torch==2.5.1+cu124 (requirements.txt:2)"}),
    ("requirements.txt", "torch==2.5.1\ntensorflow\njax\n", {}),
])
def test_the_lines_that_ask_for_a_gpu_build(tmp_path, name, text, expected):
    """What makes a framework the project's GPU framework: a CUDA extra, tag, index, name or conda build string; a
    plain line only runs on the GPU where it can."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert dict(collect_project(tmp_path, (), (), ()).gpu_asked) == expected
