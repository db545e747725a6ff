"""The project's scripts answer --help without doing their work."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_freeze_test_db_help_freezes_nothing(tmp_path):
    # the script works on the checkout it sits in: a scratch checkout with the live database and no frozen copy
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "freeze-test-db", checkout / "scripts" / "freeze-test-db")
    (checkout / "envpin").symlink_to(REPO / "envpin")
    shutil.copytree(REPO / "data" / "compat_matrix", checkout / "data" / "compat_matrix")
    frozen = checkout / "tests" / "fixtures" / "compat_db"
    frozen.mkdir(parents=True)
    result = subprocess.run([sys.executable, str(checkout / "scripts" / "freeze-test-db"), "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: scripts/freeze-test-db") and "Freeze the live database" in result.stdout
    assert list(frozen.iterdir()) == []
