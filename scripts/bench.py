"""Wall-time ratios of envpin commands against `python -c "import yaml"`, measured in one run.

Each command runs as a fresh process (what a user or a pre-commit hook pays), interleaved with the
baseline so that machine load hits both alike; the figure is median(command) / median(baseline).
Usage: scripts/bench [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
ENVPIN = str(VENV_BIN / "envpin")
BASELINE = [sys.executable, "-c", "import yaml"]
FIXED_TARGETS = {
    "linux RTX 3090, driver 535": ["--os", "linux", "--driver", "535.104.05", "--gpu", "NVIDIA GeForce RTX 3090"],
    "linux RTX 5090, driver 570": ["--os", "linux", "--driver", "570.124.06", "--gpu", "NVIDIA GeForce RTX 5090"],
    "linux V100, driver 470": ["--os", "linux", "--driver", "470.82.01", "--gpu", "Tesla V100-SXM2-32GB"],
    "windows GTX 1080 Ti, driver 560": ["--os", "windows", "--driver", "560.94", "--gpu", "NVIDIA GeForce GTX 1080 Ti"],
    "linux, no GPU": ["--os", "linux", "--driver", "none"],
}


def commands() -> dict[str, list[str]]:
    solve = [ENVPIN, "solve", "--framework", "torch"]
    found = {"solve (detected host)": solve}
    for label, flags in FIXED_TARGETS.items():
        found[f"solve ({label})"] = solve + ["--arch", "x86_64", "--python", "3.11", *flags]
    found["detect"] = [ENVPIN, "detect", "--format", "json"]
    return found


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    measured = commands()
    for command in measured.values():  # warm the database cache and the OS file cache
        timed(command)
    samples: dict[str, list[float]] = {"baseline": [], **{label: [] for label in measured}}
    for _ in range(args.runs):
        for label, command in measured.items():
            samples["baseline"].append(timed(BASELINE))
            samples[label].append(timed(command))
    baseline = statistics.median(samples["baseline"])
    rows = [
        {"what": label, "median_ms": round(statistics.median(times) * 1000, 1),
         "ratio": round(statistics.median(times) / baseline, 2)}
        for label, times in samples.items()
    ]
    if args.json:
        print(json.dumps({"baseline": "python -c 'import yaml'", "runs": args.runs, "rows": rows}, indent=2))
    else:
        print(f"{'what':<48} {'median ms':>10} {'× baseline':>11}")
        for row in rows:
            print(f"{row['what']:<48} {row['median_ms']:>10} {row['ratio']:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
