"""`envpin matrix` as users run it: real processes, the JSON contract beside `envpin solve`'s answer, files written
with -o, fleets, colour on a real terminal (a pty) and never with NO_COLOR, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.integration.test_cli import REPO, envpin

try:
    import pty  # POSIX only: the tests that need a pseudo-terminal are skipped on Windows
except ImportError:
    pty = None  # type: ignore[assignment]
needs_pty = pytest.mark.skipif(pty is None, reason="pseudo-terminals (pty) are POSIX only")

MACHINES = REPO / "tests" / "fixtures" / "doctor" / "machines"
TARGETS = {
    "1080ti-535": ["--os", "linux", "--arch", "x86_64", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce GTX 1080 Ti",
                   "--python", "3.11"],
    "5090-570": ["--os", "linux", "--arch", "x86_64", "--driver", "570.124.04", "--gpu", "NVIDIA GeForce RTX 5090",
                 "--python", "3.12"],
    "rtx3060-facts": ["--facts", str(MACHINES / "linux-rtx3060-570.124.04.json")],
    "windows-2080s-facts": ["--facts", str(MACHINES / "windows-rtx2080s-591.86.json")],
    "no-gpu": ["--os", "linux", "--arch", "x86_64", "--driver", "none", "--python", "3.12"],
}


def first_that_runs(document: dict) -> tuple[str, dict] | None:
    """The contract: the solve's pick is the first ok or caveat cell, rows in order, cells in order."""
    for row in document["rows"]:
        for cell in row["cells"]:
            if cell["verdict"] in ("ok", "caveat"):
                return row["release"], cell
    return None


@pytest.mark.parametrize("framework", ["torch", "jax"])
@pytest.mark.parametrize("name", list(TARGETS))
def test_the_json_grid_and_the_solve_agree(name, framework):
    matrix = envpin("matrix", "--framework", framework, "--format", "json", *TARGETS[name])
    solve = envpin("solve", "--framework", framework, "--format", "json", *TARGETS[name])
    assert matrix.returncode == solve.returncode, (matrix.stderr, solve.stderr)
    grid, answer = json.loads(matrix.stdout), json.loads(solve.stdout)
    assert list(grid) == ["framework", "target", "rows"] and grid["target"] == answer["target"]
    first = first_that_runs(grid)
    if answer["status"] != "ok":
        assert first is None and matrix.returncode == 1
        return
    assert first is not None
    release, cell = first
    pin = answer["packages"][0]
    assert pin["version"].split("+")[0] == release
    if framework == "torch" and answer["accelerator"] != "mps":
        assert cell["build"] == answer["accelerator"]
    if framework == "jax":
        assert cell["build"] == (pin["extras"][0] if pin["extras"] else "cpu")


def test_a_machine_nothing_runs_on_is_exit_1_with_the_grid():
    # Tesla P100 on R440 (CUDA 10.2), Python 3.11: the cu102 builds (torch 1.12) have no Python 3.11 wheels
    result = envpin("matrix", "--facts", str(MACHINES / "linux-p100-440.33.01.json"))
    assert result.returncode == 1
    assert "no torch build runs here" in result.stdout and "driver below 450.80.02" in result.stdout


