"""A version range (`torch>=2.7,<2.13`) is judged by the build the installer would actually take on the target.

pip takes the highest version that matches and has a wheel for the target's platform and Python, across every
index the file names (pip's PackageFinder: "the best candidate" over all index pages; a local version such as
`2.12.1+cu126` sorts above PyPI's `2.12.1`). A uv source (`[tool.uv.sources]`, bound to one index) offers only
that index. The releases are the database's, so the answer holds as of the database's date.

A range is fine when that build runs there; when it does not, the error names the build and the narrower
range (or the index) whose builds do run; when no build the range allows runs, the error says that.
"""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from envpin.base.record import Record, record
from envpin.check.judged import PIP_FRAMEWORKS, Judged, release_versions, tensorflow_build_for
from envpin.compat.model import Database
from envpin.readers.model import Contents, Pin, can_coexist
from envpin.readers.rules import consults_pypi, file_variants
from envpin.readers.variants import index_variant, jax_cuda_major
from envpin.resolver.builds import Build, jax_builds, tensorflow_builds, torch_build
from envpin.resolver.fitness import assess
from envpin.resolver.target import Target
from envpin.vocabulary.variants import DEFAULT_TORCH_INDEX

_ALL_KINDS = frozenset({"cuda", "rocm", "xpu", "cpu"})


@record
class Offer(Record):
    """One build an index offers: the version pip compares, where it is, and the build."""

    version: Version
    source: str  # "PyPI", "https://download.pytorch.org/whl/cu126"
    build: Build


def picked_build(pin: Pin, contents: Contents, database: Database, target: Target,
                 python_known: bool = True) -> Judged | None:
    try:
        allowed = SpecifierSet(pin.specifier)
    except InvalidSpecifier:
        return None
    framework = PIP_FRAMEWORKS[pin.name]
    tied = (_tied_beside(pin, framework, contents, database) + _required_beside(pin, framework, contents, database,
                                                                                target)
            if framework in ("torch", "tensorflow") else [])
    for _, specifier in tied:
        allowed &= SpecifierSet(specifier)
    matching = [o for o in _offers(pin, contents, database, target, framework) if allowed.contains(o.version.public)]
    offers = [o for o in matching if _installs(o.build, target, python_known)]
    if not offers:
        if not _any_release(database, framework, allowed):
            return None  # nothing the database knows matches: the range is newer than the database
        sources = ", ".join(_sources(pin, contents))
        if not any(target.platform in o.build.platforms for o in matching):
            return Judged(pin, failure=f"no {framework} build that {pin.shown} allows is made for {target.platform} "
                          f"on the indexes this file names ({sources})")
        # no wheel for the Python: the newest build for the platform is judged, so every other fact that fails
        # (its GPU code, the driver) is said beside the Python
        newest = max((o for o in matching if target.platform in o.build.platforms), key=lambda o: o.version)
        because = f" (within what {', '.join(line for line, _ in tied)} require)" if tied else ""
        return Judged(pin, (newest.build,), note=(
            f"no {framework} release that {pin.shown} allows{because} has a wheel for Python {target.python} on "
            f"{target.platform} on the indexes this file names ({sources}); the newest, {newest.build.label}"))
    best = max(offers, key=lambda o: o.version)
    because = f", within what {', '.join(line for line, _ in tied)} require" if tied else ""
    note = f"for {pin.shown} the installer takes {best.build.label} (from {best.source}{because})"
    # a CPU build the file asks for by name: PyTorch's cpu index, `jax[cpu]` (or `jax[tpu]`, for TPU machines: no
    # GPU build either), tensorflow-cpu
    by_name = best.source.endswith("/cpu") or not {"cpu", "tpu"}.isdisjoint(pin.extras) or pin.name == "tensorflow-cpu"
    explicit_cpu = best.build.kind == "cpu" and by_name
    if _fits(best.build, database, target, python_known) or (explicit_cpu and _fits_as_cpu(best.build, database,
                                                                                          target, python_known)):
        return Judged(pin, (best.build,), note=note, explicit_cpu=explicit_cpu)
    return Judged(pin, (best.build,), note=note,
                  fix=_range_fix(pin, framework, offers, database, target, python_known, allowed))


