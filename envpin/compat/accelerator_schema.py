"""Validate rocm.yaml, amd_gpus.yaml, xpu.yaml and mps.yaml, and lay their facts onto the torch releases.

torch.yaml says which builds a release has; these files add what is AMD's, Intel's or Apple's about them: the gfx
list of a ROCm build, the xpu builds, the macOS of the arm64 wheels and of MPS. Every record names torch releases
(and, in rocm.yaml, variants) that must exist in torch.yaml, so a typo is a problem, not a silent no-op. Called
by `envpin.compat.schema.build_database`, with its nodes and citations.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from envpin.base.record import Record, replace
from envpin.base.record import record as frozen_record
from envpin.compat.gpus import amd_name_key
from envpin.compat.model import (
    AcceleratorTables,
    AmdDriverSupport,
    AmdGpuModel,
    AmdgpuModule,
    GfxList,
    GfxOverride,
    IntelGpuFamily,
    LibraryGap,
    MacosSupport,
    Provenance,
    RocmFrameworkBuild,
    TorchRelease,
    Variant,
    VendorIndex,
)

if TYPE_CHECKING:  # the schema imports this module (lazily) and hands it its nodes and citations
    from envpin.compat.schema import _Citations, _Node

GFX = re.compile(r"^gfx[0-9]{2,4}[0-9a-f]$")
_RELEASE_X_Y = re.compile(r"^\d+\.\d+$")
_AMD_DRIVER = re.compile(r"^\d+\.\d+$")
_AMDGPU_MODULE = re.compile(r"^\d+\.\d+\.\d+$")
_MACOS = re.compile(r"^\d{2}\.\d$")
_PYTHON = re.compile(r"^3\.\d{1,2}$")
GPU_KINDS = ("dGPU", "APU")
COMPANION_NAMES = ("torchvision", "torchaudio")


@frozen_record
class AcceleratorFacts(Record):
    """What the four files say, ready to be laid over torch.yaml's releases."""

    tables: AcceleratorTables
    gfx: dict[tuple[str, str], tuple[GfxList, Provenance]]  # (torch version, variant) -> its gfx list
    xpu: dict[str, Variant]  # torch version -> its xpu variant
    macos: dict[str, MacosSupport]  # torch version -> Apple silicon facts


def accelerator_facts(roots: dict[str, _Node], cited: _Citations, known: dict[str, TorchRelease]) -> AcceleratorFacts:
    rocm = roots["rocm.yaml"]
    gfx_sets = _gfx_sets(rocm.child("gfx_sets"), cited)
    drivers = _drivers(rocm.child("drivers"), cited)
    tables = AcceleratorTables(
        amd_gpus=_amd_gpus(roots["amd_gpus.yaml"].child("gpus"), cited),
        amd_drivers=drivers,
        amdgpu_modules=_amdgpu_modules(rocm.child("amdgpu_modules"), drivers, cited),
        gfx_overrides=_overrides(rocm.child("overrides"), cited),
        gfx_sets=gfx_sets,
        vendor_indexes=_vendor_indexes(rocm.child("vendor_indexes"), cited),
        intel_gpus=_intel_gpus(roots["xpu.yaml"].child("gpus"), cited, known),
        library_gaps=_library_gaps(rocm.child("library_gaps"), cited),
    )
    return AcceleratorFacts(
        tables=tables,
        gfx=_torch_gfx(rocm.child("torch"), gfx_sets, cited, known),
        xpu=_xpu_variants(roots["xpu.yaml"].child("releases"), cited, known),
        macos=_macos(roots["mps.yaml"].child("releases"), cited, known),
    )


