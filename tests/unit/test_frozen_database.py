"""The frozen test database is mechanical (issue 28): `scripts/freeze-test-db` makes it from the live database at a
named commit and records which (FROZEN_FROM: the commit, the live VERSION there, each file's SHA-256); `--check`
finds any file of it that is not what the script made, so neither copy is edited by hand."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import DB_DIR, LIVE_DB_DIR

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "freeze-test-db"


def test_the_frozen_database_is_what_the_script_made_from_a_named_commit():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    record = json.loads((DB_DIR / "FROZEN_FROM").read_text(encoding="utf-8"))
    assert len(record["from"]) == 40 and record["live_version"] == DB_DIR.name
    assert set(record["files"]) >= {"VERSION", "torch.yaml", "cuda.yaml", "gpus.yaml", "sources.yaml"}
    assert (DB_DIR / "VERSION").read_text(encoding="utf-8").strip() == record["live_version"]


def test_a_hand_edit_of_the_frozen_copy_is_found(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(SCRIPT, checkout / "scripts" / "freeze-test-db")
    frozen = checkout / "tests" / "fixtures" / "compat_db"
    shutil.copytree(DB_DIR, frozen / DB_DIR.name)
    edited = frozen / DB_DIR.name / "cuda.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("525.60.13", "525.60.14", 1), encoding="utf-8")
    (checkout / "data").mkdir()
    shutil.copytree(LIVE_DB_DIR, checkout / "data" / "compat_matrix")
    result = subprocess.run([sys.executable, str(checkout / "scripts" / "freeze-test-db"), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "cuda.yaml: edited after freezing" in result.stderr and "torch.yaml" not in result.stderr