def test_text_fits_80_columns_and_is_plain_in_a_pipe():
    result = envpin("matrix", *TARGETS["1080ti-535"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines) and "\x1b" not in result.stdout
    assert "envpin solve picks torch 2.14.1+cu126" in result.stdout
    assert "no sm_61 kernels" in result.stdout


def run_on_a_terminal(*args: str, env: dict[str, str]) -> str:
    """Run envpin with its stdout on a pseudo-terminal, as a user's shell would, and read what it printed."""
    leader, follower = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | env
    process = subprocess.Popen([sys.executable, "-m", "envpin", *args], stdout=follower, stderr=subprocess.PIPE,
                               env=environment)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    return b"".join(chunks).decode()


@needs_pty
def test_colour_on_a_terminal_and_never_with_no_color():
    coloured = run_on_a_terminal("matrix", *TARGETS["1080ti-535"], env={"TERM": "xterm-256color"})
    assert "\x1b[32m" in coloured and "\x1b[1;32m[ok]\x1b[0m" in coloured
    for value in ("1", ""):
        plain = run_on_a_terminal("matrix", *TARGETS["1080ti-535"], env={"TERM": "xterm-256color", "NO_COLOR": value})
        assert "\x1b" not in plain and "[ok]" in plain
    assert "\x1b" not in run_on_a_terminal("matrix", *TARGETS["1080ti-535"], env={"TERM": "dumb"})


class _Page(HTMLParser):
    """What the page holds: its tags with their attributes, and its text."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data
        else:
            self.text.append(data)


def parsed(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def test_html_is_one_self_contained_page_with_hover_text(tmp_path):
    output = tmp_path / "matrix.html"
    result = envpin("matrix", *TARGETS["5090-570"], "-o", str(output))
    assert result.returncode == 0 and f"wrote {output}" in result.stderr and result.stdout == ""
    page = parsed(output.read_text(encoding="utf-8"))
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "link", "img", "iframe", "object", "embed", "base", "a"}
    assert all(not (value or "").lower().startswith(("http:", "https:", "//", "javascript:"))
               for _, attrs in page.tags for value in attrs.values())
    assert "url(" not in page.style and "@import" not in page.style and "@font-face" not in page.style
    cells = [attrs for tag, attrs in page.tags if tag == "td" and attrs.get("class")]
    assert len(cells) > 100 and all(attrs.get("title") for attrs in cells)
    picked = [attrs for attrs in cells if "picked" in (attrs.get("class") or "")]
    assert len(picked) == 1 and (picked[0]["title"] or "").startswith("torch 2.13.0+cu129: ok")
    assert any("no sm_120 kernels" in (attrs.get("title") or "") for attrs in cells)
    assert "Target: linux-x86_64, Python 3.12, driver 570.124.04" in "".join(page.text)
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically: no temporary file left beside it


def test_user_text_is_escaped_in_the_page(tmp_path):
    hostile = '<img src=x onerror="alert(1)">&'
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps([{"name": "<script>alert(2)</script>", "os": "linux", "arch": "x86_64",
                                      "python": {"version": "3.11"}, "driver": {"version": "550.54.15"},
                                      "gpus": [{"name": hostile, "compute_capability": "8.6"}]}]))
    result = envpin("matrix", "--targets", str(inventory), "--format", "html")
    assert result.returncode == 0, result.stderr
    assert "<script>" not in result.stdout and "<img" not in result.stdout
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in result.stdout and "&lt;img src=x onerror=&quot;" in result.stdout
    page = parsed(result.stdout)
    assert {tag for tag, _ in page.tags}.isdisjoint({"script", "img"})


FLEET = [
    {"name": "pascal-box", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "535.104.05"}, "gpus": [{"name": "NVIDIA GeForce GTX 1080 Ti"}]},
    {"name": "3090-workstations", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "550.54.14"}, "gpus": [{"name": "NVIDIA GeForce RTX 3090"}]},
    {"name": "3090-spare", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
     "driver": {"version": "550.54.14"}, "gpus": [{"name": "NVIDIA GeForce RTX 3090"}]},
    {"name": "laptops", "os": "linux", "arch": "x86_64", "python": {"version": "3.11"}, "driver": None},
]


def test_a_fleet_has_one_grid_per_machine_class(tmp_path):
    inventory = tmp_path / "fleet.json"
    inventory.write_text(json.dumps(FLEET))
    result = envpin("matrix", "--targets", str(inventory), "--format", "json")
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)["results"]
    assert [r["targets"] for r in results] == [["pascal-box"], ["3090-workstations", "3090-spare"], ["laptops"]]
    assert all(list(r) == ["targets", "framework", "target", "rows"] for r in results)
    page = envpin("matrix", "--targets", str(inventory), "--format", "html")
    sections = parsed(page.stdout).tags
    assert [tag for tag, _ in sections].count("section") == 3 and "3090-workstations, 3090-spare" in page.stdout
    text = envpin("matrix", "--targets", str(inventory))
    assert text.stdout.count("\n== ") + text.stdout.startswith("== ") == 3


def test_the_format_follows_the_file_name(tmp_path):
    for name, check in (("grid.json", lambda t: json.loads(t)["framework"] == "torch"),
                        ("grid.html", lambda t: t.startswith("<!DOCTYPE html>")),
                        ("grid.txt", lambda t: t.startswith("torch on linux-x86_64"))):
        result = envpin("matrix", *TARGETS["1080ti-535"], "-o", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
        assert check((tmp_path / name).read_text(encoding="utf-8")), name


@pytest.mark.parametrize("words", [
    ["--framework", "caffe"], ["--framework", "torch", "--framework", "jax"], ["--os", "plan9"], ["--bogus"],
    ["--targets", "/nonexistent/fleet.json"], ["-o", "."], ["--driver-policy", "lenient"],
])
def test_bad_input_is_exit_2_one_line_or_one_json_document(words, tmp_path):
    target = [] if "--targets" in words or "--os" in words else TARGETS["1080ti-535"]
    for output in ([], ["--format", "json"]):
        result = subprocess.run([sys.executable, "-m", "envpin", "matrix", *target, *words, *output], capture_output=True,
                                text=True, cwd=tmp_path, timeout=60)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, words
        if output:
            assert json.loads(result.stdout)["status"] == "error"
        else:
            assert result.stdout == ""
    assert list(Path(tmp_path).iterdir()) == []


def test_a_gpu_whose_driver_does_not_answer_gets_no_grid_as_it_gets_no_solve(tmp_path):
    """The facts say an NVIDIA GPU is there but its driver does not answer (nvidia-smi: "No devices were found"):
    `envpin solve` refuses to answer the CPU build (exit 3), and so does the grid, which would otherwise show the
    machine as one without a GPU."""
    machine = json.loads((MACHINES / "linux-no-nvidia.json").read_text())
    machine["driver_trouble"] = {"state": "no-devices", "evidence": [],
                                 "message": "nvidia-smi failed (exit status 6): No devices were found"}
    (tmp_path / "node.json").write_text(json.dumps(machine))
    assert envpin("solve", "--facts", str(tmp_path / "node.json")).returncode == 3
    result = envpin("matrix", "--facts", str(tmp_path / "node.json"))
    assert result.returncode == 3 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "No devices were found" in result.stderr and "envpin doctor" in result.stderr
    document = json.loads(envpin("matrix", "--facts", str(tmp_path / "node.json"), "--format", "json").stdout)
    assert document["error"]["code"] == "driver-broken"
    asked = envpin("matrix", "--facts", str(tmp_path / "node.json"), "--driver", "none")
    assert asked.returncode == 0 and "[ok]" in asked.stdout
    # In an inventory the same: the machine is named, and no grid is shown for it or passed off as the fleet's.
    healthy = {**json.loads((MACHINES / "linux-t4-515.105.01.json").read_text()), "name": "t4-node"}
    (tmp_path / "fleet.json").write_text(json.dumps([healthy, {**machine, "name": "gpu-b"}]))
    fleet = envpin("matrix", "--targets", str(tmp_path / "fleet.json"))
    assert fleet.returncode == 3 and fleet.stdout == "" and fleet.stderr.count("\n") == 1
    assert "gpu-b (nvidia-smi runs but finds no GPU" in fleet.stderr and "t4-node" not in fleet.stderr
    assert envpin("matrix", "--targets", str(tmp_path / "fleet.json"), "--driver", "none").returncode == 0


def test_the_matrix_page_shows_the_real_grid_of_the_recorded_t4_machine():
    command = "envpin matrix --facts tests/fixtures/doctor/machines/linux-t4-515.105.01.json"
    readme = (REPO / "docs" / "matrix.md").read_text(encoding="utf-8")
    shown = readme.split(f"$ {command}\n", 1)[1].split("```", 1)[0]
    result = subprocess.run([sys.executable, "-m", "envpin", *command.split()[1:]], capture_output=True, text=True,
                            cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert shown == result.stdout
