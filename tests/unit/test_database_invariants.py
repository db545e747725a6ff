"""Invariants of the live database (data/compat_matrix): what must hold for every record, whatever a refresh adds.

Tests that expect exact answers read the frozen copy (tests/fixtures/compat_db); these name no release, so a new
torch, TensorFlow or JAX release, or a new VERSION, keeps them green unless the new record itself is wrong.
"""

from __future__ import annotations

import re

import pytest
from packaging.version import Version

from envpin.compat import yaml_subset
from envpin.compat.drivers import POLICIES, minimum_driver
from envpin.compat.files import FILES
from envpin.facts.host import HostFacts, PythonInfo
from envpin.resolver.plan import Plan
from envpin.resolver.request import parse_request
from envpin.resolver.solve import solve
from envpin.resolver.target import make_target
from tests.conftest import LIVE_DB_DIR, REPO


def _cuda_platforms(database):
    for release in database.torch_releases:
        for variant in release.variants.values():
            if variant.cuda:
                yield release, variant


def test_every_release_and_build_cites_sources_that_exist(live_database):
    cited = []
    for release in live_database.torch_releases:
        cited.append((f"torch {release.version}", release.provenance))
        cited += [(f"torch {release.version}+{v.name}", v.provenance) for v in release.variants.values()]
        cited += [(f"{c.name} for torch {release.version}", c.provenance) for c in release.companions.values()]
    cited += [(f"tensorflow {r.version}", r.provenance) for r in live_database.tensorflow_releases]
    cited += [(f"jax {r.version}", r.provenance) for r in live_database.jax_releases]
    cited += [(f"arch list {a.name}", a.provenance) for a in live_database.arch_sets.values()]
    cited += [(f"CUDA {t.version}", t.provenance) for t in live_database.toolkits.values()]
    for what, provenance in cited:
        assert provenance.sources, f"{what} cites no source"
        missing = [s for s in provenance.sources if s not in live_database.sources]
        assert not missing, f"{what} cites undefined sources {missing}"
        assert all(live_database.sources[s].url or live_database.sources[s].ref for s in provenance.sources), (
            f"{what} cites a source a reader cannot open (neither url nor ref)")


def test_every_cuda_build_has_an_arch_list_with_a_source_for_each_platform(live_database):
    for release, variant in _cuda_platforms(live_database):
        for platform in variant.platforms:
            archs = variant.archs.get(platform)
            assert archs is not None, f"torch {release.version}+{variant.name} has no arch list for {platform}"
            assert archs.sass or archs.ptx, f"torch {release.version}+{variant.name}: empty arch list on {platform}"
            assert archs.provenance.sources, f"arch list {archs.name} has no source"


def test_every_builds_cuda_has_a_driver_minimum_where_it_is_built(live_database):
    """A CUDA build the solver may pick needs its toolkit's driver minimum for every OS it is built for."""
    needed = {(variant.cuda, platform.split("-")[0], f"torch {release.version}+{variant.name}")
              for release, variant in _cuda_platforms(live_database) for platform in variant.platforms}
    needed |= {(build.cuda, platform.split("-")[0], f"tensorflow {release.version}")
               for release in live_database.tensorflow_releases for platform, build in release.gpu.items()}
    for cuda, os_name, what in sorted(needed):
        assert cuda in live_database.toolkits, f"{what}: CUDA {cuda} is not in cuda.yaml"
        for policy in POLICIES:
            minimum = minimum_driver(live_database, cuda, os_name, policy)
            assert minimum is not None, f"{what}: CUDA {cuda} has no {os_name} driver minimum ({policy} policy)"
            assert minimum.provenance.sources, f"{what}: the {os_name} driver minimum of CUDA {cuda} has no source"


def test_every_arch_is_one_its_toolkit_can_build(live_database):
    for release, variant in _cuda_platforms(live_database):
        targets = set(live_database.toolkits[variant.cuda].targets)
        for platform, archs in variant.archs.items():
            unknown = [str(cc) for cc in (*archs.sass, *archs.ptx) if cc not in targets]
            assert not unknown, f"torch {release.version}+{variant.name} on {platform}: CUDA {variant.cuda} cannot target {unknown}"


