"""GPU name → compute capability, tolerant of the ways nvidia-smi and NVML print names.

"NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-32GB" and "NVIDIA H100 80GB HBM3" name the chips the database
lists as "GeForce RTX 3090", "V100" and "H100". The key drops what does not change the chip (vendor and
brand words, memory size and kind, form factor) and keeps what does (Ti, SUPER, Laptop GPU, Ada
Generation, Quadro), so a lookup is an exact match on the key: an unknown name stays unknown, never a
near guess.
"""

from __future__ import annotations

import re

from envpin.compat.model import Database, GpuModel

_IGNORED_WORDS = {
    "nvidia",
    "geforce",
    "tesla",
    "pcie",
    "sxm",
    "sxm2",
    "sxm3",
    "sxm4",
    "sxm5",
    "sxm6",
    "nvl",
    "hbm2",
    "hbm2e",
    "hbm3",
    "hbm3e",
    "gddr6",
    "gddr6x",
    "gddr7",
    "mig",
}
_MEMORY_SIZE = re.compile(r"^\d+(gb|g)$")
_SEPARATORS = re.compile(r"[\s\-_/(),]+")


def gpu_name_key(name: str) -> str:
    words = [word for word in _SEPARATORS.split(name.lower()) if word]
    kept = [word for word in words if word not in _IGNORED_WORDS and not _MEMORY_SIZE.match(word)]
    return " ".join(kept)


def build_name_index(gpus: tuple[GpuModel, ...]) -> dict[str, GpuModel]:
    return {gpu_name_key(name): model for model in gpus for name in model.names}


_INDEX_CACHE: dict[int, dict[str, GpuModel]] = {}


def lookup_gpu(database: Database, name: str) -> GpuModel | None:
    """The database's record for a GPU name, or None when the name is not known."""
    index = _INDEX_CACHE.get(id(database.gpus))
    if index is None:
        index = _INDEX_CACHE[id(database.gpus)] = build_name_index(database.gpus)
    return index.get(gpu_name_key(name))
