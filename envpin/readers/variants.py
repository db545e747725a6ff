"""What a version, an index URL, a file name or a conda build string says about a GPU build. Pure string logic.

The names follow PyTorch's conventions: a build's local version is its variant (`2.5.1+cu124`), and the
index that serves it ends in the same name (`https://download.pytorch.org/whl/cu124`, or a mirror's
`.../pytorch-wheels/cu124`). `cuXYZ` is CUDA X.Y, with the last digit the minor (cu118 = 11.8, cu124 = 12.4);
the tags themselves (cpu, cuXY[Z], rocmX.Y[.Z], xpu) are `envpin.vocabulary.variants`'.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, unquote
from urllib.parse import urlsplit as _strict_urlsplit

from envpin.readers.model import Pin
from envpin.vocabulary.frameworks import COMPANIONS, FRAMEWORKS, TORCH_FAMILY  # noqa: F401 - importable from here
from envpin.vocabulary.platforms import (
    LINUX_AARCH64,
    LINUX_X86_64,
    MACOS_ARM64,
    MACOS_X86_64,
    PLATFORMS,
    WINDOWS_X86_64,
    conda_subdir,
)
from envpin.vocabulary.variants import cuda_major_of, is_tag


def urlsplit(url: str) -> SplitResult:
    """urllib's urlsplit, except that a malformed URL (an unclosed IPv6 bracket: "http://[::1/x") reads as a
    bare path instead of raising ValueError in the middle of a check."""
    try:
        return _strict_urlsplit(url)
    except ValueError:
        return SplitResult("", "", url, "", "")


# the pins whose wheel platforms the rules use (known issues, Python support, targets)
PLATFORM_SENSITIVE = frozenset(FRAMEWORKS) | frozenset(COMPANIONS)  # the pins whose wheel tags are read
CONDA_NAMES = {"pytorch": "torch"}  # conda package name -> the pip project it installs
PYPI_HOSTS = ("pypi.org", "pypi.python.org", "files.pythonhosted.org")
# conda subdir -> envpin platform
CONDA_SUBDIRS = {conda_subdir(platform): platform for platform in PLATFORMS}
# Unsuffixed pip CUDA libraries whose own version is the CUDA version they ship (nvidia-cublas 13.1.0.3 for CUDA 13,
# as the database's cu130 pins show); the suffixed ones (-cu11, -cu12, -cu13) say their CUDA major in the name.
CUDA_VERSIONED_LIBRARIES = frozenset(
    {"nvidia-cublas", "nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-cuda-cupti", "nvidia-nvjitlink",
     "nvidia-cuda-nvcc", "cuda-toolkit"}
)
# conda packages whose version is the CUDA version they provide or require
CONDA_CUDA_VERSIONED = frozenset(
    {"pytorch-cuda", "cudatoolkit", "cuda-version", "cuda-toolkit", "cuda-runtime", "cuda-cudart", "cuda-nvcc"}
)
_NVIDIA_SUFFIX = re.compile(r"^nvidia-[a-z0-9-]+-cu(\d{2})$")
_JAX_CUDA_PACKAGE = re.compile(r"^jax-cuda(\d{2})-(plugin|pjrt)$")
_JAX_CUDA_EXTRA = re.compile(r"^cuda(\d{2})(?:[-_](?:pip|local))?$")
_CONDA_BUILD_CUDA = re.compile(r"cuda_?(\d+)(?:\.(\d+))?")
_CONDA_BUILD_CU = re.compile(r"(?:^|_)cu(\d{3})(?:_|$)")  # the pytorch channel's torchvision: py310_cu121
_JAXLIB_LOCAL_CUDA = re.compile(r"^cuda(\d{2})")


def split_local(version: str) -> tuple[str, str | None]:
    """`2.5.1+cu124` -> (`2.5.1`, `cu124`); `2.5.1` -> (`2.5.1`, None)."""
    public, _, local = version.partition("+")
    return public, local or None


def local_variant(version: str | None) -> str | None:
    """The PyTorch variant a local version names (`+cu124`, `+cpu`, `+rocm6.2`), or None."""
    if not version:
        return None
    local = split_local(version)[1]
    return local if is_tag(local) else None


def cuda_major_of_variant(variant: str | None) -> str | None:
    """`cu124` -> `12`, `cu118` -> `11`, `cu102` -> `10`; None for cpu / rocm / xpu."""
    return cuda_major_of(variant)


def _path_segments(url: str) -> list[str]:
    return [unquote(s) for s in urlsplit(url).path.split("/") if s]


def index_variant(url: str | None) -> str | None:
    """The variant an index (or find-links page) serves, from the last path segment that names one:
    `.../whl/cu124`, `.../whl/nightly/cu128`, `.../whl/cu118/torch_stable.html`, `.../pytorch-wheels/cu121/`."""
    if not url:
        return None
    segments = _path_segments(url)
    if segments and segments[-1].endswith((".html", ".whl")):
        segments = segments[:-1]
    if segments and is_tag(segments[-1]):
        return segments[-1]
    return None


def serves_every_variant(url: str | None) -> bool:
    """PyTorch's index root and its old all-variants find-links page list every variant's wheels."""
    if not url:
        return False
    segments = _path_segments(url)
    return bool(segments) and (segments[-1] == "whl" or segments[-1] == "torch_stable.html") and index_variant(url) is None


def is_pypi(url: str | None) -> bool:
    if not url:
        return False
    return urlsplit(url).hostname in PYPI_HOSTS


def file_name(url: str) -> str:
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1]) if "://" in url else url.replace("\\", "/").rsplit("/", 1)[-1]


def wheel_platform(platform_tag: str) -> str | None:
    """A wheel's platform tag as an envpin platform; None for `any` or what envpin does not model."""
    if platform_tag.startswith(("manylinux", "musllinux", "linux")):
        if platform_tag.endswith("x86_64"):
            return LINUX_X86_64
        if platform_tag.endswith("aarch64"):
            return LINUX_AARCH64
        return None
    if platform_tag == "win_amd64":
        return WINDOWS_X86_64
    if platform_tag.startswith("macosx"):
        if platform_tag.endswith(("arm64", "universal2")):
            return MACOS_ARM64
        if platform_tag.endswith("x86_64"):
            return MACOS_X86_64
    return None


