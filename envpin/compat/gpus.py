"""GPU name → compute capability, tolerant of the ways nvidia-smi and NVML print names.

"NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-32GB" and "NVIDIA H100 80GB HBM3" name the chips the database
lists as "GeForce RTX 3090", "V100" and "H100". The key drops what does not change the chip (vendor and
brand words, memory size and kind, form factor) and keeps what does (Ti, SUPER, Laptop GPU, Ada
Generation, Quadro), so a lookup is an exact match on the key: an unknown name stays unknown, never a
near guess.
"""

from __future__ import annotations

import re

from envpin.compat.model import AmdGpuModel, Database, GpuModel, IntelGpuFamily

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
    # a memory size starts with a digit: the test of the first character spares most words the regular expression
    kept = [word for word in words
            if word not in _IGNORED_WORDS and not (word[0].isdigit() and _MEMORY_SIZE.match(word))]
    return " ".join(kept)


def build_name_index(gpus: tuple[GpuModel, ...]) -> dict[str, GpuModel]:
    return {gpu_name_key(name): model for model in gpus for name in model.names}


TRUNCATION_MARKS = ("...", "…")  # how nvidia-smi's table ends a name too long for its column


def truncated_prefix(name: str) -> str | None:
    """The visible part of a name nvidia-smi's table cut short (`NVIDIA GeForce RTX 4060 Ti...`), else None."""
    stripped = name.rstrip()
    for mark in TRUNCATION_MARKS:
        if stripped.endswith(mark):
            return stripped[: -len(mark)]
    return None


def models_starting_with(database: Database, prefix: str) -> list[GpuModel]:
    """Every GPU whose name begins with `prefix`, compared as the matching keys are (word by word; the last, cut
    word a prefix of the name's word there)."""
    words = gpu_name_key(prefix).split()
    if not words:
        return []
    found = []
    for model in database.gpus:
        for name in model.names:
            key = gpu_name_key(name).split()
            if len(key) >= len(words) and key[: len(words) - 1] == words[:-1] and key[len(words) - 1].startswith(words[-1]):
                found.append(model)
                break
    return found


def lookup_gpu(database: Database, name: str) -> GpuModel | None:
    """The database's record for a GPU name, or None when the name is not known."""
    key = gpu_name_key(name)
    keyed = getattr(database.gpus, "keyed", None)  # the cache's records come with their name index
    if keyed is not None:
        try:
            return keyed(key)
        except LookupError:  # an entry without it, or one whose records were read from the YAML again
            pass
    index = database.memo("gpu_names")
    if not index:
        index.update(build_name_index(database.gpus))
    return index.get(key)


# ---------------------------------------------------------------- AMD and Intel

# "Graphics" ends what rocminfo and Windows print for an APU (`AMD Radeon 780M Graphics`), not AMD's table names
_AMD_IGNORED_WORDS = {"amd", "radeon", "instinct", "accelerator", "graphics", "(tm)", "tm", "™", "®", "(r)"}


def amd_name_key(name: str) -> str:
    """`AMD Instinct MI300X`, `Instinct MI300X` and `MI300X` are one key; an APU's name is its GPU part
    (`AMD Ryzen AI 9 HX 370 w/ Radeon 890M` -> `890m`, as `AMD Radeon(TM) 890M Graphics`). `AMD Radeon Graphics`
    (what many APUs print) is no key."""
    text = name.lower().replace("™", " ").replace("®", " ").replace("(tm)", " ").replace("(r)", " ")
    if " w/ " in text:
        text = text.split(" w/ ", 1)[1]
    words = [word for word in _SEPARATORS.split(text) if word]
    # `W7800 48GB` is a memory size, not `4600G`, an APU's model number (compiled when first used: AMD names only)
    kept = [word for word in words
            if word not in _AMD_IGNORED_WORDS and not (word[0].isdigit() and re.match(r"^\d+gb$", word))]
    return " ".join(kept)


def lookup_amd_gpu(database: Database, name: str) -> AmdGpuModel | None:
    """The AMD GPU record for a name as amd-smi, rocm-smi, rocminfo or Windows print it, or None."""
    gpus = database.accelerators.amd_gpus
    index = database.memo("amd_gpu_names")
    if not index:
        index.update({amd_name_key(n): model for model in gpus for n in model.names})
    key = amd_name_key(name)
    found = index.get(key) if key else None
    return found if found is not None or "[" not in name else _pci_name_model(index, name)


def _pci_name_model(index: dict[str, AmdGpuModel], name: str) -> AmdGpuModel | None:
    """The PCI ID database's form, which rocm-smi and lspci print: a die and the products on it, `Arcturus GL-XL
    [AMD Instinct MI100]`, `Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]`. A later product may be only the
    part after the first's prefix (`7900 XTX` is `Radeon RX 7900 XTX`). One die is one target: the products the
    table knows must agree on it (one that it does not know is left aside)."""
    products = [p for p in re.findall(r"\[([^\]]+)\]", name) if p.strip().lower() != "amd/ati"]
    if not products:
        return None
    alternatives = [a.strip() for a in products[-1].split("/") if a.strip()]
    first = alternatives[0].split()
    prefix = first[: next((i for i, word in enumerate(first) if any(c.isdigit() for c in word)), len(first))]
    models = []
    for alternative in alternatives:
        full = alternative if not alternative[0].isdigit() else " ".join([*prefix, alternative])
        model = index.get(amd_name_key(full))
        if model is not None:
            models.append(model)
    return models[0] if models and len({m.gfx for m in models}) == 1 else None


def intel_family(database: Database, name: str) -> IntelGpuFamily | None:
    """The Intel GPU family (xpu.yaml) a name belongs to; None for an Intel GPU the xpu builds are not for."""
    lowered = name.lower()
    for family in database.accelerators.intel_gpus:
        if any(re.search(rf"\b{re.escape(word.lower())}\b", lowered) for word in family.match):
            return family
    return None
