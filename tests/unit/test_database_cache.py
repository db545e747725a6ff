"""The database cache's format (envpin.compat.cache): the real database goes through it unchanged, and what
comes back is checked before it is used. The cache files themselves: tests/faults/test_fault_database.py."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from envpin.base.errors import DatabaseError
from envpin.base.record import FrozenRecordError, replace
from envpin.compat import cache, loader
from envpin.compat.files import BASE, FILES, PARTS
from envpin.compat.gpus import lookup_gpu
from envpin.compat.loader import default_database_path, load_database
from envpin.compat.model import ComputeCapability, Database, Provenance, in_parts
from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo
from envpin.resolver.builds import builds_of
from envpin.resolver.target import make_target
from tests.cache_entries import entry_of

STAMPS = "envpin 0.1.0\nsome database\ntorch.yaml:1:2"


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """The real database read from its YAML, as an entry is written from: not from a cache other tests warmed
    (a database decoded from an entry holds lazy containers, which no entry is written from). A copy under a
    new path, so that no database this process loaded before is handed back."""
    copy = tmp_path_factory.mktemp("db") / "compat_matrix"
    shutil.copytree(default_database_path(), copy)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ENVPIN_NO_CACHE", "1")
        yield load_database(copy)


def fields_of(database: Database, part: str) -> dict:
    return {name: getattr(database, name) for name in PARTS[part][1]}


def round_trip(database: Database, part: str) -> dict:
    return cache.decode(cache.encode(fields_of(database, part), STAMPS, part), STAMPS, part)


@pytest.mark.parametrize("part", PARTS)
def test_each_part_of_the_real_database_comes_back_equal_with_the_same_types(database, part):
    again = round_trip(database, part)
    assert again == fields_of(database, part) and list(again) == list(PARTS[part][1])
    # == already tells a tuple from a list, a Version from a str and {12: ...} from {"12": ...}; repr shows
    # every value of every record, so the two are the same value for value.
    assert repr(again) == repr(fields_of(database, part))


def test_the_parts_make_the_whole_database(database):
    whole = Database(**{name: value for part in PARTS for name, value in round_trip(database, part).items()})
    assert whole == database and repr(whole) == repr(database)
    assert whole.minor_version_compat and all(type(major) is int for major in whole.minor_version_compat)


def test_an_arch_set_shared_by_many_builds_stays_one_object(database):
    again = round_trip(database, "torch")
    used = [archs for release in again["torch_releases"] for variant in release.variants.values()
            for archs in variant.archs.values()]
    assert len(used) > len(again["arch_sets"])
    assert all(archs is again["arch_sets"][archs.name] for archs in used)


def test_every_annotation_of_the_model_is_one_the_cache_reads():
    codecs = cache._Codecs()
    for name in codecs.classes:
        codecs.encoder(name)
        codecs.decoder(name)
    assert sorted(name for part in PARTS for name, _ in codecs.part_fields(part)) == sorted(Database._fields)


def test_every_field_of_the_database_is_in_exactly_one_part():
    names = [name for _, fields in PARTS.values() for name in fields]
    assert sorted(names) == sorted(Database._fields)
    files = [name for own, _ in PARTS.values() for name in own]
    assert sorted(files) == sorted(FILES)


@pytest.mark.parametrize("stamps, part", [("", "torch"), (STAMPS + "x", "torch"), (STAMPS.replace("1", "2"), "torch"),
                                          (STAMPS, "base")])
def test_an_entry_is_only_for_its_own_stamps_and_part(database, stamps, part):
    with pytest.raises(cache.CacheMiss):
        cache.decode(cache.encode(fields_of(database, "torch"), STAMPS, "torch"), stamps, part)


def test_an_entry_is_written_only_for_the_fields_of_its_part(database):
    with pytest.raises(cache.CacheMiss):
        cache.encode(fields_of(database, "torch"), STAMPS, "base")


def _entry(document, stamps=STAMPS, part="base") -> bytes:
    return entry_of(document, stamps, part)


EMPTY_BASE: dict[str, Any] = {"version": "2026.11.29", "sources": {}, "minor_version_compat": {}, "toolkits": {}, "gpus": [], "jetson": {},
                             "jetpack_releases": []}


WRONG_SHAPES: list[Any] = [
    [],
    {"shared": [], "fields": None},
    {"shared": [], "fields": "Database"},
    {"shared": [], "database": EMPTY_BASE},  # format 1's layout
    {"shared": [["os.system", ["echo"]]], "fields": EMPTY_BASE},
    {"shared": [["Provenance", [["a"], None]]], "fields": {**EMPTY_BASE, "gpus": [0]}},  # a record of another class
    {"shared": [], "fields": {**EMPTY_BASE, "gpus": [3]}},
    {"shared": [], "fields": EMPTY_BASE, "extra": 1},
    {"shared": [], "fields": {**EMPTY_BASE, "torch_releases": []}},  # another part's field
    {"shared": [], "fields": {key: value for key, value in EMPTY_BASE.items() if key != "jetson"}},
    {"shared": [], "fields": {**EMPTY_BASE, "minor_version_compat": {"x": None}}},  # int keys
    {"shared": [], "fields": {**EMPTY_BASE, "gpus": ["not a GpuModel"]}},
    {"shared": [], "fields": {**EMPTY_BASE, "version": 20261129}},
]


@pytest.mark.parametrize("document", WRONG_SHAPES, ids=["not-an-object", "null", "a-string", "old-layout", "unknown-class", "wrong-class", "dangling-reference",
        "extra-key", "another-parts-field", "a-field-missing", "bad-int-key", "wrong-element", "wrong-type"])
def test_a_well_signed_entry_of_the_wrong_shape_is_a_miss(document):
    with pytest.raises(Exception) as caught:
        repr(cache.decode(_entry(document), STAMPS, "base"))  # a record is checked when first used: repr uses all
    assert not isinstance(caught.value, (SystemExit, KeyboardInterrupt))


def test_the_smallest_database_decodes():
    base = cache.decode(_entry({"shared": [], "fields": EMPTY_BASE}), STAMPS, "base")
    torch = cache.decode(_entry({"shared": [], "fields": {"torch_releases": [], "arch_sets": {},
                                                          "accelerators": [[], [], {}, {}, {}, [], [], []]}}, part="torch"),
                         STAMPS, "torch")
    database = in_parts(base, {"torch": torch}.__getitem__)
    assert type(database) is Database and database.torch_releases == () and database.version == "2026.11.29"


# ---------------------------------------------------------------- a database read in parts


def test_a_database_read_in_parts_reads_each_part_when_first_asked_and_equals_the_whole(database):
    asked = []

    def read_part(part):
        asked.append(part)
        return fields_of(database, part)

    lazy = in_parts(fields_of(database, BASE), read_part)
    assert lazy.version == database.version and lazy.toolkits is database.toolkits and asked == []
    assert lazy.torch_releases is database.torch_releases and asked == ["torch"]
    assert lazy.accelerators is database.accelerators and lazy.arch_sets is database.arch_sets and asked == ["torch"]
    assert lazy.jax_releases == database.jax_releases and asked == ["torch", "jax"]
    assert lazy == database and sorted(asked) == sorted(part for part in PARTS if part != BASE)
    assert repr(lazy) == repr(database) and replace(lazy, version="2099.01.01").jax_releases == database.jax_releases


def test_a_target_without_an_amd_driver_reads_no_part(database):
    """The torch part holds the accelerator tables: a TensorFlow or JAX solve for an NVIDIA machine must not parse
    torch.yaml to learn that it has no amdgpu module to look up."""
    asked = []

    def read_part(part):
        asked.append(part)
        return fields_of(database, part)

    facts = HostFacts(os="linux", arch="x86_64", python=PythonInfo("3.11"), driver=Driver("535.104.05", None, "nvidia-smi"),
                      gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", "8.6"),))
    target = make_target(in_parts(fields_of(database, BASE), read_part), facts)
    assert target.amdgpu_driver is None and target.driver_cuda == "12.2" and asked == []


def test_a_part_with_problems_raises_each_time_it_is_asked_for(database):
    def read_part(part):
        raise DatabaseError(f"database x: {part} has problems")

    lazy = in_parts(fields_of(database, BASE), read_part)
    for _ in range(2):
        with pytest.raises(DatabaseError, match="jax has problems"):
            lazy.jax_releases  # noqa: B018 - reading the field is what reads the part
    assert lazy.gpus == database.gpus


def test_a_database_made_whole_never_reads_a_part(database):
    whole = Database(**{name: getattr(database, name) for name in Database._fields})
    assert "_read_part" not in whole.__dict__ and whole.conda_releases == database.conda_releases


def test_records_stay_frozen_values():
    capability = ComputeCapability(8, 6)
    with pytest.raises(FrozenRecordError):
        capability.major = 9  # type: ignore[misc]  # the write a frozen record refuses, on purpose
    assert isinstance(FrozenRecordError(), AttributeError)
    assert capability == ComputeCapability.parse("8.6") and hash(capability) == hash((8, 6))
    assert sorted([ComputeCapability(9, 0), capability, ComputeCapability(7, 5)])[0] == ComputeCapability(7, 5)
    assert repr(Provenance(("a",))) == "Provenance(sources=('a',), unverified=None, unverified_on=())"
    assert Provenance(("a",)) == Provenance(sources=("a",), unverified=None) != Provenance(("b",))


def test_the_stamps_name_every_module_the_validation_reads():
    """An edit to any envpin module the schema imports (a name key, a variant rule) must miss the cache, as an edit
    to the schema itself does: the validated objects it shaped are in the entry."""
    package = Path(loader.__file__).resolve().parents[1]
    imported = set()
    for schema in ("schema.py", "accelerator_schema.py"):
        tree = ast.parse((package / "compat" / schema).read_text(encoding="utf-8"))
        imported |= {node.module for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("envpin.")}
    stamped = {path.resolve().relative_to(package.parent).with_suffix("").as_posix().replace("/", ".")
               for path in loader.CODE_FILES}
    assert imported - {"envpin.base.errors"} <= stamped  # errors shapes no value, only messages


# ---------------------------------------------------------------- records read when first used


def _damaged(data: bytes, field: str, item: int) -> bytes:
    """The entry with one digit of one record of `field` changed (its digest left as it was)."""
    lines = data.split(b"\n")
    number = 2 + json.loads(lines[1])["fields"][field]["items"][item]
    digest, _, text = lines[number].partition(b" ")
    at = next(i for i, c in enumerate(text) if chr(c).isdigit())
    lines[number] = digest + b" " + text[:at] + (b"8" if text[at:at + 1] == b"9" else b"9") + text[at + 1:]
    return b"\n".join(lines)


def test_a_record_is_decoded_when_first_used_and_a_damaged_one_is_read_from_the_yaml_again(database):
    damaged = _damaged(cache.encode(fields_of(database, "torch"), STAMPS, "torch"), "torch_releases", -1)
    validated = []

    def from_the_yaml():
        validated.append("torch")
        return fields_of(database, "torch")

    fields = cache.decode(damaged, STAMPS, "torch", from_the_yaml)
    releases = fields["torch_releases"]
    assert isinstance(releases, cache.CachedRecords) and len(releases) == len(database.torch_releases)
    assert releases[0] == database.torch_releases[0] and validated == []  # the newest release alone
    assert fields["arch_sets"]["cpu" if "cpu" in database.arch_sets else next(iter(database.arch_sets))] is not None
    assert releases == database.torch_releases and validated == ["torch"]  # the oldest one failed its check
    assert repr(fields) == repr(fields_of(database, "torch"))
    with pytest.raises(cache.CacheMiss):  # without the YAML to fall back on, the damaged record is a miss
        tuple(cache.decode(damaged, STAMPS, "torch")["torch_releases"])


def test_a_gpu_is_found_by_its_name_without_decoding_the_others(database):
    fields = cache.decode(cache.encode(fields_of(database, BASE), STAMPS, BASE), STAMPS, BASE)
    gpus = fields["gpus"]
    lazy = in_parts(fields, lambda part: fields_of(database, part))
    assert lookup_gpu(lazy, "NVIDIA GeForce RTX 3090") == lookup_gpu(database, "NVIDIA GeForce RTX 3090") is not None
    assert len(gpus._decoded) == 1
    for model in database.gpus:  # every name finds its record, as the index made from the records finds it
        for name in model.names:
            assert lookup_gpu(lazy, name) == lookup_gpu(database, name)
    assert lookup_gpu(lazy, "NVIDIA GeForce RTX 1234567") is None


def test_each_database_keeps_its_own_memo(database, tmp_path):
    """Two databases in one process (the tests load several) never answer from each other's memo: the builds made
    of one are kept with it, and a copy of it in another directory makes its own."""
    shutil.copytree(default_database_path(), tmp_path / "db")
    other = load_database(tmp_path / "db")
    ours, theirs = builds_of(database, "torch"), builds_of(other, "torch")
    assert builds_of(database, "torch") is ours and theirs is not ours
    assert next(iter(ours)).torch_record[0] is database.torch_releases[0]
    assert next(iter(theirs)).torch_record[0] is other.torch_releases[0] is not database.torch_releases[0]
    assert [b.label for b in ours] == [b.label for b in theirs]