def lay_over(releases: list[TorchRelease], facts: AcceleratorFacts) -> list[TorchRelease]:
    """The torch releases with their ROCm builds' gfx lists, their xpu builds and their Apple silicon facts."""
    updated = []
    for release in releases:
        version = str(release.version)
        variants = dict(release.variants)
        for name, variant in release.variants.items():
            found = facts.gfx.get((version, name))
            if found is not None:
                gfx, provenance = found
                variants[name] = replace(variant, gfx=gfx if not provenance.unverified else
                                                replace(gfx, provenance=_joined(gfx.provenance, provenance)))
        if version in facts.xpu:
            variants["xpu"] = facts.xpu[version]
        macos = facts.macos.get(version)
        if macos is None and release.macos is None and variants == release.variants:
            updated.append(release)  # nothing laid over it (the older releases): the record as it is, not a copy
        else:
            updated.append(replace(release, variants=variants, macos=macos))
    return updated


def _joined(first: Provenance, second: Provenance) -> Provenance:
    notes = [p.unverified for p in (first, second) if p.unverified]
    return Provenance(tuple(dict.fromkeys(first.sources + second.sources)), "; ".join(notes) or None)


# ---------------------------------------------------------------- rocm.yaml


def _gfx_sets(node: _Node, cited: _Citations) -> dict[str, GfxList]:
    if node.value is None:
        return {}
    return {name: GfxList(name, record.child("targets").strings(GFX, "a gfx target such as gfx1100"),
                          cited.provenance(record))
            for name, record in node.items()}


def _torch_versions(node: _Node, known: dict[str, TorchRelease]) -> list[str]:
    versions = list(node.strings(what="a torch version"))
    for position, version in enumerate(versions):
        if version and version not in known:
            node.child(position).fail(f"torch {version} is not a release in torch.yaml")
    return [v for v in versions if v in known]


def _torch_gfx(node: _Node, gfx_sets: dict[str, GfxList], cited: _Citations,
               known: dict[str, TorchRelease]) -> dict[tuple[str, str], tuple[GfxList, Provenance]]:
    found: dict[tuple[str, str], tuple[GfxList, Provenance]] = {}
    for record in node.sequence() if node.value is not None else []:
        versions = _torch_versions(record.child("releases"), known)
        set_name = record.child("gfx").string(what="a gfx_sets name")
        provenance = cited.provenance(record)
        if set_name and set_name not in gfx_sets:
            record.child("gfx").fail(f"unknown gfx set {set_name!r}")
            continue
        variants_node = record.child("variants")
        for position, variant in enumerate(variants_node.strings(what="a ROCm variant name")):
            builds = [v for v in versions if variant in known[v].variants]
            if not builds:
                variants_node.child(position).fail(f"no listed torch release has a {variant} build in torch.yaml")
            elif known[builds[0]].variants[variant].rocm is None:
                variants_node.child(position).fail(f"{variant} is not a ROCm build")
            for version in builds:
                if (version, variant) in found:
                    record.fail(f"torch {version} {variant} has a gfx list already")
                found[(version, variant)] = (gfx_sets[set_name], provenance)
    return found


_PLUGIN = re.compile(r"^[a-z0-9-]+ \d+(\.\d+)*(\.post\d+)?$")


def gfx_sets(node: _Node, cited: _Citations) -> dict[str, GfxList]:
    """A file's `gfx_sets:` (rocm.yaml for torch; jax.yaml and tensorflow.yaml for their ROCm wheels)."""
    return _gfx_sets(node, cited)


def rocm_framework_build(framework: str, version: str, package: str, extra: str | None, record: _Node,
                         sets: dict[str, GfxList], cited: _Citations) -> RocmFrameworkBuild:
    """One `rocm:` record of a jax.yaml or tensorflow.yaml release: the ROCm wheel on PyPI (jax[rocm7-local],
    tensorflow-rocm) and what it was read to have; `gfx` names a gfx set of the same file."""
    gfx = None
    if record.has("gfx"):
        set_name = record.child("gfx").string(what="a gfx_sets name")
        gfx = sets.get(set_name)
        if set_name and gfx is None:
            record.child("gfx").fail(f"unknown gfx set {set_name!r}")
    return RocmFrameworkBuild(
        framework=framework,
        version=version,
        package=record.child("package").optional_string(what="a package name") or package,
        pin=record.child("pin").optional_string(what="a version") or version,
        extra=extra,
        plugin=record.child("plugin").optional_string(_PLUGIN, "a plugin name and version"),
        rocm=record.child("rocm").optional_string(_RELEASE_X_Y, "a ROCm X.Y"),
        python=record.child("python").strings(_PYTHON, "a Python minor version"),
        platforms=record.child("platforms").platforms(),
        gfx=gfx,
        provenance=cited.provenance(record),
    )


