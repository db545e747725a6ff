"""`envpin check --fix`: the lines that fail for the configured targets, rewritten to the solve's answer.

    report ──fixable?──► answer (envpin's solve for every target: one torch build they all run)
           ──rewrite the failing lines──► text ──check again──► Fixed (the new text only when it re-checks clean)

What is rewritten, keeping comments, order and every other line as written:

- a requirements file: the torch, torchvision and torchaudio requirement lines (their markers and comments
  kept) and the PyTorch index option lines (`--index-url` / `--extra-index-url` / `--find-links` on
  download.pytorch.org); where the answer needs a PyTorch index and the file names none, an
  `--extra-index-url` line goes in before the first torch line;
- an environment.yml: the same lines in its `pip:` section;
- a pyproject.toml: the URL of each PyTorch index or source (`[[tool.uv.index]]`, `[[tool.poetry.source]]`,
  `[[tool.pdm.source]]`), and each exact torch-family pin in a requirement string.

The answer is the solve's for the file's own torch release where every target runs a build of it, else the
solve's newest; the targets must agree on one answer (a file serves one build). A lockfile is not edited:
the fix says the tool's lock command and the manifest edit (for a conda torch, the match specs a conda solve
on its environment's channel asks for). What cannot be fixed faithfully (hash-checking
files, lines continued with a backslash, conda framework lines, other problems) is said, and still fails.
Nothing here touches a file: the command writes what this returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from packaging.version import InvalidVersion, Version

from envpin.base.record import Record, record
from envpin.check.staleness import MANIFESTS
from envpin.check.targets import CheckTarget
from envpin.compat.model import Database
from envpin.readers.model import FileReport, MalformedFile, UnreadableInclude

# the problems a torch build from the solve answers
FIXABLE = frozenset({
    "CHK-TARGET-DRIVER", "CHK-TARGET-GPU", "CHK-TARGET-PLATFORM", "CHK-TARGET-PYTHON", "CHK-TARGET-CPU-BUILD",
    "CHK-TORCH-COMPANION-MISMATCH", "CHK-TORCH-VARIANT-MISMATCH", "CHK-COMPANION-IMPORT", "CHK-INDEX-MISSING",
    "CHK-INDEX-VARIANT-MISMATCH", "CHK-CPU-WHEEL-SHADOW", "CHK-BUILD-UNKNOWN", "CHK-LOCAL-VERSION-MISSING",
})
TORCH_NAMES = ("torch", "torchvision", "torchaudio")
_TORCH_HOST = "download.pytorch.org"
# pip's comment rule (req_file.py COMMENT_RE); a run of spaces is tried once, from its start: linear, the same matches
_COMMENT = re.compile(r"(^|(?<!\s)\s+)#.*$")
_INDEX_OPTION = re.compile(r"^(\s*)(--index-url|--extra-index-url|-i|--find-links|-f)(\s*=\s*|\s+)(\S+)(.*)$")
_REQUIREMENT = re.compile(r"^(\s*)([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*([^;#]*?)(\s*;[^#]*)?(\s+#.*)?$")
FIXABLE_KINDS = ("requirements", "environment.yml", "pyproject.toml")


@record
class Answer(Record):
    """The torch build every target runs: the index it comes from and the pins, by project name."""

    index_url: str | None
    pins: dict[str, str]  # name -> requirement ("torch==2.5.1+cu118")
    shown: str  # "torch==2.5.1+cu118 from https://download.pytorch.org/whl/cu118"
    conda_specs: tuple[str, ...] = ()  # a conda solve's match specs ("pytorch=2.5.1=cuda118*", "cuda-version…")


@record
class Fixed(Record):
    path: str
    text: str | None = None  # the rewritten file, only when it re-checks without a fixable error
    changed: tuple[str, ...] = ()  # "line 3: torch==2.5.1+cu124 -> torch==2.5.1+cu118"
    unfixed: tuple[str, ...] = ()  # what was not fixed, and why
    advice: tuple[str, ...] = ()  # for a lock: the manifest edit and the tool's command


def fixable_errors(report: FileReport) -> list[str]:
    return [p.where for p in report.problems if p.severity == "error" and p.id in FIXABLE]


def _fix_specs(release: str, names: tuple[str, ...], database: Database) -> list[tuple[str, ...]]:
    """What a fix asks the solve for, in order: the pinned release itself (in another build), then each later
    release, nearest first (old research code keeps the closest API it can), then whatever runs."""
    others = [n for n in names if n != "torch"]
    try:
        pinned = Version(release) if release else None
    except InvalidVersion:
        pinned = None
    if pinned is None:
        return [names]
    later = sorted(r.version for r in database.torch_releases if r.version > pinned)
    return [(f"torch=={release}", *others), *[(f"torch=={v}", *others) for v in later], names]


def solve_answer(text_pins: dict[str, str], targets: Sequence[CheckTarget], database: Database,
                 conda_source: str = "pip") -> Answer | str:
    """One torch answer for every target, or why there is none. `text_pins` is the file's torch-family
    names -> their pinned public version ("" when unpinned); `conda_source` the channel of a conda solve."""
    from envpin.app.planning import SolveOptions, plan  # noqa: PLC0415 - the solve is for --fix only
    from envpin.resolver.plan import Plan  # noqa: PLC0415

    names = tuple(n for n in TORCH_NAMES if n in text_pins) or ("torch",)
    release = text_pins.get("torch", "")
    answers: list[Answer] = []
    for check_target in targets:
        if check_target.spec is None:
            return f"{check_target.name}: no target options to solve with"
        found = None
        for specs in _fix_specs(release, names, database):
            planned = plan(SolveOptions(frameworks=("torch",), specs=tuple(specs), conda_source=conda_source),
                           check_target.spec, database)
            if isinstance(planned.answer, Plan):
                found = planned.answer
                break
        if found is None:
            return f"{check_target.name}: the solve finds no torch build that runs there"
        pins = {p.name: p.requirement for p in found.packages if p.name in TORCH_NAMES and p.name in names}
        torch = pins.get("torch", "")
        if conda_source == "pip":
            answers.append(Answer(found.index_url, pins, f"{torch} from {found.index_url or 'PyPI'}"))
            continue
        from envpin.conda.specs import conda_environment  # noqa: PLC0415 - only a conda lock's fix

        specs = tuple(d for d in conda_environment(found).dependencies if not d.startswith("python"))
        answers.append(Answer(None, pins, f"{' '.join(specs)} from {found.channel}", specs))
    if not answers:
        return "--fix needs a target (the target options, or [[tool.envpin.targets]]) to solve for"
    if all((a.index_url, a.pins) == (answers[0].index_url, answers[0].pins) for a in answers[1:]):
        return answers[0]
    # the targets' own answers differ: the first of them that every target also runs (cu118 serves a driver-470
    # machine and a driver-550 one alike)
    for candidate in answers:
        specs = tuple(candidate.pins.values())
        if all(isinstance(plan(SolveOptions(frameworks=("torch",), specs=specs, conda_source=conda_source), t.spec,
                               database).answer, Plan)
               for t in targets if t.spec is not None):
            return candidate
    each = "; ".join(f"{t.name}: {a.shown}" for t, a in zip(targets, answers, strict=True))
    return f"the targets need different torch builds ({each}): one file serves one build; split it per target"


def rewrite_requirements(text: str, answer: Answer, *, yaml_items: bool = False) -> tuple[str, list[str], list[str]]:
    """The text with its torch lines and PyTorch index lines set to the answer: (text, changes, refusals).
    `yaml_items`: the lines are an environment.yml's `pip:` items (`    - torch==…`)."""
    lines = text.splitlines(keepends=True)
    changes: list[str] = []
    refusals: list[str] = []
    first_torch = None
    has_index = False
    in_pip = not yaml_items
    pip_indent = None
    for number, raw in enumerate(lines):
        body, newline = (raw[:-1], "\n") if raw.endswith("\n") else (raw, "")
        if yaml_items:
            stripped = body.strip()
            indent = len(body) - len(body.lstrip())
            if re.match(r"^-\s*pip\s*:\s*$", stripped):
                in_pip, pip_indent = True, indent
                continue
            if in_pip and stripped and not stripped.startswith("#") and pip_indent is not None and indent <= pip_indent:
                in_pip = False
            if not in_pip:
                continue
            item = re.match(r"^(\s*-\s*)(['\"]?)(.*?)(\2)(\s*(?:#.*)?)$", body)
            if item is None:
                continue
            prefix, quote, line, _, tail = item.groups()
        else:
            prefix, quote, line, tail = "", "", body, ""
        where = f"line {number + 1}"
        option = _INDEX_OPTION.match(line)
        if option and _TORCH_HOST in option.group(4):
            has_index = True
            url = answer.index_url
            if url is None:
                refusals.append(f"{where}: the answer takes torch from PyPI; remove the PyTorch index line by hand")
                continue
            if option.group(2) in ("--find-links", "-f"):
                url = f"{url}/torch_stable.html" if option.group(4).endswith(".html") else url
            new = f"{option.group(1)}{option.group(2)}{option.group(3)}{url}{option.group(5)}"
            if new != line:
                lines[number] = f"{prefix}{quote}{new}{quote}{tail}{newline}"
                changes.append(f"{where}: {line.strip()} -> {new.strip()}")
            continue
        requirement = _REQUIREMENT.match(line)
        if requirement is None:
            continue
        name = requirement.group(2).lower().replace("_", "-")
        if name not in answer.pins:
            continue
        first_torch = number if first_torch is None else first_torch
        if line.rstrip().endswith("\\") or "--hash" in line:
            refusals.append(f"{where}: {name} is hashed or continued: regenerate the file (envpin lock, pip-compile)")
            continue
        leading, _, extras, _, marker, comment = requirement.groups()
        pinned = answer.pins[name]
        if extras:
            pinned = pinned.replace(name, f"{name}{extras}", 1)
        new = f"{leading}{pinned}{marker or ''}{comment or ''}"
        if new != line:
            lines[number] = f"{prefix}{quote}{new}{quote}{tail}{newline}"
            changes.append(f"{where}: {line.strip()} -> {new.strip()}")
    if answer.index_url and not has_index and first_torch is not None:
        if yaml_items:
            item_prefix = re.match(r"^(\s*-\s*)", lines[first_torch])
            added = f"{item_prefix.group(1) if item_prefix else '- '}--extra-index-url {answer.index_url}\n"
        else:
            added = f"--extra-index-url {answer.index_url}\n"
        lines.insert(first_torch, added)
        changes.append(f"line {first_torch + 1}: added --extra-index-url {answer.index_url}")
    return "".join(lines), changes, refusals


