"""`--node-report-dir`: a node's task names its own report after the Slurm node it runs on."""

import json
import socket

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.cli import main
from envpin.fleet.node_report import node_name, write_node_report


def test_the_slurm_node_name_wins_over_the_host_name():
    assert node_name({"SLURMD_NODENAME": "gpu-07"}) == "gpu-07"
    assert node_name({}) == socket.gethostname().split(".")[0]


@pytest.mark.parametrize("name", ["..", "a/b"])
def test_a_name_that_is_not_a_file_name_is_refused(tmp_path, name):
    with pytest.raises(EnvpinInputError, match="cannot name a report file"):
        write_node_report(str(tmp_path), "{}", {"SLURMD_NODENAME": name})
    assert list(tmp_path.iterdir()) == []


def test_detect_writes_its_facts_as_node_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SLURMD_NODENAME", "h100-node")
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi: a quick detection
    assert main(["detect", "--node-report-dir", str(tmp_path)]) == 0
    facts = json.loads((tmp_path / "h100-node.json").read_text())
    assert facts["schema"] == 1 and "os" in facts
    out, err = capsys.readouterr()
    assert out == "" and f"wrote {tmp_path / 'h100-node.json'}" in err
    assert main(["detect", "--node-report-dir", str(tmp_path / "missing")]) == 2
