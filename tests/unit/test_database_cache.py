"""The database cache's format (envpin.compat.cache): the real database goes through it unchanged, and what
comes back is checked before it is used. The cache files themselves: tests/faults/test_fault_database.py."""

from __future__ import annotations

import json

import pytest

from envpin.compat import cache
from envpin.compat.loader import default_database_path, load_database
from envpin.compat.model import ComputeCapability, Database, Provenance
from envpin.record import FrozenRecordError

STAMPS = "envpin 0.1.0\nsome database\ntorch.yaml:1:2"


@pytest.fixture(scope="module")
def database() -> Database:
    return load_database(default_database_path())


def test_the_real_database_comes_back_equal_with_the_same_types(database):
    again = cache.decode(cache.encode(database, STAMPS), STAMPS)
    assert again == database
    # == already tells a tuple from a list, a Version from a str and {12: ...} from {"12": ...}; repr shows
    # every value of every record, so the two are the same value for value.
    assert repr(again) == repr(database)
    assert again.minor_version_compat and all(type(major) is int for major in again.minor_version_compat)


def test_an_arch_set_shared_by_many_builds_stays_one_object(database):
    again = cache.decode(cache.encode(database, STAMPS), STAMPS)
    used = [archs for release in again.torch_releases for variant in release.variants.values()
            for archs in variant.archs.values()]
    assert len(used) > len(again.arch_sets)
    assert all(archs is again.arch_sets[archs.name] for archs in used)


def test_every_annotation_of_the_model_is_one_the_cache_reads():
    codecs = cache._Codecs()
    for name in codecs.classes:
        codecs.encoder(name)
        codecs.decoder(name)


@pytest.mark.parametrize("stamps", ["", STAMPS + "x", STAMPS.replace("1", "2")])
def test_an_entry_is_only_for_its_own_stamps(database, stamps):
    with pytest.raises(cache.CacheMiss):
        cache.decode(cache.encode(database, STAMPS), stamps)


def _entry(document, stamps=STAMPS) -> bytes:
    body = json.dumps(document).encode()
    header = {"format": cache.FORMAT, "version": cache.FORMAT_VERSION, "stamps": stamps,
              "digest": cache._digest(stamps, body)}
    return json.dumps(header).encode() + b"\n" + body


@pytest.mark.parametrize("document", [
    [],
    {"shared": [], "database": None},
    {"shared": [], "database": "Database"},
    {"shared": [["Database", []]], "database": 0},
    {"shared": [["os.system", ["echo"]]], "database": 0},
    {"shared": [["Provenance", [["a"], None]]], "database": 0},  # a reference to a record of another class
    {"shared": [], "database": 3},
    {"shared": [], "database": ["2026.11.29", {}, {}, {}, [], [], {}, [], [], []], "extra": 1},
    {"shared": [], "database": ["2026.11.29", {}, {"x": None}, {}, [], [], {}, [], [], []]},  # int keys
    {"shared": [], "database": ["2026.11.29", {}, {}, {}, ["not a GpuModel"], [], {}, [], [], []]},
    {"shared": [], "database": [20261129, {}, {}, {}, [], [], {}, [], [], []]},
], ids=["not-an-object", "null", "a-string", "empty-record", "unknown-class", "wrong-class", "dangling-reference",
        "extra-key", "bad-int-key", "wrong-element", "wrong-type"])
def test_a_well_signed_entry_of_the_wrong_shape_is_a_miss(document):
    with pytest.raises(Exception) as caught:
        cache.decode(_entry(document), STAMPS)
    assert not isinstance(caught.value, (SystemExit, KeyboardInterrupt))


def test_the_smallest_database_decodes():
    empty = ["2026.11.29", {}, {}, {}, [], [], {}, [], [], [], [[], [], {}, {}, [], [], []], {}]  # AcceleratorTables, jetson
    database = cache.decode(_entry({"shared": [], "database": empty}), STAMPS)
    assert type(database) is Database and database.torch_releases == () and database.version == "2026.11.29"


def test_records_stay_frozen_values():
    capability = ComputeCapability(8, 6)
    with pytest.raises(FrozenRecordError):
        capability.major = 9  # type: ignore[misc]  # the write a frozen record refuses, on purpose
    assert isinstance(FrozenRecordError(), AttributeError)
    assert capability == ComputeCapability.parse("8.6") and hash(capability) == hash((8, 6))
    assert sorted([ComputeCapability(9, 0), capability, ComputeCapability(7, 5)])[0] == ComputeCapability(7, 5)
    assert repr(Provenance(("a",))) == "Provenance(sources=('a',), unverified=None, unverified_on=())"
    assert Provenance(("a",)) == Provenance(sources=("a",), unverified=None) != Provenance(("b",))
