"""`@record`: a frozen value class, as `@dataclass(frozen=True)` makes one, at a fraction of the import cost.

Every solve defines the database model's classes before it can answer; `dataclass` writes and compiles
six to ten methods per class (about 1 ms each class), which made `envpin.compat.model` the costliest
module of a solve. A record compiles one `__init__` and shares the rest through `Record`:

- fields are the class's annotations, in order; a class attribute is the field's default, `NEW_DICT`
  a fresh empty dict per instance (dataclass's `field(default_factory=dict)`);
- instances are immutable (`FrozenRecordError`, an AttributeError, on assignment or deletion);
- `==` compares the fields of two instances of the same class, `hash` is the hash of the fields' tuple,
  `repr` is `Name(field=value, ...)`: the same as dataclass's;
- `_fields` lists the fields; `dataclasses.replace` and `fields` do not apply: `replace_fields` is the
  record's replace.

Type checkers read `record` as they read `dataclass(frozen=True)` (`dataclass_transform`): they see each
class's `__init__` and reject assignment to a field. At run time the marker does nothing, so it is imported
only for them (`typing_extensions`, which has it for Python 3.10 too, is not a dependency).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda decorated: decorated

_R = TypeVar("_R", bound="Record")


class _NewDict:
    def __repr__(self) -> str:
        return "NEW_DICT"


NEW_DICT: Any = _NewDict()


class FrozenRecordError(AttributeError):
    """An attempt to change a field of a frozen record."""


class Record:
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _values: Any = None  # attrgetter of every field: a tuple

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values(self) == self._values(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._values(self), strict=True))
        return f"{self.__class__.__qualname__}({shown})"


@dataclass_transform(frozen_default=True)
def record(cls: type[_R]) -> type[_R]:
    """Make `cls` (a subclass of Record) a frozen record of its annotated fields."""
    fields = tuple(cls.__dict__.get("__annotations__", {}))
    namespace: dict[str, Any] = {"NEW_DICT": NEW_DICT}
    parameters, values = [], []
    for name in fields:
        if name in cls.__dict__:
            default = cls.__dict__[name]
            if default is NEW_DICT:
                delattr(cls, name)
                parameters.append(f"{name}=NEW_DICT")
                values.append(f"{name}={{}} if {name} is NEW_DICT else {name}")
                continue
            namespace[f"_default_{name}"] = default
            parameters.append(f"{name}=_default_{name}")
        elif parameters and "=" in parameters[-1]:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with a default")
        else:
            parameters.append(name)
        values.append(f"{name}={name}")
    source = f"def __init__(self, {', '.join(parameters)}):\n    self.__dict__.update({', '.join(values)})\n"
    exec(source, namespace)  # noqa: S102 - the text is built above from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    # setattr: the class gets its methods here, after type checkers have read it (dataclass_transform above)
    setattr(cls, "__init__", init)  # noqa: B010
    setattr(cls, "__match_args__", fields)  # noqa: B010
    cls._fields = fields
    cls._values = staticmethod(_tuple_getter(fields))
    return cls


def _tuple_getter(fields: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    if len(fields) == 1:  # attrgetter of one name gives the value, not a 1-tuple
        single = attrgetter(fields[0])
        return lambda obj: (single(obj),)
    return attrgetter(*fields) if fields else (lambda obj: ())


def replace_fields(instance: _R, **changes: Any) -> _R:
    """A copy of a record with some fields changed (what `dataclasses.replace` does for a dataclass)."""
    values = dict(zip(instance._fields, instance._values(instance), strict=True))
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{instance.__class__.__name__} has no field {', '.join(sorted(unknown))}")
    values.update(changes)
    return instance.__class__(**values)
