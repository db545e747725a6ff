"""Faults in the user's own code (catalogue W15, X6), including a static check of a script (`--script`).

W15: Windows (and macOS) start worker processes with *spawn*, which re-imports the main script; a DataLoader
with num_workers > 0 or a multiprocessing pool started outside `if __name__ == "__main__":` then runs again in
every worker. The check reads the script with `ast` and never runs it.
"""

from __future__ import annotations

import ast

from envpin.doctor.model import CONFIRMED, LIKELY, MATCHED, Case, Finding

W15, X6 = "WIN-MP-SPAWN-NO-MAIN-GUARD", "CODE-TENSOR-NOT-ON-CUDA"
SPAWNING_CALLS = {"Pool", "Process", "ProcessPoolExecutor", "spawn", "start_processes"}


def findings(case: Case) -> list[Finding]:
    return [f for f in (_spawn_guard(case), _tensor_device(case)) if f]


def spawn_hazards(source: str) -> tuple[bool, list[str]]:
    """(has a main guard, [what starts worker processes, with line numbers])."""
    tree = ast.parse(source)
    guarded = any(isinstance(node, ast.If) and _is_main_guard(node.test) for node in tree.body)
    hazards = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node.func)
        if name == "DataLoader":
            workers = next((kw.value for kw in node.keywords if kw.arg == "num_workers"), None)
            if workers is not None and not (isinstance(workers, ast.Constant) and workers.value == 0):
                shown = ast.unparse(workers)
                hazards.append(f"line {node.lineno}: DataLoader(num_workers={shown})")
        elif name in SPAWNING_CALLS:
            hazards.append(f"line {node.lineno}: {ast.unparse(node.func)}(...)")
    return guarded, hazards


def _is_main_guard(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    strings = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and strings)


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _spawn_guard(case: Case) -> Finding | None:
    hit = case.search(W15)
    evidence = [hit.evidence()] if hit else []
    hazards: list[str] = []
    guarded = True
    if case.script_text is not None:
        try:
            guarded, hazards = spawn_hazards(case.script_text)
        except SyntaxError as error:
            evidence.append(f"{case.script_path} could not be parsed (line {error.lineno}: {error.msg})")
    spawn_os = case.os in ("windows", "macos")
    unguarded = bool(hazards) and not guarded
    if not hit and not (unguarded and spawn_os):
        return None
    if unguarded:
        evidence.append(f"{case.script_path} has no `if __name__ == \"__main__\":` block and starts worker processes: "
                        + "; ".join(hazards[:3]))
    if spawn_os:
        evidence.append(f"on {case.os} multiprocessing uses spawn: each worker re-imports the main script")
    return Finding(W15, "error", "worker processes re-run the script: the entry point is not under `if __name__ == \"__main__\":`",
                   tuple(evidence),
                   ("move the script's top-level work into a `main()` function and call it under `if __name__ == \"__main__\":` "
                    "(add `multiprocessing.freeze_support()` there for frozen executables)",
                    "or use `num_workers=0` in the DataLoader"),
                   CONFIRMED if hit and unguarded else MATCHED if hit else LIKELY)


def _tensor_device(case: Case) -> Finding | None:
    hit = case.search(X6)
    if not hit:
        return None
    torch = case.torch
    evidence = [hit.evidence()]
    if torch is not None and torch.import_ok:
        evidence.append(f"torch.cuda.is_available() is {torch.is_available} (probe): the install is not the problem"
                        if torch.is_available else f"torch.cuda.is_available() is {torch.is_available} (probe)")
    evidence.append("this is user code mixing devices, not an installation fault")
    return Finding(X6, "error", "a CPU tensor reached a CUDA operation (or tensors are on different devices)", tuple(evidence),
                   ("move the model and every input to the same device: `model.to('cuda')`, `x = x.to('cuda')`",
                    "use the library's CPU path if it has one, when no GPU is available"),
                   CONFIRMED if torch is not None and torch.is_available else MATCHED)