def test_every_tensorflow_arch_list_is_one_its_cuda_can_build_and_was_read_in_the_wheel(live_database):
    for release in live_database.tensorflow_releases:
        for platform, gpu in release.gpu.items():
            if gpu.archs is None:
                continue  # a release whose wheel was not read: its plans say so (not checked), never guess
            targets = set(live_database.toolkits[gpu.cuda].targets)
            where = f"tensorflow {release.version} {platform}"
            assert gpu.archs.read_from == ("wheel",), where
            assert gpu.archs.sass or gpu.archs.ptx, where
            assert set(gpu.archs.sass) | set(gpu.archs.ptx) <= targets, where


def test_every_release_has_its_companions_and_a_pypi_build_that_exists(live_database):
    for release in live_database.torch_releases:
        assert "torchvision" in release.companions, f"torch {release.version} has no torchvision pair"
        for platform, name in release.pypi.items():
            variant = release.variants.get(name)
            assert variant is not None, f"torch {release.version}: PyPI's {platform} build {name} is not a variant"
            assert platform in variant.platforms, f"torch {release.version}: {name} is not built for {platform}"
        for variant in release.variants.values():
            for platform in variant.platforms:
                assert release.pythons_for(variant, platform), (
                    f"torch {release.version}+{variant.name} lists {platform} with no Python")
        for companion in release.companions.values():
            assert companion.version and companion.provenance.sources, f"{companion.name} for torch {release.version}"


def test_releases_are_newest_first_and_dated_in_order(live_database):
    for releases in (live_database.torch_releases, live_database.tensorflow_releases, live_database.jax_releases):
        versions = [r.version for r in releases]
        assert versions == sorted(versions, reverse=True)
        assert all(r.released for r in releases[:3]), "the newest releases carry their release date"


def test_no_record_is_added_after_the_database_version(live_database):
    version = live_database.version
    for release in live_database.torch_releases:
        assert (release.added or "") <= version
        assert all((v.added or "") <= version for v in release.variants.values())


@pytest.mark.parametrize(("os_name", "arch"), [("linux", "x86_64"), ("linux", "aarch64"), ("windows", "x86_64"),
                                               ("macos", "arm64")])
def test_the_newest_torch_release_answers_a_cpu_machine_of_each_platform(live_database, os_name, arch):
    """The newest release that ships a platform is what a plain request gets there, whatever its number."""
    platform = f"{os_name}-{arch}"
    shipping = [r for r in live_database.torch_releases if platform in r.python and any(
        v.kind == "cpu" and platform in v.platforms for v in r.variants.values())]
    if not shipping:
        pytest.skip(f"no torch release with a CPU build for {platform}")
    newest = shipping[0]
    python = newest.python[platform][-1]
    target = make_target(live_database, HostFacts(os=os_name, arch=arch, python=PythonInfo(python)))
    answer = solve(live_database, target, parse_request(["torch"], []))
    assert isinstance(answer, Plan), answer
    assert answer.packages[0].version.split("+")[0] == str(newest.version)


def _snapshot():
    import json  # noqa: PLC0415 - only this test reads the snapshot

    return json.loads((REPO / "tests" / "fixtures" / "torch_index" / "snapshot.json").read_text(encoding="utf-8"))


def test_the_recorded_torch_index_has_every_build_the_database_serves_from_it(live_database):
    """Where a recorded page of download.pytorch.org lists every file of a release (the snapshot's sources say
    which), each platform and Python the database gives that variant has its wheel there, and no file is for a
    platform the database leaves out."""
    from envpin.readers.variants import parse_wheel  # noqa: PLC0415 - packaging.tags, for this test only

    snapshot = _snapshot()
    checked = 0
    for source in snapshot["sources"].values():
        for page, versions in source.get("complete_for", {}).items():
            index, project = page.rsplit("/", 1)
            variant_name = index.split("/")[-1]
            for version in versions:
                release = live_database.torch_release(version)
                assert release is not None, f"{page} lists torch {version}, which the database lacks"
                variant = release.variants.get(variant_name)
                assert variant is not None, f"torch {version} has no {variant_name} variant in the database"
                have: dict[str, set[str]] = {}
                for row in snapshot["indexes"][index][project]:
                    parsed = parse_wheel(row["filename"])
                    if parsed and parsed[1].split("+")[0] == version:
                        for platform in parsed[2]:
                            have.setdefault(platform, set()).update(parsed[3])
                for platform in variant.platforms:
                    missing = set(release.pythons_for(variant, platform)) - have.get(platform, set())
                    assert not missing, f"torch {version}+{variant_name} on {platform}: no wheel for Python {sorted(missing)}"
                    checked += 1
    assert checked, "no recorded page is complete for any release"


