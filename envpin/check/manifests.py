"""pyproject.toml and pixi.toml: text → Contents, through the one manifest reader `solve --project` uses
(envpin.readers.project_files.read_manifest).

Every requirement is a pin: `[project]` dependencies and each optional-dependencies extra, PEP 735
dependency groups, `[tool.pixi]` / pixi.toml dependencies (conda) and pypi-dependencies, per feature and per
`target.<subdir>`. An extra, a group or a feature is the pin's scope, so one torch per extra (uv's documented
layout) is checked within its extra. uv's `[tool.uv.sources]` binds a pin to its `[[tool.uv.index]]`; a
PyTorch index that is not `explicit` serves every torch-family package (uv's default `first-index`
strategy: the first index that has the package is the only one asked). pixi's `system-requirements.cuda` is
the CUDA the environment needs from the driver (`__cuda`).
"""

from __future__ import annotations

from envpin.base.errors import EnvpinInputError
from envpin.readers.environment_yml import conda_pin
from envpin.readers.model import Contents, IndexOption, MalformedFile, Pin, Problem
from envpin.readers.requirements import read_line
from envpin.readers.variants import CONDA_SUBDIRS, TORCH_FAMILY, index_variant, is_pypi, single_python_minor


def parse_pyproject(text: str) -> Contents:
    return _contents("pyproject.toml", text)


def parse_pixi(text: str) -> Contents:
    return _contents("pixi.toml", text)


def _contents(name: str, text: str) -> Contents:
    from envpin.readers.project_files import read_manifest  # noqa: PLC0415 - the project readers are only for manifests

    try:
        manifest = read_manifest(text, name)
    except EnvpinInputError as error:
        raise MalformedFile(str(error).split(": ", 1)[-1]) from None
    first_index = next((i.url for i in manifest.indexes if not i.explicit and index_variant(i.url)), None)
    pins: list[Pin] = []
    problems: list[Problem] = []
    for entry in manifest.entries:
        scope = frozenset(entry.scope)
        if entry.manager == "conda":
            _, _, rest = entry.text.partition(" ")
            build = entry.build
            spec = f"{entry.text} {build}" if build and rest else (f"{entry.text} * {build}" if build else entry.text)
            pin = conda_pin(f"{entry.channel}::{spec}" if entry.channel else spec, entry.where)
            if pin is None:
                continue
            platforms = tuple(CONDA_SUBDIRS[s] for s in entry.platforms if s in CONDA_SUBDIRS)
            pins.append(Pin(name=pin.name, where=pin.where, label=entry.text, version=_pixi_version(rest) or pin.version,
                            manager="conda", index=pin.index, build=pin.build, scope=scope, platforms=platforms))
            continue
        line = read_line(entry.text, entry.where)
        problems += line.problems
        if line.pin is None:
            continue
        index = entry.index or (first_index if line.pin.name in TORCH_FAMILY else None)
        if is_pypi(entry.index):
            index = None  # a source bound to PyPI's own index (`https://pypi.org/simple`): PyPI's builds
        pins.append(Pin(name=line.pin.name, where=entry.where, label=line.pin.label, version=line.pin.version,
                        index=index, extras=line.pin.extras, scope=scope | line.pin.scope,
                        specifier=line.pin.specifier,
                        platforms=tuple(CONDA_SUBDIRS[s] for s in entry.platforms if s in CONDA_SUBDIRS)))
    python = single_python_minor(manifest.requires_python)
    if python:
        pins.append(Pin("python", manifest.requires_python_where, f"requires-python {manifest.requires_python}", python))
    indexes = tuple(IndexOption("extra-index-url" if not i.default else "index-url", i.url, f"tool.uv.index[{n}]")
                    for n, i in enumerate(manifest.indexes) if not i.explicit)
    platforms = tuple(CONDA_SUBDIRS[s] for s in manifest.platforms if s in CONDA_SUBDIRS)
    return Contents(name, tuple(pins), indexes, platforms=platforms, problems=tuple(problems),
                    channels=manifest.channels, requires_python=manifest.requires_python,
                    requires_python_where=manifest.requires_python_where)


def _pixi_version(spec: str) -> str | None:
    """pixi writes a conda version spec: `2.4.*`, `==2.4.0`, `2.4.0` (which pixi reads as ==2.4.0); a range is None."""
    spec = spec.split(" ")[0].strip()
    if not spec or spec == "*" or any(c in spec for c in "<>!~,|"):
        return None
    spec = spec.lstrip("=")
    return spec[:-2] if spec.endswith(".*") else spec.rstrip("*") or None