def _tied_beside(pin: Pin, framework: str, contents: Contents, database: Database) -> list[tuple[str, str]]:
    """(line, specifier of the pin's framework) of the lines beside it whose package is built for one release of it
    (`torchdata==0.6.1` requires torch==2.0.1; each xformers release `xformers>=0.0.20` allows requires one torch;
    `tensorflow-text==2.20.1` requires tensorflow<2.21,>=2.20.0): the installer resolves the framework within them."""
    from envpin.readers.tied import framework_specifier, framework_versions, releases_of  # noqa: PLC0415 - only a file with a range needs it

    versions = framework_versions(database, framework)
    found = []
    for other in contents.pins:
        if other.manager != "pip" or other is pin or not can_coexist(pin, other):
            continue
        if framework == "torch" and other.name in ("torchvision", "torchaudio") and other.version:
            # an exact companion pairs with one torch release (torchvision 0.19.1 requires torch==2.4.1)
            paired = _paired_torch(database, other.name, other.version.split("+", 1)[0])
            if paired:
                found.append((other.shown, f"=={paired}"))
            continue
        records = releases_of(database, other.name, f"=={other.version}" if other.version else other.specifier)
        if not records or records[0].framework != framework:
            continue
        specifier = framework_specifier(records, versions)
        if specifier is not None:
            found.append((other.shown, specifier))
    return found


def _required_beside(pin: Pin, framework: str, contents: Contents, database: Database,
                     target: Target) -> list[tuple[str, str]]:
    """(line, specifier of the pin's framework) of the lines beside it on a package some releases of the framework
    require versions of that the line excludes (`protobuf==4.25.1` beside `tensorflow>=2.16`: tensorflow 2.20.0
    requires protobuf>=5.28.0): the installer takes a release that leaves room for the line (the database's
    requires.yaml, markers evaluated on the target)."""
    if pin.name != framework:
        return []  # tensorflow-gpu, jaxlib: their own wheels' requirements are not recorded
    others = [o for o in contents.pins if o.manager == "pip" and o is not pin and (o.version or o.specifier)
              and o.name not in ("torch", "tensorflow") and can_coexist(pin, o)]
    if not others or not target.python:
        return []
    from envpin.readers.framework_requires import framework_bound, requires_names  # noqa: PLC0415 - such files only
    from envpin.readers.tied import framework_versions, releases_specifier  # noqa: PLC0415 - as above

    names = requires_names(database, framework)
    releases = framework_versions(database, framework)
    found = []
    for other in (o for o in others if o.name in names):
        allowed, ruled_out = framework_bound(database, framework, other.name,
                                             f"=={other.version}" if other.version else other.specifier, releases,
                                             target.python, target.platform)
        if ruled_out and allowed:
            found.append((other.shown, releases_specifier(allowed, releases)))
    return found


def _paired_torch(database: Database, companion: str, version: str) -> str | None:
    """The one torch release the database pairs that torchvision / torchaudio release with (its Requires-Dist
    pins torch exactly), or None when it pairs none or several."""
    paired = {str(r.version) for r in database.torch_releases if companion in r.companions
              and version in {r.companions[companion].version, *(b.version for b in r.companions[companion].builds)}}
    return paired.pop() if len(paired) == 1 else None


def _offers(pin: Pin, contents: Contents, database: Database, target: Target, framework: str) -> list[Offer]:
    if framework == "torch":
        return _torch_offers(pin, contents, database, target)
    offers = []
    if framework == "tensorflow":
        for release in database.tensorflow_releases:
            offers.append(Offer(release.version, "PyPI", tensorflow_build_for(pin, tensorflow_builds(release), target)))
        return offers
    major = jax_cuda_major(pin.name, None, pin.extras)
    flavor = f"cuda{major}" if major else "cpu"
    for jax in database.jax_releases:
        build = next((b for b in jax_builds(jax) if b.flavor == flavor), None)
        if build is not None:
            offers.append(Offer(jax.version, "PyPI", build))
    return offers


