"""PyTorch's variant tags: the local version of a build (`2.5.1+cu124`) and the last segment of the index that
serves it (`https://download.pytorch.org/whl/cu124`).

A tag is `cpu`, `cuXY` or `cuXYZ` (CUDA X.Y: the last digit is the minor, cu118 = 11.8, cu92 = 9.2), `rocmX.Y`
or `rocmX.Y.Z` (ROCm X.Y[.Z]) or `xpu` (Intel GPUs). `TAG` accepts every tag PyTorch's index has served,
because the files `envpin check` reads may pin old builds (torch 1.x had cu80, cu90, cu92). The database
records fewer: `is_database_tag` is its stricter rule (cpu, cuXY[Z], rocmX.Y[.Z], xpu; SCHEMA.md), which the schema
applies to the variant names in torch.yaml (a CUDA variant's toolkit must also be in cuda.yaml, which starts at 9.0).
"""

from __future__ import annotations

import re

from envpin.base.record import Record, record

CPU, CUDA, ROCM, XPU = "cpu", "cuda", "rocm", "xpu"  # the kinds of build a tag names
KINDS = (CUDA, ROCM, XPU, CPU)
DEFAULT_TORCH_INDEX = "https://download.pytorch.org/whl"  # PyTorch's own index: a tag's builds are at DEFAULT_TORCH_INDEX/TAG

TAG = re.compile(r"(cpu|cu(\d{1,2})(\d)|rocm(\d+(?:\.\d+)*)|xpu)")


@record
class VariantTag(Record):
    """A tag, parsed: its name, the kind of build it names, and that build's CUDA or ROCm version."""

    name: str  # "cu124"
    kind: str  # cuda | rocm | xpu | cpu
    version: str | None = None  # the CUDA ("12.4") or ROCm ("6.2.4") version; None for cpu and xpu

    @property
    def cuda(self) -> str | None:
        return self.version if self.kind == CUDA else None

    @property
    def rocm(self) -> str | None:
        return self.version if self.kind == ROCM else None

    @property
    def cuda_major(self) -> str | None:
        return self.version.split(".")[0] if self.kind == CUDA and self.version else None

    def __str__(self) -> str:
        return self.name


def parse_tag(text: str | None) -> VariantTag | None:
    """`cu124` -> CUDA 12.4, `rocm6.2.4` -> ROCm 6.2.4, `cpu`, `xpu`; None for anything that is no tag."""
    match = TAG.fullmatch(text) if text else None
    if match is None:
        return None
    name, major, minor, rocm = match.group(1), match.group(2), match.group(3), match.group(4)
    if major is not None:
        return VariantTag(name, CUDA, f"{major}.{minor}")
    if rocm is not None:
        return VariantTag(name, ROCM, rocm)
    return VariantTag(name, CPU if name == "cpu" else XPU)


def is_tag(text: str | None) -> bool:
    return parse_tag(text) is not None


def kind_of(text: str | None) -> str | None:
    """cuda / rocm / xpu / cpu for a tag; None for anything that is no tag."""
    tag = parse_tag(text)
    return tag.kind if tag else None


def cuda_of(text: str | None) -> str | None:
    """`cu124` -> `12.4`, `cu92` -> `9.2`; None for cpu, rocm, xpu and what is no tag."""
    tag = parse_tag(text)
    return tag.cuda if tag else None


def cuda_major_of(text: str | None) -> str | None:
    """`cu124` -> `12`, `cu118` -> `11`, `cu102` -> `10`; None for cpu, rocm, xpu and what is no tag."""
    tag = parse_tag(text)
    return tag.cuda_major if tag else None


def cuda_tag(cuda: str) -> str:
    """The tag of the builds for a CUDA x.y: `12.4` -> `cu124`, `13.0` -> `cu130`."""
    return "cu" + cuda.replace(".", "")


def tag_for(cuda: str | None) -> str:
    """`cuda_tag` for a CUDA build, `cpu` for None."""
    return CPU if cuda is None else cuda_tag(cuda)


def is_database_tag(text: str | None) -> bool:
    """The database's rule for a variant name (stricter than `TAG`): cpu, cuXY or cuXYZ (torch 1.x's cu90 and cu92
    builds are recorded), rocmX.Y[.Z] or xpu."""
    tag = parse_tag(text)
    if tag is None:
        return False
    if tag.kind == CUDA:
        return len(tag.name) in (4, 5)
    if tag.kind == ROCM:
        return tag.version is not None and 1 <= tag.version.count(".") <= 2
    return tag.kind in (CPU, XPU)
