"""Proof of installability: every plan envpin prints for a matrix of targets, resolved by real uv.

For each target the plan is made as `envpin solve --format requirements.txt` makes it, then resolved:

- a plan PyPI serves (every pin without an index URL) with `uv pip compile` against the real PyPI, for the
  target's platform and Python (`--python-platform`, `--python-version`), dependencies and all;
- a plan with download.pytorch.org pins against the recorded snapshot of that index (tests/fixtures/torch_index,
  served on 127.0.0.1): every pinned file must be on the index for the target's platform and Python (a resolve
  with `--no-deps`, since the snapshot records file names, not metadata), and the same versions without their
  local tags must resolve together on PyPI (the companions' Requires-Dist pins agree with torch's).

Then the import-time rules the database records are applied to what uv resolved (data the audit reads from the
database's YAML, so it follows the database): a build compiled against NumPy 1.x (`numpy_below_2` for the
target's platform) must not get NumPy 2, and a companion build whose import compares CUDA versions
(`cuda_check: minor` / `major` in its `builds`) must sit beside a torch of the same CUDA minor / major.

A plan that does not resolve, or resolves to an environment that fails those rules at import, fails the audit. `scripts/audit-plans` runs it (exit 1 on any failure); the test
marked `audit` (tests/integration/test_audit_plans.py) runs it in CI, which reaches pypi.org.

`--projects` is the project mode: `envpin solve --project --resolve` for every file of the repositories' corpus
(tests/fixtures/repos, expected.toml) and each of its two machines. An answer is `ok` only where it is a plan that uv
resolved end to end (the project's lines beside the pins); the report lists the rest (a plan uv could not be asked
about, with why; a refusal, with its code) and ends with n/N.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envpin.base.record import Record, record  # noqa: E402 - the checkout's envpin, whatever is installed
from envpin.cli import main as envpin_main  # noqa: E402
from envpin.compat.loader import _read_documents, default_database_path  # noqa: E402
from envpin.lock.engines import INDEX_VARIABLES, UV_PLATFORMS, find_uv  # noqa: E402
from scripts.torch_index_snapshot import SNAPSHOT, serve_snapshot  # noqa: E402

PYPI = "https://pypi.org/simple"
MACOS_ARM64_VERSION = "14.0"
H100, RTX4090, RTX3090, GH200 = "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090", "NVIDIA GH200 480GB"


@record
class AuditTarget(Record):
    name: str
    os: str
    arch: str
    python: str
    driver: str | None = None
    gpus: tuple[str, ...] = ()
    request: tuple[str, ...] = ("--framework", "torch")  # envpin solve's request options

    @property
    def platform(self) -> str:
        return f"{self.os}-{self.arch}"

    def argv(self, torch_index: str | None = None) -> list[str]:
        words = ["solve", *self.request, "--os", self.os, "--arch", self.arch, "--python", self.python,
                 "--driver", self.driver or "none", "--format", "requirements.txt"]
        for gpu in self.gpus:
            words += ["--gpu", gpu]
        if torch_index:
            words += ["--torch-index-url", torch_index]
        return words


def _targets() -> list[AuditTarget]:
    targets = []
    linux = ("linux", "x86_64")
    for python in ("3.11", "3.12", "3.13", "3.14"):
        targets.append(AuditTarget(f"torch-linux-h100-py{python}", *linux, python, "580.65.06", (H100,)))
    for python in ("3.11", "3.12"):
        targets.append(AuditTarget(f"torch-linux-aarch64-gh200-py{python}", "linux", "aarch64", python, "580.65.06", (GH200,)))
    for python in ("3.11", "3.12", "3.13"):
        targets.append(AuditTarget(f"torch-windows-cpu-py{python}", "windows", "x86_64", python))
        targets.append(AuditTarget(f"torch-macos-arm64-py{python}", "macos", "arm64", python))
    for python in ("3.11", "3.12"):
        targets.append(AuditTarget(f"torch-macos-x86_64-py{python}", "macos", "x86_64", python))
    # older releases whose PyPI Linux wheel is the CUDA build the driver needs
    # (the strict policy keeps each to the CUDA build PyPI has: the toolkit's own driver minimum decides)
    for spec, driver in (("torch==2.5.1", "550.54.14"), ("torch==2.4.1", "535.104.05"), ("torch==2.7.1", "560.35.03"),
                         ("torch==2.8.0", "570.86.10"), ("torch==2.3.1", "535.104.05"),
                         # PyPI's cu130 builds beside torchaudio 2.11.0, whose import checks the CUDA minor
                         ("torch==2.12.0", "580.65.06"), ("torch==2.14.1", "580.65.06")):
        targets.append(AuditTarget(f"{spec}-linux-4090", *linux, "3.11", driver, (RTX4090,),
                                   ("--spec", spec, "--framework", "torch", "--driver-policy", "strict")))
    tensorflow = ("--framework", "tensorflow")
    for python in ("3.11", "3.12"):
        targets.append(AuditTarget(f"tensorflow-linux-4090-py{python}", *linux, python, "570.86.10", (RTX4090,), tensorflow))
        targets.append(AuditTarget(f"tensorflow-linux-cpu-py{python}", *linux, python, None, (), tensorflow))
        targets.append(AuditTarget(f"tensorflow-macos-arm64-py{python}", "macos", "arm64", python, None, (), tensorflow))
        targets.append(AuditTarget(f"tensorflow-windows-cpu-py{python}", "windows", "x86_64", python, None, (), tensorflow))
    targets.append(AuditTarget("tensorflow-linux-aarch64-py3.11", "linux", "aarch64", "3.11", None, (), tensorflow))
    targets.append(AuditTarget("tensorflow==2.15.*-linux-3090", *linux, "3.11", "535.104.05", (RTX3090,),
                               ("--spec", "tensorflow==2.15.*")))
    jax = ("--framework", "jax")
    for python in ("3.11", "3.12", "3.13"):
        targets.append(AuditTarget(f"jax-linux-h100-py{python}", *linux, python, "580.65.06", (H100,), jax))
    targets.append(AuditTarget("jax-linux-3090-535", *linux, "3.12", "535.104.05", (RTX3090,), jax))
    targets.append(AuditTarget("jax-linux-cpu-py3.12", *linux, "3.12", None, (), jax))
    targets.append(AuditTarget("jax-linux-aarch64-gh200", "linux", "aarch64", "3.12", "580.65.06", (GH200,), jax))
    targets.append(AuditTarget("jax-macos-arm64-py3.12", "macos", "arm64", "3.12", None, (), jax))
    targets.append(AuditTarget("jax-windows-cpu-py3.12", "windows", "x86_64", "3.12", None, (), jax))
    both = ("--framework", "torch", "--framework", "jax")
    targets.append(AuditTarget("torch+jax-linux-h100", *linux, "3.12", "580.65.06", (H100,), both))
    targets.append(AuditTarget("torch+jax-macos-arm64", "macos", "arm64", "3.12", None, (), both))
    targets.append(AuditTarget("torch+tensorflow-linux-h100", *linux, "3.12", "580.65.06", (H100,),
                               ("--framework", "torch", "--framework", "tensorflow")))
    targets.append(AuditTarget("torch+tensorflow-windows-cpu", "windows", "x86_64", "3.12", None, (),
                               ("--framework", "torch", "--framework", "tensorflow")))
    targets.append(AuditTarget("tensorflow+jax-linux-4090", *linux, "3.12", "570.86.10", (RTX4090,),
                               ("--framework", "tensorflow", "--framework", "jax")))
    targets.append(AuditTarget("all-three-macos-arm64", "macos", "arm64", "3.12", None, (),
                               ("--framework", "torch", "--framework", "tensorflow", "--framework", "jax")))
    # a project's numpy bound weighed against the releases' own numpy requirement (tensorflow.yaml / jax.yaml `numpy`):
    # google-research/multinerf's requirements.txt (numpy>=1.22, <1.24 beside unpinned jax and tensorflow), every
    # line of it resolved, and the same bound given with --spec
    multinerf = ("-r", str(REPO / "tests" / "fixtures" / "repos" / "google-research--multinerf" / "requirements.txt"))
    targets.append(AuditTarget("multinerf-linux-5090-py3.11", *linux, "3.11", "570.86.10", ("NVIDIA GeForce RTX 5090",),
                               multinerf))
    targets.append(AuditTarget("multinerf-windows-1080ti-py3.9", "windows", "x86_64", "3.9", "472.12",
                               ("NVIDIA GeForce GTX 1080 Ti",), multinerf))
    targets.append(AuditTarget("tensorflow+jax+numpy<1.24-linux-4090", *linux, "3.11", "570.86.10", (RTX4090,),
                               ("--spec", "tensorflow", "--spec", "jax", "--spec", "numpy<1.24")))
    # torch 2.2.2 (compiled against NumPy 1.x: numpy<2) beside jax, whose releases from 0.7.2 require numpy>=2.0
    targets.append(AuditTarget("torch==2.2.2+jax-linux-3090", *linux, "3.11", "535.104.05", (RTX3090,),
                               ("--spec", "torch==2.2.2", "--spec", "jax", "--driver-policy", "strict")))
    # download.pytorch.org plans: checked against the recorded snapshot of the index
    for name, target in SNAPSHOT_TARGETS.items():
        targets.append(AuditTarget(name, **target))
    return targets


# Targets whose plans come from download.pytorch.org: the builds the snapshot records (scripts/torch_index_snapshot.py).
# torch alone (a --spec without --framework), since the snapshot records torch's pages only.
SNAPSHOT_TARGETS: dict[str, dict] = {
    **{f"torch==2.5.1+cu124-linux-py{python}": {"os": "linux", "arch": "x86_64", "python": python, "driver": "535.104.05",
                                              "gpus": (RTX3090,), "request": ("--spec", "torch==2.5.1+cu124")}
       for python in ("3.10", "3.11", "3.12", "3.13")},
    **{f"torch==2.5.1+cu124-windows-py{python}": {"os": "windows", "arch": "x86_64", "python": python, "driver": "560.94",
                                                "gpus": (RTX3090,), "request": ("--spec", "torch==2.5.1+cu124")}
       for python in ("3.10", "3.11", "3.12")},
    **{f"torch==2.7.1-linux-5090-py{python}": {"os": "linux", "arch": "x86_64", "python": python, "driver": "570.86.10",
                                             "gpus": ("NVIDIA GeForce RTX 5090",), "request": ("--spec", "torch==2.7.1")}
       for python in ("3.11", "3.12", "3.13")},
}


@record
class Outcome(Record):
    target: AuditTarget
    status: str  # resolved / failed / unsatisfiable (envpin printed no plan: not a plan to audit)
    where: str  # PyPI, or the snapshot of download.pytorch.org
    detail: str  # the pins, or why it failed


def plan_text(target: AuditTarget, database: str | None, torch_index: str | None = None) -> tuple[int, str, str]:
    argv = target.argv(torch_index) + (["--db", database] if database else [])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = envpin_main(argv)
    return code, out.getvalue(), err.getvalue()


def uv_compile(uv: str, requirements: str, target: AuditTarget, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(dir=cache.parent) as scratch:
        path = Path(scratch) / "requirements.txt"
        path.write_text(requirements, encoding="utf-8")
        argv = [uv, "pip", "compile", str(path), "--no-config", "--no-header", "--quiet",
                "--python-platform", UV_PLATFORMS[target.platform], "--python-version", target.python,
                "--cache-dir", str(cache), *extra]
        env = {k: v for k, v in os.environ.items() if k not in INDEX_VARIABLES}
        env["UV_PYTHON_DOWNLOADS"] = "never"  # resolving needs no interpreter of that version: never fetch one
        if target.platform == "macos-arm64":
            # uv assumes macOS 13 unless told; torch 2.15.0's arm64 wheel is macosx_14_0 (the database records no
            # macOS minimum), so the audit targets macOS 14, the oldest the newest wheels serve.
            env["MACOSX_DEPLOYMENT_TARGET"] = MACOS_ARM64_VERSION
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


def pins_of(requirements: str) -> list[str]:
    return [line for line in requirements.splitlines() if line and not line.startswith(("#", "-"))]


def make_plan(target: AuditTarget, database: str | None, snapshot_url: str) -> tuple[int, str, str]:
    """The plan's requirements, with the PyTorch index at the snapshot's address (the only change to it)."""
    return plan_text(target, database, f"{snapshot_url}/whl")


def resolved_pins(output: str) -> dict[str, str]:
    """name -> version of `uv pip compile` output (`torch==2.5.1+cu124`, extras dropped)."""
    found = {}
    for line in output.splitlines():
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)", line.strip())
        if match:
            found[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return found


def _release(documents: dict, file: str, version: str) -> dict | None:
    releases = (documents.get(file) or {}).get("releases") or []
    return next((r for r in releases if str(r.get("version")) == version.split("+")[0]), None)


def _minor(cuda: str | None) -> tuple[str, ...]:
    return tuple((cuda or "").split(".")[:2])


def import_problems(documents: dict, target: AuditTarget, resolved: dict[str, str]) -> list[str]:
    """What would fail at `import` in the resolved environment, by the rules the database records."""
    problems = []
    numpy = resolved.get("numpy")
    for package, file in (("torch", "torch.yaml"), ("tensorflow", "tensorflow.yaml"), ("tensorflow-cpu", "tensorflow.yaml"),
                          ("jax", "jax.yaml")):
        release = _release(documents, file, resolved[package]) if package in resolved else None
        if release and target.platform in (release.get("numpy_below_2") or []) and numpy and not numpy.startswith(("0.", "1.")):
            problems.append(f"{package} {resolved[package]} was compiled against NumPy 1.x on {target.platform}, "
                            f"and uv resolved numpy {numpy}")
    torch = resolved.get("torch")
    release = _release(documents, "torch.yaml", torch) if torch else None
    if release is None or torch is None:
        return problems
    variant_name = torch.partition("+")[2] or (release.get("pypi") or {}).get(target.platform)
    torch_cuda = ((release.get("variants") or {}).get(variant_name) or {}).get("cuda")
    for companion in ("torchvision", "torchaudio"):
        record, version = release.get(companion), resolved.get(companion)
        if not isinstance(record, dict) or version is None:
            continue
        local = version.partition("+")[2]
        for build in record.get("builds") or []:
            if str(build.get("version")) != version.split("+")[0]:
                continue
            on_pypi = build.get("index") == "pypi" and not local and target.platform in (build.get("platforms") or [])
            on_index = local and local in (build.get("indexes") or [])
            if not (on_pypi or on_index):
                continue
            cuda = build.get("cuda") if on_pypi else torch_cuda
            check = build.get("cuda_check", "none")
            depth = {"minor": 2, "major": 1}.get(check)
            if depth and cuda and torch_cuda and _minor(cuda)[:depth] != _minor(torch_cuda)[:depth]:
                problems.append(f"{companion} {version} checks the CUDA {check} at import: it is built for CUDA {cuda}, "
                                f"torch {torch} for CUDA {torch_cuda}")
            break
    return problems


def audit_one(uv: str, target: AuditTarget, planned: tuple[int, str, str], cache: Path, documents: dict | None = None) -> Outcome:
    code, text, err = planned
    if code != 0:
        said = [line for line in (text + err).splitlines() if line.strip()]
        why = next((line for line in said if "no solution" in line), said[-1] if said else f"exit {code}")
        return Outcome(target, "unsatisfiable", "-", why)
    pins = pins_of(text)
    if not any(line.startswith("--") for line in text.splitlines()):  # every pin from PyPI
        result = uv_compile(uv, text, target, cache, "--default-index", PYPI)
        return _outcome(target, result, "PyPI", pins, documents)
    # every pinned file on the recorded index, for this platform and Python ...
    on_index = uv_compile(uv, text, target, cache, "--no-deps", "--index-strategy", "unsafe-best-match",
                          "--default-index", PYPI)
    if on_index.returncode != 0:
        return _outcome(target, on_index, "download.pytorch.org snapshot", pins)
    # ... and the same releases resolving together with their dependencies on PyPI
    public = "\n".join(re.sub(r"\+[A-Za-z0-9.]+$", "", pin) for pin in pins) + "\n"
    paired = uv_compile(uv, public, target, cache, "--default-index", PYPI)
    outcome = _outcome(target, paired, "download.pytorch.org snapshot + PyPI pairing", pins)
    if outcome.status == "resolved" and documents is not None:  # the rules judge the plan's own builds
        resolved = resolved_pins(paired.stdout) | resolved_pins("\n".join(pins))
        broken = import_problems(documents, target, resolved)
        if broken:
            return Outcome(target, "failed", outcome.where, f"{outcome.detail}: fails at import: {'; '.join(broken)}")
    return outcome


def _outcome(target: AuditTarget, result: subprocess.CompletedProcess, where: str, pins: list[str],
             documents: dict | None = None) -> Outcome:
    if result.returncode == 0:
        broken = import_problems(documents, target, resolved_pins(result.stdout)) if documents is not None else []
        if broken:
            return Outcome(target, "failed", where, f"{', '.join(pins)}: resolves, but fails at import: {'; '.join(broken)}")
        return Outcome(target, "resolved", where, ", ".join(pins))
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    why = next((line for line in lines if "because" in line.lower()), lines[-1] if lines else f"exit {result.returncode}")
    return Outcome(target, "failed", where, f"{', '.join(pins)}: {why}")


def run_audit(database: str | None = None, jobs: int = 4, only: str | None = None, work: Path | None = None,
              snapshot: Path = SNAPSHOT) -> list[Outcome]:
    uv = find_uv()
    if uv is None:
        raise SystemExit("audit-plans: uv is not installed")
    targets = [t for t in _targets() if only is None or only in t.name]
    owned = work is None
    work = Path(tempfile.mkdtemp(prefix="envpin-audit-")) if work is None else work
    cache = work / "uv-cache"  # shared by the run's uv calls: each file's metadata is fetched once
    cache.mkdir(parents=True, exist_ok=True)
    documents = _read_documents(Path(database) if database else default_database_path())
    try:
        with serve_snapshot(snapshot) as url:
            # The plans first, in this thread (envpin's main writes to the process's stdout), then uv in parallel.
            plans = [make_plan(target, database, url) for target in targets]
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                return list(pool.map(lambda pair: audit_one(uv, pair[0], pair[1], cache, documents),
                                     zip(targets, plans, strict=True)))
    finally:
        if owned:
            shutil.rmtree(work, ignore_errors=True)


def report(outcomes: list[Outcome]) -> str:
    counts = {status: sum(1 for o in outcomes if o.status == status) for status in ("resolved", "failed", "unsatisfiable")}
    lines = [f"{o.status:13} {o.target.name:40} [{o.where}] {o.detail}" for o in outcomes]
    lines.append(f"{len(outcomes)} targets: {counts['resolved']} resolved, {counts['failed']} failed, "
                 f"{counts['unsatisfiable']} without a plan")
    return "\n".join(lines)


# ---------------------------------------------------------------- project mode


REPOS = REPO / "tests" / "fixtures" / "repos"
# the machines of the repositories' corpus (tests/integration/test_repos_corpus.py MACHINES), as solve flags
CORPUS_MACHINES = {
    "rtx5090-linux": ["--os", "linux", "--arch", "x86_64", "--driver", "570.86.10", "--gpu", "NVIDIA GeForce RTX 5090",
                      "--python", "3.12"],
    "gtx1080ti-windows": ["--os", "windows", "--arch", "x86_64", "--driver", "472.12", "--gpu",
                          "NVIDIA GeForce GTX 1080 Ti", "--python", "3.9"],
}


@record
class ProjectOutcome(Record):
    key: str  # the corpus file
    machine: str
    status: str  # ok: a plan uv resolved end to end; not-resolved: a plan uv could not be asked about; refused
    detail: str  # the pins and what was passed over, uv's reason, or the refusal


def _corpus_kind(key: str) -> str:
    """The kind of a corpus file, as tests/integration/test_repos_corpus.py names it."""
    from envpin.check import formats  # noqa: PLC0415

    name = Path(key).name
    if "pixi_tomls" in key or name == "pixi.toml":
        return "pixi.toml"
    if name == "pyproject.toml" or "pyproject_tomls" in key:
        return "pyproject.toml"
    if name in ("setup.py", "setup.cfg"):
        return name
    if name.endswith((".yml", ".yaml")):
        return "environment.yml"
    return formats.kind_of(key, (REPOS / key).read_text(encoding="utf-8")) or "requirements"


def audit_project(key: str, machine: str, work: Path, database: str | None, offline: bool) -> ProjectOutcome:
    """`envpin solve --project --resolve` for one corpus file and machine: ok only where uv resolved the plan."""
    kind = _corpus_kind(key)
    if kind in ("requirements", "conda-specs"):
        where = ["-r", str(REPOS / key)]
    else:
        project = Path(tempfile.mkdtemp(dir=work))
        shutil.copy(REPOS / key, project / ("environment.yml" if kind == "environment.yml" else kind))
        where = ["--project", str(project)]
    argv = ["solve", *where, *CORPUS_MACHINES[machine], "--format", "json", "--resolve",
            *(["--offline"] if offline else []), *(["--db", database] if database else [])]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = envpin_main(argv)
    try:
        answer = json.loads(out.getvalue())
    except ValueError:
        return ProjectOutcome(key, machine, "error", (err.getvalue().strip().splitlines() or [f"exit {code}"])[-1])
    if answer.get("status") != "ok":
        error = answer.get("error", {})
        return ProjectOutcome(key, machine, "refused", f"{error.get('code')}: {error.get('message', '')[:300]}")
    pins = " ".join(p["requirement"] for p in answer["packages"])
    resolution = answer.get("resolution") or {}
    if resolution.get("status") != "resolved":
        return ProjectOutcome(key, machine, "not-resolved", f"{pins}: {resolution.get('detail', 'no resolution')}")
    passed = resolution.get("passed_over") or []
    return ProjectOutcome(key, machine, "ok", pins + (f" ({'; '.join(passed)})" if passed else "")
                          + f" [{len(resolution['packages'])} packages]")


def run_project_audit(database: str | None = None, only: str | None = None, offline: bool = False) -> list[ProjectOutcome]:
    from envpin.base import _toml  # noqa: PLC0415

    expected = _toml.loads((REPOS / "expected.toml").read_text(encoding="utf-8"))
    cases = [(key, machine) for key in sorted(expected) for machine in CORPUS_MACHINES
             if only is None or only in key]
    with tempfile.TemporaryDirectory(prefix="envpin-audit-projects-") as work:
        # one at a time: envpin's main writes to the process's stdout; uv's cache makes the later ones quick
        return [audit_project(key, machine, Path(work), database, offline) for key, machine in cases]


def project_report(outcomes: list[ProjectOutcome]) -> str:
    ok = [o for o in outcomes if o.status == "ok"]
    lines = [f"{o.status:13} {o.key} [{o.machine}] {o.detail}" for o in outcomes if o.status != "ok"]
    lines += [f"ok            {o.key} [{o.machine}] {o.detail}" for o in ok]
    counts = {status: sum(1 for o in outcomes if o.status == status) for status in ("not-resolved", "refused", "error")}
    lines.append(f"{len(ok)}/{len(outcomes)} answers are plans uv resolved end to end; {counts['not-resolved']} plans "
                 f"not resolved, {counts['refused']} refusals, {counts['error']} errors")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="audit-plans", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="audit the plans of this database (default: the live one)")
    parser.add_argument("--jobs", type=int, default=4, help="uv calls at once (default 4)")
    parser.add_argument("--only", help="only the targets (with --projects: the corpus files) whose name contains this")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--projects", action="store_true",
                        help="project mode: `solve --project --resolve` for every file of tests/fixtures/repos and "
                             "each of its machines; ok only where uv resolved the whole plan")
    parser.add_argument("--offline", action="store_true", help="with --projects: resolve from uv's cache only")
    args = parser.parse_args(argv)
    if args.projects:
        found = run_project_audit(args.db, args.only, args.offline)
        if args.format == "json":
            print(json.dumps([{"file": o.key, "machine": o.machine, "status": o.status, "detail": o.detail}
                              for o in found], indent=2))
        else:
            print(project_report(found))
        return 1 if any(o.status == "error" for o in found) else 0
    outcomes = run_audit(args.db, args.jobs, args.only)
    if args.format == "json":
        print(json.dumps([{"target": o.target.name, "status": o.status, "where": o.where, "detail": o.detail}
                          for o in outcomes], indent=2))
    else:
        print(report(outcomes))
    return 1 if any(o.status != "resolved" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
