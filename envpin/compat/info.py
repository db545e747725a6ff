"""`envpin db info`: what the database holds, where it comes from, and what is unverified."""

from __future__ import annotations

from collections import Counter
from typing import Any

from envpin.compat.model import Database


def database_info(database: Database) -> dict[str, Any]:
    releases = database.torch_releases
    return {
        "version": database.version,
        "counts": {
            "cuda_toolkits": len(database.toolkits),
            "gpu_models": sum(len(model.names) for model in database.gpus),
            "torch_releases": len(releases),
            "torch_builds": sum(len(r.variants) for r in releases),
            "tensorflow_releases": len(database.tensorflow_releases),
            "jax_releases": len(database.jax_releases),
            "sources": len(database.sources),
        },
        "torch_range": [str(releases[-1].version), str(releases[0].version)] if releases else [],
        "sources_by_grade": dict(Counter(source.grade for source in database.sources.values())),
        "unverified": _unverified(database),
    }


def _unverified(database: Database) -> list[str]:
    notes = []
    for major, record in sorted(database.minor_version_compat.items()):
        if record.provenance.unverified:
            notes.append(f"CUDA {major}.x minor-version compatibility: {record.provenance.unverified}")
    for version, toolkit in database.toolkits.items():
        if toolkit.provenance.unverified:
            notes.append(f"CUDA {version} toolkit: {toolkit.provenance.unverified}")
    for model in database.gpus:
        if model.provenance.unverified:
            notes.append(f"GPUs {', '.join(model.names[:3])}…: {model.provenance.unverified}")
    for name, archs in database.arch_sets.items():
        if archs.provenance.unverified:
            notes.append(f"arch set {name}: {archs.provenance.unverified}")
    for release in database.torch_releases:
        records = [(f"torch {release.version}", release.provenance)]
        records += [(f"torch {release.version}+{v.name}", v.provenance) for v in release.variants.values()]
        records += [(f"{c.name} {c.version}", c.provenance) for c in release.companions.values()]
        notes += [f"{label}: {p.unverified}" for label, p in records if p.unverified]
    for tf in database.tensorflow_releases:
        records = [(f"tensorflow {tf.version}", tf.provenance)]
        records += [(f"tensorflow {tf.version} GPU on {g.platform}", g.provenance) for g in tf.gpu.values()]
        if tf.and_cuda is not None:
            records.append((f"tensorflow[and-cuda] {tf.version}", tf.and_cuda.provenance))
        notes += [f"{label}: {p.unverified}" for label, p in records if p.unverified]
    for jax in database.jax_releases:
        records = [(f"jax {jax.version}", jax.provenance)]
        records += [(f"jax[{e.name}] {jax.version}", e.provenance) for e in jax.extras.values()]
        notes += [f"{label}: {p.unverified}" for label, p in records if p.unverified]
    return list(dict.fromkeys(notes))


def render_info(info: dict[str, Any]) -> str:
    counts = info["counts"]
    lines = [
        f"compatibility database {info['version']}",
        f"  CUDA toolkits: {counts['cuda_toolkits']}   GPU names: {counts['gpu_models']}",
        f"  torch releases: {counts['torch_releases']} ({' … '.join(info['torch_range'])}), "
        f"builds: {counts['torch_builds']}",
        f"  tensorflow releases: {counts['tensorflow_releases']}   jax releases: {counts['jax_releases']}",
        f"  sources: {counts['sources']} "
        + "(" + ", ".join(f"{grade}: {n}" for grade, n in sorted(info["sources_by_grade"].items())) + ")",
        f"unverified ({len(info['unverified'])}):",
    ]
    lines += [f"  - {note}" for note in info["unverified"]]
    return "\n".join(lines)
