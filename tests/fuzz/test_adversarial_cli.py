"""Every command, tried as an adversarial new user would: bad flags, files, environment variables, special files
and encodings (issue 16). Each case must end in exit 2 with one line on stderr (with `--format json` also one
JSON document on stdout), no traceback, and nothing written anywhere: the working directory and the input
folder are compared before and after.

The cases are a table built from each option's bad values, crossed with the commands that take the option;
they run in-process through envpin's front door, so the whole table costs seconds. Special files are made in a
temporary directory (mkfifo, mknod), never the machine's own /dev."""

from __future__ import annotations

import io
import json
import os
import stat
import threading
from pathlib import Path

from envpin.base.record import Record, record
from envpin.cli import main

TARGET = {"--os": "linux", "--arch": "x86_64", "--driver": "550.54.15", "--gpu": "NVIDIA GeForce RTX 3090",
          "--python": "3.11"}


@record
class Case(Record):
    name: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    stdin: bytes | None = None


# ---------------------------------------------------------------- the bad values, per option


def bad_target_values() -> dict[str, list[str]]:
    return {
        "--os": ["", "plan9", "Linux ", "linux\tx", "ｌｉｎｕｘ"],
        "--arch": ["", "sparc64", "x86", "arm"],
        "--driver": ["", "abc", "99999", "5.5.5.5", "-535", "５３５.１０４", "535..104", "535.104.05.1", "5_35.104"],
        "--gpu": ["", "NVIDIA GeForce RTX 9999 Ti Ultra", "not a gpu"],
        "--python": ["", "2.7", "3", "three", "3.x", "3.11.", "３.１１"],
    }


BAD_COMPUTE_CAPABILITIES = ["", "8", "8.6.1", "99.9", "a.b", "-1.0", "８.６"]
BOUNDS_ONLY_SPECS = ("numpy==1.26",)  # bad alone (nothing to solve), good beside a framework
BAD_SPECS = ["", "torch===", "numpy==1.26", "torch; python_version < '3'", "torch @ https://example.com/t.whl",
             "torch==2.5.1 foo===", "torch[", "torch>=abc", "tensorflow==2.16.1 jax[cuda12"]
BAD_FRAMEWORKS = ["caffe", "", "TORCH ", "pytorch2"]
BAD_POLICIES = ["lenient", "", "MINOR"]
BAD_INDEX_URLS = ["ftp://mirror.example/whl", "http://mirror.example/whl", "http://127.evil.example/whl", "not a url",
                  "https://m.example/whl\n-e git+https://evil.example/x", "https://m.example/ whl", "file", "",
                  "http://localhost.evil.example/whl", "https://"]
BAD_TIMEOUTS = ["0", "-5", "inf", "nan", "soon", ""]