def _drivers(node: _Node, cited: _Citations) -> tuple[AmdDriverSupport, ...]:
    rows = []
    for record in node.sequence() if node.value is not None else []:
        rows.append(AmdDriverSupport(
            driver=record.child("driver").string(_AMD_DRIVER, "an AMD GPU driver release such as 6.4 or 30.10"),
            rocm=record.child("rocm").strings(_RELEASE_X_Y, "a ROCm X.Y"),
            provenance=cited.provenance(record),
        ))
    return tuple(sorted(rows, key=lambda row: _numbers(row.driver), reverse=True))


def _amdgpu_modules(node: _Node, drivers: tuple[AmdDriverSupport, ...], cited: _Citations) -> dict[str, AmdgpuModule]:
    """Each module version once, tied to a driver release the matrix has (a typo there would check nothing)."""
    releases = {row.driver for row in drivers}
    modules: dict[str, AmdgpuModule] = {}
    for record in node.sequence() if node.value is not None else []:
        module = record.child("module").string(_AMDGPU_MODULE, "an amdgpu module version such as 6.12.12")
        if module in modules:
            record.child("module").fail(f"amdgpu module {module} is tied to a driver release already")
        driver = record.child("driver").string(_AMD_DRIVER, "an AMD GPU driver release such as 6.4 or 30.10")
        if driver not in releases:
            record.child("driver").fail(f"AMD GPU driver {driver} is not a row of `drivers`")
        modules[module] = AmdgpuModule(module=module, driver=driver, provenance=cited.provenance(record))
    return modules


def _overrides(node: _Node, cited: _Citations) -> dict[str, GfxOverride]:
    overrides: dict[str, GfxOverride] = {}
    for record in node.sequence() if node.value is not None else []:
        gfx = record.child("gfx").string(GFX, "a gfx target")
        if gfx in overrides:
            record.child("gfx").fail(f"{gfx} has a stand-in already")
        overrides[gfx] = GfxOverride(
            gfx=gfx,
            stand_in=record.child("stand_in").string(GFX, "a gfx target"),
            value=record.child("value").string(re.compile(r"^\d+\.\d+\.\d+$"), "an HSA_OVERRIDE_GFX_VERSION such as 10.3.0"),
            provenance=cited.provenance(record),
            known_failures=record.child("known_failures").optional_string(what="a text"),
        )
    return overrides


def _library_gaps(node: _Node, cited: _Citations) -> tuple[LibraryGap, ...]:
    return tuple(
        LibraryGap(
            gfx=record.child("gfx").string(GFX, "a gfx target"),
            from_rocm=record.child("from_rocm").string(_RELEASE_X_Y, "a ROCm X.Y"),
            library=record.child("library").string(what="a library name"),
            provenance=cited.provenance(record),
        )
        for record in (node.sequence() if node.value is not None else [])
    )


def _vendor_indexes(node: _Node, cited: _Citations) -> tuple[VendorIndex, ...]:
    return tuple(
        VendorIndex(
            name=record.child("name").string(what="a name"),
            url=record.child("url").string(re.compile(r"^https://"), "an https URL"),
            platforms=record.child("platforms").platforms(),
            provenance=cited.provenance(record),
        )
        for record in (node.sequence() if node.value is not None else [])
    )


# ---------------------------------------------------------------- amd_gpus.yaml


