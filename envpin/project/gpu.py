"""The GPU frameworks a project asks for, as solver specs (pure)."""

from __future__ import annotations

from envpin.errors import EnvpinInputError
from envpin.project.model import GPU_PACKAGE_ALIASES, Project
from envpin.project.tied import tied_to, torch_specifiers

# Extras that name the same JAX CUDA build under older spellings; `*-local` ones use a system CUDA that envpin
# does not pin, so they are solved as the pip build of the same CUDA major.
JAX_EXTRA_ALIASES = {"cuda": "cuda12", "cuda12-pip": "cuda12", "cuda12-local": "cuda12", "cuda13-local": "cuda13"}
KNOWN_EXTRAS = {"tensorflow": {"and-cuda"}, "jax": {"cuda12", "cuda13"}}


def gpu_specs(project: Project) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """(specs for the solver, notes, package -> where the project asks for it)."""
    specs: list[str] = []
    notes: list[str] = []
    origins: dict[str, list[str]] = {}
    for requirement in project.gpu_requirements:
        package = GPU_PACKAGE_ALIASES[requirement.name]
        extras = _extras(package, requirement.extras, requirement.origin, notes)
        extra_text = f"[{','.join(extras)}]" if extras else ""
        specs.append(f"{package}{extra_text}{requirement.specifier}")
        origins.setdefault(package, []).append(f"{requirement.text} ({requirement.origin})")
        if requirement.name != package:
            notes.append(f"{requirement.origin}: {requirement.text} is solved as {package}")
        if requirement.marker:
            notes.append(f"{requirement.origin}: the marker `{requirement.marker}` of {requirement.name} is not evaluated")
    for requirement in project.other_requirements:
        tied = tied_to(requirement.name, requirement.specifier)
        if tied is None or requirement.marker and "darwin" in requirement.marker:
            continue
        for specifier in torch_specifiers(tied):
            specs.append(f"torch{specifier}")
        origins.setdefault("torch", []).append(f"{requirement.text} ({requirement.origin})")
        notes.append(f"{requirement.origin}: {requirement.text} is built for torch {tied.torch.replace('||', ' or ')} "
                     f"(the Requires-Dist of {tied.source.rsplit('/', 1)[-1]}): torch is solved within that")
    if not specs:
        raise EnvpinInputError(
            f"no GPU framework (torch, tensorflow, jax) among the requirements of {', '.join(project.files)}; "
            "name one with --framework"
        )
    return specs, notes, origins


def _extras(package: str, extras: tuple[str, ...], origin: str, notes: list[str]) -> list[str]:
    kept = []
    for extra in extras:
        name = JAX_EXTRA_ALIASES.get(extra, extra) if package == "jax" else extra
        if name in KNOWN_EXTRAS.get(package, set()):
            kept.append(name)
        else:
            notes.append(f"{origin}: extra [{extra}] of {package} is not a GPU build envpin solves; left out")
    return sorted(set(kept))
