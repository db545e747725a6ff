"""The GPU frameworks a project asks for, as solver specs (pure)."""

from __future__ import annotations

from envpin.base.errors import EnvpinInputError
from envpin.compat.model import Database
from envpin.readers.project import GPU_PACKAGE_ALIASES, Project
from envpin.readers.tied import described, framework_specifier, framework_versions, releases_of

# Extras that name the same JAX CUDA build under older spellings; `*-local` ones use a system CUDA that envpin
# does not pin, so they are solved as the pip build of the same CUDA major.
JAX_EXTRA_ALIASES = {"cuda": "cuda12", "cuda12-pip": "cuda12", "cuda12-local": "cuda12", "cuda13-local": "cuda13"}
KNOWN_EXTRAS = {"tensorflow": {"and-cuda"}, "jax": {"cuda12", "cuda13"}}


def gpu_specs(project: Project, database: Database | None = None,
              tied: bool = True) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """(specs for the solver, notes, package -> where the project asks for it). A line of a package built for
    one framework release (`torchdata==0.6.1`, `xformers>=0.0.20`, `tensorflow-text>=2.20.1,<2.21`) adds the
    releases of that framework its allowed releases require (the database's tied.yaml; the framework's releases
    turn their union into one specifier), and asks for the framework where no other line does; `tied=False` leaves
    those out (the question a refusal's fix asks: which release would run without them)."""
    specs: list[str] = []
    notes: list[str] = []
    origins: dict[str, list[str]] = {}
    for requirement in project.gpu_requirements:
        package = GPU_PACKAGE_ALIASES[requirement.name]
        extras = _extras(package, requirement.extras, requirement.origin, notes)
        specifier = requirement.specifier
        cuda_jaxlib = _cuda_jaxlib(requirement)
        if cuda_jaxlib is not None:
            # jaxlib==0.4.23+cuda12.cudnn89 (JAX's find-links page): that release's CUDA 12 build, which the
            # database knows as jax[cuda12]==0.4.23
            specifier, major = cuda_jaxlib
            extra = f"cuda{major}"
            if extra in KNOWN_EXTRAS["jax"]:
                extras = sorted({*extras, extra})
            notes.append(f"{requirement.origin}: {requirement.text} is JAX {specifier[2:]}'s CUDA {major} jaxlib: "
                         + (f"solved as jax[{extra}]{specifier}" if extra in extras else
                            f"envpin solves no CUDA {major} JAX build; solved as jax{specifier}"))
        extra_text = f"[{','.join(extras)}]" if extras else ""
        specs.append(f"{package}{extra_text}{specifier}")
        served = _what_pypi_serves(requirement.name, requirement.specifier) if requirement.name != package else ""
        # a pin PyPI does not serve is said where a refusal names the line, too
        unserved = f"; {served[2:-1]}" if served.startswith(" (PyPI serves no") else ""
        origins.setdefault(package, []).append(f"{requirement.text} ({requirement.origin}{unserved})")
        if requirement.name != package:
            notes.append(f"{requirement.origin}: {requirement.text} is solved as {package}{served}")
        if requirement.marker:
            notes.append(f"{requirement.origin}: {requirement.name} is solved for this line, marker "
                         f"`{requirement.marker}`; the plan's pin is written without it")
    for requirement, specifier, records in tied_lines(project, database) if tied else ():
        framework = records[0].framework
        specs.append(f"{framework}{specifier}")
        origins.setdefault(framework, []).append(f"{requirement.text} ({requirement.origin})")
        if len(records) == 1:
            notes.append(f"{requirement.origin}: {requirement.text} is built for {described(records[0])} (the "
                         f"Requires-Dist of {_wheel(records[0])}): {framework} is solved within that")
        else:
            notes.append(f"{requirement.origin}: each {requirement.name} release {requirement.text} allows requires one "
                         f"{framework} ({records[0].version}: {described(records[0])} … {records[-1].version}: "
                         f"{described(records[-1])}, their wheels' Requires-Dist): {framework} is solved within them "
                         f"({framework}{specifier})")
    if not specs:
        raise EnvpinInputError(
            f"no GPU framework (torch, tensorflow, jax) among the requirements of {', '.join(project.files)}; "
            "name one with --framework"
        )
    return specs, notes, origins


def tied_lines(project: Project, database: Database | None) -> list[tuple]:
    """(requirement, framework specifier, its recorded releases) for each line whose allowed releases limit their
    framework's (none without a database)."""
    if database is None:
        return []
    found = []
    for requirement in project.other_requirements:
        if requirement.marker and "darwin" in requirement.marker:
            continue
        records = releases_of(database, requirement.name, requirement.specifier)
        if not records:
            continue
        specifier = framework_specifier(records, framework_versions(database, records[0].framework))
        if specifier is not None:
            found.append((requirement, specifier, records))
    return found


def _cuda_jaxlib(requirement) -> tuple[str, str] | None:
    """(`==0.4.23`, "12") for `jaxlib==0.4.23+cuda12.cudnn89`; None for any other line."""
    from envpin.readers.variants import jax_cuda_major, split_local  # noqa: PLC0415 - only a jaxlib line needs it

    specifier = requirement.specifier
    if requirement.name != "jaxlib" or not specifier.startswith("==") or "," in specifier or "+" not in specifier:
        return None
    version = specifier[2:]
    major = jax_cuda_major("jaxlib", version, frozenset())
    return (f"=={split_local(version)[0]}", major) if major else None


def _wheel(record) -> str:
    return " and ".join(url.rsplit("/", 1)[-1] for url in record.source.split(" and "))


def _extras(package: str, extras: tuple[str, ...], origin: str, notes: list[str]) -> list[str]:
    kept = []
    for extra in extras:
        name = JAX_EXTRA_ALIASES.get(extra, extra) if package == "jax" else extra
        if name in KNOWN_EXTRAS.get(package, set()):
            kept.append(name)
        else:
            notes.append(f"{origin}: extra [{extra}] of {package} is not a GPU build envpin solves; left out")
    return sorted(set(kept))


def _what_pypi_serves(name: str, specifier: str) -> str:
    """For a renamed package whose PyPI releases are recorded (tensorflow-gpu): that the line itself would
    install a stub, or a version PyPI does not serve (envpin.readers.served)."""
    from envpin.readers.served import SERVED, STUBS  # noqa: PLC0415 - only a line of such a package

    served = SERVED.get(name)
    if served is None:
        return ""
    pinned = specifier[2:] if specifier.startswith("==") and "," not in specifier else None
    if pinned is not None and pinned not in served:
        return f" (PyPI serves no {name} {pinned}: as written, the line cannot be installed anywhere)"
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - as above

    try:
        taken = list(SpecifierSet(specifier).filter(served))
    except InvalidSpecifier:
        return ""
    if taken and (name, taken[-1]) in STUBS:
        return f" (as written, pip would install {name} {taken[-1]}, {STUBS[name, taken[-1]]})"
    return ""
