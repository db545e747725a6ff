"""The shipped database is valid, every record cites a known source, and corrupt copies are clear errors."""

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from envpin.base.errors import DatabaseError
from envpin.cli import main
from envpin.compat import schema
from envpin.compat.loader import load_database, validate_database
from tests.conftest import LIVE_DB_DIR


def test_shipped_database_is_valid():
    assert validate_database() == []


def test_version_is_a_date(database):
    assert len(database.version.split(".")) == 3


def test_every_cited_source_has_an_address(database):
    for source in database.sources.values():
        assert source.url or source.ref or source.grade == "unlocated", source.id


@pytest.mark.parametrize("old, new, message", [
    ("    grade: unlocated\n", "    url: https://example.org\n    grade: unlocated\n", "an unlocated source has no url or ref"),
    ("    url: https://leimao.github.io/blog/NVIDIA-GPU-Compute-Capability/\n", "",
     "leimao-cuda-gpus-copy: a source needs a url or a ref"),
], ids=["unlocated-with-a-url", "located-without-one"])
def test_a_source_has_a_location_or_says_it_has_none(db_copy, old, new, message):
    _corrupt(db_copy, "sources.yaml", old, new)
    with pytest.raises(DatabaseError, match=message):
        load_database(db_copy)


def test_torch_covers_1_12_to_newest(database):
    versions = {str(r.version) for r in database.torch_releases}
    assert {"1.12.0", "1.13.1", "2.0.0", "2.5.1", "2.9.1", "2.14.1", "2.15.0"} <= versions


def test_cuda_toolkits_10_2_to_13(database):
    assert {"10.2", "11.0", "11.8", "12.0", "12.4", "12.8", "12.9", "13.0"} <= set(database.toolkits)


def _corrupt(db_copy, name, old, new):
    path = db_copy / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    "name, old, new, message",
    [
        ("torch.yaml", "releases:", "releases: [", "malformed YAML"),
        ("cuda.yaml", 'version: "12.4"', "version: 12.4", "cuda.yaml: toolkits"),
        ("torch.yaml", "sources: [", "sources: [no-such-source, ", "unknown source id"),
        ("xpu.yaml", 'linux-x86_64: "2.7.0"}', 'linux-x86_64: "2.7.7"}', "xpu.yaml: gpus.*torch 2.7.7 is not a release"),
        ("xpu.yaml", '{windows-x86_64: "2.6.0"', '{macos-arm64: "2.6.0"', "xpu.yaml: gpus.*not one of the family's"),
        ("amd_gpus.yaml", '"Radeon 760M"', '"Radeon 780M Graphics"', "amd_gpus.yaml: gpus.*matches 'Radeon 780M'"),
    ],
)
def test_corrupt_database_is_one_clear_error(db_copy, name, old, new, message):
    _corrupt(db_copy, name, old, new)
    with pytest.raises(DatabaseError, match=message):
        load_database(db_copy).torch_releases  # noqa: B018 - torch.yaml's part is read when first asked for


@pytest.mark.parametrize("name, old, new, message", [
    ("tensorflow.yaml", "\nreleases:", "\nreleases: [", "tensorflow.yaml line .*malformed YAML"),
    ("jax.yaml", 'version: "0.', 'version: "zero.', "jax.yaml: releases.* is not a version"),
    ("conda.yaml", "sources: [", "sources: [no-such-source, ", "conda.yaml: .*unknown source id"),
], ids=["tensorflow-bad-yaml", "jax-bad-version", "conda-unknown-source"])
def test_a_part_with_problems_stops_what_asks_for_it_and_only_that(db_copy, name, old, new, message):
    # Each part of the database (envpin.compat.files.PARTS) is validated when first used: a torch query never
    # reads tensorflow.yaml, jax.yaml or conda.yaml, and envpin db validate still reads every file.
    _corrupt(db_copy, name, old, new)
    database = load_database(db_copy)
    assert database.torch_releases and database.toolkits
    field = {"tensorflow.yaml": "tensorflow_releases", "jax.yaml": "jax_releases", "conda.yaml": "conda_releases"}[name]
    with pytest.raises(DatabaseError, match=message):
        getattr(database, field)
    assert any(name in problem for problem in validate_database(db_copy)), validate_database(db_copy)


def test_the_sources_of_every_file_are_checked_with_the_base(db_copy):
    # A source id defined twice, in two files a torch query does not otherwise share, is still found at once.
    text = (db_copy / "jax.yaml").read_text()
    first = text.split("sources:\n", 1)[1].split(":", 1)[0].strip()
    (db_copy / "tensorflow.yaml").write_text((db_copy / "tensorflow.yaml").read_text().replace(
        "sources:\n", f"sources:\n  {first}:\n    title: again\n    url: https://example.org\n    grade: primary\n", 1))
    with pytest.raises(DatabaseError, match=f"source id {first!r} is defined twice"):
        load_database(db_copy)


