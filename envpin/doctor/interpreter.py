"""Wrong interpreter, environment not activated, GPUs hidden by CUDA_VISIBLE_DEVICES (catalogue C3, C4).

C3's facts: the interpreter that was probed lacks the framework; the shell activated another environment
(VIRTUAL_ENV / CONDA_PREFIX name a prefix that is not the interpreter's); on Windows, a conda environment's
Library\\bin is missing from PATH, the mark of an environment used without `conda activate`.
C4's: CUDA_VISIBLE_DEVICES is empty, -1, NoDevFiles or an index past the GPUs, while the driver sees GPUs;
CUDA drops every device from the first invalid entry on.
"""

from __future__ import annotations

import re

from envpin.doctor.fixes import install_fix
from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, PROVEN, Case, Finding, join_dir, same_path
from envpin.vocabulary.frameworks import FRAMEWORKS

C3 = "ENV-INTERPRETER-MISMATCH"
C4 = "ENV-CUDA-VISIBLE-DEVICES-HIDES-GPU"
NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '(torch|torchvision|torchaudio|tensorflow|jax|jaxlib)'", re.MULTILINE)


def findings(case: Case) -> list[Finding]:
    return [f for f in (_interpreter(case), _visible_devices(case)) if f]


def _interpreter(case: Case) -> Finding | None:
    hit = case.search(C3) or case.search_pattern(NO_MODULE)
    missing_module = hit.group(1) if hit and hit.match.re is NO_MODULE else ("torch" if hit else None)
    evidence: list[str] = [hit.evidence()] if hit else []
    env = case.env
    activated = _activated_elsewhere(case)
    evidence += activated
    not_activated = _conda_not_activated(case)
    evidence += not_activated
    absent = None
    if env is not None:
        wanted = missing_module or "torch"
        installed_any = any(env.framework(name) is not None or case.package(name) for name in FRAMEWORKS)
        # Without an error to explain, an environment with no framework at all is the finding; with an unrelated
        # error (a ctranslate2-only environment failing on cuBLAS), a missing torch is not worth a word.
        if (missing_module and not case.package(missing_module)) or (not missing_module and not installed_any and not case.has_error_text):
            absent = wanted
            prefix = f", prefix {env.python.prefix}" if env.python.prefix else ""
            evidence.append(f"{wanted} is not installed for {env.python.executable or 'the probed interpreter'} "
                            f"(Python {env.python.version}, {env.python.env_type}{prefix})")
        elif missing_module and case.package(missing_module):
            evidence.append(f"{missing_module} {case.package(missing_module)} IS installed for {env.python.executable}: "
                            "the program that failed ran another interpreter")
    if not evidence:
        return None
    fix = []
    if activated:
        fix.append("run envpin on the environment you activated (`envpin doctor --prefix \"$VIRTUAL_ENV\"` or "
                   "`--prefix \"$CONDA_PREFIX\"`), and run your program with that environment's python")
    if not_activated:
        fix.append("activate the environment first (`conda activate <env>`), so its Library\\bin is on PATH, "
                   "or start the program from an activated prompt")
    fix += ["select this environment's interpreter in the IDE (VS Code: Python: Select Interpreter; PyCharm: Project "
            "interpreter) or register it for Jupyter: "
            f"`{case.python_command} -m ipykernel install --user --name <env>`",
            f"always install with `{case.python_command} -m pip`, never a bare `pip` that may belong to another Python"]
    if absent:
        install = install_fix(case, absent if absent in FRAMEWORKS else "torch")[0].replace(" --force-reinstall", "")
        line = f"if {absent} should live in this environment, install it here: {install}"
        # With no error to explain, the missing framework is the news: how to install it comes first.
        fix.insert(0 if not hit and not activated else len(fix), line)
    if hit:
        severity, likelihood = "error", CONFIRMED if (absent or activated or not_activated) else MATCHED
    else:
        severity, likelihood = "warning", LIKELY
    if absent and not hit and env is not None:  # absent is only set for an environment
        title = f"{absent} is not installed in this environment ({env.python.executable})"
    elif absent:
        title = f"{absent} is not installed for the interpreter that ran"
    else:
        title = "the program ran in another interpreter or an environment that is not activated"
    return Finding(C3, severity, title, tuple(evidence), tuple(fix), likelihood)


def _activated_elsewhere(case: Case) -> list[str]:
    env = case.env
    if env is None or not env.python.prefix:
        return []
    lines = []
    if env.python.virtual_env and not same_path(env.python.virtual_env, env.python.prefix):
        lines.append(f"VIRTUAL_ENV is {env.python.virtual_env}, but the interpreter's prefix is {env.python.prefix}")
    if env.python.conda_prefix and not same_path(env.python.conda_prefix, env.python.prefix) and env.python.env_type != "venv":
        lines.append(f"CONDA_PREFIX is {env.python.conda_prefix}, but the interpreter's prefix is {env.python.prefix}")
    return lines


def _conda_not_activated(case: Case) -> list[str]:
    env = case.env
    if env is None or not case.windows or env.python.env_type != "conda" or not env.python.prefix:
        return []
    library_bin = join_dir(join_dir(env.python.prefix, "Library"), "bin")
    on_path = any(same_path(entry, library_bin) for entry in case.path_list("PATH"))
    if on_path or not case.path_list("PATH"):
        return []
    held = next((names for directory, names in case.env_dirs.items() if same_path(directory, library_bin)), None)
    what = f" (it holds {', '.join(held[:3])}{' …' if len(held) > 3 else ''})" if held else ""
    return [f"{library_bin}{what} is not on PATH: the conda environment is not activated"]


def _visible_devices(case: Case) -> Finding | None:
    value = case.env_var("CUDA_VISIBLE_DEVICES")
    if value is None or not case.host.gpus:
        return None
    count = len(case.host.gpus)
    entries = [entry.strip() for entry in str(value).split(",")]
    first = entries[0] if entries else ""
    valid_first = bool(first) and (first.startswith(("GPU-", "MIG-")) or (first.isdigit() and int(first) < count))
    if valid_first:
        return None
    torch = case.torch
    evidence = [f"CUDA_VISIBLE_DEVICES={value!r}", f"the driver sees {count} GPU{'s' if count > 1 else ''}: "
                + ", ".join(g.name for g in case.host.gpus)]
    if torch and torch.import_ok and torch.cuda:
        evidence.append(f"torch.cuda.is_available() is {torch.is_available}, device_count() is {torch.device_count}")
    why = "an empty value hides every GPU" if not first else (
        f"'{first}' is not a GPU index below {count}: CUDA ignores it and every entry after it")
    evidence.append(why)
    return Finding(C4, "error", "CUDA_VISIBLE_DEVICES hides the GPUs from CUDA", tuple(evidence),
                   ("unset it (`unset CUDA_VISIBLE_DEVICES`; Windows: `set CUDA_VISIBLE_DEVICES=`) or set valid indices "
                    f"(0–{count - 1}) before the program starts; CUDA reads it once, when it initialises",
                    "look for who sets it: a shell profile, a launcher or .env file, a job scheduler, an old 'force CPU' recipe"),
                   PROVEN)
