"""What the user asked for: frameworks (`--framework torch`) and PEP 508 specs (`--spec 'jax[cuda12]>=0.6'`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import shown
from envpin.base.limits import check_specifiers
from envpin.base.record import Record, field, record
from envpin.compat.drivers import POLICIES
from envpin.resolver.urls import checked_index_url
from envpin.vocabulary.frameworks import FRAMEWORK_OF, FRAMEWORKS, PACKAGE_ORDER, PACKAGES, framework_named
from envpin.vocabulary.variants import DEFAULT_TORCH_INDEX

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

# Where the builds come from (`--conda-source`): pip wheels, or one of conda.yaml's channel strategies
PIP, CONDA_FORGE, PYTORCH_CHANNEL = "pip", "conda-forge", "pytorch-channel"
CHANNELS = (PIP, CONDA_FORGE, PYTORCH_CHANNEL)


@record
class NumpyBound(Record):
    """The numpy versions the builds must leave room for: a project's numpy line or `--spec 'numpy<1.24'`. A
    release whose own Requires-Dist on numpy excludes every one of them cannot be installed beside it."""

    specifier: str  # "<1.24,>=1.22"
    asked: str  # as written, for the reasons: "numpy>=1.22, <1.24 (requirements.txt:1)"
    from_spec: bool = False  # given with --spec (the plan pins it); a project's own line stays in its file


@record
class Request(Record):
    frameworks: tuple[str, ...]  # as asked with --framework
    packages: tuple[str, ...]  # what the answer pins, in a stable order
    specifiers: Mapping[str, SpecifierSet]  # user constraints by package
    required: frozenset[str]  # packages the solve must include (companions are added when they exist)
    policy: str = "minor"
    torch_index: str = DEFAULT_TORCH_INDEX
    extras: Mapping[str, frozenset[str]] = field(default_factory=dict)  # `jax[cuda12]` -> {"jax": {"cuda12"}}
    channel: str = PIP  # the builds the solve chooses from: pip, conda-forge or pytorch-channel
    cpu_only: frozenset[str] = frozenset()  # frameworks asked for as CPU builds by name (tensorflow-cpu, a cpu index)
    numpy: NumpyBound | None = None  # the numpy the builds' own numpy requirement must intersect
    # framework -> the project line that asks for its NVIDIA GPU build (`jaxlib=0.3.15=*cuda*`): what a refusal
    # names when another framework, merely run on the GPU where it can, has no GPU build here
    gpu_asked: Mapping[str, str] = field(default_factory=dict)
    # the CUDA X.Y the project pins torch's build to (conda's `cudatoolkit=11.3`): among a release's builds that
    # run here, that one is taken first; where it does not run, another CUDA of the release is
    torch_cuda: str | None = None

    def spec_text(self, name: str) -> str:
        """`jax[cuda12]>=0.6` as the user would write it."""
        extras = self.extras.get(name)
        extra_text = f"[{','.join(sorted(extras))}]" if extras else ""
        return f"{name}{extra_text}{self.specifiers.get(name, '')}"

    @property
    def solved_frameworks(self) -> tuple[str, ...]:
        return tuple(f for f in FRAMEWORKS if f in self.required)


def parse_request(
    frameworks: list[str],
    specs: list[str],
    policy: str = "minor",
    torch_index: str | None = None,
    allow_insecure_index: bool = False,
    channel: str = PIP,
    cpu_only: frozenset[str] = frozenset(),
    numpy: NumpyBound | None = None,
    gpu_asked: Mapping[str, str] | None = None,
    torch_cuda: str | None = None,
) -> Request:
    if policy not in POLICIES:
        raise EnvpinInputError(f"--driver-policy {policy!r}: expected one of {', '.join(POLICIES)}")
    if channel not in CHANNELS:
        raise EnvpinInputError(f"--conda-source {channel!r}: expected one of {', '.join(CHANNELS)}")
    packages: list[str] = []
    chosen: list[str] = []
    for framework in frameworks:
        name = framework_named(framework)
        if name is None:
            raise EnvpinInputError(f"unknown framework {framework!r}; envpin solves: {', '.join(FRAMEWORKS)}")
        chosen.append(name)
        packages.extend(p for p in PACKAGES[name] if p not in packages)
    specifiers: dict[str, SpecifierSet] = {}
    extras: dict[str, frozenset[str]] = {}
    required = {PACKAGES[name][0] for name in chosen}
    for text in (one for given in specs for one in split_requirements(given)):
        name, specifier, wanted_extras = _parse_spec(text)
        if name == NUMPY:
            numpy = _with_numpy(numpy, NumpyBound(str(specifier), f"--spec {text}", from_spec=True))
            continue
        specifiers[name] = specifiers[name] & specifier if name in specifiers else specifier
        if wanted_extras:
            extras[name] = extras.get(name, frozenset()) | wanted_extras
        required.update({name, FRAMEWORK_OF[name]})
        if name not in packages:
            packages.append(name)
    if not required and numpy is not None:
        raise EnvpinInputError(f"nothing to solve: {numpy.asked} only bounds numpy; name a framework too (--framework "
                               "or a framework's --spec)")
    if not required:
        raise EnvpinInputError("nothing to solve: give --framework or --spec")
    packages.extend(p for p in required if p not in packages)
    packages.sort(key=PACKAGE_ORDER.index)
    # an empty --torch-index-url is a bad URL, not "no option"; an empty variable counts as unset, as shells do
    index = torch_index if torch_index is not None else os.environ.get("ENVPIN_TORCH_INDEX_URL") or DEFAULT_TORCH_INDEX
    index = checked_index_url(index, "torch index URL", allow_insecure_index)
    return Request(
        frameworks=tuple(dict.fromkeys(chosen)),
        packages=tuple(packages),
        specifiers=specifiers,
        required=frozenset(required),
        policy=policy,
        torch_index=index.rstrip("/"),
        extras=extras,
        channel=channel,
        cpu_only=cpu_only,
        numpy=numpy,
        gpu_asked=dict(gpu_asked or {}),
        torch_cuda=torch_cuda,
    )


NUMPY = "numpy"


def _with_numpy(before: NumpyBound | None, added: NumpyBound) -> NumpyBound:
    """Two numpy bounds (a project's line and a --spec) hold together."""
    if before is None:
        return added
    joined = ",".join(s for s in (before.specifier, added.specifier) if s)
    return NumpyBound(joined, f"{before.asked} and {added.asked}", before.from_spec or added.from_spec)


def split_requirements(text: str) -> list[str]:
    """`torch==2.5.1 torchvision` (several requirements in one --spec, as a shell would pass them to pip) is
    taken as pip takes them: one requirement per word. A single requirement with spaces in it
    (`torch >= 2.4, < 2.6`) stays whole; text that is neither is left for _parse_spec to name."""
    from packaging.requirements import InvalidRequirement  # noqa: PLC0415 - costly to import; only specs need it
    from packaging.requirements import Requirement as Pep508  # noqa: PLC0415 - the same

    words = text.split()
    if len(words) < 2:
        return [text]
    try:
        Pep508(text)
        return [text]
    except InvalidRequirement:
        pass
    try:
        for word in words:
            Pep508(word)
    except InvalidRequirement:
        raise EnvpinInputError(
            f"--spec {text!r}: not a PEP 508 requirement; give one requirement per --spec, or the requirements "
            "as arguments: envpin solve 'torch==2.5.1' torchvision"
        ) from None
    return words


def _parse_spec(text: str) -> tuple[str, SpecifierSet, frozenset[str]]:
    from packaging.requirements import InvalidRequirement  # noqa: PLC0415 - costly to import; only specs need it
    from packaging.requirements import Requirement as Pep508  # noqa: PLC0415 - the same
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - the same (it pulls in packaging.tags)

    try:
        requirement = Pep508(text)
    except InvalidRequirement as error:
        reason = str(error).splitlines()[0]
        raise EnvpinInputError(f"--spec {text!r}: not a PEP 508 requirement ({reason})") from None
    check_specifiers(len(requirement.specifier), f"--spec {shown(text, 80)!r}")
    name = canonicalize_name(requirement.name)
    if name not in FRAMEWORK_OF and name != NUMPY:
        raise EnvpinInputError(f"--spec {text!r}: envpin pins {', '.join(PACKAGE_ORDER)} (and bounds numpy); not {name}")
    if requirement.marker is not None or requirement.url:
        raise EnvpinInputError(f"--spec {text!r}: markers and URLs are not supported here")
    return name, requirement.specifier, frozenset(canonicalize_name(e) for e in requirement.extras)
