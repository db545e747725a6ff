"""`envpin fleet manifests --format dockerfile --lock`: each class locked now (real uv against the loopback index),
the lock beside the Dockerfile that installs it with hashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from envpin import _toml
from tests.integration.loopback_index import Index, build_wheel


def test_each_class_is_locked_beside_its_dockerfile(tmp_path):
    index = Index(tmp_path / "served")
    files = {"torch/__init__.py": "__version__ = '2.13.0+cpu'\n"}
    index.add("whl/cpu", build_wheel(tmp_path / "built", "torch", "2.13.0+cpu", files, requires=("tinydep>=1.0",)))
    index.add("simple", build_wheel(tmp_path / "built", "tinydep", "1.0", {"tinydep/__init__.py": ""}))
    server = index.start()
    try:
        python = f"{sys.version_info[0]}.{sys.version_info[1]}"
        fleet = [{"name": "cpu-a", "partition": "cpu", "os": "linux", "arch": "x86_64", "python": {"version": python}},
                 {"name": "cpu-b", "partition": "cpu", "os": "linux", "arch": "x86_64", "python": {"version": python}}]
        (tmp_path / "fleet.json").write_text(json.dumps({"targets": fleet}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
        env.update(UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never", PIP_CONFIG_FILE=os.devnull)
        result = subprocess.run([sys.executable, "-m", "envpin", "fleet", "manifests", "--targets", "fleet.json",
                                 "--format", "dockerfile", "--lock", "--spec", "torch==2.13.0+cpu", "--torch-index-url",
                                 f"{index.url}/whl", "--index-url", f"{index.url}/simple", "-o", "images"],
                                capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "images" / "cpu"
    lock = _toml.loads((folder / "pylock.toml").read_text())
    torch = next(p for p in lock["packages"] if p["name"] == "torch")
    wheel = index.projects["whl/cpu"]["torch"][0]
    assert torch["version"] == "2.13.0+cpu" and torch["wheels"][0]["hashes"]["sha256"] == index.hashes[wheel]
    dockerfile = (folder / "Dockerfile").read_text()
    assert "COPY pylock.toml /opt/envpin-lock/pylock.toml" in dockerfile and "NVIDIA_" not in dockerfile
    assert "nodes cpu-a, cpu-b." in dockerfile
