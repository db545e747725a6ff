"""The recorded snapshot of download.pytorch.org (scripts/torch_index_snapshot.py): served as a PEP 691 index on
127.0.0.1, and re-read by `--record` from an index (here that same server), offline."""

from __future__ import annotations

import importlib.util
import json
import sys

from tests.conftest import REPO


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


snapshot = _script("torch_index_snapshot")


def test_record_rereads_the_snapshot_pages_from_an_index(tmp_path):
    # `--record` reads PEP 691 pages; here from the snapshot's own server on 127.0.0.1, standing in for
    # download.pytorch.org: every recorded page is read back whole, each row naming the page it came from
    copy = tmp_path / "snapshot.json"
    copy.write_text(snapshot.SNAPSHOT.read_text())
    with snapshot.serve_snapshot(snapshot.SNAPSHOT) as url:
        read = snapshot.record(copy, url, timeout=10)
    before, after = json.loads(snapshot.SNAPSHOT.read_text()), json.loads(copy.read_text())
    assert len(read) == sum(len(projects) for projects in before["indexes"].values())
    for index, projects in before["indexes"].items():
        for project, rows in projects.items():
            again = after["indexes"][index][project]
            assert [(r["filename"], r["sha256"]) for r in again] == [(r["filename"], r["sha256"]) for r in rows]
            assert {r["source"] for r in again} == {f"{url}/{index}/{project}/ read {snapshot.datetime.date.today()}"}
