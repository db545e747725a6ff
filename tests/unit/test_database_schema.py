"""The shipped database is valid, every record cites a known source, and corrupt copies are clear errors."""

import pytest

from envpin.cli import main
from envpin.compat.loader import load_database, validate_database
from envpin.errors import DatabaseError


def test_shipped_database_is_valid():
    assert validate_database() == []


def test_version_is_a_date(database):
    assert len(database.version.split(".")) == 3


def test_every_cited_source_has_an_address(database):
    for source in database.sources.values():
        assert source.url or source.ref, source.id


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
    ],
)
def test_corrupt_database_is_one_clear_error(db_copy, name, old, new, message):
    _corrupt(db_copy, name, old, new)
    with pytest.raises(DatabaseError, match=message):
        load_database(db_copy)


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