def _amd_gpus(node: _Node, cited: _Citations) -> tuple[AmdGpuModel, ...]:
    models = []
    seen: dict[str, str] = {}
    for record in node.sequence() if node.value is not None else []:
        names = record.child("names").strings(what="a GPU name")
        for position, name in enumerate(names):
            key = amd_name_key(name)
            if not key or key in seen:
                record.child("names").child(position).fail(
                    f"{name!r} matches {seen[key]!r} listed before" if key else f"{name!r} names no GPU")
            seen[key] = name
        kind = record.child("kind").string(what="dGPU or APU")
        if kind and kind not in GPU_KINDS:
            record.child("kind").fail(f"{kind!r} is not one of {', '.join(GPU_KINDS)}")
        models.append(AmdGpuModel(
            gfx=record.child("gfx").string(GFX, "a gfx target such as gfx1100"),
            architecture=record.child("architecture").string(what="an architecture name"),
            kind=kind,
            names=names,
            provenance=cited.provenance(record),
        ))
    return tuple(models)


# ---------------------------------------------------------------- xpu.yaml


def _xpu_variants(node: _Node, cited: _Citations, known: dict[str, TorchRelease]) -> dict[str, Variant]:
    variants: dict[str, Variant] = {}
    for record in node.sequence() if node.value is not None else []:
        platforms = record.child("platforms").platforms()
        companions = {}
        if record.has("companions"):
            for name, where in record.child("companions").items():
                if name not in COMPANION_NAMES:
                    where.fail(f"{name!r} is not a companion ({', '.join(COMPANION_NAMES)})")
                companions[name] = tuple(p for p in where.platforms() if p in platforms)
        provenance = cited.provenance(record)
        for version in _torch_versions(record.child("torch"), known):
            if version in variants:
                record.fail(f"torch {version} has an xpu build already")
            variants[version] = Variant(name="xpu", platforms=platforms, provenance=provenance,
                                        companion_platforms=companions)
    return variants


def _intel_gpus(node: _Node, cited: _Citations, known: dict[str, TorchRelease]) -> tuple[IntelGpuFamily, ...]:
    families = []
    for record in node.sequence() if node.value is not None else []:
        platforms = record.child("platforms").platforms()
        since = {}
        if record.has("since"):
            for platform, version in record.child("since").items():
                if platform not in platforms:
                    version.fail(f"{platform!r} is not one of the family's platforms ({', '.join(platforms)})")
                first = version.string(what="a torch version")
                if first and first not in known:
                    version.fail(f"torch {first} is not a release in torch.yaml")
                since[platform] = first
        families.append(IntelGpuFamily(
            family=record.child("family").string(what="a family name"),
            match=record.child("match").strings(what="a word of the GPU's name"),
            platforms=platforms,
            provenance=cited.provenance(record),
            since=since,
        ))
    return tuple(families)


# ---------------------------------------------------------------- mps.yaml


def _macos(node: _Node, cited: _Citations, known: dict[str, TorchRelease]) -> dict[str, MacosSupport]:
    found: dict[str, MacosSupport] = {}
    for record in node.sequence() if node.value is not None else []:
        by_python = {}
        if record.has("wheel_macos_python"):
            for python, macos in record.child("wheel_macos_python").items():
                if not _PYTHON.match(python):
                    macos.fail(f"{python!r} is not a Python minor version")
                by_python[python] = macos.string(_MACOS, "a macOS version such as 14.0")
        support = MacosSupport(
            wheel_macos=record.child("wheel_macos").string(_MACOS, "a macOS version such as 11.0"),
            mps_macos=record.child("mps_macos").string(_MACOS, "a macOS version such as 13.0"),
            provenance=cited.provenance(record),
            wheel_macos_python=by_python,
        )
        for version in _torch_versions(record.child("torch"), known):
            if version in found:
                record.fail(f"torch {version} has macOS facts already")
            found[version] = support
    return found


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())
