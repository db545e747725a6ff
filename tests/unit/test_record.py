"""envpin.base.record: a record's __init__ binds its arguments in Python until it has been called COMPILE_AFTER
times, then compiles; both must make the same value and refuse the same calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from envpin.base import record as record_module
from envpin.base.record import NEW_DICT, Record, field, record


def _made() -> Any:
    @record
    class Sample(Record):
        name: str
        count: int = 1
        tags: tuple[str, ...] = ()
        extra: Mapping[str, str] = NEW_DICT
        made: list[int] = field(default_factory=list, repr=False)

    return Sample


CALLS: list[tuple[tuple[tuple[Any, ...], dict[str, Any]], str]] = [((("a",), {}), "Sample(name='a', count=1, tags=(), extra={})"),
         ((("a", 2), {"extra": {"k": "v"}}), "Sample(name='a', count=2, tags=(), extra={'k': 'v'})"),
         (((), {"tags": ("x",), "name": "b"}), "Sample(name='b', count=1, tags=('x',), extra={})")]


@pytest.mark.parametrize("compiled", [False, True], ids=["bound", "compiled"])
def test_bound_and_compiled_init_make_the_same_values(monkeypatch, compiled):
    monkeypatch.setattr(record_module, "COMPILE_AFTER", 1 if compiled else 10**9)
    sample = _made()
    for (args, kwargs), shown in CALLS:
        value = sample(*args, **kwargs)
        assert repr(value).rpartition(".")[2] == shown and list(vars(value)) == list(sample._fields)
    first, second = sample("a"), sample("a")
    assert first == second and first.extra is not second.extra and first.made is not second.made  # fresh defaults
    bad: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {}), (("a", 1, (), {}, [], "one too many"), {}), (("a",), {"name": "b"}), (("a",), {"colour": "red"})]
    for args, kwargs in bad:
        with pytest.raises(TypeError):
            sample(*args, **kwargs)


def test_a_class_compiles_its_init_after_enough_calls():
    sample = _made()
    first = vars(sample)["__init__"]
    for _ in range(record_module.COMPILE_AFTER):
        sample("a")
    assert vars(sample)["__init__"] is not first and sample("a") == sample(name="a")


def test_every_frozen_value_of_envpin_is_a_record():
    """docs/design.md's rule: one mechanism for frozen values. A `@dataclass(frozen=True)` anywhere in envpin/ is a
    second one (a mutable `@dataclass`, a parser's running state, stays allowed)."""
    import ast  # noqa: PLC0415 - this test only
    from pathlib import Path  # noqa: PLC0415 - as above

    found = []
    for path in sorted((Path(__file__).resolve().parents[2] / "envpin").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("dataclass") and any(
                        k.arg == "frozen" and ast.unparse(k.value) == "True" for k in decorator.keywords):
                    found.append(f"{path.name}:{node.name}")
    assert not found, found
