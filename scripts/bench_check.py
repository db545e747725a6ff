#!/usr/bin/env python3
"""Benchmark: `envpin check` on a generated 300-package pylock.toml against `python -c "import packaging.pylock"`.

Both run as fresh processes, interleaved in the same run (so machine load hits both alike), after one warm-up
run of each that fills envpin's database cache and both bytecode caches, as every run after the first finds
them. The lock is shaped like a lock for one environment (one wheel per package, each with its sha256) and pins
torch 2.5.1+cu124 with its companions and nvidia-* libraries, so the GPU rules and the database load are part
of the time. Prints each median and their ratio, wall-clock and CPU; the goal (issue 7) is a ratio under 3.

    .venv/bin/python scripts/bench_check.py [--runs 15] [--packages 300] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TORCH = "https://download.pytorch.org/whl/cu124"
# torch 2.5.1+cu124 and the nvidia-* versions its wheel requires (the database's cu124 pins of 2.5.1), so the
# file exercises the GPU rules as a real lock of a torch project does.
GPU_PACKAGES = [
    ("torch", "2.5.1+cu124", TORCH), ("torchvision", "0.20.1+cu124", TORCH), ("torchaudio", "2.5.1+cu124", TORCH),
    ("nvidia-cublas-cu12", "12.4.5.8", None), ("nvidia-cuda-cupti-cu12", "12.4.127", None),
    ("nvidia-cuda-nvrtc-cu12", "12.4.127", None), ("nvidia-cuda-runtime-cu12", "12.4.127", None),
    ("nvidia-cudnn-cu12", "9.1.0.70", None), ("nvidia-cufft-cu12", "11.2.1.3", None),
    ("nvidia-curand-cu12", "10.3.5.147", None), ("nvidia-cusolver-cu12", "11.6.1.9", None),
    ("nvidia-cusparse-cu12", "12.3.1.170", None), ("nvidia-nccl-cu12", "2.21.5", None),
    ("nvidia-nvjitlink-cu12", "12.4.127", None), ("nvidia-nvtx-cu12", "12.4.127", None),
]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def package_toml(name: str, version: str, index: str | None) -> str:
    """One [[packages]] entry with the one wheel an environment installs."""
    base = index or f"https://files.pythonhosted.org/packages/{digest(name)[:2]}/{digest(name)[2:4]}/{digest(name)[4:]}"
    tag = "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64" if index or name.startswith("nvidia") else "py3-none-any"
    file = f"{name.replace('-', '_')}-{version}-{tag}.whl".replace("+", "%2B")
    return (f'[[packages]]\nname = "{name}"\nversion = "{version}"\nindex = "{index or "https://pypi.org/simple"}"\n'
            f'[[packages.wheels]]\nurl = "{base}/{file}"\nsize = {1000 + len(file)}\nhashes = {{ sha256 = "{digest(file)}" }}\n')


def generate(count: int) -> str:
    packages = list(GPU_PACKAGES)
    packages += [(f"package-{n:03d}", f"1.{n}.0", None) for n in range(count - len(packages))]
    head = 'lock-version = "1.0"\nrequires-python = "==3.11.*"\ncreated-by = "envpin-bench"\n\n'
    return head + "\n".join(package_toml(*p) for p in packages)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    out, err = process.stdout.read(), process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(command)} exited {os.waitstatus_to_exitcode(status)}:\n{out}{err}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--packages", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lock = Path(tmp) / "pylock.toml"
        lock.write_text(generate(args.packages), encoding="utf-8")
        # Both processes run from bytecode caches, as an installed envpin does (pip compiles a wheel's modules);
        # a private cache prefix keeps the checkout clean even where PYTHONDONTWRITEBYTECODE is set.
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env.update(ENVPIN_CACHE_DIR=str(Path(tmp) / "cache"), PYTHONPATH=str(REPO),
                   PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"))
        check = [sys.executable, "-m", "envpin", "check", "--no-config", str(lock)]
        baseline = [sys.executable, "-c", "import packaging.pylock"]
        timed(check, env)  # warm-up: fills the database and bytecode caches, as the first run on a machine does
        timed(baseline, env)
        checks, imports = [], []
        for _ in range(args.runs):
            checks.append(timed(check, env))
            imports.append(timed(baseline, env))
    result = {"packages": args.packages, "runs": args.runs}
    for label, index in (("wall", 0), ("cpu", 1)):
        check_ms = statistics.median(run[index] for run in checks) * 1000
        import_ms = statistics.median(run[index] for run in imports) * 1000
        result[label] = {"check_ms": round(check_ms, 1), "import_packaging_pylock_ms": round(import_ms, 1),
                         "ratio": round(check_ms / import_ms, 2)}
    if args.json:
        print(json.dumps({**result, "goal": 3}))
    else:
        wall, cpu = result["wall"], result["cpu"]
        print(f"envpin check, {args.packages}-package pylock.toml: median {wall['check_ms']:.0f} ms wall, "
              f"{cpu['check_ms']:.0f} ms CPU over {args.runs} runs")
        print(f"python -c 'import packaging.pylock': median {wall['import_packaging_pylock_ms']:.0f} ms wall, "
              f"{cpu['import_packaging_pylock_ms']:.0f} ms CPU")
        print(f"ratio {wall['ratio']:.2f}x wall, {cpu['ratio']:.2f}x CPU (goal: under 3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
