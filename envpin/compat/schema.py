"""Validate the database documents and build the frozen model (pure: dicts in, Database or errors out).

Every problem is collected with its file and path (`torch.yaml: releases[3].variants.cu124.cuda`), so one
`envpin db validate` run shows all of them. See data/compat_matrix/SCHEMA.md for the format.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import repeat
from typing import Any

from packaging.version import Version

from envpin.base.escapes import printable
from envpin.base.record import replace
from envpin.compat.files import BASE, FILES, OPTIONAL_FILES, OWN_SOURCES, PARTS
from envpin.compat.gpus import gpu_name_key
from envpin.compat.model import (
    ARCH_EVIDENCE,
    BUILT_AGAINST_TORCH,
    CONDA_FRAMEWORKS,
    CUDA_CHECKS,
    PLATFORM_LIMITED,
    PYPI_INDEX,
    TIED,
    AmdTensorflowWheels,
    AndCudaExtra,
    ArchList,
    Companion,
    CompanionBuild,
    ComputeCapability,
    CondaRelease,
    CudaToolkit,
    Database,
    DriverRelease,
    FrameworkRequires,
    GfxList,
    GpuModel,
    IndexBuildTags,
    JaxExtra,
    JaxlibFindLinksRelease,
    JaxRelease,
    JetpackRelease,
    JetsonSupport,
    KnownIssue,
    MetalPlugin,
    MinorVersionCompat,
    NumpyRequirement,
    Provenance,
    ReleaseFiles,
    RocmFrameworkBuild,
    Source,
    TensorflowGpuBuild,
    TensorflowRelease,
    TiedRelease,
    TorchRelease,
    Variant,
    WheelTags,
    split_requirement,
)
from envpin.vocabulary.platforms import PLATFORMS
from envpin.vocabulary.variants import CUDA, cuda_tag, is_database_tag, kind_of

# "unlocated": read once, but no public location is known (no url, no ref); every record citing it is unverified.
SOURCE_GRADES = ("primary", "primary-copy", "pypi", "secondary", "unlocated")

_CC = re.compile(r"^(\d{1,2})\.(\d)$")
_ARCH = re.compile(r"^(\d{1,2})\.(\d)(\+PTX)?$")
_DRIVER = re.compile(r"^\d{3,4}(\.\d{1,3}){0,2}$")
_CUDA = re.compile(r"^\d{1,2}\.\d$")
_PYTHON = re.compile(r"^3\.\d{1,2}$")
_FIND_LINKS_LOCAL = re.compile(r"^cuda(\d{3}|\d{2}\.cudnn\d{2,3})$")  # cuda111, cuda11.cudnn82
_JAX_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_DB_VERSION = re.compile(r"^\d{4}\.\d{2}\.\d{2}$")


class Problems:
    """Collects schema problems instead of stopping at the first."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, message: str) -> None:
        # one line each: a key or a value of the document (`"a\nb": 1`) may hold a line break or another control
        self.items.append(printable(f"{where}: {message}"))


