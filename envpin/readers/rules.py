"""The problem ids and the checks that hold for every format: Contents (+ database, + targets) → Problems.

Each format module reduces its file to pins and index options and reports what only that format can get
wrong (structure, hashes). The rules here see only those pins, so a `+cu118` torchvision beside a `+cu121`
torch is the same finding in a requirements file, an environment.yml, a pylock.toml or a uv.lock.
Facts come from the compatibility database (`torch_releases` with their `companions`, `variants`, `python`,
`pypi` and `known_issues`; TensorFlow's and JAX's releases); nothing is guessed where it has no record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from envpin.base.record import Record, record, replace
from envpin.compat.model import CUDA_CHECKS, PYPI_INDEX
from envpin.readers.model import Contents, Pin, Problem, can_coexist, scope_oses
from envpin.readers.variants import (
    COMPANIONS,
    CONDA_CUDA_VERSIONED,
    TORCH_FAMILY,
    conda_build_kind,
    cuda_major_of_variant,
    index_variant,
    is_pypi,
    jax_cuda_major,
    local_variant,
    nvidia_library_major,
    python_minor,
    serves_every_variant,
    split_local,
)
from envpin.vocabulary.frameworks import FRAMEWORKS
from envpin.vocabulary.variants import DEFAULT_TORCH_INDEX, kind_of

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from envpin.compat.model import Companion, Database, TorchRelease


# id -> (default severity, what it means). docs/check.md documents each with an example and its fix.
PROBLEMS: dict[str, tuple[str, str]] = {
    "CHK-FILE-UNREADABLE": ("error", "the file cannot be read, is not UTF-8, or is no kind of file envpin checks (exit 2)"),
    "CHK-FILE-MALFORMED": ("error", "YAML/TOML syntax error or the wrong top-level type: the file is not the format at all (exit 2)"),
    "CHK-MERGE-CONFLICT": ("error", "git conflict markers (<<<<<<< ======= >>>>>>>) were committed"),
    "CHK-STRUCTURE": ("error", "a field the format requires is missing, has the wrong type, or is not one the tool knows"),
    "CHK-REQUIREMENT-INVALID": ("error", "a line pip cannot parse: not PEP 508, or an option pip does not take there"),
    "CHK-SETUP-PY-COMPUTED": ("warning", "setup.py computes install_requires or extras_require when it runs: envpin does not run it, so they are not checked"),
    "CHK-OPTION-MARKER-IGNORED": ("warning", "an environment marker after an option line: pip ignores it, and the option applies on every platform"),
    "CHK-INCLUDE-NOT-READ": ("warning", "a -r/-c include envpin does not read (a URL it does not fetch, or text given without its file): what it pins is not checked"),
    "CHK-ENV-VARIABLE-UNSET": ("warning", "a `${NAME}` in a requirements line whose variable is not set: pip passes the text on as written, and so it is checked"),
    "CHK-INCLUDE-CYCLE": ("error", "a -r/-c include leads back to a file that includes it: pip follows the loop until it fails"),
    "CHK-CONSTRAINT-CONFLICT": ("error", "a requirement and a -c constraint on it that no version meets: pip cannot resolve the install"),
    "CHK-INDEX-OPTION-IGNORED": ("warning", "an index option on a requirement line: pip ignores it (only --hash, --config-settings, --global-option apply per requirement)"),
    "CHK-ENV-PIP-MISSING": ("warning", "environment.yml has a pip: section but does not list pip itself"),
    "CHK-DUPLICATE-PACKAGE": ("error", "one package twice in one environment (conda and pip, or two different pins)"),
    "CHK-HASH-MISSING": ("error", "the format (or hash-checking mode) requires a hash and the entry has none"),
    "CHK-HASH-MALFORMED": ("error", "a hash is not algorithm:hex, is not hex, or has the wrong length"),
    "CHK-HASH-ALGORITHM": ("error", "a hash algorithm the installer rejects (pip: only sha256/384/512), or no secure one"),
    "CHK-HASH-UNPINNED": ("error", "hash-checking mode, but a requirement is not pinned with =="),
    "CHK-TORCH-COMPANION-MISMATCH": ("error", "torchvision/torchaudio from another torch release than the torch pinned"),
    "CHK-TORCH-VARIANT-MISMATCH": ("error", "torch and its companions are different builds (+cu118 beside +cu121, cpu beside CUDA)"),
    "CHK-COMPANION-IMPORT": ("error", "a companion build whose import-time CUDA check fails beside torch's build (torchaudio 2.11.0, CUDA 13.0, beside torch +cu132)"),
    "CHK-NUMPY-ABI": ("error", "a framework build compiled against NumPy 1.x whose metadata lets pip take NumPy 2 (torch <= 2.2, TensorFlow 2.7-2.11 and 2.14.0, jaxlib <= 0.4.25), with numpy not held below 2: import fails with NumPy 2"),
    "CHK-NUMPY-REQUIRES": ("error", "a numpy pin or bound that the TensorFlow or JAX line's every matching release excludes by its own Requires-Dist on numpy (numpy<1.24 beside tensorflow==2.21.0): pip cannot install the file"),
    "CHK-PACKAGE-REQUIRES": ("error", "a pin or bound on a package that the torch or tensorflow line's every matching release excludes by its own Requires-Dist (protobuf==4.25.1 beside tensorflow==2.20.0, which requires protobuf>=5.28.0): pip cannot install the file"),
    "CHK-PLAN-BOUND": ("error", "a pin whose extra lets pip take a library version its plugin cannot load (jax[cuda12] 0.4.23-0.4.25 and cuDNN 9), with that library not held below it"),
    "CHK-CUDA-MAJOR-MISMATCH": ("error", "one environment mixes CUDA majors across torch, JAX, TensorFlow, nvidia-* and conda CUDA packages"),
    "CHK-CUDA-LIBRARY-PIN": ("error", "an nvidia-* pin the framework build's own requirement excludes"),
    "CHK-JAX-PLUGIN-MISMATCH": ("error", "jax-cudaNN-plugin/pjrt of another release than jax needs"),
    "CHK-INDEX-MISSING": ("error", "a +cuXXX/+cpu pin, and no PyTorch index in the file (those builds are not on PyPI)"),
    "CHK-INDEX-VARIANT-MISMATCH": ("error", "the pinned variant is not served by the index the file (or entry) names"),
    "CHK-CPU-WHEEL-SHADOW": ("error", "a plain ==X.Y.Z torch pin with a GPU index as an *extra* index: PyPI's build can be taken instead"),
    "CHK-LOCAL-VERSION-MISSING": ("warning", "a torch-family pin without its local version (+cu124): the index, not the file, decides the build"),
    "CHK-BUILD-UNKNOWN": ("error", "the release exists, but not in this variant (2.5.1+cu126)"),
    "CHK-RELEASE-UNKNOWN": ("warning", "a release the compatibility database does not know"),
    "CHK-PIN-NOT-SERVED": ("error", "a pinned version PyPI does not serve at all (deleted or never published: tensorflow-gpu==2.3.0rc0), as its recorded file list says"),
    "CHK-PIN-STUB": ("error", "a pin (or range) that installs a stub release which only fails (tensorflow-gpu 2.12.0, an empty sdist)"),
    "CHK-KNOWN-ISSUE": ("warning", "a release with a known problem on a platform this file installs on (error when the file or target is for that platform)"),
    "CHK-PYTHON-UNSUPPORTED": ("error", "the Python the file pins has no wheels of the pinned framework build"),
    "CHK-TARGET-PLATFORM": ("error", "the pinned build is not built for the target's OS/architecture"),
    "CHK-TARGET-PYTHON": ("error", "the pinned build has no wheel for the target's Python"),
    "CHK-TARGET-UNINSTALLABLE": ("error", "the pinned build cannot be installed at all (its pins cannot resolve)"),
    "CHK-TARGET-DRIVER": ("error", "the target's NVIDIA driver is too old for the pinned build's CUDA (or there is none)"),
    "CHK-TARGET-GPU": ("error", "the pinned build has no code for the target's GPU (compute capability)"),
    "CHK-TARGET-SYSTEM-CUDA": ("warning", "a plain TensorFlow GPU wheel (Linux ≤ 2.13, Windows ≤ 2.10), or JAX's find-links CUDA jaxlib without nvidia-* wheels, needs a CUDA and cuDNN that neither it nor the file brings"),
    "CHK-TARGET-CPU-BUILD": ("warning", "the lock installs a CPU build on a target with an NVIDIA GPU"),
    "CHK-SOLVE-ASSUMED": ("info", "with --solve: a fact of the target was not given and a documented default was assumed (glibc 2.28, as pixi and conda-lock)"),
    "CHK-RESOLVE-CONFLICT": ("error", "with --resolve: uv resolves no environment of the file's lines for the target (uv's reason, in one line)"),
    "CHK-NOT-RESOLVED": ("warning", "with --resolve: uv could not be asked (offline without its cache, an index that does not answer): the lines were not resolved end to end"),
    "CHK-CONDA-WIRING": ("error", "a pytorch-channel pytorch whose CUDA package beside it gets no CUDA build: a cudatoolkit X.Y the release was not built for, cudatoolkit beside 1.13+ (pytorch-cuda's era), pytorch-cuda without the nvidia channel; conda installs the CPU build, or cannot solve"),
    "CHK-CONDA-UNSOLVABLE": ("error", "with --solve: the environment.yml does not solve for the target's virtual packages (py-rattler)"),
    "CHK-LOCK-STALE": ("error", "a lock that no longer matches the manifest beside it (poetry's content-hash, pdm's content_hash, Pipfile.lock's hash, uv.lock's locked requirements, pixi.lock's environments and platforms): the tool's own check fails; refresh it with the tool's lock command"),
    "CHK-DATABASE-NEWS": ("warning", "the file was made with an older compatibility database, which has since learned something about its pins"),
}


def problem(problem_id: str, where: str, message: str, fix: str, severity: str | None = None) -> Problem:
    return Problem(problem_id, severity or PROBLEMS[problem_id][0], message, where, fix)


RELEVANT = frozenset({"torch", "torchvision", "torchaudio", "tensorflow", "jax", "jaxlib"} | CONDA_CUDA_VERSIONED)


def needs_database(contents: Contents) -> bool:
    """Only files that pin a GPU framework or CUDA package consult the database (it costs a load)."""
    return any(
        pin.name in RELEVANT or pin.name.startswith(("nvidia-", "jax-cuda", "cuda-")) or pin.name in ("cpuonly", "__cuda")
        or pin.name in ("tensorflow-cpu", "tensorflow-gpu", "jaxlib")
        for pin in contents.pins
    )


# ---------------------------------------------------------------- helpers shared by the rules


def public(pin: Pin) -> str:
    return split_local(pin.version)[0] if pin.version else ""


def _pip_pins(contents: Contents, names: Iterable[str]) -> list[Pin]:
    wanted = set(names)
    return [p for p in contents.pins if p.manager == "pip" and p.name in wanted]


def consults_pypi(contents: Contents) -> bool:
    """Whether pip, reading this file, also looks on PyPI (the last --index-url wins, as in pip's optparse)."""
    options = contents.indexes
    if any(o.option == "no-index" for o in options):
        return False
    primary = [o.url for o in options if o.option == "index-url"]
    if not primary or is_pypi(primary[-1]):
        return True
    return any(o.option == "extra-index-url" and is_pypi(o.url) for o in options)


def file_variants(contents: Contents) -> tuple[set[str], bool]:
    """The PyTorch variants the file's index options serve, and whether one of them serves every variant."""
    urls = [o.url for o in contents.indexes if o.url and o.option != "no-index"]
    return {v for v in map(index_variant, urls) if v}, any(serves_every_variant(u) for u in urls)


def bound_variant(pin: Pin, contents: Contents) -> str | None:
    """The PyTorch variant a pip pin installs, where the file decides it: its local version, the index it is
    bound to, or the one variant index a requirement file allows (with PyPI out of the picture)."""
    variant = local_variant(pin.version) or index_variant(pin.index)
    if variant or contents.binds_indexes or pin.index:
        return variant
    variants, every = file_variants(contents)
    if len(variants) == 1 and not every and not consults_pypi(contents):
        return next(iter(variants))
    return None


def torch_release_of(database: Database, version: str) -> TorchRelease | None:
    try:
        return database.torch_release(version)
    except ValueError:  # InvalidVersion, or a number too long for int()
        return None


def _index_url(variant: str) -> str:
    return f"{DEFAULT_TORCH_INDEX}/{variant}"


@record
class Flavor(Record):
    kind: str | None  # cuda / cpu / rocm / None when the file does not say
    major: str | None  # the CUDA major
    variant: str | None  # the exact PyTorch variant (pip pins)

    def clashes(self, other: Flavor) -> bool:
        if self.kind and other.kind and self.kind != other.kind:
            return True
        if self.major and other.major and self.major != other.major:
            return True
        return bool(self.variant and other.variant and self.variant != other.variant)

    def describe(self) -> str:
        if self.variant:
            return self.variant
        if self.kind == "cuda":
            return f"CUDA {self.major}" if self.major else "CUDA"
        return self.kind or "unknown"


def flavor(pin: Pin, contents: Contents) -> Flavor:
    if pin.manager == "pip":
        variant = bound_variant(pin, contents)
        if not variant:
            return Flavor(None, None, None)
        kind = kind_of(variant)
        return Flavor(kind, cuda_major_of_variant(variant), variant)
    built = conda_build_kind(pin.build)
    if built:
        return Flavor(built[0], built[1], None)
    if pin.name == "torch":
        return _conda_environment_flavor(pin, contents)
    return Flavor(None, None, None)


def _conda_environment_flavor(pin: Pin, contents: Contents) -> Flavor:
    """A conda pytorch without a build string takes its flavor from `cpuonly` or `pytorch-cuda=X.Y` beside it."""
    for other in contents.pins:
        if other.manager != "conda" or not can_coexist(pin, other):
            continue
        if other.name == "cpuonly":
            return Flavor("cpu", None, None)
        if other.name == "pytorch-cuda" and other.version:
            return Flavor("cuda", other.version.split(".")[0], None)
    return Flavor(None, None, None)


# ---------------------------------------------------------------- duplicates


def duplicate_packages(contents: Contents) -> list[Problem]:
    """Two managers installing one package, or two exact pins of it that cannot both hold. Locks that fork
    per platform or extra list a package once per fork; their scopes keep the forks apart."""
    if contents.kind == "uv.lock":
        return []  # uv.lock lists one entry per fork, and its fork markers overlap; pairs there are not duplicates
    problems = []
    # per name, the first pin of each kind (a pin but for where it is): a later pin alike in every field says the same
    # against each earlier one, so it is compared once; a name listed 5,000 times costs 5,000 steps, not 12.5 million
    seen: dict[str, dict[Pin, Pin]] = {}
    for pin in contents.pins:
        for earlier in seen.get(pin.name, {}).values():
            if not can_coexist(earlier, pin) or pin.scope != earlier.scope:
                continue
            if earlier.manager != pin.manager:
                conda, pip = (earlier, pin) if earlier.manager == "conda" else (pin, earlier)
                if _pip_keeps_condas(conda, pip):
                    continue
                problems.append(problem(
                    "CHK-DUPLICATE-PACKAGE", pin.where,
                    f"{pin.name} is installed twice: by conda ({conda.shown}, {conda.where}) and by pip ({pip.shown}, "
                    f"{pip.where}); the two copies overwrite each other's files and conda no longer knows what is installed",
                    f"keep one of them: drop the conda line {conda.shown!r} or the pip line {pip.shown!r}",
                ))
                break
            if earlier.version and pin.version and earlier.version != pin.version:
                problems.append(problem(
                    "CHK-DUPLICATE-PACKAGE", pin.where,
                    f"{pin.name} is pinned twice: {earlier.shown} ({earlier.where}) and {pin.shown}; "
                    "no version satisfies both, so the install fails",
                    f"keep one {pin.name} pin",
                ))
                break
        seen.setdefault(pin.name, {}).setdefault(replace(pin, where=""), pin)
    return problems


_CONDA_NAME = re.compile(r"^\s*[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _pip_keeps_condas(conda: Pin, pip: Pin) -> bool:
    """Whether pip, run after conda (an environment.yml's `pip:` part), finds the conda package already satisfying
    its line and installs no second copy: conda's python packages carry the metadata pip reads (`pip list` shows
    them), so a pip line that every version the conda line allows satisfies (`numpy <2` under conda's `numpy <2`,
    `torch==2.1.0` beside conda's `pytorch=2.1.0`, an unversioned line) changes nothing."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a package in both needs it

    wanted = f"=={pip.version}" if pip.version else pip.specifier
    if not wanted:
        return True
    try:
        allowed = SpecifierSet(wanted)
        if conda.version:
            return allowed.contains(conda.version, prereleases=True)
        rest = _CONDA_NAME.sub("", conda.label.split("::", 1)[-1], count=1).strip()  # `numpy <2` -> `<2`
        return bool(rest) and SpecifierSet(_conda_range(rest)) == allowed
    except InvalidSpecifier:
        return False


def _conda_range(spec: str) -> str:
    """A conda version spec as PEP 440: `<2`, `>=1.21,<2` as they are; `=1.26`, `1.26` and `1.26.*` (conda's
    1.26.*) as `==1.26.*`."""
    if spec[:1] in "<>!" or spec.startswith("=="):
        return spec
    version = spec.lstrip("=")
    return f"=={version}" if version.endswith("*") else f"=={version}.*"


# ---------------------------------------------------------------- torch, torchvision, torchaudio


def torch_family(contents: Contents, database: Database) -> list[Problem]:
    torches = [p for p in contents.pins if p.name == "torch" and p.version]
    problems: list[Problem] = []
    for companion in (p for p in contents.pins if p.name in COMPANIONS):
        partners = [t for t in torches if can_coexist(t, companion)]
        if not partners:
            continue
        if companion.version is None:
            problems += _unpinned_companion(companion, partners, contents, database)
            continue
        problems += _companion_problems(companion, partners, contents, database)
    problems += _conda_cpu_and_cuda(contents)
    return problems


def _paired_torch_releases(database: Database, companion: Pin) -> list[TorchRelease]:
    try:
        wanted = Version(public(companion))
    except ValueError:  # InvalidVersion, or a number too long for int()
        return []
    return [
        r for r in database.torch_releases
        if companion.name in r.companions and wanted in _companion_versions(r.companions[companion.name])
    ]


def _companion_versions(companion: Companion) -> set[Version]:
    """Every version a torch release pairs (torch 2.13.0: torchaudio 2.11.0, and 2.11.1 beside its cu132 build)."""
    return {Version(companion.version), *(Version(b.version) for b in companion.builds)}


def _companion_problems(companion: Pin, partners: list[Pin], contents: Contents, database: Database) -> list[Problem]:
    paired = _paired_torch_releases(database, companion)
    if not paired:
        if companion.manager == "conda":
            return []  # conda versions may be fuzzy (`=0.16`); only an exact pip pin is worth a warning
        return [problem(
            "CHK-RELEASE-UNKNOWN", companion.where,
            f"{companion.shown}: {companion.name} {public(companion)} is not paired with any torch release in the "
            f"compatibility database {database.version}",
            f"check the version; `envpin solve --spec 'torch=={public(partners[0])}'` prints the {companion.name} "
            "that goes with your torch",
        )]
    versions = {str(r.version) for r in paired}
    matching = [t for t in partners if public(t) in versions]
    if not matching and any(r.companions[companion.name].any_torch for r in paired):
        return []  # a pure-Python companion (torchvision 0.2.x): no operators compiled against one torch
    if not matching:
        torch = partners[0]
        release = torch_release_of(database, public(torch))
        expected = release.companions.get(companion.name) if release else None
        suffix = f"+{local_variant(torch.version)}" if expected and expected.per_variant and local_variant(torch.version) else ""
        equals = "=" if companion.manager == "conda" else "=="
        fix = (
            f"pin {companion.name}{equals}{expected.version}{suffix} (the {companion.name} of torch {public(torch)}), "
            f"or torch {_newest(versions)} to go with {companion.name} {public(companion)}"
            if expected else f"pin torch {_newest(versions)}, the release {companion.name} {public(companion)} is built for"
        )
        return [problem(
            "CHK-TORCH-COMPANION-MISMATCH", companion.where,
            f"{companion.shown} is built for torch {_newest(versions) if len(versions) == 1 else ' / '.join(sorted(versions))}, "
            f"but torch here is {torch.shown} ({torch.where}); its compiled operators fail to load against another torch",
            fix,
        )]
    recorded = _import_problems(companion, matching, contents, database)
    if recorded is not None:
        return recorded  # the database records the pinned build: its import check decides
    if not any(r.companions[companion.name].per_variant for r in paired):
        return []  # one wheel serves every variant (torchaudio 2.11.1): nothing to compare
    mine = flavor(companion, contents)
    theirs = [(t, flavor(t, contents)) for t in matching]
    if all(mine.clashes(other) for _, other in theirs):
        torch, other = theirs[0]
        return [problem(
            "CHK-TORCH-VARIANT-MISMATCH", companion.where,
            f"{companion.shown} is the {mine.describe()} build, but torch is {torch.shown} ({other.describe()}, "
            f"{torch.where}); a companion must be the same build as torch",
            _same_build_fix(companion, torch, other),
        )]
    return []


def _only_pypi_serves(pin: Pin, release: TorchRelease, variants: set[str]) -> bool:
    """The database records this companion version on PyPI and on none of the file's PyTorch indexes (torchaudio
    2.11.1 beside a cu132 torch: the cu132 index has no torchaudio 2.11)."""
    record = release.companions.get(pin.name)
    builds = [b for b in record.builds if b.version == public(pin)] if record else []
    return any(b.index == PYPI_INDEX for b in builds) and not any(b.index in variants for b in builds)


def _import_problems(companion: Pin, torches: list[Pin], contents: Contents, database: Database) -> list[Problem] | None:
    """Where the file decides torch's variant and the database records the companion build the pin names (its
    index, CUDA and import-time check), whether `import` of it succeeds beside that torch; None where either is
    not known, for the other rules to judge."""
    if companion.manager != "pip":
        return None
    mine = bound_variant(companion, contents)
    for torch in (t for t in torches if t.manager == "pip"):
        release = torch_release_of(database, public(torch))
        variant = release.variants.get(bound_variant(torch, contents) or "") if release else None
        record = release.companions.get(companion.name) if release else None
        if release is None or variant is None or record is None:
            continue
        named = [b for b in record.builds if b.version == public(companion)
                 and (b.index == mine if mine else b.index == PYPI_INDEX)]
        if not named or any(b.cuda_check not in CUDA_CHECKS for b in named):
            continue  # the shorthand's builds record no import check: the variant rules judge them
        if any(b.imports_beside(variant) for b in named):
            return []
        build = named[0]
        built = f"built for CUDA {build.cuda}" if build.cuda else "a CPU build"
        check = {"minor": "compares the CUDA major.minor with torch's at import and raises RuntimeError",
                 "major": "compares the CUDA major with torch's at import and raises RuntimeError"}.get(
            build.cuda_check, "has no code for torch's build")
        paired = next((b for b in record.builds if b.imports_beside(variant)
                       and b.index in (variant.name, PYPI_INDEX)), None)
        fix = (f"pin {companion.name}=={paired.version}" + (f"+{paired.index} from {_index_url(paired.index)}"
                                                            if paired.index != PYPI_INDEX else " from PyPI")
               if paired else f"the database has no {companion.name} build for torch {public(torch)}+{variant.name}: "
               "leave it out, or pick another torch build")
        source = "PyPI's" if build.index == PYPI_INDEX else f"the {build.index} index's"
        return [problem(
            "CHK-COMPANION-IMPORT", companion.where,
            f"{companion.shown} is {source} {companion.name} {build.version}, {built}; it {check}, and torch is "
            f"{torch.shown} (CUDA {variant.cuda or 'none'}, {torch.where})",
            fix,
        )]
    return None


def _same_build_fix(companion: Pin, torch: Pin, torch_flavor: Flavor) -> str:
    if companion.manager == "pip" and torch_flavor.variant:
        return (f"pin {companion.name}=={public(companion)}+{torch_flavor.variant} from "
                f"{_index_url(torch_flavor.variant)}, the same index as torch")
    return f"install {companion.name} and torch from the same channel and build ({torch_flavor.describe()})"


def _unpinned_companion(companion: Pin, partners: list[Pin], contents: Contents, database: Database) -> list[Problem]:
    """torch pinned to a local version, torchvision left open: pip may settle on PyPI's build of the paired
    release, which is PyPI's CUDA (Linux) or CPU (Windows) build, not torch's."""
    if companion.manager != "pip" or contents.binds_indexes:
        return []
    for torch in partners:
        variant = local_variant(torch.version)
        release = torch_release_of(database, public(torch))
        paired = release.companions.get(companion.name) if release else None
        if torch.manager == "pip" and variant and paired and paired.per_variant:
            return [problem(
                "CHK-LOCAL-VERSION-MISSING", companion.where,
                f"{companion.shown} is not pinned while torch is {torch.shown}; pip may install PyPI's "
                f"{companion.name} {paired.version}, which is not the {variant} build",
                f"pin {companion.name}=={paired.version}+{variant}",
            )]
    return []


def _conda_cpu_and_cuda(contents: Contents) -> list[Problem]:
    cpuonly = [p for p in contents.pins if p.manager == "conda" and p.name == "cpuonly"]
    selectors = [p for p in contents.pins if p.manager == "conda" and p.name == "pytorch-cuda"]
    return [
        problem(
            "CHK-TORCH-VARIANT-MISMATCH", cpu.where,
            f"`cpuonly` selects pytorch's CPU build and {cuda.shown} ({cuda.where}) its CUDA build; conda cannot solve both",
            "keep pytorch-cuda for a GPU environment, or cpuonly for a CPU one",
        )
        for cpu in cpuonly for cuda in selectors[:1] if can_coexist(cpu, cuda)
    ]


def _newest(versions: Iterable[str]) -> str:
    return str(max(versions, key=Version))


# ---------------------------------------------------------------- one CUDA major


@record
class CudaClaim(Record):
    pin: Pin
    major: str
    why: str  # "torch 2.5.1+cu124 is a CUDA 12 build"
    framework: bool


def cuda_claims(contents: Contents, database: Database) -> list[CudaClaim]:
    claims = []
    for pin in contents.pins:
        claim = _conda_claim(pin) if pin.manager == "conda" else _pip_claim(pin, contents, database)
        if claim:
            claims.append(claim)
    return claims


def _pip_claim(pin: Pin, contents: Contents, database: Database) -> CudaClaim | None:
    if pin.name in COMPANIONS:
        return None  # a companion is measured against torch by torch_family, not counted twice here
    if pin.name == "torch":
        major = cuda_major_of_variant(bound_variant(pin, contents))
        if major:
            return CudaClaim(pin, major, f"{pin.shown} is a CUDA {major} build", True)
        return _pypi_torch_claim(pin, contents, database)
    major = nvidia_library_major(pin.name, public(pin) or None)
    if major:
        return CudaClaim(pin, major, f"{pin.shown} is a CUDA {major} library", False)
    major = jax_cuda_major(pin.name, pin.version, pin.extras)
    if major:
        return CudaClaim(pin, major, f"{pin.shown} is JAX's CUDA {major} build", pin.name in ("jax", "jaxlib"))
    if pin.name == "tensorflow" and "and-cuda" in pin.extras and pin.version:
        release = tensorflow_release_of(database, public(pin))
        gpu = release.gpu.get("linux-x86_64") if release else None
        if gpu:
            major = gpu.cuda.split(".")[0]
            return CudaClaim(pin, major, f"{pin.shown} is tested with CUDA {gpu.cuda}", True)
    return None


def _pypi_torch_claim(pin: Pin, contents: Contents, database: Database) -> CudaClaim | None:
    """A public `torch==X` from PyPI alone (no PyTorch index in the file): on Linux x86_64 PyPI's wheel is a CUDA
    build whose Requires-Dist names nvidia-*-cuNN (the database's `pins` of that variant, read from its METADATA),
    which it loads: an nvidia library of another major beside it is a clash there."""
    if not pin.version or local_variant(pin.version) or pin.index or file_variants(contents)[0]:
        return None
    release = torch_release_of(database, public(pin))
    name = release.pypi.get("linux-x86_64") if release else None
    variant = release.variants.get(name) if release and name else None
    if variant is None or not variant.pins or not variant.cuda:
        return None
    major = variant.cuda.split(".")[0]
    return CudaClaim(pin, major, f"{pin.shown} from PyPI is, on Linux, a CUDA {major} build that loads the "
                     f"nvidia-*-cu{major} packages its wheel requires", True)


def _conda_claim(pin: Pin) -> CudaClaim | None:
    if pin.name in CONDA_CUDA_VERSIONED and pin.version:
        major = pin.version.split(".")[0].lstrip("=")
        if major.isdigit():
            return CudaClaim(pin, major, f"{pin.shown} is CUDA {major}", pin.name == "pytorch-cuda")
        return None
    built = conda_build_kind(pin.build)
    if pin.name in COMPANIONS:
        return None
    if built and built[0] == "cuda" and built[1]:
        return CudaClaim(pin, built[1], f"{pin.shown} is a CUDA {built[1]} build", pin.name in ("torch", "jaxlib", "tensorflow"))
    return None


def cuda_majors(contents: Contents, database: Database) -> list[Problem]:
    """Each claim is measured against the frameworks it shares the environment with (a framework against the
    frameworks before it, so one clash is reported once); without a framework, against the claims before it."""
    claims = cuda_claims(contents, database)
    problems = []
    for position, claim in enumerate(claims):
        others = [(i, c) for i, c in enumerate(claims) if i != position and can_coexist(c.pin, claim.pin)]
        frameworks = [c for i, c in others if c.framework and (not claim.framework or i < position)]
        anchors = frameworks if frameworks or claim.framework else [c for i, c in others if i < position]
        if not anchors or any(c.major == claim.major for c in anchors):
            continue
        anchor = anchors[0]
        if not claim.framework and claim.pin.name.startswith("nvidia-") and _bundles_its_cuda(anchor.pin, contents,
                                                                                               database):
            problems.append(problem(
                "CHK-CUDA-MAJOR-MISMATCH", claim.pin.where,
                f"{claim.why}, but {anchor.pin.shown} ({anchor.pin.where}) carries its own CUDA {anchor.major} "
                "libraries in torch/lib and does not load the pip nvidia-* packages: this one is unused by it",
                "remove it (unless another package of the environment needs it)", severity="warning",
            ))
            continue
        problems.append(problem(
            "CHK-CUDA-MAJOR-MISMATCH", claim.pin.where,
            f"{claim.why}, but {anchor.why} ({anchor.pin.where}); one environment needs one CUDA major",
            f"{_cuda_build_of(claim.pin, anchor.major)}, or move {anchor.pin.name} to CUDA {claim.major}",
        ))
    return problems


def _bundles_its_cuda(pin: Pin, contents: Contents, database: Database) -> bool:
    if pin.manager != "pip" or pin.name != "torch" or not pin.version:
        return False
    release = torch_release_of(database, public(pin))
    variant = release.variants.get(bound_variant(pin, contents) or "") if release else None
    # a wheel that carries its CUDA in torch/lib (TorchRelease.bundles_its_cuda says which, and the source)
    return variant is not None and release is not None and release.bundles_its_cuda(variant)


def _cuda_build_of(pin: Pin, major: str) -> str:
    """How to get the CUDA `major` flavor of a package: a renamed -cuNN library, or its CUDA build."""
    suffix = re.match(r"^(nvidia-[a-z0-9-]+-cu)\d{2}$", pin.name)
    if suffix:
        return f"use {suffix.group(1)}{major} (the CUDA {major} package) or drop the pin and let the framework choose"
    return f"use the CUDA {major} build of {pin.name}"


def tensorflow_release_of(database: Database, version: str):
    try:
        wanted = Version(version)
    except ValueError:  # InvalidVersion, or a number too long for int()
        return None
    return next((r for r in database.tensorflow_releases if r.version == wanted), None)


def jax_release_of(database: Database, version: str):
    try:
        wanted = Version(version)
    except ValueError:  # InvalidVersion, or a number too long for int()
        return None
    return next((r for r in database.jax_releases if r.version == wanted), None)


# ---------------------------------------------------------------- variant vs index


def index_bindings(contents: Contents, database: Database) -> list[Problem]:
    problems = []
    for pin in _pip_pins(contents, TORCH_FAMILY):
        if pin.version is None:
            continue
        variant = local_variant(pin.version)
        if pin.index or contents.binds_indexes:
            problems += _entry_index(pin, variant)
        elif variant:
            problems += _local_pin_needs_index(pin, variant, contents)
        else:
            problems += _plain_pin(pin, contents, database)
    return problems


def _entry_index(pin: Pin, variant: str | None) -> list[Problem]:
    """A lock entry (or a URL requirement) names its own index or file: its variant must be what that serves."""
    served = index_variant(pin.index)
    if variant and served and variant != served:
        return [problem(
            "CHK-INDEX-VARIANT-MISMATCH", pin.where,
            f"{pin.shown} is a {variant} build, but its source {pin.index} serves {served}",
            f"relock so that {pin.name} comes from {_index_url(variant)}, or pin the {served} build",
        )]
    return []


def _local_pin_needs_index(pin: Pin, variant: str, contents: Contents) -> list[Problem]:
    variants, every = file_variants(contents)
    if every or variant in variants:
        return []
    if variants:
        return [problem(
            "CHK-INDEX-VARIANT-MISMATCH", pin.where,
            f"{pin.shown} is served by {_index_url(variant)}, but this file names the "
            f"{', '.join(sorted(variants))} index; pip finds no {pin.version}",
            f"add --extra-index-url {_index_url(variant)}, or pin the {'/'.join(sorted(variants))} build",
        )]
    return [problem(
        "CHK-INDEX-MISSING", pin.where,
        f"{pin.shown} is a PyTorch-index build ({variant}); PyPI has no +{variant} wheels and this file names no "
        "PyTorch index",
        f"add --extra-index-url {_index_url(variant)}",
    )]


def _plain_pin(pin: Pin, contents: Contents, database: Database) -> list[Problem]:
    variants, every = file_variants(contents)
    if not variants or every:
        return []
    if pin.name == "torch":
        release = torch_release_of(database, public(pin))
    else:  # a companion is built for the variants of the torch release it pairs with: the file's torch, if it pins one
        paired = _paired_torch_releases(database, pin)
        torches = {public(t) for t in contents.pins if t.name == "torch" and t.version}
        release = next((r for r in paired if str(r.version) in torches), next(iter(paired), None))
    pypi = consults_pypi(contents)
    oses = scope_oses(pin)
    if release is not None and oses:
        # `torch==2.5.1; sys_platform == 'darwin'` beside a cu124 index: that index has nothing for macOS
        served = {v for v in variants if v in release.variants and
                  any(p.split("-")[0] in oses for p in release.variants[v].platforms)}
        if not served:
            return []
    if release is not None:
        offered = [v for v in sorted(variants) if v in release.variants]
        if not offered:
            return [problem(
                "CHK-INDEX-VARIANT-MISMATCH", pin.where,
                f"{pin.shown}: the {', '.join(sorted(variants))} index has no {pin.name} {public(pin)} (torch "
                f"{release.version} is built for "
                f"{', '.join(release.variants)})" + ("; pip will take PyPI's build instead" if pypi else ""),
                f"pin a torch that index serves, or change the index to one of {', '.join(release.variants)}",
            )]
        variants = set(offered)
    if pin.name != "torch" and release is not None and _only_pypi_serves(pin, release, variants):
        return []  # PyPI's wheel is the only build of this version: nothing shadows it (CHK-COMPANION-IMPORT judges it)
    wanted = sorted(variants)[0]
    if pypi:
        builds = _pypi_builds(release)
        return [problem(
            "CHK-CPU-WHEEL-SHADOW", pin.where,
            f"{pin.shown} matches PyPI's build{builds} as well as {public(pin)}+{wanted} from the extra index; where "
            f"the {wanted} index has no wheel for the Python or platform, pip quietly installs PyPI's",
            f"pin the full local version: {pin.name}=={public(pin)}+{wanted}",
        )]
    return [problem(
        "CHK-LOCAL-VERSION-MISSING", pin.where,
        f"{pin.shown} does not say which build it is; today the {wanted} index decides, and a changed index line "
        "changes the build silently",
        f"pin the full local version: {pin.name}=={public(pin)}+{wanted}",
    )]


def _pypi_builds(release: TorchRelease | None) -> str:
    if release is None or not release.pypi:
        return ""
    return " (" + ", ".join(f"{variant} on {platform}" for platform, variant in release.pypi.items()) + ")"


# ---------------------------------------------------------------- releases: unknown builds, known issues


def releases(contents: Contents, database: Database, target_platforms: set[str]) -> list[Problem]:
    """Builds a release does not have, and the database's known issues of the releases pinned."""
    problems = []
    for pin in _pip_pins(contents, ("torch",)):
        if not pin.version:
            continue
        release = torch_release_of(database, public(pin))
        if release is None:
            problems.append(_unknown_torch(pin, database))
            continue
        variant = bound_variant(pin, contents)
        if variant and variant not in release.variants:
            problems.append(problem(
                "CHK-BUILD-UNKNOWN", pin.where,
                f"torch {release.version} has no {variant} build (it has {', '.join(release.variants)})",
                f"pin a variant of {release.version} ({', '.join(release.variants)}), or a release built for {variant}"
                + _first_release_with(database, variant),
            ))
        problems += _known_issues(pin, release.known_issues, f"torch {release.version}", contents, target_platforms)
    # TensorFlow's known_issues in the database are notes on what its stub wheels install per platform, not
    # broken releases; the target checks cover them where it matters.
    return problems


def _unknown_torch(pin: Pin, database: Database) -> Problem:
    oldest = min((r.version for r in database.torch_releases), default=None)
    try:
        older = oldest is not None and Version(public(pin)) < oldest
    except InvalidVersion:
        older = False
    if older:
        return problem(
            "CHK-RELEASE-UNKNOWN", pin.where,
            f"torch {public(pin)} is older than every release in the compatibility database {database.version} "
            f"(oldest {oldest}): its builds, Pythons and GPU support are not checked",
            f"move to a torch the database knows (`envpin solve --spec 'torch>={oldest}'`), or add the id to "
            "[tool.envpin] ignore to keep this one unchecked",
        )
    return problem(
        "CHK-RELEASE-UNKNOWN", pin.where,
        f"torch {public(pin)} is not a release in the compatibility database {database.version}",
        "check the version; if it is newer than the database, update envpin",
    )


def _first_release_with(database: Database, variant: str) -> str:
    having = [str(r.version) for r in database.torch_releases if variant in r.variants]
    return f" ({', '.join(having[:3])}{'…' if len(having) > 3 else ''})" if having else ""


def _known_issues(pin: Pin, issues, what: str, contents: Contents, target_platforms: set[str]) -> list[Problem]:
    problems = []
    stated = set(pin.platforms or contents.platforms) | target_platforms
    for issue in issues:
        affected = set(issue.platforms)
        if stated and not stated & affected:
            continue  # the file (or target) says where it installs, and it is not there
        certain = bool(stated & affected)
        problems.append(problem(
            "CHK-KNOWN-ISSUE", pin.where,
            f"{what} on {', '.join(sorted(affected))}: {issue.text}",
            "pin the release the note names as fixed, or add the id to [tool.envpin] ignore if you never install there",
            severity="error" if certain else "warning",
        ))
    return problems


# ---------------------------------------------------------------- Python vs wheels


def python_support(contents: Contents, database: Database) -> list[Problem]:
    pythons = [p for p in contents.pins if p.name == "python" and python_minor(p.version)]
    if not pythons:
        return []
    problems = []
    for pin in _pip_pins(contents, FRAMEWORKS):
        if not pin.version:
            continue
        available = _wheel_pythons(pin, contents, database)
        if available is None:
            continue
        what, by_platform = available
        for python in (p for p in pythons if can_coexist(p, pin)):
            minor = python_minor(python.version)
            if any(minor in versions for versions in by_platform.values()):
                continue
            offered = _union(by_platform)
            problems.append(problem(
                "CHK-PYTHON-UNSUPPORTED", pin.where,
                f"{what} has no wheel for Python {minor} ({_located(python)}); it has "
                + "; ".join(f"{_span(v)} on {p}" for p, v in sorted(by_platform.items())),
                (f"use Python {offered[-1]} (any of {_span(offered)}), or a {pin.name} release with Python {minor} wheels"
                 if offered else f"pin a {pin.name} release built for these platforms"),
            ))
    return problems


def _located(pin: Pin) -> str:
    return pin.shown if pin.where in pin.shown else f"{pin.shown}, {pin.where}"


def _wheel_pythons(pin: Pin, contents: Contents, database: Database) -> tuple[str, dict[str, tuple[str, ...]]] | None:
    """(what, platform -> Python minors) for the platforms the pin can install on."""
    scope = set(pin.platforms or contents.platforms)
    if pin.name == "torch":
        release = torch_release_of(database, public(pin))
        if release is None:
            return None
        variant = release.variants.get(bound_variant(pin, contents) or "")
        platforms = scope or set(variant.platforms if variant else release.python)
        if variant:
            table = {p: release.pythons_for(variant, p) for p in platforms if p in variant.platforms}
            return f"torch {release.version}+{variant.name}", table
        return f"torch {release.version}", {p: release.python.get(p, ()) for p in platforms if p in release.python}
    if pin.name == "tensorflow":
        release = tensorflow_release_of(database, public(pin))
        if release is None:
            return None
        platforms = scope or set(release.python)
        return f"tensorflow {release.version}", {p: release.python[p] for p in platforms if p in release.python}
    release = jax_release_of(database, public(pin))
    if release is None:
        return None
    platforms = scope or set(release.platforms)
    return f"jax {release.version}", {p: release.python for p in platforms if p in release.platforms}


def _union(by_platform: dict[str, tuple[str, ...]]) -> list[str]:
    return sorted({v for versions in by_platform.values() for v in versions}, key=lambda v: tuple(map(int, v.split("."))))


def _span(versions: Iterable[str]) -> str:
    ordered = sorted(versions, key=lambda v: tuple(map(int, v.split("."))))
    if not ordered:
        return "no Python"
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"


# ---------------------------------------------------------------- JAX plugin, pinned CUDA libraries


def numpy_abi(contents: Contents, database: Database, pythons: Iterable[str] = ()) -> list[Problem]:
    """A pip framework pin whose wheels need numpy<2 without saying so (the release's `numpy_below_2` platforms:
    compiled against NumPy 1.x, metadata uncapped) on the platforms this file installs on, and no numpy pin or
    bound below 2: pip takes NumPy 2, and `import` then fails. Not where every Python the file installs into (its
    own Python pin, else `pythons`, the targets', else its requires-python) is older than NumPy 2's 3.9."""
    numpy = [p for p in contents.pins if p.name == "numpy" and p.manager == "pip"]
    if any(holds_numpy_below_2(p) for p in numpy) or numpy_2_out_of_reach(contents, pythons):
        return []
    if not numpy and contents.kind in _LOCK_KINDS:
        return []  # a lock installs exactly what it lists: no numpy, nothing to fail at import
    # numpy ≥ 2 pinned: import fails; numpy left open: pip takes NumPy 2 unless another requirement caps it
    severity = "error" if numpy else "warning"
    problems = []
    for pin in (p for p in contents.pins if p.manager == "pip" and p.version and p.name in _NUMPY_FRAMEWORKS):
        numpy_below_2, everywhere = _numpy_below_2_platforms(database, pin)
        if not numpy_below_2:
            continue
        oses = scope_oses(pin)
        # unscoped: only a release compiled so on every platform it has wheels for (torch 2.3.0 is, on Windows only)
        hits = ({p for p in numpy_below_2 if p.split("-")[0] in oses} if oses
                else numpy_below_2 if numpy_below_2 >= everywhere else set())
        if not hits:
            continue
        shown = f"the file has {', '.join(p.shown for p in numpy)}" if numpy else "the file does not hold numpy below 2"
        problems.append(problem(
            "CHK-NUMPY-ABI", pin.where,
            f"{pin.shown} was compiled against NumPy 1.x ({', '.join(sorted(hits))}); with NumPy 2 its import fails "
            f"('A module that was compiled using NumPy 1.x cannot be run in NumPy 2'), and {shown}",
            "add numpy<2",
            severity,
        ))
    return problems


_LOCK_KINDS = ("pylock", "uv.lock", "conda-lock", "explicit")
_NUMPY_FRAMEWORKS = ("torch", "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "jax", "jaxlib")


# numpy 2.0.0's Requires-Python is >=3.9 (every file of the release on PyPI, https://pypi.org/simple/numpy/, read
# 2026-12-02), and so is every later release's: on Python 3.8 or older pip only ever finds NumPy 1.x
NUMPY_2_OLDEST_PYTHON = (3, 9)


def numpy_2_out_of_reach(contents: Contents, pythons: Iterable[str] = ()) -> bool:
    """True when no Python the file installs into can have NumPy 2: its own Python pin (an environment.yml's
    python=3.8.5, which conda installs whatever the machine has), else the given Pythons (a check's targets),
    else a requires-python that admits no 3.9 or later. Unknown Pythons: False, NumPy 2 may come."""
    minors = [m for p in contents.pins if p.name == "python" and (m := python_minor(p.version))]
    if not minors:
        minors = [m for p in pythons if (m := python_minor(p))]
    if minors:
        return all(tuple(map(int, m.split("."))) < NUMPY_2_OLDEST_PYTHON for m in minors)
    if contents.requires_python:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only a file that says it

        try:
            allowed = SpecifierSet(contents.requires_python)
        except InvalidSpecifier:
            return False
        return not any(allowed.contains(f"3.{minor}", prereleases=True) for minor in range(9, 40))
    return False


def holds_numpy_below_2(pin: Pin) -> bool:
    """A numpy pin or range that keeps NumPy 2 out (numpy==1.26.4, numpy<2, numpy<2.0.0,>=1.23)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only files that pin numpy

    if pin.version:
        return pin.version.startswith(("0.", "1."))
    try:
        return bool(pin.specifier) and not SpecifierSet(pin.specifier).contains("2.0.0", prereleases=True)
    except InvalidSpecifier:
        return False


def _numpy_below_2_platforms(database: Database, pin: Pin) -> tuple[set[str], set[str]]:
    """The platforms where the pinned release needs numpy<2 without saying so, and every platform it has wheels for."""
    version = public(pin)
    try:
        wanted = Version(version)
    except InvalidVersion:
        return set(), set()
    if pin.name == "torch":
        torch = torch_release_of(database, version)
        return (set(torch.numpy_below_2), set(torch.python)) if torch else (set(), set())
    if pin.name in ("jax", "jaxlib"):
        jax = next((r for r in database.jax_releases if r.version == wanted), None)
        return (set(jax.numpy_below_2), set(jax.platforms)) if jax else (set(), set())
    tensorflow = next((r for r in database.tensorflow_releases if r.version == wanted), None)
    return (set(tensorflow.numpy_below_2), set(tensorflow.python)) if tensorflow else (set(), set())


def numpy_requires(contents: Contents, database: Database, pythons: Iterable[str] = ()) -> list[Problem]:
    """A numpy pin or bound beside a TensorFlow or JAX line none of whose matching releases can be installed with
    it: each release's own Requires-Dist on numpy (the database's `numpy`, read in its wheels' METADATA) excludes
    every numpy the file allows, so pip cannot resolve the file (numpy<1.24 beside tensorflow==2.21.0, which
    requires numpy>=1.26.0). An unpinned framework line is fine while one release allows the numpy. With target
    Pythons (`check --target`), each release is judged by its requirement on those, else (no target, or no
    matching release has a wheel for the target's Python) on any of its Pythons."""
    from envpin.resolver.numpy_fit import meet  # noqa: PLC0415 - only files that pin numpy

    numpy = [p for p in contents.pins if p.name == "numpy" and p.manager == "pip" and (p.version or p.specifier)]
    problems = []
    for line in numpy:
        allowed = f"=={line.version}" if line.version else line.specifier
        lines = [p for p in contents.pins if p.manager == "pip" and p.name in _NUMPY_REQUIRERS and can_coexist(p, line)]
        if any(p.name == "jax" for p in lines):  # jaxlib beside jax is the same release's: said once, at jax
            lines = [p for p in lines if p.name != "jaxlib"]
        for pin in lines:
            releases = [r for r in _releases_matching(database, pin) if r.numpy is not None]
            # a release without a wheel for the target's Python is CHK-TARGET-PYTHON's: the others are judged on
            # the target's Python; where none has one, the line is judged on every Python of its releases, since
            # a numpy no release allows on any Python (numpy==1.13.3 beside tensorflow==1.15.2, which requires
            # numpy>=1.16.0 on each) is a second error, one that moving to another Python does not mend
            on_target = [r for r in releases if set(pythons) & _pythons_of(r)] if pythons else []
            judged_on = pythons if on_target else ()
            releases = on_target or releases
            needs = {r.version: sorted({r.numpy.on(p) for p in judged_on if p in _pythons_of(r)} if judged_on else
                                       {r.numpy.requires, *r.numpy.by_python.values()}) for r in releases}
            if not releases or any(meet(need, allowed) for wanted in needs.values() for need in wanted):
                continue
            on = f" on Python {', '.join(judged_on)}" if judged_on else ""
            newest = max(releases, key=lambda r: r.version)
            needed = " or ".join(needs[newest.version])
            framework = "jax" if pin.name in ("jax", "jaxlib") else "tensorflow"
            which = (f"{pin.shown} requires numpy{needed}{on}" if len(releases) == 1 else
                     f"every {framework} release {pin.shown} allows requires a numpy it excludes{on} (the newest, "
                     f"{newest.version}, numpy{needed})")
            problems.append(problem(
                "CHK-NUMPY-REQUIRES", pin.where,
                f"{line.shown} ({line.where}) and {pin.shown} cannot be installed together: {which}, by its wheels' "
                "Requires-Dist",
                f"change {line.shown} to allow numpy{needs[newest.version][0]}, or pin a {framework} release whose "
                "numpy requirement it meets",
            ))
    return problems


_NUMPY_REQUIRERS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "jax", "jaxlib")


def package_requires(contents: Contents, database: Database,
                     environments: Iterable[tuple[str, str]] = ()) -> list[Problem]:
    """A pin or bound on a package that every release a torch or tensorflow line allows excludes by its own
    Requires-Dist (the database's requires.yaml, read in its Linux x86_64 wheel's METADATA): pip cannot install the
    file (`protobuf==4.25.1` beside `tensorflow==2.20.0`, which requires protobuf>=5.28.0; `sympy==1.12` beside
    `torch==2.5.1`). Markers are evaluated on the targets' (Python, platform) where given, else on Linux x86_64 with
    each CPython 3.8-3.13: the file is reported only where no release fits on any of them."""
    frameworks = [p for p in contents.pins if p.manager == "pip" and p.name in ("torch", "tensorflow")]
    others = [p for p in contents.pins if p.manager == "pip" and (p.version or p.specifier)
              and p.name not in ("torch", "tensorflow")]
    if not frameworks or not others:
        return []
    from envpin.readers.framework_requires import framework_bound, requires_names  # noqa: PLC0415 - such files only

    tried = tuple(environments) or tuple((f"3.{minor}", "linux-x86_64") for minor in range(8, 14))
    problems = []
    for pin in frameworks:
        names = requires_names(database, pin.name)
        releases = [str(r.version) for r in _releases_matching(database, pin)]
        if not releases:
            continue
        for other in (o for o in others if o.name in names and can_coexist(pin, o)):
            allowed = f"=={other.version}" if other.version else other.specifier
            ruled: dict[str, str] = {}  # release -> what it requires of the package, where it rules the line out
            fits = False
            for python, platform in tried:
                fitting, ruled_out = framework_bound(database, pin.name, other.name, allowed, releases, python,
                                                     platform)
                fits = fits or bool(fitting)
                ruled.update(ruled_out)
            if fits:
                continue
            newest = max(releases, key=Version)
            needs = ruled.get(newest, "")
            which = (f"{pin.shown} requires {other.name}{needs}" if len(releases) == 1 else
                     f"every {pin.name} release {pin.shown} allows requires a {other.name} it excludes (the newest, "
                     f"{newest}, {other.name}{needs})")
            problems.append(problem(
                "CHK-PACKAGE-REQUIRES", pin.where,
                f"{other.shown} ({other.where}) and {pin.shown} cannot be installed together: {which}, by its wheel's "
                "Requires-Dist",
                f"change {other.shown} to allow {other.name}{needs}, or pin a {pin.name} release whose requirement it "
                "meets"))
    return problems


def _pythons_of(release) -> set[str]:
    """The CPython minors a TensorFlow (per platform) or JAX release has wheels for."""
    python = release.python
    return {p for pythons in python.values() for p in pythons} if isinstance(python, Mapping) else set(python)


def _releases_matching(database: Database, pin: Pin) -> list:
    """The database's releases a torch, TensorFlow or JAX line allows (all of them for an unpinned line)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only files with such pins

    releases = (database.jax_releases if pin.name in ("jax", "jaxlib") else database.torch_releases
                if pin.name == "torch" else database.tensorflow_releases)
    if pin.version:
        return [r for r in releases if str(r.version) == public(pin)]
    try:
        specifier = SpecifierSet(pin.specifier)
    except InvalidSpecifier:
        return []
    return [r for r in releases if specifier.contains(r.version, prereleases=True)]


def jax_plugins(contents: Contents, database: Database) -> list[Problem]:
    problems = []
    for jax in _pip_pins(contents, ("jax",)):
        release = jax_release_of(database, public(jax)) if jax.version else None
        if release is None:
            continue
        for plugin in contents.pins:
            # the database records the plugin's version per extra; the pjrt package is not recorded, so not checked
            major = jax_cuda_major(plugin.name, plugin.version, frozenset())
            if not major or not plugin.name.endswith("-plugin") or not plugin.version or not can_coexist(jax, plugin):
                continue
            extra = release.extras.get(f"cuda{major}")
            if extra and extra.plugin and public(plugin) != extra.plugin:
                problems.append(problem(
                    "CHK-JAX-PLUGIN-MISMATCH", plugin.where,
                    f"{plugin.shown} does not go with jax {release.version}, whose [cuda{major}] extra needs "
                    f"{plugin.name} {extra.plugin}",
                    f"pin {plugin.name}=={extra.plugin}, or install jax[cuda{major}]=={release.version} and let it choose",
                ))
    return problems


def plan_bounds(contents: Contents, database: Database) -> list[Problem]:
    """A jax[cudaNN] pin whose extra the database bounds (`plan_bounds`: nvidia-cudnn-cu12<9 beside a plugin built
    for cuDNN 8 whose metadata lets pip take 9), and the file does not keep the library inside the bound: pinned
    outside it is an error, left open in a requirements file a warning (a lock installs exactly what it lists)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only files that pin such a jax

    problems = []
    for pin in _pip_pins(contents, ("jax",)):
        major = jax_cuda_major(pin.name, pin.version, pin.extras) if pin.version else None
        release = jax_release_of(database, public(pin)) if major else None
        extra = release.extras.get(f"cuda{major}") if release else None
        if release is None or extra is None:
            continue
        for package, specifier in extra.plan_bounds.items():
            held = [p for p in contents.pins if p.name == package and p.manager == "pip" and can_coexist(pin, p)]
            try:
                bound = SpecifierSet(specifier)
                inside = [p for p in held if (p.version and bound.contains(Version(p.version), prereleases=True))
                          or (p.specifier and not p.version and _within(SpecifierSet(p.specifier), bound))]
            except (InvalidSpecifier, InvalidVersion):
                continue
            if inside or (not held and contents.kind in _LOCK_KINDS):
                continue
            shown = f"the file has {', '.join(p.shown for p in held)}" if held else f"the file does not hold {package}"
            problems.append(problem(
                "CHK-PLAN-BOUND", pin.where,
                f"jax[cuda{major}] {release.version} lets pip take a {package} its plugin cannot load (it needs "
                f"{package}{specifier}), and {shown}",
                f"add {package}{specifier}",
                "error" if held else "warning",
            ))
    return problems


def _within(spec: SpecifierSet, bound: SpecifierSet) -> bool:
    """Whether a written range stays inside a `<N` bound: its own upper limit is at most N."""
    limits = [s for s in bound if s.operator in ("<", "<=")]
    tops = [Version(s.version) for s in spec if s.operator in ("<", "<=")]
    return bool(limits and tops) and max(tops) <= min(Version(s.version) for s in limits)


def cuda_library_pins(contents: Contents, database: Database) -> list[Problem]:
    """A framework build states the nvidia-* versions it needs (its wheel's Requires-Dist, in the database);
    a lock or requirements file that pins another one cannot install, or installs a mismatched pair."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - packaging.specifiers is heavy (~5 ms): only a file with CUDA library pins needs it

    problems = []
    for owner, what, pins in _framework_library_pins(contents, database):
        for library in contents.pins:
            wanted = pins.get(library.name)
            if not wanted or not library.version or library.manager != "pip" or not can_coexist(owner, library):
                continue
            try:
                allowed = SpecifierSet(wanted).contains(Version(library.version), prereleases=True)
            except (InvalidSpecifier, InvalidVersion):
                continue
            if not allowed:
                problems.append(problem(
                    "CHK-CUDA-LIBRARY-PIN", library.where,
                    f"{library.shown} does not satisfy {what}'s requirement {library.name}{wanted} ({owner.where})",
                    f"pin {library.name}{wanted}, or drop the pin and let the installer take what {owner.name} needs",
                ))
    return problems


def _framework_library_pins(contents: Contents, database: Database):
    for pin in contents.pins:
        if pin.manager != "pip" or not pin.version:
            continue
        if pin.name == "torch":
            release = torch_release_of(database, public(pin))
            variant = release.variants.get(bound_variant(pin, contents) or "") if release else None
            if release is not None and variant and variant.pins:
                yield pin, f"torch {release.version}+{variant.name}", variant.pins
        elif pin.name == "tensorflow" and "and-cuda" in pin.extras:
            release = tensorflow_release_of(database, public(pin))
            if release and release.and_cuda:
                yield pin, f"tensorflow[and-cuda] {release.version}", release.and_cuda.pins
        elif pin.name == "jax":
            major = jax_cuda_major(pin.name, pin.version, pin.extras)
            release = jax_release_of(database, public(pin)) if major else None
            extra = release.extras.get(f"cuda{major}") if release else None
            if release is not None and extra and extra.pins:
                yield pin, f"jax[cuda{major}] {release.version}", extra.pins