def parse_wheel(name: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    """(project, version, envpin platforms, CPython minors like "3.11") of a wheel file name, or None. The
    minors are the ones the wheel is limited to: empty for a wheel any Python 3 takes (`py3-none`, `cp39-abi3`)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename  # noqa: PLC0415 - pulls in packaging.tags; only wheel names need it

    try:
        project, version, _, tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, ValueError):
        return None
    platforms = sorted({p for p in (wheel_platform(t.platform) for t in tags) if p})
    limited = all(t.interpreter.startswith("cp3") and t.interpreter[3:].isdigit() and t.abi != "abi3" for t in tags)
    pythons = sorted({f"3.{t.interpreter[3:]}" for t in tags}, key=lambda p: int(p[2:])) if limited else []
    return str(project), str(version), tuple(platforms), tuple(pythons)


def wheels_pythons(parsed: list[tuple[str, str, tuple[str, ...], tuple[str, ...]] | None]) -> tuple[str, ...]:
    """The CPython minors an entry's wheels serve, when every wheel is limited to some (cp311-cp311); empty when
    one serves any Python (py3-none, abi3), one cannot be read, or there are none."""
    if not parsed or any(wheel is None or not wheel[3] for wheel in parsed):
        return ()
    return tuple(sorted({p for wheel in parsed if wheel for p in wheel[3]}, key=lambda p: int(p[2:])))


def conda_build_kind(build: str | None) -> tuple[str, str | None] | None:
    """What a conda build string says: ("cuda", "12") for `py3.10_cuda12.1_cudnn8.9.2_0` or `cuda120_py312h…`,
    ("cuda", None) for a wildcard like `*cuda*`, ("cpu", None) for `cpu_mkl_…` / `py3.11_cpu_0`, else None.
    Undotted numbers are conda-forge's `cuda118` / `cuda120` (major = all but the last digit) or a bare major (`cuda12`)."""
    if not build:
        return None
    match = _CONDA_BUILD_CUDA.search(build)
    if match:
        digits, minor = match.groups()
        if minor is not None or len(digits) <= 2:
            return "cuda", digits
        return "cuda", digits[:-1]
    match = _CONDA_BUILD_CU.search(build)
    if match:
        return "cuda", match.group(1)[:-1]
    if "cuda" in build:
        return "cuda", None
    if re.search(r"(^|[_*])cpu([_*]|$)", build):
        return "cpu", None
    return None


def nvidia_library_major(name: str, version: str | None) -> str | None:
    """The CUDA major a pip CUDA library belongs to: from its `-cuNN` suffix, or from its version for the
    unsuffixed libraries whose version is the CUDA version."""
    match = _NVIDIA_SUFFIX.match(name)
    if match:
        return str(int(match.group(1)))
    if name in CUDA_VERSIONED_LIBRARIES and version:
        major = version.split(".")[0]
        return major if major.isdigit() else None
    return None


def jax_cuda_major(name: str, version: str | None, extras: frozenset[str]) -> str | None:
    """`jax-cuda12-plugin`, `jax-cuda12-pjrt`, `jax[cuda12]` (also `cuda12_pip`, `cuda12-local`), or an old
    `jaxlib==0.4.23+cuda12.cudnn89` -> "12"."""
    match = _JAX_CUDA_PACKAGE.match(name)
    if match:
        return str(int(match.group(1)))
    if name == "jax":
        for extra in extras:
            match = _JAX_CUDA_EXTRA.match(extra)
            if match:
                return str(int(match.group(1)))
    if name == "jaxlib" and version:
        local = split_local(version)[1]
        match = _JAX_CUDA_EXTRA.match(local or "") or _JAXLIB_LOCAL_CUDA.match(local or "")
        if match:
            return str(int(match.group(1)))
    return None


def python_minor(version: str | None) -> str | None:
    """`3.11.7` / `3.11` / `3.11.*` -> `3.11`."""
    if not version:
        return None
    match = re.match(r"^(3)\.(\d{1,2})(?:\.|\*|$)", version)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def variant_range(variants: list[str] | tuple[str, ...]) -> str:
    return ", ".join(variants) if variants else "none"


def single_python_minor(requires_python: object) -> str | None:
    """The one CPython minor a `requires-python` allows (`==3.11.*`, `>=3.11,<3.12`), or None when it allows
    several or cannot be read."""
    if not isinstance(requires_python, str):
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - costly to import; only a requires-python needs it

    try:
        specifier = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return None
    for one in specifier:
        if one.operator in ("==", "===") and "*" not in one.version:
            return python_minor(one.version)
    try:
        minors = [m for m in range(0, 40) if any(specifier.contains(f"3.{m}.{patch}") for patch in (0, 99))]
    except ValueError:  # a version of more than 4300 digits in the specifier: int() refuses it
        return None
    return f"3.{minors[0]}" if len(minors) == 1 else None


def requires_python_of(data: dict) -> str | None:
    """A lock's top-level `requires-python` (uv.lock, pylock.toml), as written."""
    value = data.get("requires-python")
    return value if isinstance(value, str) else None


def requires_python_pins(data: dict) -> list[Pin]:
    """A lock's `requires-python` as a `python` pin, when it names exactly one CPython minor."""
    python = single_python_minor(data.get("requires-python"))
    if not python:
        return []
    label = f"requires-python {data['requires-python']}"
    return [Pin(name="python", where="requires-python", label=label, version=python)]
