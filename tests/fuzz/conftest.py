"""Hypothesis profiles for the fuzz tests, and a count of the inputs each parser saw.

- default (`envpin-fuzz`): a modest number of examples per test, so the fuzz tests add well under a
  minute to the normal suite on two cores;
- `HYPOTHESIS_PROFILE=long`: the big run (tens of thousands of inputs across the parsers), e.g.
  `HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest -q -p no:cacheprovider tests/fuzz`;
- `HYPOTHESIS_PROFILE=random`: the opt-in random run, new inputs on every run (`--hypothesis-seed=N` replays
  one), with hypothesis' example database in `.hypothesis/` so a failure found is tried first next time.

The default and long profiles are derandomized: the inputs are a function of the test alone, so a run in CI
passes or fails the same way every time, and a test goes red only when the code changed. Random search is
for finding new bugs (the random profile); each bug it finds gets an `@example` that replays it in every run.

Set ENVPIN_FUZZ_COUNTS=FILE to have the per-parser input counts written there as JSON; they are always
printed at the end of a run that executed fuzz tests.

Note: loading a profile changes hypothesis' defaults for the whole pytest session; tests elsewhere that
need other settings should pass their own `@settings(...)`.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

from tests.fuzz.support import COUNTS

# The deadline judges one input: every parser answers a realistic input in milliseconds, and the
# database build (the slowest, ~0.07 s) stays far under it even on a loaded two-core CI runner.
# derandomize: the seed is a hash of the test; database=None: what an earlier run stored does not change the inputs
settings.register_profile(
    "envpin-fuzz",
    max_examples=60,
    deadline=timedelta(seconds=2),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    database=None,
)
settings.register_profile(
    "long",
    max_examples=1500,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    database=None,
)
settings.register_profile(
    "random",
    max_examples=300,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "envpin-fuzz"))


def pytest_terminal_summary(terminalreporter):
    if not COUNTS:
        return
    total = sum(COUNTS.values())
    terminalreporter.write_sep("-", f"fuzz: {total} inputs ({os.environ.get('HYPOTHESIS_PROFILE', 'envpin-fuzz')} profile)")
    for name, count in sorted(COUNTS.items()):
        terminalreporter.write_line(f"{name:<52} {count:>7}")
    destination = os.environ.get("ENVPIN_FUZZ_COUNTS")
    if destination:
        with open(destination, "w", encoding="utf-8") as handle:
            json.dump({"total": total, "per_parser": dict(sorted(COUNTS.items()))}, handle, indent=2)