_TOML_URL = re.compile(r"^(\s*url\s*=\s*)([\"'])(https?://download\.pytorch\.org/whl/[^\"']*)(\2)(.*)$")


# an exact torch-family pin in a TOML string: "torch==2.5.1+cu124", "torchvision == 0.20.1+cu124 ; sys_platform == 'linux'"
_TOML_PIN = re.compile(r"([\"'])(torch|torchvision|torchaudio)(\[[^\]]*\])?\s*==\s*([^;\"'\s]+)(\s*;[^\"']*)?\1")


def rewrite_pyproject(text: str, answer: Answer) -> tuple[str, list[str], list[str]]:
    """Each PyTorch index or source URL (`url = "https://download.pytorch.org/whl/cu124"`) set to the answer's,
    and each exact torch-family pin in a requirement string (`"torch==2.5.1+cu124"`) to the answer's version."""
    lines = text.splitlines(keepends=True)
    changes: list[str] = []
    refusals: list[str] = []
    for number, raw in enumerate(lines):
        body, newline = (raw[:-1], "\n") if raw.endswith("\n") else (raw, "")
        pinned = _TOML_PIN.sub(lambda m: _pin_in_string(m, answer), body)
        if pinned != body:
            changes.append(f"line {number + 1}: {body.strip()} -> {pinned.strip()}")
            lines[number] = body = pinned
            lines[number] += newline
        match = _TOML_URL.match(body)
        if match is None:
            continue
        if answer.index_url is None:
            refusals.append(f"line {number + 1}: the answer takes torch from PyPI; drop the PyTorch source by hand")
            continue
        trailing = "/" if match.group(3).endswith("/") else ""
        new = f"{match.group(1)}{match.group(2)}{answer.index_url}{trailing}{match.group(4)}{match.group(5)}"
        if new != body:
            lines[number] = new + newline
            changes.append(f"line {number + 1}: {match.group(3)} -> {answer.index_url}{trailing}")
    return "".join(lines), changes, refusals