@pytest.mark.parametrize(
    "name, old, new, message",
    [
        ("jax.yaml", "gfx: jax-rocm7-0.12,", "gfx: jax-rocm7-0.99,", "unknown gfx set 'jax-rocm7-0.99'"),
        ("tensorflow.yaml", "gfx: tensorflow-rocm-2.14,", "gfx: jax-rocm7-0.12,", "unknown gfx set 'jax-rocm7-0.12'"),
        ("tensorflow.yaml", 'pin: "2.14.0.600", rocm: "6.0"', 'pin: "2.14.0.600", rocm: "6"', "tensorflow.yaml: releases"),
        ("jax.yaml", 'plugin: "jax-rocm7-plugin 0.12.0"', 'plugin: "0.12.0"', "a plugin name and version"),
        ("jax.yaml", "targets: [gfx900, gfx906, gfx908, gfx90a, gfx940", "targets: [gfx9-generic, gfx906, gfx908, gfx90a, gfx940",
         "a gfx target such as gfx1100"),
    ],
)
def test_a_corrupt_rocm_record_of_jax_or_tensorflow_is_named(db_copy, name, old, new, message):
    """jax.yaml's and tensorflow.yaml's `rocm:` (their ROCm wheels on PyPI) name gfx sets of their own file."""
    _corrupt(db_copy, name, old, new)
    problems = validate_database(db_copy)
    assert any(message in problem for problem in problems), problems


@pytest.mark.parametrize("old, new, message", [
    ('{version: "2.6.1", numpy: "~=1.19.2"', '{version: "2.7.9", numpy: "~=1.19.2"',
     "2.7.9 is no later patch release of tensorflow 2.6.0"),
    ('{version: "2.6.4", numpy: "~=1.19.2", wheel: tensorflow-2.6.4-',
     '{version: "2.6.5", numpy: "~=1.19.2", wheel: tensorflow-2.6.5-', "tensorflow 2.6.5 is both a release and another"),
    ('numpy: "~=1.19.2", wheel: tensorflow-2.6.1-', 'numpy: "1.19", wheel: tensorflow-2.6.1-', "'1.19' is not a version specifier"),
    ("wheel: tensorflow-2.6.1-cp37", "wheel: tensorflow-2.6.0-cp37", "expected the tensorflow 2.6.1 wheel"),
], ids=["other-series", "also-a-release", "bad-numpy", "another-wheel"])
def test_a_corrupt_tensorflow_patch_record_is_named(db_copy, old, new, message):
    """A release's `patches:` are later patch releases of its own series, none a release of its own too."""
    _corrupt(db_copy, "tensorflow.yaml", old, new)
    problems = validate_database(db_copy)
    assert any(message in problem for problem in problems), problems


def test_a_patch_release_is_its_records_release_with_its_own_numpy(database):
    """tensorflow 2.6.2 (no record of its own) has 2.6.0's Pythons and GPU builds; 2.2.1 its own numpy bound."""
    releases = {str(r.version): r for r in database.tensorflow_releases}
    assert releases["2.6.2"].python == releases["2.6.0"].python and releases["2.6.2"].gpu == releases["2.6.0"].gpu
    assert releases["2.6.2"].rocm == () and releases["2.6.2"].released is None
    assert releases["2.2.1"].numpy.requires == "<1.19.0,>=1.16.0" != releases["2.2.0"].numpy.requires


@pytest.mark.parametrize("old, new, message", [
    ('builds: {cuda11.cudnn805: "11.1", cuda11.cudnn82: "11.1"}', 'builds: {cuda11.cudnn805: "11.1", cu11_82: "11.1"}',
     "'cu11_82' is not a local version such as cuda11.cudnn82"),
    ('builds: {cuda11.cudnn805: "11.1", cuda11.cudnn82: "11.1"}', 'builds: {cuda11.cudnn805: "11.1", cuda11.cudnn82: "9.9"}',
     "CUDA 9.9 is not in cuda.yaml toolkits"),
    ("cuda11_cudnn82: cuda11.cudnn82}", "cuda11_cudnn82: cuda11.cudnn86}", "pins +cuda11.cudnn86, which is not among"),
], ids=["bad-local-version", "unknown-cuda", "extra-without-build"])
def test_a_corrupt_find_links_jaxlib_record_is_named(db_copy, old, new, message):
    """jax.yaml `find_links:` `builds:` name local versions, each with a toolkit of cuda.yaml, and `extras:` only those."""
    _corrupt(db_copy, "jax.yaml", old, new)
    problems = validate_database(db_copy)
    assert any(message in problem and "find_links" in problem for problem in problems), problems


