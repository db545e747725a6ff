"""Does a build's arch list hold code a GPU can run?

NVIDIA's binary-compatibility rule (source `nvidia-binary-compat` in the database): a cubin built for
compute capability X.y runs on any GPU X.z with z >= y, never across majors; PTX for X.y is JIT-compiled by
the driver for any GPU of capability >= X.y. JIT needs a driver at least as new as the toolkit that made the
PTX, which minor-version compatibility does not give, so PTX-only coverage also depends on the driver.
The same source says binary compatibility "is not supported for Tegra", nor between desktop and Tegra: a
Jetson GPU runs only cubins built for exactly its capability, or PTX.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from envpin.base.record import Record, record
from envpin.compat.model import ArchList, ComputeCapability, Provenance

# Compute capabilities that exist only on Tegra (Jetson) parts: TX1/Nano, TX2, Xavier, Orin, Thor.
TEGRA_CAPABILITIES = frozenset(
    ComputeCapability.parse(text) for text in ("5.3", "6.2", "7.2", "8.7", "10.1", "11.0")
)


@record
class Coverage(Record):
    how: str  # "sass" (exact cubin), "sass-compatible" (same-major older cubin), "ptx" (JIT)
    via: ComputeCapability

    def describe(self, gpu: ComputeCapability) -> str:
        if self.how == "sass":
            return f"its {self.via.sm} cubin"
        if self.how == "sass-compatible":
            return f"its {self.via.sm} cubin (binary-compatible within major {gpu.major})"
        return f"JIT from its compute_{self.via.major}{self.via.minor} PTX"


def coverage(gpu: ComputeCapability, archs: ArchList) -> Coverage | None:
    """How the arch list serves the GPU, preferring real cubins over PTX; None when it cannot."""
    if gpu in archs.sass:
        return Coverage("sass", gpu)
    same_major = [c for c in archs.sass if c.major == gpu.major and c.minor < gpu.minor]
    if gpu in TEGRA_CAPABILITIES:
        same_major = []
    if same_major:
        return Coverage("sass-compatible", max(same_major))
    jit = [c for c in archs.ptx if c <= gpu]
    if jit:
        return Coverage("ptx", max(jit))
    return None


def parse_arch_names(names: Iterable[str], name: str = "reported") -> tuple[ArchList, list[str]]:
    """An ArchList from the names a framework reports at run time: torch.cuda.get_arch_list() gives
    'sm_86' for a cubin and 'compute_90' for PTX; TensorFlow's build info the same spellings. The last
    digit is the minor ('sm_120' is 12.0, 'sm_90a' is 9.0 with arch-specific features); names that are not
    CUDA targets (ROCm's 'gfx90a') are left out. Returns (ArchList, [names not understood])."""
    sass: list[ComputeCapability] = []
    ptx: list[ComputeCapability] = []
    other: list[str] = []
    for text in names:
        match = re.fullmatch(r"(sm|compute)_(\d+)(\d)[af]?", text.strip())
        if not match:
            other.append(text)
            continue
        capability = ComputeCapability(int(match.group(2)), int(match.group(3)))
        (sass if match.group(1) == "sm" else ptx).append(capability)
    archs = ArchList(name, tuple(sorted(set(sass))), tuple(sorted(set(ptx))), Provenance(("probe",)))
    return archs, other