def _pin_in_string(match: re.Match[str], answer: Answer) -> str:
    quote, name, extras, _, marker = match.groups()
    wanted = answer.pins.get(name)
    if wanted is None:
        return match.group(0)
    return f"{quote}{wanted.replace(name, f'{name}{extras}', 1) if extras else wanted}{marker or ''}{quote}"


def fix_file(path: str, text: str, kind: str, report: FileReport, targets: Sequence[CheckTarget],
             database: Database, recheck: Callable[[str], FileReport]) -> Fixed:
    """The fix of one checked file (see the module docstring); `recheck(text)` checks a rewritten text."""
    errors = fixable_errors(report)
    others = [f"{p.where or path}: {p.id}" for p in report.problems if p.severity == "error" and p.id not in FIXABLE]
    if not errors:
        return Fixed(path, unfixed=tuple(f"{o} is not a problem --fix rewrites" for o in others))
    is_lock = kind in MANIFESTS or kind in ("conda-lock", "pylock", "explicit")
    conda = _failing_conda_sources(text, kind, set(errors))
    if conda and (is_lock or kind == "environment.yml"):
        return _conda_fix(path, kind, conda, targets, database, is_lock)
    torch_pins = {p.name: (p.version or "").split("+")[0] for p in _torch_pins(text, kind)}
    answer = solve_answer(torch_pins, targets, database)
    if isinstance(answer, str):
        return Fixed(path, unfixed=(answer,))
    if is_lock:
        return Fixed(path, advice=_lock_advice(kind, answer))
    if kind not in FIXABLE_KINDS:
        return Fixed(path, unfixed=(f"{kind} files are not rewritten; regenerate it with envpin for {answer.shown}",))
    if kind == "pyproject.toml":
        new, changes, refusals = rewrite_pyproject(text, answer)
    else:
        new, changes, refusals = rewrite_requirements(text, answer, yaml_items=kind == "environment.yml")
    if not changes:
        return Fixed(path, unfixed=tuple(refusals) or (f"no line to rewrite for {answer.shown} (the failing pins "
                                                        "are conda lines or in an included file)",))
    after = recheck(new)
    left = fixable_errors(after)
    if left or after.unreadable:
        return Fixed(path, changed=tuple(changes), unfixed=tuple(refusals) + (
            f"the rewrite to {answer.shown} still fails at {', '.join(left) or 'reading'}: the file was left as it was",))
    return Fixed(path, new, tuple(changes), tuple(refusals) + tuple(
        f"{p.where}: {p.id} is not a problem --fix rewrites" for p in after.problems if p.severity == "error"))


