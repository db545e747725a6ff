"""envpin.base._toml on Python 3.10, which has no tomllib: the tomli branch, taken here by making the interpreter
report 3.10 while envpin.base._toml is imported again (tomli is a dependency on every Python); and TOML 1.1 manifests,
which pixi accepts and the standard library's tomllib (TOML 1.0) refuses, read with tomli >= 2.4."""

from __future__ import annotations

import importlib
import sys

import pytest
import tomli

import envpin.base._toml
from envpin.base.errors import EnvpinInputError
from envpin.check.pylock import MalformedFile, load_toml
from envpin.readers.project_files import read_pyproject


@pytest.fixture
def toml_as_on_310(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    monkeypatch.delitem(sys.modules, "tomllib", raising=False)
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` fails, as on 3.10
    module = importlib.reload(envpin.base._toml)
    yield module
    monkeypatch.undo()
    importlib.reload(envpin.base._toml)


def test_python_310_reads_toml_with_tomli(toml_as_on_310, tmp_path):
    assert toml_as_on_310._loads is tomli.loads and toml_as_on_310.TOMLDecodeError is tomli.TOMLDecodeError
    assert toml_as_on_310.loads('[tool.envpin]\nframework = "torch"\n') == {"tool": {"envpin": {"framework": "torch"}}}
    path = tmp_path / "pylock.toml"
    path.write_text('lock-version = "1.0"\n')
    with open(path, "rb") as handle:
        assert toml_as_on_310.load(handle) == {"lock-version": "1.0"}


def test_python_310_turns_bad_toml_into_envpin_errors(toml_as_on_310):
    with pytest.raises(MalformedFile, match="malformed TOML"):
        load_toml("lock-version = ")
    with pytest.raises(EnvpinInputError, match="pyproject.toml: not valid TOML 1.1"):
        read_pyproject("[project\n", "pyproject.toml", (), ())


def test_python_311_and_later_use_the_standard_library():
    tomllib = pytest.importorskip("tomllib")  # only absent on 3.10, where the tests above are the real case
    assert envpin.base._toml._loads is tomllib.loads and envpin.base._toml.TOMLDecodeError is tomllib.TOMLDecodeError


# pixi's own documentation writes inline tables over several lines (docs/source_files/pixi_tomls/pytorch-pypi.toml):
# TOML 1.1, as are an inline table's trailing comma and a newline inside one
TOML_1_1 = """[pypi-dependencies]
torch = {
  version = ">=2.5.1",
  index = "https://download.pytorch.org/whl/cu124",
}
"""


def test_a_toml_1_1_manifest_is_read_with_tomli():
    assert tuple(int(p) for p in tomli.__version__.split(".")[:2]) >= (2, 4)  # the dependency pyproject.toml declares: the first release that reads TOML 1.1
    expected = {"pypi-dependencies": {"torch": {"version": ">=2.5.1", "index": "https://download.pytorch.org/whl/cu124"}}}
    assert envpin.base._toml.loads_manifest(TOML_1_1) == expected
    with pytest.raises(envpin.base._toml.TOMLDecodeError):
        envpin.base._toml.loads(TOML_1_1)  # lockfiles stay TOML 1.0, which is what pip and uv write and read


def test_toml_that_is_not_1_1_either_names_the_version_and_the_line():
    with pytest.raises(EnvpinInputError, match=r"^pixi.toml: not valid TOML 1.1 \(.*at line 3, column 9\)"):
        read_pyproject('a = 1\nb = { x = 1,\n  y = [ }\n', "pixi.toml", (), ())


def test_python_310_reads_toml_1_1_too(toml_as_on_310):
    assert toml_as_on_310.loads_manifest(TOML_1_1)["pypi-dependencies"]["torch"]["version"] == ">=2.5.1"