@pytest.mark.parametrize("name, old, new, message", [
    # a misspelt field was read as absent: the GPU record's doubt was lost, the fact presented as read
    ("gpus.yaml", "    unverified: >-\n      Not named on", "    unverifed: >-\n      Not named on",
     r"gpus.yaml: gpus\[2\]\.unverifed: unknown key 'unverifed'"),
    ("gpus.yaml", "    pypi_cuda: false\n", "    pypi_cuda: false\n    build: x\n", r"gpus.yaml: jetson\[0\]\.build: unknown key 'build'"),
    ("gpus.yaml", "\ngpus:", "\ngpu_names: []\ngpus:", "gpus.yaml: gpu_names: unknown key 'gpu_names'"),
    ("gpus.yaml", "    grade: secondary\n", "    grade: secondary\n    note: x\n", "gpus.yaml: sources.*: unknown key 'note'"),
    ("cuda.yaml", "    driver_not_read: [linux, windows]", "    driver_not_reed: [linux, windows]",
     "cuda.yaml: toolkits.*: unknown key 'driver_not_reed'"),
], ids=["gpu-record", "jetson-record", "gpus-top-level", "source-record", "toolkit-record"])
def test_an_unknown_key_is_refused_not_ignored(db_copy, name, old, new, message):
    _corrupt(db_copy, name, old, new)
    problems = validate_database(db_copy)
    assert any(re.search(message, problem) for problem in problems), problems


@pytest.mark.parametrize("old, new, message", [
    ('{module: "6.12.12", driver: "6.4"', '{module: "6.12.12", driver: "6.5"', "AMD GPU driver 6.5 is not a row of `drivers`"),
    ('{module: "6.12.12", driver: "6.4"', '{module: "6.14.14", driver: "6.4"', "amdgpu module 6.14.14 is tied to a driver"),
    ('{module: "6.12.12", driver: "6.4"', '{module: "6.12", driver: "6.4"', "an amdgpu module version such as 6.12.12"),
], ids=["unknown-driver", "module-twice", "not-a-module-version"])
def test_a_corrupt_amdgpu_module_record_is_named(db_copy, old, new, message):
    """rocm.yaml `amdgpu_modules` ties each module version once to a release of its own `drivers` matrix."""
    _corrupt(db_copy, "rocm.yaml", old, new)
    problems = validate_database(db_copy)
    assert any(message in problem for problem in problems), problems


@pytest.mark.parametrize("new, message", [
    ('disputed: {windows: "529.00"}', r"529.00 is not below the windows minimum applied \(528.33\)"),
    ('disputed: {macos: "527.41"}', "'macos' is not linux or windows"),
], ids=["not-below", "not-an-os"])
def test_a_disputed_driver_figure_is_below_the_one_applied(tmp_path, new, message):
    live = tmp_path / "db"
    shutil.copytree(LIVE_DB_DIR, live)
    _corrupt(live, "cuda.yaml", 'disputed: {windows: "527.41"}', new)
    problems = validate_database(live)
    assert any(re.search(message, problem) for problem in problems), problems


def test_a_supporting_driver_is_recorded_only_where_the_toolkits_own_is_not_read(tmp_path):
    live = tmp_path / "db"
    shutil.copytree(LIVE_DB_DIR, live)
    _corrupt(live, "cuda.yaml", "    driver_not_read: [linux, windows]\n    supported_by:\n      linux:",
             "    driver_not_read: [windows]\n    supported_by:\n      linux:")
    problems = validate_database(live)
    assert any("a driver that supports CUDA 13.4 is recorded only where" in problem for problem in problems), problems


def test_missing_file(db_copy):
    (db_copy / "gpus.yaml").unlink()
    with pytest.raises(DatabaseError, match="gpus.yaml is missing"):
        load_database(db_copy)


