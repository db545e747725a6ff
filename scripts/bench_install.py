"""Install benchmark, ratios in one run: `envpin install` (uv backend) against plain `pip install -r` of the
same lock, and against the uv calls envpin makes (`uv venv` + `uv pip sync`), from the same loopback index.

The index (tests/integration/loopback_index.py) serves the real torch 2.13.0+cpu wheel of this machine's
find-links folder and its dependencies from the local indexes, or, with --small, wheels built on the spot.
Each round installs into fresh prefixes, interleaving the three ways; caches are private and primed once
before timing (uv's and pip's both warm), so the figures compare installers, not the loopback network.

    envpin install --lock L --backend uv      what envpin users run
    uv venv P && uv pip sync --require-hashes L   the same work without envpin (its overhead is the difference)
    python -m venv P && P/bin/pip install --require-hashes --no-deps -r requirements.txt   plain pip

Usage: .venv/bin/python scripts/bench_install.py [--small] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envpin.lock.engines import find_uv  # noqa: E402
from tests.integration import test_lock_install as suite  # noqa: E402  (the same index the tests use)
from tests.integration.loopback_index import Index, build_wheel  # noqa: E402


def real_index(root: Path) -> Index:
    wheels = [w for d in suite._local_wheel_dirs() for w in d.glob("torch-2.13.0*-cp311-cp311-*linux*_x86_64.whl")]
    if not wheels:
        sys.exit("no local torch 2.13.0 cp311 wheel (see tests/fixtures/provision/SOURCES.md); use --small")
    index = Index(root)
    index.add("whl/cpu", wheels[0])
    queue, seen = suite._requirements_of(wheels[0]), set()
    while queue:
        name = suite.canonical(queue.pop())
        if name not in seen:
            seen.add(name)
            for wheel in suite._local_files(name):
                index.add("simple", wheel)
                queue += suite._requirements_of(wheel)
    return index


def small_index(root: Path) -> Index:
    index = Index(root / "served")
    index.add("whl/cpu", suite.fake_torch(root / "built", "2.13.0+cpu", None))
    index.add("simple", build_wheel(root / "built", "tinydep", "1.0", {"tinydep/__init__.py": "x = 1\n" * 5000}))
    return index


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv[:4])} … failed:\n{result.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="wheels built here instead of the real torch")
    parser.add_argument("--runs", type=int, default=1, help="rounds (each installs three environments)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="envpin-bench-"))
    try:
        index = small_index(work / "index") if options.small else real_index(work / "index")
        server = index.start()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
        env.update(PIP_CONFIG_FILE=os.devnull, PIP_CACHE_DIR=str(work / "pip-cache"), UV_CACHE_DIR=str(work / "uv-cache"),
                   UV_PYTHON_DOWNLOADS="never", CI="true", PIP_DISABLE_PIP_VERSION_CHECK="1")
        python = f"{sys.version_info[0]}.{sys.version_info[1]}"
        envpin = [sys.executable, "-m", "envpin"]
        lock = work / "pylock.toml"
        requirements = work / "requirements.txt"
        target = ["--spec", "torch==2.13.0", "--os", "linux", "--arch", "x86_64", "--python", python, "--driver", "none",
                  "--torch-index-url", f"{index.url}/whl", "--index-url", f"{index.url}/simple"]
        timed([*envpin, "lock", *target, "-o", str(lock)], env)
        timed([*envpin, "lock", *target, "--format", "requirements", "-o", str(requirements)], env)
        uv = find_uv()
        ways = {
            "envpin install (uv)": lambda p: [[*envpin, "install", "--quiet", "--prefix", str(p), "--lock", str(lock)]],
            "uv venv + uv pip sync": lambda p: [
                [uv, "venv", "--no-config", "--quiet", "--python", python, str(p)],
                [uv, "pip", "sync", "--no-config", "--require-hashes", "--python", str(p / "bin" / "python"), str(lock)]],
            "venv + pip install -r": lambda p: [
                [sys.executable, "-m", "venv", str(p)],
                [str(p / "bin" / "python"), "-m", "pip", "install", "--require-hashes", "--no-deps", "-r", str(requirements)]],
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        for round_number in range(options.runs + 1):  # round 0 primes the caches and is not counted
            for number, (name, commands) in enumerate(ways.items()):
                prefix = work / f"env-{round_number}-{number}"
                elapsed = sum(timed(argv, env) for argv in commands(prefix))
                shutil.rmtree(prefix, ignore_errors=True)
                if round_number:
                    times[name].append(elapsed)
        server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    medians = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "wheels": "small (built here)" if options.small else "real torch 2.13.0+cpu and dependencies",
        "runs": options.runs,
        "seconds": medians,
        "pip_over_envpin": medians["venv + pip install -r"] / medians["envpin install (uv)"],
        "envpin_over_uv": medians["envpin install (uv)"] / medians["uv venv + uv pip sync"],
        "envpin_overhead_s": medians["envpin install (uv)"] - medians["uv venv + uv pip sync"],
    }
    if options.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['wheels']}, median of {options.runs} run(s), warm caches")
    for name, seconds in medians.items():
        print(f"  {name:<24} {seconds:7.2f} s")
    print(f"  plain pip takes {result['pip_over_envpin']:.2f}x the time of envpin install (uv)")
    print(f"  envpin install takes {result['envpin_over_uv']:.2f}x the bare uv calls "
          f"(+{result['envpin_overhead_s']:.2f} s: solve-free lock check, staging, relocation, verify, swap)")


if __name__ == "__main__":
    main()