def bad_files(folder: Path) -> dict[str, Path]:
    """Files a user might pass where envpin expects JSON facts, a requirements file or a lock."""
    files = {}

    def make(name: str, data: bytes) -> None:
        path = folder / name
        path.write_bytes(data)
        files[name] = path

    make("empty.json", b"")
    make("null.json", b"null")
    make("list.json", b"[]")
    make("object.json", b"{}")
    make("number.json", b"42")
    make("binary.json", bytes(range(256)))
    make("latin1.json", '{"os": "linux", "arch": "x86_64", "python": {"version": "3.11"}, "x": "é"}'.encode("latin-1"))
    make("utf16-garbage.json", b"\xff\xfe" + "not json at all".encode("utf-16-le"))
    make("deep.json", b"[" * 100000 + b"]" * 100000)
    make("wrong-types.json", json.dumps({"schema": 1, "os": 7, "arch": [], "python": "3.11", "gpus": "many"}).encode())
    make("future-schema.json", json.dumps({"schema": 99, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"}}).encode())
    make("bad-gpu.json", json.dumps({"schema": 1, "os": "linux", "arch": "x86_64", "python": {"version": "3.11"},
                                     "driver": {"version": "550.54.15", "cuda": "12.4", "source": "nvml"},
                                     "gpus": [{"index": 0, "name": "X", "compute_capability": "banana"}]}).encode())
    make("huge-number.json", b'{"schema": 1' + b"0" * 5000 + b"}")
    big = folder / "sparse-huge.json"
    with open(big, "wb") as handle:
        handle.truncate(65 * 1024 * 1024)
    files["sparse-huge.json"] = big
    files["missing.json"] = folder / "missing.json"
    files["a-directory"] = folder / "a-directory"
    files["a-directory"].mkdir()
    try:
        os.mknod(folder / "zero", stat.S_IFCHR | 0o444, os.makedev(1, 5))
        files["zero-device"] = folder / "zero"
    except PermissionError:
        pass
    return files


# ---------------------------------------------------------------- the table


def flags(values: dict[str, str], drop: str | None = None) -> list[str]:
    words: list[str] = []
    for option, value in values.items():
        if option != drop:
            words += [option, value]
    return words


def cases(folder: Path) -> list[Case]:
    files = bad_files(folder)
    table: list[Case] = []
    solve_like = {"solve": ["solve"], "lock": ["lock", "-o", str(folder / "out" / "pylock.toml")],
                  "init": ["init", str(folder / "repo")], "check": ["check", str(folder / "ok-requirements.txt")],
                  "matrix": ["matrix"]}
    (folder / "ok-requirements.txt").write_text("requests==2.32.3\n")
    (folder / "repo").mkdir()
    (folder / "repo" / "requirements.txt").write_text("torch==2.5.1\n")
    for command, head in solve_like.items():
        for option, values in bad_target_values().items():
            for value in values:
                words = [*head, *flags(TARGET, drop=option), option, value]
                table.append(Case(f"{command} {option}={value!r}", tuple(words)))
        for value in BAD_COMPUTE_CAPABILITIES:
            table.append(Case(f"{command} --compute-capability={value!r}",
                              (*head, *flags(TARGET), "--compute-capability", value)))
        for name, path in files.items():
            table.append(Case(f"{command} --facts {name}", (*head, "--facts", str(path))))
        for value in BAD_POLICIES:
            table.append(Case(f"{command} --driver-policy={value!r}", (*head, *flags(TARGET), "--driver-policy", value)))
    for command in ("solve", "lock", "init"):
        head = solve_like[command]
        for value in BAD_SPECS:
            if command == "init" and value in BOUNDS_ONLY_SPECS:
                continue  # init reads its repo's torch line: a numpy bound beside it is a good request
            table.append(Case(f"{command} --spec={value!r}", (*head, *flags(TARGET), "--spec", value)))
        for value in BAD_FRAMEWORKS:
            table.append(Case(f"{command} --framework={value!r}", (*head, *flags(TARGET), "--framework", value)))
        for value in BAD_INDEX_URLS:
            table.append(Case(f"{command} --torch-index-url={value!r}", (*head, *flags(TARGET), "--torch-index-url", value)))
            if value:
                table.append(Case(f"{command} ENVPIN_TORCH_INDEX_URL={value!r}", (*head, *flags(TARGET)),
                                  env=(("ENVPIN_TORCH_INDEX_URL", value),)))
        for name in ("missing.json", "a-directory", "binary.json"):
            table.append(Case(f"{command} --db {name}", (*head, *flags(TARGET), "--db", str(files[name]))))
    for value in BAD_FRAMEWORKS:
        table.append(Case(f"matrix --framework={value!r}", ("matrix", *flags(TARGET), "--framework", value)))
        table.append(Case(f"matrix --format json --framework={value!r}",
                          ("matrix", "--format", "json", *flags(TARGET), "--framework", value)))
    for value in BAD_SPECS[1:]:
        table.append(Case(f"solve requirement argument {value!r}", ("solve", *flags(TARGET), value)))
    for name, path in files.items():
        table.append(Case(f"solve --targets {name}", ("solve", "--targets", str(path))))
        table.append(Case(f"matrix --targets {name}", ("matrix", "--targets", str(path))))
        table.append(Case(f"matrix --format json --targets {name}", ("matrix", "--format", "json", "--targets", str(path))))
        table.append(Case(f"solve -r {name}", ("solve", *flags(TARGET), "-r", str(path))))
        table.append(Case(f"solve --format json --facts {name}", ("solve", "--format", "json", "--facts", str(path))))
        table.append(Case(f"doctor --facts {name}", ("doctor", "--facts", str(path))))
        table.append(Case(f"doctor --format json --facts {name}", ("doctor", "--format", "json", "--facts", str(path))))
        table.append(Case(f"verify --lock {name}", ("verify", "--no-smoke", "--lock", str(path))))
        table.append(Case(f"install --lock {name}", ("install", "--prefix", str(folder / "env"), "--lock", str(path))))
        table.append(Case(f"check --config {name}", ("check", str(folder / "ok-requirements.txt"), "--config", str(path))))
        table.append(Case(f"fleet status --targets {name}", ("fleet", "status", "--targets", str(path), "--python", "3.11")))
        table.append(Case(f"fleet manifests --targets {name}", ("fleet", "manifests", "--targets", str(path), "--python",
                                                                "3.11", "--format", "dockerfile", "-o", str(folder / "out"))))
    for target in (folder / "a-directory", folder / "no-such-dir" / "environment.yml", folder / "plan.unknown"):
        table.append(Case(f"solve -o {target.name}", ("solve", *flags(TARGET), "-o", str(target))))
        table.append(Case(f"matrix -o {target.name}", ("matrix", *flags(TARGET), "-o", str(target))))
    for target in (folder / "a-directory", folder / "no-such-dir" / "matrix.html"):
        table.append(Case(f"matrix --format html -o {target.name}",
                          ("matrix", "--format", "html", *flags(TARGET), "-o", str(target))))
    for timed in (["detect"], ["verify"], ["doctor", "--facts", str(files["object.json"])],
                  ["install", "--prefix", str(folder / "env")]):
        for value in BAD_TIMEOUTS:
            table.append(Case(f"{timed[0]} --timeout={value!r}", (*timed, "--timeout", value)))
    for value in BAD_TIMEOUTS:
        table.append(Case(f"lock --lock-timeout={value!r}", ("lock", *flags(TARGET), "--lock-timeout", value)))
        table.append(Case(f"fleet detect --timeout={value!r}", ("fleet", "detect", "--slurm", "-o",
                                                                 str(folder / "out" / "fleet.json"), "--timeout", value)))
    misc: tuple[tuple[str, ...], ...] = (
        ("check",), ("check", str(files["missing.json"])), ("check", "--kind", "yaml", str(folder / "ok-requirements.txt")),
        ("check", "--ignore", "CHK-NOPE", str(folder / "ok-requirements.txt")),
        ("verify", "--interpreter", str(files["missing.json"])), ("verify", "--interpreter", str(files["a-directory"])),
        ("verify", "--prefix", str(files["missing.json"])), ("verify", "--interpreter", "/bin/sh", "--prefix", "/"),
        ("doctor", "--facts", str(files["object.json"]), "--error-text", str(files["missing.json"])),
        ("doctor", "--facts", str(files["object.json"]), "--script", str(files["a-directory"])),
        ("db", "info", "--db", str(files["missing.json"])), ("db", "validate", str(files["missing.json"])),
        ("db",), ("db", "nope"), ("conda",), ("conda", "solve", str(files["missing.json"])),
        ("install", "--prefix", str(folder / "env"), "--backend", "pipx"),
        ("install", "--prefix", str(folder / "env"), "--environment-yml", str(files["missing.json"])),
        ("install", "--prefix", str(folder / "env"), "--lock", str(folder / "ok-requirements.txt")),
        ("init", str(files["missing.json"]), *flags(TARGET)), ("init", str(folder / "ok-requirements.txt"), *flags(TARGET)),
        ("solve", "--project", str(files["missing.json"]), *flags(TARGET)),
        ("solve", "--format", "yaml"), ("solve", "--bogus"), ("nonsense",), (), ("--format", "json"),
        ("fleet",), ("fleet", "detect", "-o", str(folder / "out" / "fleet.json")),  # --slurm is required
        ("fleet", "manifests", "--targets", str(files["object.json"]), "--format", "kubernetes", "-o", str(folder / "out")),
        ("fleet", "status", "--targets", str(files["object.json"]), "--reports", str(files["missing.json"])),
        ("fleet", "provision", "--slurm", "--targets", str(files["list.json"]), "-o", str(folder / "out"),
         "--prefix-root", str(folder / "envs"), "--no-submit"),
        ("matrix", "--format", "yaml"), ("matrix", "--bogus"), ("matrix", *flags(TARGET), "extra-word"),
        ("matrix", *flags(TARGET), "--framework", "torch", "--framework", "jax"),
        ("matrix", "--format", "json", *flags(TARGET), "--framework", "torch", "--framework", "jax"),
        ("solve", *flags(TARGET), "--conda-source", "pip", "--format", "pip", "--name", "a\nb"),
    )
    for args in misc:
        table.append(Case("misc " + " ".join(args)[:80], args))
    table.append(Case("solve --facts - (binary stdin)", ("solve", "--facts", "-"), stdin=bytes(range(256))))
    table.append(Case("solve --targets - (empty stdin)", ("solve", "--targets", "-"), stdin=b""))
    return table


# ---------------------------------------------------------------- running one case


def snapshot(*folders: Path) -> dict[str, tuple[int, float]]:
    seen = {}
    for folder in folders:
        for path in folder.rglob("*"):
            info = path.lstat()
            seen[str(path)] = (info.st_size, info.st_mtime)
    return seen


def run_case(case: Case, monkeypatch, capsys) -> tuple[int, str, str]:
    for key, value in case.env:
        monkeypatch.setenv(key, value)
    if case.stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(case.stdin)))
    try:
        code = main(list(case.args))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    out, err = capsys.readouterr()
    for key, _ in case.env:
        monkeypatch.delenv(key)
    return code, out, err


def test_every_bad_input_is_exit_2_one_line_and_touches_nothing(tmp_path, monkeypatch, capsys):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("ENVPIN_TORCH_INDEX_URL", raising=False)
    monkeypatch.delenv("ENVPIN_INDEX_URL", raising=False)
    table = cases(inputs)
    assert len(table) >= 300, len(table)
    before = snapshot(inputs, work)
    failures = []
    for case in table:
        code, out, err = run_case(case, monkeypatch, capsys)
        lines = err.splitlines()
        problem = None
        if code != 2:
            problem = f"exit {code}"
        elif len(lines) != 1 or not lines[0].startswith("envpin"):
            problem = f"stderr is not one envpin line: {err[-300:]!r}"
        elif "Traceback" in err or "Traceback" in out:
            problem = "a traceback"
        elif "--format" in case.args and "json" in case.args and case.args[0] != "check":
            try:
                document = json.loads(out)
                if document.get("status") != "error":
                    problem = f"the JSON document is not an error: {out[:200]!r}"
            except ValueError:
                problem = f"stdout is not one JSON document: {out[:200]!r}"
        if problem is None and snapshot(inputs, work) != before:
            problem = "files were written or changed"
            before = snapshot(inputs, work)
        if problem:
            failures.append(f"{case.name}: {problem}")
    handled = len(table) - len(failures)
    print(f"adversarial CLI inputs: {len(table)} tried, {handled} handled")
    assert failures == [], f"{len(failures)} of {len(table)} mishandled:\n" + "\n".join(failures)


def test_a_fifo_for_input_is_refused_unopened_and_a_pipe_is_read_on_stdin(tmp_path, monkeypatch, capsys):
    """A FIFO is never opened (docs/hardening.md): one with no writer would block envpin forever, and a file a
    project names cannot be told from one with a writer. A pipe is `-`: `cmd | envpin solve --facts -`."""
    fifo = tmp_path / "facts"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"\x00garbage{"), daemon=True)
    writer.start()
    code, out, err = run_case(Case("fifo", ("solve", "--facts", str(fifo))), monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "--facts" in err and "a FIFO, not a regular file" in err
    fifo.read_bytes()  # the reader envpin did not become: the writer finishes
    writer.join(timeout=10)
    assert not writer.is_alive()
    code, out, err = run_case(Case("pipe", ("solve", "--facts", "-"), stdin=b"\x00garbage{"), monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "--facts -" in err and "not JSON" in err