def test_corrupt_database_through_the_cli(db_copy, capsys):
    (db_copy / "torch.yaml").write_text("releases: {{{\n")
    code = main(["solve", "--db", str(db_copy), "--os", "linux", "--arch", "x86_64", "--python", "3.11",
                 "--driver", "none"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "torch.yaml" in err and "Traceback" not in err


def test_db_validate_lists_every_problem(db_copy, capsys):
    _corrupt(db_copy, "cuda.yaml", 'version: "12.4"', "version: 12.4")
    _corrupt(db_copy, "gpus.yaml", "cc: ", "cc: 99")
    assert main(["db", "validate", str(db_copy)]) == 1
    assert len(capsys.readouterr().out.strip().splitlines()) >= 2


# ---------------------------------------------------------------- specifiers read without packaging.specifiers

_releases = st.lists(st.integers(0, 12), min_size=1, max_size=4).map(lambda parts: ".".join(map(str, parts)))
_plain_specifiers = st.lists(st.tuples(st.sampled_from(["==", "!=", "<=", ">=", "<", ">"]), _releases).map("".join),
                             min_size=1, max_size=3).map(",".join)
_versions = st.one_of(_releases, st.sampled_from(["2.11.0rc1", "2.11.post1", "2.11+cu126", "1!2.11", "2.11.dev3", "2.11"]))
_other_specifiers = st.sampled_from(["~=2.11", "==2.11.*", "==8.6.1.post1", ">= 2.11", "", "==", "=<2", ">=2.11,", "2.11",
                                     "==１２", "<10.0,>=9.8,!=9.9.*", ">2.11+cu126"])


@settings(max_examples=300, deadline=None)
@given(specifier=st.one_of(_plain_specifiers, _other_specifiers), version=_versions)
def test_the_schema_reads_a_specifier_as_packaging_does(specifier, version):
    try:
        parsed = SpecifierSet(specifier)
    except InvalidSpecifier:
        assert not schema._is_specifier(specifier)
        return
    assert schema._is_specifier(specifier)
    assert schema._contains(specifier, Version(version)) == parsed.contains(Version(version), prereleases=True)


def test_every_specifier_of_the_database_is_read_as_packaging_reads_it(database):
    pins = [spec for release in database.torch_releases for variant in release.variants.values()
            for spec in variant.pins.values()]
    pins += [spec for release in database.tensorflow_releases if release.and_cuda for spec in release.and_cuda.pins.values()]
    pins += [spec for release in database.jax_releases for extra in release.extras.values() for spec in extra.pins.values()]
    companions = [(build.torch, release.version) for release in database.torch_releases
                  for companion in release.companions.values() for build in companion.builds if build.torch]
    assert len(pins) > 500 and companions
    for specifier in pins:
        SpecifierSet(specifier)
        assert schema._is_specifier(specifier)
    for specifier, version in companions:
        assert schema._contains(specifier, version) == SpecifierSet(specifier).contains(version, prereleases=True)


@pytest.mark.parametrize("old, new, message", [
    ('variant: cu126, glibc: {linux-x86_64: "2.28"}, any_glibc: [linux-aarch64]',
     'variant: cu126, glibc: {linux-x86_64: "2.28"}, any_glibc: [linux-x86_64]',
     r"index_builds\[\d+\]\.any_glibc: 'linux-x86_64' is not a Linux platform left out of `glibc`"),
    ('variant: cu126, glibc: {linux-x86_64: "2.28"}', 'variant: cu126, glibc: {windows-x86_64: "2.28"}',
     r"index_builds\[\d+\].*'windows-x86_64' is not a Linux platform"),
    ('pythons: {linux-x86_64: ["3.12"], linux-aarch64: ["3.12"]}, sources: [torch-index-uv-14540]}',
     'pythons: {linux-x86_64: ["3.12"]}, sources: [torch-index-uv-14540]}',
     r"index_builds\[\d+\].*linux-aarch64: `pythons` must name"),
    ('version: "2.6.0", variant: cu126', 'version: "2.6.0", variant: cuda126', r"'cuda126' is not a variant name"),
], ids=["any-and-floor", "not-linux", "pythons-missing", "bad-variant"])
def test_a_corrupt_index_build_record_is_named(db_copy, old, new, message):
    _corrupt(db_copy, "wheel_tags.yaml", old, new)
    problems = validate_database(db_copy)
    assert any(re.search(message, problem) for problem in problems), problems


def test_a_bad_variant_written_in_many_releases_is_reported_in_each(db_copy):
    # Variants are validated once per distinct record; a record with a problem is never reused, so each release
    # that writes it reports it under its own path.
    path = db_copy / "torch.yaml"
    lines = path.read_text().split("\n")
    repeated = [line for line in lines if line.startswith("      cpu: {") and "sources: [" in line]
    line = max(set(repeated), key=repeated.count)
    count = repeated.count(line)
    assert count > 2
    path.write_text("\n".join(lines).replace(line, line.replace("sources: [", "sources: [no-such-source, ")))
    problems = [p for p in validate_database(db_copy) if "no-such-source" in p]
    assert len(problems) == count
    assert len({p.split(": ", 2)[1] for p in problems}) == count  # each at its own release
    with pytest.raises(DatabaseError, match="unknown source id 'no-such-source'"):
        load_database(db_copy).torch_releases  # noqa: B018 - the torch part is read when first asked for