class _Node:
    """A value in a document together with its path, for messages that point at the bad field.

    The path (`where`) is spelled out only when a message needs it: a valid database never does, and
    writing it for each of its ~15,000 values was a quarter of the validation's time."""

    __slots__ = ("value", "problems", "_where", "_parent", "_key")

    def __init__(self, value: Any, where: str | None, problems: Problems, parent: _Node | None = None,
                 key: str | int | None = None):
        self.value = value
        self.problems = problems
        self._where = where
        self._parent = parent
        self._key = key

    @property
    def where(self) -> str:
        if self._where is None:
            assert self._parent is not None, "a root node is made with its path"
            parent, key = self._parent.where, self._key
            if isinstance(key, int):
                self._where = f"{parent}[{key}]"
            else:
                self._where = f"{parent}{': ' if parent.endswith('.yaml') else '.'}{key}"
        return self._where

    def child(self, key: str | int) -> _Node:
        value = self.value.get(key) if isinstance(self.value, dict) else None
        return _Node(value, None, self.problems, self, key)

    def fail(self, message: str) -> None:
        self.problems.add(self.where, message)

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def only(self, keys: tuple[str, ...]) -> None:
        """Refuse the keys of this mapping that are not `keys`: a misspelt field (`unverifed:`) would otherwise be
        read as absent, and its fact silently lost."""
        if isinstance(self.value, dict):
            for key in self.value:
                if key not in keys:
                    self.child(key).fail(f"unknown key {key!r}; expected one of {', '.join(keys)}")

    def mapping(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            self.fail("expected a mapping")
            return {}
        return self.value

    def items(self) -> list[tuple[str, _Node]]:
        problems = self.problems  # each child as `child(key)` makes it, without a call to it per key
        return [(str(key), _Node(value, None, problems, self, key)) for key, value in self.mapping().items()]

    def sequence(self) -> list[_Node]:
        if not isinstance(self.value, list):
            self.fail("expected a list")
            return []
        return [_Node(item, None, self.problems, self, i) for i, item in enumerate(self.value)]

    def string(self, pattern: re.Pattern[str] | None = None, what: str = "a string") -> str:
        if not isinstance(self.value, str) or not self.value:
            self.fail(f"expected {what} (as a quoted string), got {self.value!r}")
            return ""
        if pattern is not None and not pattern.match(self.value):
            self.fail(f"{self.value!r} is not {what}")
        return self.value

    def optional_string(self, pattern: re.Pattern[str] | None = None, what: str = "a string") -> str | None:
        return None if self.value is None else self.string(pattern, what)

    # The field accessors below give what `child(key).string(...)` and the like give, without making the child node
    # when the value is valid (the node, and its path, are needed only for a message): making ~8,000 nodes was a
    # fifth of what validating the torch and base parts cost (callgrind).

    def value_of(self, key: str) -> Any:
        return self.value.get(key) if isinstance(self.value, dict) else None

    def string_of(self, key: str, pattern: re.Pattern[str] | None = None, what: str = "a string") -> str:
        value = self.value.get(key) if isinstance(self.value, dict) else None
        if type(value) is str and value and (pattern is None or pattern.match(value)):
            return value
        return self.child(key).string(pattern, what)

    def optional_string_of(self, key: str, pattern: re.Pattern[str] | None = None,
                           what: str = "a string") -> str | None:
        value = self.value.get(key) if isinstance(self.value, dict) else None
        if value is None:
            return None
        if type(value) is str and value and (pattern is None or pattern.match(value)):
            return value
        return self.child(key).string(pattern, what)

    def strings_of(self, key: str, pattern: re.Pattern[str] | None = None, what: str = "a string") -> tuple[str, ...]:
        value: Any = self.value.get(key) if isinstance(self.value, dict) else None
        if _valid_strings(value, pattern):
            return tuple(value)
        return self.child(key).strings(pattern, what)

    def platforms_of(self, key: str) -> tuple[str, ...]:
        value = self.value.get(key) if isinstance(self.value, dict) else None
        if type(value) is list and all(map(isinstance, value, _STR)) and all(map(_PLATFORM_SET.__contains__, value)):
            return tuple(value)
        return self.child(key).platforms()

    def strings(self, pattern: re.Pattern[str] | None = None, what: str = "a string") -> tuple[str, ...]:
        value = self.value
        if _valid_strings(value, pattern):
            return tuple(value)  # what the loop below returns when no item fails, without a node per item
        return tuple(node.string(pattern, what) for node in self.sequence())

    def platforms(self) -> tuple[str, ...]:
        """A list of envpin platform keys (`linux-x86_64`, …)."""
        platforms = self.strings(what="a platform")
        for platform in platforms:
            if platform not in PLATFORMS:
                self.fail(f"{platform!r} is not one of {', '.join(PLATFORMS)}")
        return platforms


_STR = repeat(str)
_PLATFORM_SET = frozenset(PLATFORMS)


def _valid_strings(value: Any, pattern: re.Pattern[str] | None) -> bool:
    """Whether `value` is a list of non-empty strings that `pattern` matches: one that `_Node.strings` returns
    without a problem. (map runs each test in C: a generator per list cost more than the lists' checks.)"""
    return type(value) is list and all(map(isinstance, value, _STR)) and all(value) and (
        pattern is None or all(map(pattern.match, value)))


def build_database(version: str, documents: Mapping[str, Any]) -> tuple[Database | None, list[str]]:
    """Turn the parsed YAML documents (file name -> content) into a Database, or return the problems of every part."""
    problems = Problems()
    fields = _build(BASE, version, documents, None, problems)
    base = dict(fields)  # the other parts are checked against it even when it has problems: every one is listed
    for part in PARTS:
        if part != BASE:
            fields |= _build(part, version, documents, base, problems)
    if problems.items:
        return None, problems.items
    return Database(**fields), []


def build_part(part: str, version: str, documents: Mapping[str, Any],
               base: Mapping[str, Any] | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    """One part of the database (envpin.compat.files.PARTS) from its files' documents: the Database fields it
    fills, or its problems. The base part needs its own files and the `sources:` of the others; every other part
    is checked against the base's fields (`base`: the sources its records cite, the CUDA toolkits)."""
    problems = Problems()
    fields = _build(part, version, documents, base, problems)
    return (None, problems.items) if problems.items else (fields, [])


def _build(part: str, version: str, documents: Mapping[str, Any], base: Mapping[str, Any] | None,
           problems: Problems) -> dict[str, Any]:
    roots = {}
    for name in PARTS[part][0]:
        root = roots[name] = _Node(documents.get(name), name, problems)
        if root.value is None and name in OPTIONAL_FILES:
            root.value = {"releases": []}
        if not isinstance(root.value, dict):
            root.fail("expected a YAML mapping at the top level")
            root.value = {}
    if part == BASE:
        return _base(version, roots, documents, problems)
    assert base is not None, f"the {part} part is checked against the base part"
    return _PART_BUILDERS[part](version, roots, base, problems)


def _base(version: str, roots: dict[str, _Node], documents: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    if not _DB_VERSION.match(version):
        problems.add("VERSION", f"{version!r} is not a YYYY.MM.DD database version")
    # Every file's sources, in FILES order: the rest of another file (its top level included) is its own part's.
    every = {name: roots.get(name) or _Node(documents.get(name), name, problems) for name in FILES
             if name not in OWN_SOURCES}
    sources = _sources(every, problems)
    cited = _Citations(sources)
    gpus = roots["gpus.yaml"]
    gpus.only(("jetson", "jetpack", "sources", "gpus"))
    roots["cuda.yaml"].only(("minor_version_compat", "toolkits", "sources"))
    return {
        "version": version,
        "sources": sources,
        "minor_version_compat": _minor_version_compat(roots["cuda.yaml"].child("minor_version_compat"), cited),
        "toolkits": _toolkits(roots["cuda.yaml"].child("toolkits"), cited),
        "gpus": _gpus(gpus.child("gpus"), cited),
        "jetson": _jetson(gpus.child("jetson"), cited) if gpus.has("jetson") else {},
        "jetpack_releases": _jetpack(gpus.child("jetpack"), cited) if gpus.has("jetpack") else (),
    }


_L4T = re.compile(r"^\d{2}\.\d{1,2}\.\d{1,2}$")
_JETPACK = re.compile(r"^\d\.\d{1,2}(\.\d{1,2})?$")


def _jetpack(node: _Node, cited: _Citations) -> tuple[JetpackRelease, ...]:
    """gpus.yaml `jetpack:`: L4T releases and the JetPack each is, each L4T once."""
    releases, seen = [], set()
    for record in node.sequence():
        record.only(("l4t", "jetpack", "cuda", *_PROVENANCE_KEYS))
        l4t = record.child("l4t").string(_L4T, "an L4T release such as 36.4.0")
        if l4t in seen:
            record.child("l4t").fail(f"L4T {l4t} is listed twice")
        seen.add(l4t)
        releases.append(JetpackRelease(
            l4t=l4t, jetpack=record.child("jetpack").string(_JETPACK, "a JetPack version such as 6.1"),
            provenance=cited.provenance(record),
            cuda=record.child("cuda").optional_string(re.compile(r"^\d{2}\.\d$"), "a CUDA version such as 12.6")))
    return tuple(releases)


def _torch_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    cited = _Citations(base["sources"])
    arch_sets = _arch_sets(roots["torch.yaml"].child("arch_sets"), cited)
    releases = _torch_releases(roots["torch.yaml"].child("releases"), arch_sets, cited)
    # rocm.yaml, amd_gpus.yaml, xpu.yaml and mps.yaml: laid over the torch releases they name
    from envpin.compat.accelerator_schema import accelerator_facts, lay_over  # noqa: PLC0415 - it imports this module

    accelerators = accelerator_facts(roots, cited, {str(r.version): r for r in releases})
    releases = lay_over(releases, accelerators)
    _check_cross_references(base["toolkits"], releases, problems)
    _check_added(version, "torch.yaml", releases, problems)
    return {
        "torch_releases": tuple(sorted(releases, key=lambda r: r.version, reverse=True)),
        "arch_sets": arch_sets,
        "accelerators": accelerators.tables,
    }


def _tensorflow_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    cited = _Citations(base["sources"])
    releases = _tensorflow_releases(roots["tensorflow.yaml"].child("releases"), cited,
                                    _rocm_gfx_sets(roots["tensorflow.yaml"], cited))
    _check_added(version, "tensorflow.yaml", releases, problems)
    metal = _metal_plugins(roots["tensorflow.yaml"].child("metal"), cited) if roots["tensorflow.yaml"].has("metal") else []
    amd = _amd_tensorflow_wheels(roots["tensorflow.yaml"].child("amd_wheels"), cited) \
        if roots["tensorflow.yaml"].has("amd_wheels") else []
    return {"tensorflow_releases": tuple(sorted(releases, key=lambda r: r.version, reverse=True)),
            "tensorflow_metal": tuple(sorted(metal, key=lambda m: m.version, reverse=True)),
            "tensorflow_amd_wheels": tuple(sorted(amd, key=lambda w: Version(w.rocm), reverse=True))}


def _amd_tensorflow_wheels(node: _Node, cited: _Citations) -> list[AmdTensorflowWheels]:
    """tensorflow.yaml `amd_wheels:`: per ROCm release, the TensorFlow releases of AMD's own tensorflow-rocm wheels."""
    rows, seen = [], set()
    for record in node.sequence():
        record.only(("rocm", "tensorflow", "url", *_PROVENANCE_KEYS))
        rocm = record.child("rocm").string(re.compile(r"^\d\.\d{1,2}$"), "a ROCm release such as 6.2")
        if rocm in seen:
            record.child("rocm").fail(f"ROCm {rocm} is listed twice")
        seen.add(rocm)
        rows.append(AmdTensorflowWheels(
            rocm=rocm, tensorflow=record.child("tensorflow").strings(re.compile(r"^\d+\.\d+\.\d+$"), "a TensorFlow release"),
            url=record.child("url").string(re.compile(r"^https://"), "an https:// URL"), provenance=cited.provenance(record)))
    return rows


_MACOS = re.compile(r"^\d{2}\.\d$")


def _metal_plugins(node: _Node, cited: _Citations) -> list[MetalPlugin]:
    """tensorflow.yaml `metal:`: Apple's tensorflow-metal releases, each with the TensorFlow it pairs with."""
    plugins = []
    for record, version in _releases(node, "tensorflow-metal"):
        record.only(("version", "tensorflow", "macos", "wheel_macos", "python", *_PROVENANCE_KEYS))
        from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only when validating

        pairs = record.child("tensorflow").string(what="a specifier of TensorFlow releases")
        try:
            SpecifierSet(pairs)
        except InvalidSpecifier:
            record.child("tensorflow").fail(f"{pairs!r} is not a version specifier")
        plugins.append(MetalPlugin(
            version=version, tensorflow=pairs, macos=record.child("macos").string(_MACOS, "a macOS version (12.1)"),
            wheel_macos=record.child("wheel_macos").string(_MACOS, "a macOS version (12.0)"),
            python=record.child("python").strings(re.compile(r"^3\.\d{1,2}$"), "a CPython version"),
            provenance=cited.provenance(record)))
    return plugins


def _jax_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    cited = _Citations(base["sources"])
    releases = _jax_releases(roots["jax.yaml"].child("releases"), cited, _rocm_gfx_sets(roots["jax.yaml"], cited))
    _check_added(version, "jax.yaml", releases, problems)
    find_links = _jaxlib_find_links(roots["jax.yaml"].child("find_links"), cited, base["toolkits"]) \
        if roots["jax.yaml"].has("find_links") else []
    return {"jax_releases": tuple(sorted(releases, key=lambda r: r.version, reverse=True)),
            "jaxlib_find_links": tuple(sorted(find_links, key=lambda r: r.version, reverse=True))}


def _jaxlib_find_links(node: _Node, cited: _Citations, toolkits: Mapping[str, Any]) -> list[JaxlibFindLinksRelease]:
    """jax.yaml `find_links: {url, jaxlib: [...]}`: the CUDA jaxlib builds of JAX's own find-links page. A record
    names its builds by `cuda:` (0.1.x: `+cuda111` for each CUDA X.Y) or `builds:` ({local version: CUDA X.Y it
    needs}, 0.1.73 on), and may say which jax releases' extras pin it (`jax:`, `extras:`) and its own page (`url:`)."""
    node.only(("url", "jaxlib"))
    url = node.child("url").string(re.compile(r"^https://"), "an https:// URL")
    found = []
    for record, version in _releases(node.child("jaxlib"), "jaxlib (find-links)"):
        record.only(("version", "cuda", "builds", "jax", "extras", "url", "python", "platforms", *_PROVENANCE_KEYS))
        if record.has("builds"):
            builds = {local: child.string(_CUDA, "a CUDA x.y version") for local, child in record.child("builds").items()}
            for local in builds:
                if not _FIND_LINKS_LOCAL.match(local):
                    record.child("builds").fail(f"{local!r} is not a local version such as cuda11.cudnn82")
        else:
            builds = {"cuda" + text.replace(".", ""): text
                      for text in record.child("cuda").strings(_CUDA, "a CUDA x.y version")}
        for text in builds.values():
            if text not in toolkits:
                record.fail(f"CUDA {text} is not in cuda.yaml toolkits")
        extras = {name: child.string() for name, child in record.child("extras").items()} \
            if record.has("extras") else {}
        for name, local in extras.items():
            if local not in builds:
                record.child("extras").fail(f"extra {name!r} pins +{local}, which is not among its builds")
        jax = tuple(Version(text) for text in record.child("jax").strings(_JAX_VERSION, "a jax version such as 0.3.25")) \
            if record.has("jax") else ()
        found.append(JaxlibFindLinksRelease(
            version=version, builds=builds,
            python=record.child("python").strings(_PYTHON, "a Python minor such as \"3.9\""),
            platforms=record.child("platforms").platforms(),
            url=record.child("url").string(re.compile(r"^https://"), "an https:// URL") if record.has("url") else url,
            provenance=cited.provenance(record), jax=jax, extras=extras))
    return found


def _rocm_gfx_sets(root: _Node, cited: _Citations) -> dict[str, GfxList]:
    """jax.yaml's and tensorflow.yaml's `gfx_sets:`: the gfx targets of their ROCm wheels (as rocm.yaml's for torch)."""
    if not root.has("gfx_sets"):
        return {}
    from envpin.compat.accelerator_schema import gfx_sets  # noqa: PLC0415 - it imports this module

    return gfx_sets(root.child("gfx_sets"), cited)


def _rocm_builds(framework: str, version: Version, record: _Node, sets: dict[str, GfxList],
                 cited: _Citations) -> tuple[RocmFrameworkBuild, ...]:
    """A release's `rocm:`: jax's {extra: build} (jax[rocm7-local]), TensorFlow's one build (tensorflow-rocm)."""
    if not record.has("rocm"):
        return ()
    from envpin.compat.accelerator_schema import rocm_framework_build  # noqa: PLC0415 - it imports this module

    node = record.child("rocm")
    if framework == "jax":
        return tuple(rocm_framework_build("jax", str(version), "jax", extra, build, sets, cited)
                     for extra, build in node.items())
    return (rocm_framework_build("tensorflow", str(version), "tensorflow-rocm", None, node, sets, cited),)


def _conda_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    releases = _conda_releases(roots["conda.yaml"], _Citations(base["sources"]), base["toolkits"])
    return {"conda_releases": tuple(sorted(releases, key=lambda r: r.version, reverse=True))}


def _tied_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    """tied.yaml: its records cite its own `sources:` (one per wheel read, OWN_SOURCES) or the base's."""
    root = roots["tied.yaml"]
    root.only(("sources", "tied", "built_from_source", "release_files", "releases"))  # `releases: []`: no file
    own = _sources({"tied.yaml": root}, problems)
    for source_id in own:
        if source_id in base["sources"]:
            root.child("sources").child(source_id).fail(f"source id {source_id!r} is defined twice")
    cited = _Citations({**base["sources"], **own})
    releases, seen = [], set()
    for record in root.child("tied").sequence() if root.has("tied") else ():
        record.only(("package", "version", "torch", "tensorflow", "required_by", "platforms", *_PROVENANCE_KEYS))
        package = record.child("package").string(what="a package name")
        if package and package not in TIED:
            record.child("package").fail(f"{package!r} is not one of {', '.join(TIED)} (the packages a "
                                         "project solve looks up here)")
        release = _release_version(record.child("version"))
        subject = f"{package} {release}"
        if (package, release) in seen:
            record.child("version").fail(f"{subject} is listed twice")
        seen.add((package, release))
        requires = _tied_requires(record, package, subject)
        provenance = cited.provenance(record)
        read_in = tuple(cited.sources[i].url or "" for i in provenance.sources if i in cited.sources
                        and (cited.sources[i].url or "").endswith(".whl"))
        if not read_in and provenance.sources and all(i in cited.sources for i in provenance.sources):
            record.child("sources").fail(f"{subject}: no source is the wheel whose METADATA was read (a .whl url)")
        releases.append(TiedRelease(package=package, version=record.child("version").value if release else "", requires=requires,
                                    platforms=record.child("platforms").platforms(), read_in=read_in,
                                    provenance=provenance))
    built = {}  # package -> the files page its sources give (the model keeps only that: what a plan's note names)
    for record in root.child("built_from_source").sequence() if root.has("built_from_source") else ():
        record.only(("package", *_PROVENANCE_KEYS))
        package = record.child("package").string(what="a package name")
        if package and package not in BUILT_AGAINST_TORCH:
            record.child("package").fail(f"{package!r} is not one of {', '.join(BUILT_AGAINST_TORCH)}")
        provenance = cited.provenance(record)
        urls = [cited.sources[i].url for i in provenance.sources if i in cited.sources and cited.sources[i].url]
        if package in built:
            record.child("package").fail(f"{package} is listed twice")
        built[package] = urls[0] if urls else ""
    files, seen = [], set()
    for record in root.child("release_files").sequence() if root.has("release_files") else ():
        record.only(("package", "version", "platforms", "sdist", "pythons", *_PROVENANCE_KEYS))
        package = record.child("package").string(what="a package name")
        if package and package not in PLATFORM_LIMITED:
            record.child("package").fail(f"{package!r} is not one of {', '.join(PLATFORM_LIMITED)}")
        release = _release_version(record.child("version"))
        if (package, release) in seen:
            record.child("version").fail(f"{package} {release} is listed twice")
        seen.add((package, release))
        sdist = record.child("sdist").value
        if type(sdist) is not bool:
            record.child("sdist").fail(f"expected true or false (whether {package} {release} has an sdist), got {sdist!r}")
        provenance = cited.provenance(record)
        urls = [cited.sources[i].url for i in provenance.sources if i in cited.sources and cited.sources[i].url]
        files.append(ReleaseFiles(package=package, version=record.child("version").value if release else "",
                                  platforms=record.child("platforms").platforms(), sdist=sdist is True,
                                  source=(urls[0] or "") if urls else "", provenance=provenance,
                                  pythons=record.child("pythons").strings(_PYTHON, "a Python minor such as \"3.12\"")
                                  if record.has("pythons") else ()))
    return {"tied_releases": tuple(sorted(releases, key=lambda r: (r.package, Version(r.version or "0")))),
            "built_from_source": built,
            "release_files": tuple(sorted(files, key=lambda r: (r.package, Version(r.version or "0"))))}


def _tied_requires(record: _Node, package: str, subject: str) -> str | None:
    """A tied record's requirement on its framework: `torch` or `tensorflow` (a PEP 440 specifier, as its wheel's
    Requires-Dist says), or, for triton, `required_by` (the torch releases whose wheels require it), as one
    `==A||==B` text."""
    framework = TIED.get(package, "torch")
    other = "tensorflow" if framework == "torch" else "torch"
    if record.has(other):
        record.child(other).fail(f"{subject} is built for a {framework} release: its requirement is `{framework}`")
    if package == "triton":
        if record.has("torch"):
            record.child("torch").fail(f"{subject}: torch names triton, not the other way round: use `required_by`")
        required = [_release_version(node) for node in record.child("required_by").sequence()]
        if not required:
            record.child("required_by").fail(f"{subject}: the torch releases that require it, a non-empty list")
        return "||".join(f"=={v}" for v in required if v is not None) or None
    if record.has("required_by"):
        record.child("required_by").fail(f"{subject}: only triton records name the torch releases that require them")
    text = record.child(framework).optional_string(what="a version specifier")
    if text is not None and not _is_specifier(text):
        record.child(framework).fail(f"{subject}: {text!r} is not a version specifier (as Requires-Dist writes it)")
    return text


_GLIBC = re.compile(r"^2\.\d{1,2}$")
_WHEEL_FRAMEWORKS = ("torch", "tensorflow", "jax")


def _wheels_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    """wheel_tags.yaml: its records cite its own `sources:` (OWN_SOURCES) or the base's."""
    root = roots["wheel_tags.yaml"]
    root.only(("sources", "wheels", "index_builds", "releases"))  # `releases: []`: no file
    own = _sources({"wheel_tags.yaml": root}, problems)
    for source_id in own:
        if source_id in base["sources"]:
            root.child("sources").child(source_id).fail(f"source id {source_id!r} is defined twice")
    cited = _Citations({**base["sources"], **own})
    records, seen = [], set()
    for record in root.child("wheels").sequence() if root.has("wheels") else ():
        record.only(("framework", "version", "glibc", "free_threaded", "musllinux", *_PROVENANCE_KEYS))
        framework = record.child("framework").string(what="a framework")
        if framework and framework not in _WHEEL_FRAMEWORKS:
            record.child("framework").fail(f"{framework!r} is not one of {', '.join(_WHEEL_FRAMEWORKS)}")
        release = _release_version(record.child("version"))
        if (framework, release) in seen:
            record.child("version").fail(f"{framework} {release} is listed twice")
        seen.add((framework, release))
        glibc = {}
        for platform, node in record.child("glibc").items() if record.has("glibc") else ():
            if not platform.startswith("linux-") or platform not in PLATFORMS:
                node.fail(f"{platform!r} is not a Linux platform ({', '.join(p for p in PLATFORMS if p.startswith('linux-'))})")
            glibc[platform] = node.string(_GLIBC, "a glibc version such as \"2.28\"")
        free = {}
        for platform, node in record.child("free_threaded").items() if record.has("free_threaded") else ():
            if platform not in PLATFORMS:
                node.fail(f"{platform!r} is not one of {', '.join(PLATFORMS)}")
            free[platform] = node.strings(_PYTHON, "a Python minor such as \"3.13\"")
        musl = record.child("musllinux").platforms() if record.has("musllinux") else ()
        records.append(WheelTags(framework=framework, version=record.child("version").value if release else "",
                                 provenance=cited.provenance(record), glibc=glibc, free_threaded=free,
                                 musllinux=musl))
    return {"wheel_tags": tuple(records), "index_builds": _index_builds(root, cited)}


def _index_builds(root: _Node, cited: _Citations) -> tuple[IndexBuildTags, ...]:
    """wheel_tags.yaml `index_builds:` (the files of one torch build on download.pytorch.org, by platform)."""
    records, seen = [], set()
    linux = tuple(p for p in PLATFORMS if p.startswith("linux-"))
    for record in root.child("index_builds").sequence() if root.has("index_builds") else ():
        record.only(("framework", "version", "variant", "glibc", "any_glibc", "pythons", *_PROVENANCE_KEYS))
        framework = record.child("framework").string(what="a framework")
        if framework and framework != "torch":
            record.child("framework").fail(f"{framework!r}: only torch builds are served by download.pytorch.org")
        release = _release_version(record.child("version"))
        variant = record.child("variant").string(what="a variant name")
        if variant and not is_database_tag(variant):
            record.child("variant").fail(f"{variant!r} is not a variant name (cpu, cuXYZ, rocmX.Y, xpu)")
        if (release, variant) in seen:
            record.child("variant").fail(f"torch {release}+{variant} is listed twice")
        seen.add((release, variant))
        glibc = {}
        for platform, node in record.child("glibc").items() if record.has("glibc") else ():
            if platform not in linux:
                node.fail(f"{platform!r} is not a Linux platform ({', '.join(linux)})")
            glibc[platform] = node.string(_GLIBC, "a glibc version such as \"2.28\"")
        any_glibc = record.child("any_glibc").platforms() if record.has("any_glibc") else ()
        for platform in any_glibc:
            if platform not in linux or platform in glibc:
                record.child("any_glibc").fail(f"{platform!r} is not a Linux platform left out of `glibc`")
        pythons = {}
        for platform, node in record.child("pythons").items() if record.has("pythons") else ():
            if platform not in glibc and platform not in any_glibc:
                node.fail(f"{platform!r} has no tag in this record (`glibc` or `any_glibc`)")
            pythons[platform] = node.strings(_PYTHON, "a Python minor such as \"3.12\"")
        for platform in (*glibc, *any_glibc):
            if not pythons.get(platform):
                record.fail(f"{platform}: `pythons` must name the CPython minors whose file was read")
        records.append(IndexBuildTags(framework=framework, version=record.child("version").value if release else "",
                                      variant=variant, provenance=cited.provenance(record), glibc=glibc,
                                      any_glibc=any_glibc, pythons=pythons))
    return tuple(records)


def _requires_part(version: str, roots: dict[str, _Node], base: Mapping[str, Any],
                   problems: Problems) -> dict[str, Any]:
    """requires.yaml: per framework release, the Requires-Dist lines of its wheel; its records cite its own
    `sources:` (one per wheel read, OWN_SOURCES)."""
    root = roots["requires.yaml"]
    root.only(("sources", "releases"))
    own = _sources({"requires.yaml": root}, problems)
    for source_id in own:
        if source_id in base["sources"]:
            root.child("sources").child(source_id).fail(f"source id {source_id!r} is defined twice")
    cited = _Citations({**base["sources"], **own})
    records, seen = [], set()
    for record in root.child("releases").sequence() if root.has("releases") else ():
        record.only(("framework", "version", "requires", *_PROVENANCE_KEYS))
        framework = record.child("framework").string(what="a framework")
        if framework not in ("torch", "tensorflow"):
            record.child("framework").fail(f"{framework!r} is not torch or tensorflow")
        release = _release_version(record.child("version"))
        subject = f"{framework} {release}"
        if (framework, release) in seen:
            record.child("version").fail(f"{subject} is listed twice")
        seen.add((framework, release))
        lines = record.child("requires").strings(what="Requires-Dist lines")
        for position, line in enumerate(lines):
            name, specifier, _ = split_requirement(line)
            if not name or (specifier and not _is_specifier(specifier)):
                record.child("requires").fail(f"{subject}: line {position + 1} {line!r} is not a requirement as "
                                              "Requires-Dist writes it")
        provenance = cited.provenance(record)
        wheels = [cited.sources[i].url or "" for i in provenance.sources if i in cited.sources
                  and (cited.sources[i].url or "").endswith(".whl")]
        if not wheels and provenance.sources and all(i in cited.sources for i in provenance.sources):
            record.child("sources").fail(f"{subject}: no source is the wheel whose METADATA was read (a .whl url)")
        records.append(FrameworkRequires(framework=framework, version=record.child("version").value if release else "",
                                         requires=tuple(lines), wheel=wheels[0] if wheels else "",
                                         provenance=provenance))
    return {"framework_requires": tuple(records)}


_PART_BUILDERS = {"torch": _torch_part, "tensorflow": _tensorflow_part, "jax": _jax_part, "conda": _conda_part,
                  "tied": _tied_part, "requires": _requires_part, "wheels": _wheels_part}


# ---------------------------------------------------------------- sources and provenance


def _sources(roots: dict[str, _Node], problems: Problems) -> dict[str, Source]:
    sources: dict[str, Source] = {}
    for root in roots.values():
        if not root.has("sources"):
            continue
        for source_id, node in root.child("sources").items():
            node.only(("title", "url", "ref", "grade", "read", "quote"))
            if source_id in sources:
                node.fail(f"source id {source_id!r} is defined twice")
            grade = node.string_of("grade", what="a grade")
            if grade and grade not in SOURCE_GRADES:
                node.child("grade").fail(f"{grade!r} is not one of {', '.join(SOURCE_GRADES)}")
            url, ref = node.optional_string_of("url"), node.optional_string_of("ref")
            if grade == "unlocated":
                if url is not None or ref is not None:
                    node.fail("an unlocated source has no url or ref: give it the grade of what the location holds")
            elif url is None and ref is None:
                node.fail("a source needs a url or a ref (a file at a commit)")
            sources[source_id] = Source(
                id=source_id,
                title=node.string_of("title", what="a title"),
                grade=grade,
                url=url,
                ref=ref,
                read=_text(node.value_of("read")),
                quote=node.optional_string_of("quote"),
            )
    return sources


_PROVENANCE_KEYS = ("sources", "unverified", "unverified_on")  # what _Citations.provenance reads of a record


class _Citations:
    def __init__(self, sources: dict[str, Source]):
        self.sources = sources

    def provenance(self, record: _Node) -> Provenance:
        ids = record.strings_of("sources", what="a source id")
        if not ids:
            record.fail("a record needs a non-empty `sources:` list")
        if not all(map(self.sources.__contains__, ids)):  # the loop only where one is unknown
            for source_id in ids:
                if source_id and source_id not in self.sources:
                    record.child("sources").fail(f"unknown source id {source_id!r}")
        unverified = record.optional_string_of("unverified", what="a text")
        scope = record.child("unverified_on").platforms() if record.has("unverified_on") else ()
        if scope and unverified is None:
            record.child("unverified_on").fail("`unverified_on` scopes an `unverified` text, and there is none")
        return Provenance(sources=ids, unverified=unverified, unverified_on=scope)


def _text(value: Any) -> str | None:
    # YAML turns an unquoted 2026-11-29 into a date; accept both.
    return None if value is None else str(value)


# ---------------------------------------------------------------- NVIDIA


def _minor_version_compat(node: _Node, cited: _Citations) -> dict[int, MinorVersionCompat]:
    table: dict[int, MinorVersionCompat] = {}
    for record in node.sequence():
        record.only(("major", "linux", "windows", "disputed", *_PROVENANCE_KEYS))
        major = record.child("major").value
        if not isinstance(major, int):
            record.child("major").fail("expected an integer CUDA major")
            continue
        linux = record.child("linux").string(_DRIVER, "a driver version")
        windows = record.child("windows").optional_string(_DRIVER, "a driver version")
        provenance = cited.provenance(record)
        disputed: dict[str, str] = {}
        for os_name, lower in (record.child("disputed").items() if record.has("disputed") else ()):
            applied = {"linux": linux, "windows": windows}.get(os_name)
            text = lower.string(_DRIVER, "a driver version")
            if os_name not in ("linux", "windows"):
                lower.fail(f"{os_name!r} is not linux or windows")
            elif applied is None or not _DRIVER.match(text) or not _DRIVER.match(applied):
                lower.fail(f"a disputed {os_name} figure needs the {os_name} minimum it is lower than")
            elif _driver_tuple(text) >= _driver_tuple(applied):
                lower.fail(f"{text} is not below the {os_name} minimum applied ({applied})")
            elif provenance.unverified is None:
                lower.fail("a disputed figure is a doubt: the record needs an `unverified` text saying what disagrees")
            else:
                disputed[os_name] = text
        table[major] = MinorVersionCompat(major=major, linux=linux, windows=windows, provenance=provenance,
                                          disputed=disputed)
    return table


def _driver_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _toolkits(node: _Node, cited: _Citations) -> dict[str, CudaToolkit]:
    toolkits: dict[str, CudaToolkit] = {}
    for record in node.sequence():
        record.only(("version", "driver", "driver_not_read", "supported_by", "targets", *_PROVENANCE_KEYS))
        version = record.child("version").string(_CUDA, "a CUDA x.y version")
        if version in toolkits:
            record.child("version").fail(f"CUDA {version} is listed twice")
        driver = record.child("driver")
        driver.mapping()
        driver.only(("linux", "windows"))
        linux = driver.child("linux").optional_string(_DRIVER, "a driver version")
        windows = driver.child("windows").optional_string(_DRIVER, "a driver version")
        not_read = record.child("driver_not_read").strings(what="an OS") if record.has("driver_not_read") else ()
        for position, os_name in enumerate(not_read):
            if os_name not in ("linux", "windows"):
                record.child("driver_not_read").child(position).fail(f"{os_name!r} is not linux or windows")
            elif (linux if os_name == "linux" else windows) is not None:
                record.child("driver_not_read").child(position).fail(f"the {os_name} driver is given, so it was read")
        supported_by: dict[str, DriverRelease] = {}
        for os_name, release in (record.child("supported_by").items() if record.has("supported_by") else ()):
            release.only(("driver", *_PROVENANCE_KEYS))
            text = release.child("driver").string(_DRIVER, "a driver version")
            if os_name not in not_read:
                release.fail(f"a driver that supports CUDA {version} is recorded only where the toolkit's own {os_name} "
                             f"driver was not read (`driver_not_read`)")
            supported_by[os_name] = DriverRelease(text, cited.provenance(release))
        toolkits[version] = CudaToolkit(
            version=version,
            driver_linux=linux,
            driver_windows=windows,
            targets=_capabilities(record.child("targets")),
            provenance=cited.provenance(record),
            driver_not_read=not_read,
            supported_by=supported_by,
        )
    return toolkits


def _capabilities(node: _Node) -> tuple[ComputeCapability, ...]:
    problems = len(node.problems.items)
    texts = node.strings(_CC, "a compute capability such as 8.6")
    if len(node.problems.items) == problems:  # every text matched _CC
        return tuple(map(_capability, texts))
    return tuple(_capability(text) for text in texts if _CC.match(text))


_CAPABILITIES: dict[str, ComputeCapability] = {}


def _capability(text: str) -> ComputeCapability:
    """`ComputeCapability.parse`, once per text: cuda.yaml's toolkits list ~450 targets, a few dozen different."""
    found = _CAPABILITIES.get(text)
    if found is None:
        found = _CAPABILITIES[text] = ComputeCapability.parse(text)
    return found


def _gpus(node: _Node, cited: _Citations) -> tuple[GpuModel, ...]:
    models: list[GpuModel] = []
    seen: dict[str, str] = {}  # gpu_name_key(name) -> name: the matching key decides what counts as a duplicate
    for record in node.sequence():
        record.only(("cc", "architecture", "names", *_PROVENANCE_KEYS))
        capability = record.child("cc").string(_CC, "a compute capability such as 8.6")
        names = record.child("names").strings(what="a GPU name")
        for position, name in enumerate(names):
            key = gpu_name_key(name)
            if key in seen:
                record.child("names").child(position).fail(f"{name!r} matches {seen[key]!r} listed before")
            seen[key] = name
        if not _CC.match(capability):
            continue
        models.append(
            GpuModel(
                compute_capability=_capability(capability),
                architecture=record.child("architecture").string(what="an architecture name"),
                names=names,
                provenance=cited.provenance(record),
            )
        )
    return tuple(models)


_JETSON_FRAMEWORKS = ("torch", "tensorflow", "jax")


def _jetson(node: _Node, cited: _Citations) -> dict[str, JetsonSupport]:
    """`jetson:` in gpus.yaml: per framework, whether its PyPI CUDA wheels run on Jetson (Tegra) GPUs, and where
    builds that do are (a URL), or that there are none."""
    table: dict[str, JetsonSupport] = {}
    for record in node.sequence():
        record.only(("framework", "pypi_cuda", "builds", "per_jetpack", "text", *_PROVENANCE_KEYS))
        framework = record.child("framework").string(what="a framework")
        if framework and framework not in _JETSON_FRAMEWORKS:
            record.child("framework").fail(f"{framework!r} is not one of {', '.join(_JETSON_FRAMEWORKS)}")
        if framework in table:
            record.child("framework").fail(f"{framework} is listed twice")
        pypi_cuda = record.child("pypi_cuda").value
        if not isinstance(pypi_cuda, bool):
            record.child("pypi_cuda").fail("expected true or false")
        builds = record.child("builds").optional_string(re.compile(r"^https://"), "an https:// URL")
        per_jetpack = record.child("per_jetpack").optional_string(re.compile(r"^https://[^{}]*\{folder\}[^{}]*$"),
                                                                  "an https:// URL with one {folder}")
        table[framework] = JetsonSupport(
            framework=framework,
            pypi_cuda=bool(pypi_cuda),
            text=record.child("text").string(what="a text"),
            provenance=cited.provenance(record),
            builds=builds,
            per_jetpack=per_jetpack,
        )
    return table


# ---------------------------------------------------------------- PyTorch


def _arch_sets(node: _Node, cited: _Citations) -> dict[str, ArchList]:
    sets = {}
    for name, record in node.items():
        sass, ptx = [], []
        for text in record.child("archs").strings(_ARCH, "an arch such as 8.6 or 12.0+PTX"):
            match = _ARCH.match(text)
            if match:
                capability = ComputeCapability(int(match.group(1)), int(match.group(2)))
                sass.append(capability)
                if match.group(3):
                    ptx.append(capability)
        read_from = record.child("read_from").strings(what="how the list was read")
        if not read_from:
            record.child("read_from").fail(f"an arch set needs `read_from:`, a list of {', '.join(ARCH_EVIDENCE)}")
        for kind in read_from:
            if kind not in ARCH_EVIDENCE:
                record.child("read_from").fail(f"{kind!r} is not one of {', '.join(ARCH_EVIDENCE)}")
        sets[name] = ArchList(name=name, sass=tuple(sorted(sass)), ptx=tuple(ptx), provenance=cited.provenance(record),
                              read_from=read_from)
    return sets


_BUILD_INFO_ARCH = re.compile(r"^(sm|compute)_(\d{1,2})(\d)$")


def _build_info_archs(name: str, node: _Node, provenance: Provenance) -> ArchList:
    """An arch list as a wheel's build info spells it: `sm_75` a cubin, `compute_80` PTX. It was read in the wheel, so
    it carries the record's sources but not its doubt (which is about other fields)."""
    sass: list[ComputeCapability] = []
    ptx: list[ComputeCapability] = []
    for text in node.strings(_BUILD_INFO_ARCH, "a CUDA target such as sm_75 or compute_80"):
        match = _BUILD_INFO_ARCH.match(text)
        if match:
            capability = ComputeCapability(int(match.group(2)), int(match.group(3)))
            (sass if match.group(1) == "sm" else ptx).append(capability)
    return ArchList(name=name, sass=tuple(sorted(sass)), ptx=tuple(sorted(ptx)), provenance=Provenance(provenance.sources),
                    read_from=("wheel",))


def _releases(node: _Node, framework: str) -> list[tuple[_Node, Version]]:
    """Each release record with its parsed version; a missing, malformed or repeated version is a problem."""
    found, seen = [], set()
    for record in node.sequence():
        version = _release_version(record.child("version"))
        if version is None:
            continue
        if version in seen:
            record.child("version").fail(f"{framework} {version} is listed twice")
        seen.add(version)
        found.append((record, version))
    return found


def _torch_releases(node: _Node, arch_sets: dict[str, ArchList], cited: _Citations) -> list[TorchRelease]:
    releases = []
    seen: dict[tuple[str, bytes], Variant] = {}  # (name, the record marshalled) -> the variant it validated to
    tables: dict[bytes, dict[str, tuple[str, ...]]] = {}
    for record, version in _releases(node, "torch"):
        variants = {name: _variant_once(name, child, arch_sets, cited, seen)
                    for name, child in record.child("variants").items()}
        pypi = _pypi_table(record.child("pypi"), variants)
        releases.append(
            TorchRelease(
                version=version,
                released=_text(record.value_of("released")),
                python=_python_table_once(record.child("python"), tables),
                pypi=pypi,
                variants=variants,
                companions=_companions(record, version, variants, cited),
                known_issues=_known_issues(record.child("known_issues"), cited),
                provenance=cited.provenance(record),
                added=_added(record),
                numpy_below_2=_numpy_below_2(record),
            )
        )
    return releases


def _numpy_below_2(record: _Node) -> tuple[str, ...]:
    """Optional `numpy_below_2: [platforms]`: the release's wheels there were compiled against NumPy 1.x, whose C ABI
    NumPy 2 lacks (`import` fails), and their metadata does not cap numpy below 2, so pip would take NumPy 2."""
    return record.child("numpy_below_2").platforms() if record.has("numpy_below_2") else ()


def _release_version(node: _Node) -> Version | None:
    text = node.string(what="a release version")
    try:
        return Version(text) if text else None
    except ValueError:  # InvalidVersion, or a number too long for int()
        node.fail(f"{text!r} is not a version")
        return None


@lru_cache(maxsize=256)  # a few dozen variant names, each in many releases
def _variant_name(name: str) -> tuple[bool, str | None]:
    """Whether a variant's name is one the database may use, and the kind of build it names."""
    return is_database_tag(name), kind_of(name)


def _variant_once(name: str, node: _Node, arch_sets: dict[str, ArchList], cited: _Citations,
                  seen: dict[tuple[str, bytes], Variant]) -> Variant:
    """`_variant`, once per distinct record: torch.yaml writes ~250 variants, ~140 of them different (the cpu build
    and the CUDA builds of a series repeat from release to release). A variant is its name and its record's value
    alone (the arch sets and sources are the part's), so a record equal to one that validated without a problem
    validates to the same variant and adds none. The key is the record marshalled: equal bytes load as equal values of
    the same types (str from int, True from 1; another order of keys is only a miss), at a seventh of what repr costs;
    a value marshal cannot write (a date, from PyYAML) is validated as it stands."""
    try:
        key = (name, marshal.dumps(node.value))
    except ValueError:
        return _variant(name, node, arch_sets, cited)
    found = seen.get(key)
    if found is not None:
        return found
    problems = len(node.problems.items)
    variant = _variant(name, node, arch_sets, cited)
    if len(node.problems.items) == problems:
        seen[key] = variant
    return variant


def _variant(name: str, node: _Node, arch_sets: dict[str, ArchList], cited: _Citations) -> Variant:
    allowed, kind = _variant_name(name)
    if not allowed:
        node.fail(f"{name!r} is not a variant name (cpu, cuXYZ, rocmX.Y, xpu)")
    platforms = node.platforms_of("platforms")
    cuda = node.optional_string_of("cuda", _CUDA, "a CUDA x.y version")
    if kind == CUDA and cuda is None:
        node.fail("a cuXYZ variant needs `cuda:`")
    if cuda and name != cuda_tag(cuda):
        node.child("cuda").fail(f"CUDA {cuda} does not match the variant name {name}")
    archs = {}
    for platform, arch_node in node.child("archs").items() if node.has("archs") else []:
        set_name = arch_node.string(what="an arch_sets name")
        if not set_name:
            continue  # not a string: `string` has reported it
        if set_name not in arch_sets:
            arch_node.fail(f"unknown arch set {set_name!r}")
        elif platform not in platforms:
            arch_node.fail(f"{platform} is not among the variant's platforms")
        else:
            archs[platform] = arch_sets[set_name]
    if cuda:
        for platform in platforms:
            if platform.startswith(("linux", "windows")) and platform not in archs:
                node.child("archs").fail(f"a CUDA variant needs an arch list for {platform}")
    return Variant(
        name=name,
        platforms=platforms,
        provenance=cited.provenance(node),
        cuda=cuda,
        rocm=node.optional_string_of("rocm", what="a ROCm version"),
        cudnn=node.optional_string_of("cudnn", what="a cuDNN version"),
        archs=archs,
        python=_python_table(node.child("python")) if node.has("python") else {},
        pins=_pins(node.child("pins")),
        added=_added(node),
    )


def _python_table_once(node: _Node, seen: dict[bytes, dict[str, tuple[str, ...]]]) -> dict[str, tuple[str, ...]]:
    """`_python_table`, once per distinct table (as `_variant_once`: torch.yaml's 52 releases have 19 different)."""
    try:
        key = marshal.dumps(node.value)
    except ValueError:
        return _python_table(node)
    found = seen.get(key)
    if found is not None:
        return dict(found)
    problems = len(node.problems.items)
    table = _python_table(node)
    if len(node.problems.items) == problems:
        seen[key] = table
    return dict(table)


def _python_table(node: _Node) -> dict[str, tuple[str, ...]]:
    table = {}
    for platform, versions in node.items():
        if platform not in PLATFORMS:
            versions.fail(f"{platform!r} is not a platform")
        table[platform] = versions.strings(_PYTHON, "a Python minor version such as 3.11")
    return table


def _pypi_table(node: _Node, variants: dict[str, Variant]) -> dict[str, str]:
    table = {}
    for platform, variant in node.items():
        name = variant.string(what="a variant name")
        if platform not in PLATFORMS:
            variant.fail(f"{platform!r} is not a platform")
        elif name and name not in variants:
            variant.fail(f"the PyPI wheel is said to be {name!r}, which is not among the release's variants")
        table[platform] = name
    return table


def _companions(record: _Node, version: Version, variants: dict[str, Variant], cited: _Citations) -> dict[str, Companion]:
    """A companion is either the short form `{version, sources}` (the same build as torch's, where torch's is:
    Companion.pairs_beside) or `{version, builds: [...]}` with each build's index, CUDA and import check as read."""
    companions = {}
    for name in ("torchvision", "torchaudio"):
        if not record.has(name):
            continue
        node = record.child(name)
        per_variant = node.child("per_variant").value
        provenance = cited.provenance(node)
        companion_version = node.child("version").string(what="a version")
        builds = tuple(b for child in node.child("builds").sequence()
                       for b in _companion_builds(child, version, variants, cited)) if node.has("builds") else ()
        companions[name] = Companion(
            name=name,
            version=companion_version,
            per_variant=True if per_variant is None else bool(per_variant),
            provenance=provenance,
            builds=builds,
            any_torch=node.child("any_torch").value is True,
        )
    return companions


def _companion_builds(node: _Node, release: Version, variants: dict[str, Variant],
                      cited: _Citations) -> list[CompanionBuild]:
    """One `builds:` entry: `index: pypi` (with its platforms and `cuda` as read in the wheel) or `indexes: [...]`
    of the release's variants (the +variant build on each, built for that variant's CUDA)."""
    version = node.child("version").string(what="a version")
    check = node.child("cuda_check").string(what="a CUDA check")
    if check and check not in CUDA_CHECKS:
        node.child("cuda_check").fail(f"{check!r} is not one of {', '.join(CUDA_CHECKS)}")
    torch = node.child("torch").optional_string(what="a version specifier such as >=2.11")
    if torch is not None and not _is_specifier(torch):
        node.child("torch").fail(f"{torch!r} is not a PEP 440 specifier")
    elif torch is not None and not _contains(torch, release):
        node.child("torch").fail(f"torch{torch} excludes torch {release}: pip would refuse this pair")
    provenance = cited.provenance(node)
    python = node.child("python").strings(_PYTHON, "a Python minor version such as 3.12") if node.has("python") else ()
    if node.has("index"):
        index = node.child("index").string(what="an index")
        if index != PYPI_INDEX:
            node.child("index").fail(f"`index:` is {PYPI_INDEX}; name PyTorch indexes under `indexes:`")
        cuda = node.child("cuda").optional_string(_CUDA, "a CUDA x.y version")
        return [CompanionBuild(version, PYPI_INDEX, node.child("platforms").platforms(), cuda, check, torch, provenance,
                               python)]
    builds = []
    if node.has("cuda"):
        node.child("cuda").fail("a build on a PyTorch index has its variant's CUDA; `cuda:` belongs to `index: pypi`")
    wanted = node.child("platforms").platforms() if node.has("platforms") else None
    for position, index_node in enumerate(node.child("indexes").sequence()):
        index = index_node.string(what="a variant name")
        variant = variants.get(index)
        if variant is None:
            node.child("indexes").child(position).fail(f"{index!r} is not a variant of torch {release}")
            continue
        platforms = variant.platforms if wanted is None else tuple(p for p in wanted if p in variant.platforms)
        builds.append(CompanionBuild(version, index, platforms, variant.cuda, check, torch, provenance, python))
    if not builds and not node.has("indexes"):
        node.fail("a companion build needs `index: pypi` or `indexes: [...]`")
    return builds


# Nearly every specifier in the database is clauses of a comparison and a plain release (`<10.0,>=9.8`,
# `==12.4.5.8`, `>=2.11`), which PEP 440 always takes and whose meaning for a plain release is the comparison of
# the two versions (no pre-, post-, dev-release or local version to rule on): those are read here, the rest by
# packaging.specifiers, whose import and its one regular expression cost a solve without the cache an eighth of
# what the baseline costs (callgrind). tests/unit/test_database_schema.py holds both readings to agree.
_PLAIN_CLAUSE = r"(?:==|!=|<=|>=|<|>)[0-9]+(?:\.[0-9]+)*"
_PLAIN_CLAUSES = re.compile(rf"{_PLAIN_CLAUSE}(?:,{_PLAIN_CLAUSE})*")
_COMPARE = {"==": Version.__eq__, "!=": Version.__ne__, "<=": Version.__le__, ">=": Version.__ge__,
            "<": Version.__lt__, ">": Version.__gt__}


def _contains(specifier: str, version: Version) -> bool:
    plain_release = version.epoch == 0 and version.pre is None and version.post is None and version.dev is None
    if plain_release and version.local is None and _PLAIN_CLAUSES.fullmatch(specifier):
        for clause in specifier.split(","):
            operator = clause[:2] if clause[1] == "=" else clause[:1]
            if not _COMPARE[operator](version, Version(clause[len(operator):])):
                return False
        return True
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - only when validating, and for few texts (above)

    return SpecifierSet(specifier).contains(version, prereleases=True)


def _known_issues(node: _Node, cited: _Citations) -> tuple[KnownIssue, ...]:
    if node.value is None:
        return ()
    return tuple(
        KnownIssue(
            platforms=issue.child("platforms").platforms(),
            text=issue.child("text").string(what="a text"),
            provenance=cited.provenance(issue),
            added=_added(issue),
        )
        for issue in node.sequence()
    )


def _added(record: _Node) -> str | None:
    """Optional `added: "YYYY.MM.DD"`: the database version that added the record (envpin.compat.news)."""
    return _text(record.optional_string_of("added", _DB_VERSION, "a database version such as 2026.12.22"))


def _pins(node: _Node) -> dict[str, str]:
    """`{nvidia-cudnn-cu12: "==9.1.0.70"}`: package -> PEP 440 specifier, both checked."""
    pins: dict[str, str] = {}
    if node.value is None:
        return pins
    for name, specifier in node.items():
        text = specifier.string(what="a version specifier such as ==9.1.0.70")
        if not _is_specifier(text):
            specifier.fail(f"{text!r} is not a PEP 440 specifier")
        pins[name] = text
    return pins


@lru_cache(maxsize=4096)  # the database repeats its pins (the same cuDNN pin in many builds)
def _is_specifier(text: str) -> bool:
    if _PLAIN_CLAUSES.fullmatch(text):
        return True  # see _PLAIN_CLAUSES
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415 - only when validating, and for few texts

    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        return False
    return True


# ---------------------------------------------------------------- TensorFlow and JAX


def _gpu_package(record: _Node, gpu: Mapping[str, TensorflowGpuBuild]) -> dict[str, str]:
    """Optional `gpu_package: {platform: tensorflow-gpu}`: where only that project's wheels are the GPU build."""
    if not record.has("gpu_package"):
        return {}
    table = {}
    for platform, name in record.child("gpu_package").items():
        if platform not in gpu:
            name.fail(f"{platform!r} has no gpu: record, so no GPU package")
        table[platform] = name.string(re.compile(r"^tensorflow-gpu$"), "tensorflow-gpu")
    return table


def _tensorflow_releases(node: _Node, cited: _Citations, sets: dict[str, GfxList]) -> list[TensorflowRelease]:
    releases = []
    for record, version in _releases(node, "tensorflow"):
        gpu = {}
        for platform, build in record.child("gpu").items() if record.has("gpu") else []:
            if platform not in PLATFORMS:
                build.fail(f"{platform!r} is not a platform")
            provenance = cited.provenance(build)
            gpu[platform] = TensorflowGpuBuild(
                platform=platform,
                cuda=build.child("cuda").string(re.compile(r"^\d{1,2}(\.\d)?$"), "a CUDA version"),
                cudnn=_text(build.child("cudnn").value),
                conda=build.child("conda").optional_string(),
                provenance=provenance,
                archs=_build_info_archs(f"tensorflow {version} {platform}", build.child("archs"), provenance)
                if build.has("archs") else None,
            )
        releases.append(
            TensorflowRelease(
                version=version,
                released=_text(record.child("released").value),
                python=_python_table(record.child("python")),
                gpu=gpu,
                and_cuda=_and_cuda(record.child("and_cuda"), cited),
                cpu_package={p: n.string() for p, n in record.child("cpu_package").items()}
                if record.has("cpu_package")
                else {},
                gpu_package=_gpu_package(record, gpu),
                provenance=cited.provenance(record),
                known_issues=_known_issues(record.child("known_issues"), cited),
                added=_added(record),
                numpy_below_2=_numpy_below_2(record),
                rocm=_rocm_builds("tensorflow", version, record, sets, cited),
                numpy=_numpy_requirement(record, _all_pythons(record), cited),
            )
        )
        releases += _tensorflow_patches(record, releases[-1], cited)
    recorded = [r.version for r in releases]
    for repeated in {v for v in recorded if recorded.count(v) > 1}:
        node.fail(f"tensorflow {repeated} is both a release and another release's patch")
    return releases


def _tensorflow_patches(record: _Node, release: TensorflowRelease, cited: _Citations) -> list[TensorflowRelease]:
    """Optional `patches: [{version, numpy, wheel, sources}]`: the later patch releases of the series that PyPI
    serves with this record's wheels (the same CPython tags per platform), each with its own numpy Requires-Dist,
    read in the one wheel named. They are this release in all else (SCHEMA.md), but for tensorflow-rocm, which is
    built per release, and the release date, not recorded."""
    if not record.has("patches"):
        return []
    patches = []
    for node in record.child("patches").sequence():
        node.only(("version", "numpy", "wheel", *_PROVENANCE_KEYS))
        version = _release_version(node.child("version"))
        if version is None:
            continue
        if version.release[:2] != release.version.release[:2] or version <= release.version:
            node.child("version").fail(f"{version} is no later patch release of tensorflow {release.version}")
        requires = node.child("numpy").string(what="a version specifier such as >=1.26.0")
        if not _is_specifier(requires):
            node.child("numpy").fail(f"{requires!r} is not a version specifier")
        wheel = node.child("wheel").string(what="a wheel file name")
        if not wheel.startswith(f"tensorflow-{version}-") or not wheel.endswith(".whl"):
            node.child("wheel").fail(f"expected the tensorflow {version} wheel whose METADATA was read")
        provenance = cited.provenance(node)
        patches.append(replace(
            release, version=version, released=None, rocm=(), provenance=provenance,
            numpy=NumpyRequirement(requires=requires, by_python={}, wheels=(wheel,), provenance=provenance)))
    return patches


def _all_pythons(record: _Node) -> tuple[str, ...]:
    return tuple(sorted({p for _, node in record.child("python").items() for p in node.strings()}))


def _numpy_requirement(record: _Node, pythons: tuple[str, ...], cited: _Citations) -> NumpyRequirement | None:
    """Optional `numpy: {requires, python, wheels, sources}`: the release's own Requires-Dist on numpy (SCHEMA.md)."""
    if not record.has("numpy"):
        return None
    node = record.child("numpy")
    node.mapping()

    def specifier(child: _Node) -> str:
        text = child.string(what="a version specifier such as >=1.26.0")
        if text and not _is_specifier(text):
            child.fail(f"{text!r} is not a version specifier")
        return text

    by_python = {}
    for python, child in node.child("python").items() if node.has("python") else []:
        if python not in pythons:
            child.fail(f"Python {python} is not among the release's Pythons")
        by_python[python] = specifier(child)
    wheels = node.child("wheels").strings(what="a wheel file name")
    if not wheels or any(not w.endswith(".whl") for w in wheels):
        node.child("wheels").fail("expected the wheel files whose METADATA was read (*.whl)")
    return NumpyRequirement(requires=specifier(node.child("requires")), by_python=by_python, wheels=wheels,
                            provenance=cited.provenance(node))


def _and_cuda(node: _Node, cited: _Citations) -> AndCudaExtra | None:
    if node.value is None:
        return None
    installable = node.child("installable").value
    return AndCudaExtra(
        pins=_pins(node.child("pins")),
        pythons=node.child("pythons").strings(_PYTHON, "a Python minor version") if node.has("pythons") else None,
        installable=True if installable is None else bool(installable),
        note=node.child("note").optional_string(),
        provenance=cited.provenance(node),
    )


def _jax_releases(node: _Node, cited: _Citations, sets: dict[str, GfxList]) -> list[JaxRelease]:
    releases = []
    for record, version in _releases(node, "jax"):
        missing = {n: m.string() for n, m in record.child("missing_extras").items()} if record.has("missing_extras") else {}
        releases.append(
            JaxRelease(
                version=version,
                released=_text(record.child("released").value),
                python=record.child("python").strings(_PYTHON, "a Python minor version"),
                platforms=record.child("platforms").platforms(),
                extras={name: _jax_extra(name, extra, cited) for name, extra in record.child("extras").items()}
                if record.has("extras")
                else {},
                missing_extras=missing,
                provenance=cited.provenance(record),
                note=record.child("note").optional_string(),
                added=_added(record),
                numpy_below_2=_numpy_below_2(record),
                rocm=_rocm_builds("jax", version, record, sets, cited),
                numpy=_numpy_requirement(record, record.child("python").strings(), cited),
            )
        )
    return releases


def _jax_extra(name: str, node: _Node, cited: _Citations) -> JaxExtra:
    major = node.child("cuda").string(re.compile(r"^\d{2}$"), "a CUDA major such as 12")
    min_cc = node.child("min_cc").optional_string(_CC, "a compute capability")
    return JaxExtra(
        name=name,
        cuda_major=int(major) if major.isdigit() else 0,
        plugin=_text(node.child("plugin").value),
        min_driver={os_name: v.string(_DRIVER, "a driver version") for os_name, v in node.child("min_driver").items()},
        min_cc=min_cc,
        min_cudnn=_text(node.child("min_cudnn").value),
        built_with=_text(node.child("built_with").value),
        pins=_pins(node.child("pins")),
        platforms=node.child("platforms").platforms(),
        provenance=cited.provenance(node),
        plan_bounds=_plan_bounds(node.child("plan_bounds")) if node.has("plan_bounds") else {},
    )


def _plan_bounds(node: _Node) -> dict[str, str]:
    bounds = {}
    for package, spec in node.items():
        text = spec.string(what="a version specifier such as <9")
        if text and not _is_specifier(text):
            spec.fail(f"{text!r} is not a version specifier")
        bounds[package] = text
    return bounds


# ---------------------------------------------------------------- cross-references


def _check_cross_references(toolkits: dict[str, CudaToolkit], releases: list[TorchRelease], problems: Problems) -> None:
    """Every variant's CUDA exists in cuda.yaml, and no arch list holds a capability its toolkit cannot target."""
    targets: dict[str, set[tuple[int, int]]] = {}  # CUDA -> its targets as pairs (compared so: no __eq__ per element)
    # the variants share a few dozen (CUDA, arch list) pairs; an arch list by identity (all of them live as long as
    # this loop), as hashing one hashes every capability in it
    outside_of: dict[tuple[str, int], list[str]] = {}
    for release in releases:
        for variant in release.variants.values():
            cuda = variant.cuda
            if not cuda:
                continue
            toolkit = toolkits.get(cuda)
            if toolkit is None:
                problems.add(f"torch.yaml: torch {release.version} {variant.name}", f"CUDA {cuda} is not in cuda.yaml toolkits")
                continue
            if cuda not in targets:
                targets[cuda] = {(c.major, c.minor) for c in toolkit.targets}
            for platform, archs in variant.archs.items():
                pair = (cuda, id(archs))
                if pair not in outside_of:
                    outside_of[pair] = [str(c) for c in archs.sass if (c.major, c.minor) not in targets[cuda]]
                outside = outside_of[pair]
                if outside:
                    problems.add(
                        f"torch.yaml: torch {release.version} {variant.name}",
                        f"arch set {archs.name!r} ({platform}) has {', '.join(outside)}, "
                        f"which CUDA {cuda} cannot target",
                    )


def _check_added(version: str, file: str, releases: Sequence[TorchRelease | TensorflowRelease | JaxRelease],
                 problems: Problems) -> None:
    """A record cannot have been added by a database version newer than the database itself."""
    if not _DB_VERSION.match(version):
        return
    for release in releases:
        # each label is written only for a message: str(Version) for every record was most of this check's cost
        if release.added and release.added > version:
            problems.add(f"{file}: {release.version}", f"added {release.added} is after the database version {version}")
        for issue in getattr(release, "known_issues", ()):
            if issue.added and issue.added > version:
                problems.add(f"{file}: {release.version} {issue.text[:40]!r}",
                             f"added {issue.added} is after the database version {version}")
        for variant in getattr(release, "variants", {}).values():
            if variant.added and variant.added > version:
                problems.add(f"{file}: {release.version}+{variant.name}",
                             f"added {variant.added} is after the database version {version}")


# ---------------------------------------------------------------- conda.yaml


def _conda_releases(root: _Node, cited: _Citations, toolkits: dict[str, CudaToolkit]) -> list[CondaRelease]:
    """`conda-forge:` and `pytorch-channel:`, each a mapping framework -> list of release records."""
    for key, node in root.items():
        if key not in ("sources", "releases", *CONDA_FRAMEWORKS):  # `releases: []` stands in for an absent file
            node.fail(f"unknown key {key!r}; expected sources, {' or '.join(CONDA_FRAMEWORKS)}")
    releases = []
    for strategy, frameworks in CONDA_FRAMEWORKS.items():
        if not root.has(strategy):
            continue
        for framework, records in root.child(strategy).items():
            if framework not in frameworks:
                records.fail(f"{strategy} records {', '.join(frameworks)}, not {framework!r}")
                continue
            seen: set[Version] = set()
            for record, version in _releases(records, f"{strategy} {framework}"):
                if version in seen:
                    continue  # _releases reported it
                seen.add(version)
                releases.append(_conda_release(strategy, framework, version, record, cited, toolkits))
    return releases


def _conda_release(
    strategy: str, framework: str, version: Version, record: _Node, cited: _Citations, toolkits: dict[str, CudaToolkit]
) -> CondaRelease:
    cuda = {}
    for platform, versions in record.child("cuda").items():
        if platform not in PLATFORMS:
            versions.fail(f"{platform!r} is not one of {', '.join(PLATFORMS)}")
        listed = versions.strings(_CUDA, "a CUDA x.y version")
        for position, text in enumerate(listed):
            if _CUDA.match(text) and text not in toolkits:
                versions.child(position).fail(f"CUDA {text} is not in cuda.yaml toolkits")
        cuda[platform] = tuple(sorted((t for t in listed if _CUDA.match(t)), key=lambda t: tuple(map(int, t.split(".")))))
    cuda_package = record.child("cuda_package").optional_string(what="a conda package name")
    companions = {n: record.child(n).string(what="a version") for n in ("torchvision", "torchaudio") if record.has(n)}
    if strategy == "pytorch-channel":
        if cuda_package not in ("pytorch-cuda", "cudatoolkit"):
            record.child("cuda_package").fail("a pytorch-channel record needs `cuda_package: pytorch-cuda` or `cudatoolkit`")
    elif cuda_package is not None or companions:
        record.fail("`cuda_package`, `torchvision` and `torchaudio` belong to pytorch-channel records only")
    return CondaRelease(
        strategy=strategy,
        framework=framework,
        version=version,
        cuda=cuda,
        cpu=record.child("cpu").platforms() if record.has("cpu") else (),
        provenance=cited.provenance(record),
        cuda_package=cuda_package,
        companions=companions,
    )