def _failing_conda_sources(text: str, kind: str, failing: set[str]) -> dict[str, list[str]]:
    """conda channel strategy -> the failing conda torch pins' `where`, for the pins whose channel envpin solves."""
    from envpin.check.conda_builds import channel_strategy  # noqa: PLC0415
    from envpin.check.formats import read_contents  # noqa: PLC0415

    try:
        contents = read_contents(kind, text)
    except (MalformedFile, UnreadableInclude, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return {}
    torches = [p for p in contents.pins if p.manager == "conda" and p.name == "torch"]
    found: dict[str, list[str]] = {}
    for pin in contents.pins:
        if pin.manager != "conda" or pin.where not in failing or \
                pin.name not in ("torch", "__cuda", "cuda-version", "pytorch-cuda", "cudatoolkit"):
            continue
        # a CUDA package takes the channel of the torch beside it (the same environment and platform)
        torch = pin if pin.name == "torch" else next((t for t in torches if t.scope == pin.scope), None)
        strategy = channel_strategy(torch, contents, "torch") if torch is not None else None
        found.setdefault(strategy or "", []).append(pin.where)
    return found


def _conda_fix(path: str, kind: str, failing: dict[str, list[str]], targets: Sequence[CheckTarget],
               database: Database, is_lock: bool) -> Fixed:
    """A conda environment's torch: the match specs a conda solve for the targets asks for, per channel."""
    manifests, refresh = MANIFESTS.get(kind, ((), ""))
    advice, unfixed = [], []
    for strategy, wheres in sorted(failing.items()):
        if not strategy:
            unfixed.append(f"{', '.join(wheres)}: a CUDA package of a channel envpin does not solve for")
            continue
        answer = solve_answer({"torch": ""}, targets, database, conda_source=strategy)
        if isinstance(answer, str):
            unfixed.append(f"{', '.join(wheres)}: {answer}")
            continue
        specs = " ".join(f"'{spec}'" for spec in answer.conda_specs)
        where = ", ".join(sorted({w.split(".packages")[0] for w in wheres}))
        if is_lock:
            manifest = manifests[0] if manifests else "the environment file it was made from"
            environments = sorted({w.split(".")[1] for w in wheres if w.startswith("environments.")})
            feature = "" if environments == ["default"] else " --feature <the feature of that environment>"
            command = f"`pixi add{feature} {specs}` (and lower its system-requirements cuda where it names a CUDA " \
                f"the driver does not run), then `{refresh}`" if kind == "pixi.lock" else \
                f"ask {manifest} for {specs}, then run `{refresh or 'conda-lock lock'}`"
            advice.append(f"the lock is not edited: for {where}, {command}, and commit the lock it writes")
        else:
            unfixed.append(f"{where}: conda lines are not rewritten; ask for {specs} ({answer.shown})")
    return Fixed(path, unfixed=tuple(unfixed), advice=tuple(advice))


def _torch_pins(text: str, kind: str):
    from envpin.check.formats import read_contents  # noqa: PLC0415 - formats imports every reader lazily anyway

    try:
        contents = read_contents(kind, text)
    except (MalformedFile, UnreadableInclude, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return []  # the check already said what is wrong with the file
    return [p for p in contents.pins if p.name in TORCH_NAMES and p.manager == "pip"]


def _lock_advice(kind: str, answer: Answer) -> tuple[str, ...]:
    manifests, refresh = MANIFESTS.get(kind, ((), ""))
    manifest = manifests[0] if manifests else "the file it was made from"
    source = f"point its torch index or source at {answer.index_url}" if answer.index_url else \
        "take torch from PyPI (drop the PyTorch source)"
    pins = ", ".join(answer.pins.values())
    command = f"`{refresh}`" if refresh else "its tool's lock command (or `envpin lock`)"
    return (f"the lock is not edited: in {manifest}, {source} and pin {pins}; then run {command} and commit the "
            "lock it writes",)