def test_every_jax_rocm_extra_either_resolves_or_says_why_not(live_database):
    """From jax 0.5.0 on jax's METADATA has a ROCm extra (`rocm`, then `rocm7-local`): each release has a ROCm build
    of it (its `rocm:`) or a `missing_extras` entry naming the plugin PyPI lacks, never both; and a ROCm build runs
    only where jaxlib of that release has wheels."""
    for release in live_database.jax_releases:
        built = release.rocm
        missing = [name for name in release.missing_extras if name.startswith("rocm")]
        if release.version >= Version("0.5.0"):
            assert len(built) + len(missing) == 1, (release.version, built, missing)
        for build in built:
            assert build.extra not in release.missing_extras, release.version
            assert set(build.python) <= set(release.python), release.version
            assert set(build.platforms) <= set(release.platforms), release.version


def test_every_tensorflow_rocm_build_is_of_a_release_whose_pythons_it_shares(live_database):
    for release in live_database.tensorflow_releases:
        for build in release.rocm:
            assert build.pin.startswith(str(release.version)), (release.version, build.pin)
            assert build.platforms == ("linux-x86_64",)


# A location a reader can open: a web page or a PyPI file (http(s) URL), or a file of a public repository at a
# commit (`owner/repo:path@<40-hex commit>`, the form `ref:` uses).
_WEB_URL = re.compile(r"^https?://\S+$")
_FILE_AT_COMMIT = re.compile(r"^[\w.-]+/[\w.-]+:[^\s@]+@[0-9a-f]{40}\b")


def _raw_database_files():
    return {name: yaml_subset.load((LIVE_DB_DIR / name).read_text(encoding="utf-8")) for name in FILES
            if (LIVE_DB_DIR / name).exists()}


def _raw_sources(files):
    return {source_id: (name, source) for name, document in files.items()
            for source_id, source in (document.get("sources") or {}).items()}


def _citing_records(node, path=""):
    """Every mapping of a database file with a `sources:` list, with where it is."""
    if isinstance(node, dict):
        if isinstance(node.get("sources"), list):
            yield path, node
        for key, value in node.items():
            yield from _citing_records(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _citing_records(value, f"{path}[{index}]")


def test_every_source_has_a_public_location():
    """Each source names where a reader opens it (issue 17): a URL, a PyPI file or a repository file at a commit;
    one read where nobody can find it again says so with the grade `unlocated`, and carries no location at all."""
    for source_id, (name, source) in _raw_sources(_raw_database_files()).items():
        url, ref = source.get("url"), source.get("ref")
        if source.get("grade") == "unlocated":
            assert url is None and ref is None, f"{name}: unlocated source {source_id} names a location"
            continue
        opens = (isinstance(url, str) and bool(_WEB_URL.match(url))) or (
            isinstance(ref, str) and bool(_FILE_AT_COMMIT.match(ref)))
        assert opens, (f"{name}: source {source_id} has no location a reader can open (url {url!r}, ref {ref!r}): "
                       "an http(s) URL, a PyPI file URL or owner/repo:path@<40-hex commit>")


def test_records_citing_an_unlocated_source_are_unverified():
    files = _raw_database_files()
    unlocated = {source_id for source_id, (_, source) in _raw_sources(files).items()
                 if source.get("grade") == "unlocated"}
    for name, document in files.items():
        for path, record in _citing_records(document):
            cited = unlocated.intersection(record["sources"])
            if cited:
                assert record.get("unverified") or record.get("unverified_on"), (
                    f"{name}: {path} cites {sorted(cited)}, which no reader can open, and says nothing is unverified")


def test_no_source_text_points_at_a_private_index():
    """A search index's file ids are no reference: nobody outside can open them."""
    for path in sorted(LIVE_DB_DIR.iterdir()):
        if path.suffix in (".yaml", ".md"):
            text = path.read_text(encoding="utf-8").lower()
            assert "search index" not in text, f"{path.name} cites a search index, which a reader cannot open"
