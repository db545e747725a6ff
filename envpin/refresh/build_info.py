"""TensorFlow's `tensorflow/python/platform/build_info.py` -> the CUDA build it describes (pure).

Every TensorFlow wheel carries this generated module; `tf.sysconfig.get_build_info()` returns its `build_info`
mapping. `envpin db refresh` reads it from the Linux x86_64 wheel with HTTP range requests (PyPIClient.wheel_member,
as `scripts/wheel_member.py` does from the shell) for the GPU code compiled in, `cuda_compute_capabilities`
(`sm_XY` a cubin, `compute_XY` PTX: tensorflow.yaml's `gpu.<platform>.archs`), and the CUDA it was built with. The
file is parsed, never run: `build_info = collections.OrderedDict([...])` (or a dict display) of literals.
"""

from __future__ import annotations

import ast
import re

from envpin.base.record import Record, record

MEMBER = "tensorflow/python/platform/build_info.py"
_ARCH = re.compile(r"^(sm|compute)_\d{2,3}$")
_WINDOWS_CUDA = re.compile(r"^64_(\d+)(\d)$")  # Windows wheels spell CUDA 11.2 as its DLL suffix, 64_112


@record
class BuildInfo(Record):
    is_cuda_build: bool
    cuda: str | None  # x.y (`cuda_version` 12.5.1 -> 12.5; 64_112 -> 11.2); None: not a CUDA build
    cuda_version: str | None  # as written
    archs: tuple[str, ...]  # cuda_compute_capabilities, as written (sm_60, compute_90)


class BuildInfoError(ValueError):
    """The text is not a build_info.py this parser knows: the reason, for the report."""


def parse_build_info(text: str) -> BuildInfo:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as error:
        raise BuildInfoError(f"not Python ({error.__class__.__name__})") from None
    entries = _entries(tree)
    is_cuda = entries.get("is_cuda_build") is True
    version = entries.get("cuda_version")
    archs = entries.get("cuda_compute_capabilities", [])
    if not isinstance(archs, (list, tuple)) or not all(isinstance(a, str) and _ARCH.match(a) for a in archs):
        raise BuildInfoError(f"cuda_compute_capabilities is not a list of sm_XY/compute_XY targets: {archs!r}")
    if is_cuda and not (isinstance(version, str) and version):
        raise BuildInfoError("a CUDA build without a cuda_version")
    if not is_cuda:
        return BuildInfo(False, None, None, tuple(archs))
    return BuildInfo(True, _cuda_x_y(str(version)), str(version), tuple(archs))


def _entries(tree: ast.Module) -> dict:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "build_info" for t in node.targets):
            value = node.value
            if isinstance(value, ast.Call) and len(value.args) == 1:  # collections.OrderedDict([(key, value), ...])
                value = value.args[0]
            try:
                literal = ast.literal_eval(value)
                return dict(literal)
            except (ValueError, TypeError, SyntaxError):
                raise BuildInfoError("build_info is not a mapping of literals") from None
    raise BuildInfoError("no `build_info = ...` assignment")


def _cuda_x_y(version: str) -> str:
    windows = _WINDOWS_CUDA.match(version)
    if windows:
        return f"{windows.group(1)}.{windows.group(2)}"
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise BuildInfoError(f"cuda_version {version!r} is not a CUDA version")
    return f"{parts[0]}.{parts[1]}"