def _torch_offers(pin: Pin, contents: Contents, database: Database, target: Target) -> list[Offer]:
    """Every torch build the file's indexes serve for the target's platform, as pip would see them."""
    if pin.index:
        bound = index_variant(pin.index)
        variants, every, pypi = ({bound} if bound else set()), False, False
    else:
        variants, every = file_variants(contents)
        pypi = consults_pypi(contents)
    offers = []
    for release in database.torch_releases:
        for name, variant in release.variants.items():
            if target.platform not in variant.platforms:
                continue
            if every or name in variants:
                offers.append(Offer(Version(f"{release.version}+{name}"), f"{DEFAULT_TORCH_INDEX}/{name}",
                                    torch_build(release, variant)))
        plain = release.variants.get(release.pypi.get(target.platform) or "")
        if pypi and plain is not None:
            offers.append(Offer(release.version, "PyPI", torch_build(release, plain)))
    return offers


def _sources(pin: Pin, contents: Contents) -> list[str]:
    if pin.index:
        return [pin.index]
    urls = [o.url for o in contents.indexes if o.url and o.option != "no-index"]
    return urls + (["PyPI"] if consults_pypi(contents) else [])


def _installs(build: Build, target: Target, python_known: bool) -> bool:
    """Whether the installer can take the build at all there: a wheel for the platform (and the Python)."""
    if target.platform not in build.platforms:
        return False
    return not python_known or build.pythons is None or target.python in build.pythons.get(target.platform, ())


def _fits(build: Build, database: Database, target: Target, python_known: bool) -> bool:
    ignore = frozenset() if python_known else frozenset({"python"})
    verdict = assess(database, target, build, policy="minor", allowed_kinds=_ALL_KINDS, ignore=ignore)
    # on an NVIDIA machine only a CUDA build uses the GPU (a ROCm build passes assess, which does not check AMD GPUs)
    return verdict.fits and (build.kind == "cuda" or not (target.gpus and target.has_nvidia))


def _fits_as_cpu(build: Build, database: Database, target: Target, python_known: bool) -> bool:
    ignore = frozenset() if python_known else frozenset({"python"})
    return assess(database, target, build, policy="minor", allowed_kinds=_ALL_KINDS, ignore=ignore).fits


def _any_release(database: Database, framework: str, allowed: SpecifierSet) -> bool:
    return any(allowed.contains(version) for version in release_versions(database, framework))


def _range_fix(pin: Pin, framework: str, offers: list[Offer], database: Database, target: Target,
               python_known: bool, allowed: SpecifierSet) -> str:
    """The narrower range whose every release the installer takes in a build that runs there (it takes the
    highest build of a release: `2.10.0+cu126` over PyPI's `2.10.0`), or the index whose builds do; `allowed`
    is the range with what the lines beside it require (`xformers<=0.0.30` holds torch at 2.7.0 or older)."""
    taken: dict[str, Offer] = {}
    for offer in sorted(offers, key=lambda o: o.version):
        taken[offer.version.public] = offer  # the highest build of each release, as the installer takes it
    running = [v for v in sorted(taken, key=Version, reverse=True)
               if _fits(taken[v].build, database, target, python_known)]
    if running:
        ordered = sorted(taken, key=Version, reverse=True)
        high = running[0]
        low = high
        for version in ordered[ordered.index(high) + 1:]:
            if version not in running:
                break
            low = version
        return (f"narrow the range to what runs there: {pin.name}>={low},<={high} (the installer then takes "
                f"{taken[high].build.label} from {taken[high].source})")
    if framework == "torch":
        elsewhere = [b for r in database.torch_releases if allowed.contains(r.version)
                     for b in (torch_build(r, v) for v in r.variants.values())
                     if _installs(b, target, python_known) and _fits(b, database, target, python_known)]
        if elsewhere:
            best = max(elsewhere, key=lambda b: (b.version, b.cuda or ""))
            return (f"no torch this range allows from these indexes runs there; {best.label} does: take torch from "
                    f"{DEFAULT_TORCH_INDEX}/{best.flavor} instead (or pin {pin.name}=={best.version}+{best.flavor})")
    return (f"no {framework} this range allows runs there: regenerate the pins with `envpin solve --framework "
            f"{framework}` for this target")
