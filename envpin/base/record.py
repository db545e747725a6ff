"""`@record`: a frozen value class, as `@dataclass(frozen=True)` makes one, at a fraction of the import cost.

Every solve defines the classes of the database model, the facts, the target, the builds and the plan before it
can answer; `dataclass` writes and compiles six to ten methods per class (about 1 ms each class) and imports
`inspect` (with `ast`, `dis` and `tokenize`), which made class definitions the costliest part of a solve. A
record compiles one `__init__` and shares the rest through `Record`:

- fields are the class's annotations, in order, after those of a record it extends; a class attribute is the
  field's default, `NEW_DICT` a fresh empty dict per instance, and `field(...)` gives a default factory or
  leaves a field out of `repr` or of `==` and `hash` (as dataclass's `field` does);
- instances are immutable (`FrozenRecordError`, an AttributeError, on assignment or deletion);
- `==` compares the compared fields of two instances of the same class, `hash` is the hash of their tuple,
  `repr` is `Name(field=value, ...)`: the same as dataclass's; `@record(eq=False)` keeps identity instead;
- `_fields` lists the fields; `replace(value, **changes)` is `dataclasses.replace`.

Type checkers read `record` as they read `dataclass(frozen=True)` (`dataclass_transform`): they see each
class's `__init__` and reject assignment to a field. At run time the marker does nothing, so it is imported
only for them (`typing_extensions`, which has it for Python 3.10 too, is not a dependency).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda decorated: decorated

_R = TypeVar("_R", bound="Record")
COMPILE_AFTER = 64  # calls of a record class's __init__ before it is compiled (see _make_record)
_T = TypeVar("_T")


class _NewDict:
    def __repr__(self) -> str:
        return "NEW_DICT"


NEW_DICT: Any = _NewDict()


class FrozenRecordError(AttributeError):
    """An attempt to change a field of a frozen record."""


class Record:
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _options: Mapping[str, Field] = {}  # noqa: RUF012 - replaced whole per class, never changed
    _shown: tuple[str, ...] = ()  # the fields repr shows
    _values: Any = None  # attrgetter of the compared fields: a tuple

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
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{self.__class__.__qualname__}({shown})"


class Field:
    """A field's options, as `field(...)` gives them."""

    __slots__ = ("default", "factory", "shown", "compared")

    def __init__(self, default: Any, factory: Callable[[], Any] | None, shown: bool, compared: bool) -> None:
        self.default, self.factory, self.shown, self.compared = default, factory, shown, compared


_NO_DEFAULT: Any = Field(None, None, True, True)  # the sentinel "no default given"


def field(*, default: Any = _NO_DEFAULT, default_factory: Callable[[], Any] | None = None, repr: bool = True,  # noqa: A002 - dataclass's names
          compare: bool = True) -> Any:
    """A field with options: `default_factory` makes each instance's default, `repr=False` leaves the field out
    of `repr`, `compare=False` out of `==` and `hash`."""
    return Field(default, default_factory, repr, compare)


@overload
def record(cls: type[_R], /) -> type[_R]: ...
@overload
def record(*, eq: bool = True) -> Callable[[type[_R]], type[_R]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[_R] | None = None, /, *, eq: bool = True) -> Any:
    """Make `cls` (a subclass of Record) a frozen record of its annotated fields; `eq=False`: instances are
    equal only to themselves (dataclass's `eq=False`)."""
    if cls is None:
        return lambda decorated: _make_record(decorated, eq)
    return _make_record(cls, eq)


def _make_record(cls: type[_R], eq: bool) -> type[_R]:
    inherited: dict[str, Field] = dict(getattr(cls, "_options", {}))
    options = dict(inherited)
    for name in cls.__dict__.get("__annotations__", {}):
        given = cls.__dict__.get(name, _NO_DEFAULT)
        if given is _NO_DEFAULT:
            option = Field(_NO_DEFAULT, None, True, True)
        elif isinstance(given, Field):
            option = given
        elif given is NEW_DICT:
            option = Field(_NO_DEFAULT, dict, True, True)
        else:
            option = Field(given, None, True, True)
        if name in cls.__dict__ and (isinstance(given, Field) or given is NEW_DICT):
            delattr(cls, name)  # a marker, not a value: reading it off the class must not find it
        options.pop(name, None)
        options[name] = option
    fields = tuple(options)
    namespace: dict[str, Any] = {"_NO_DEFAULT": _NO_DEFAULT}
    parameters, values = [], []
    for name, option in options.items():
        if option.factory is not None:
            namespace[f"_factory_{name}"] = option.factory
            parameters.append(f"{name}=_NO_DEFAULT")
            values.append(f"{name}=_factory_{name}() if {name} is _NO_DEFAULT else {name}")
            continue
        if option.default is not _NO_DEFAULT:
            namespace[f"_default_{name}"] = option.default
            parameters.append(f"{name}=_default_{name}")
        elif parameters and "=" in parameters[-1]:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with a default")
        else:
            parameters.append(name)
        values.append(f"{name}={name}")
    source = f"def __init__(self, {', '.join(parameters)}):\n    self.__dict__.update({', '.join(values)})\n"

    def compile_init() -> Callable[..., None]:
        exec(source, namespace)  # noqa: S102 - the text is built above from the class's own field names
        init = namespace["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        setattr(cls, "__init__", init)  # noqa: B010
        return init

    # Compiling is most of what a record costs to define (~0.1 ms a class: more than a solve's own work), and a
    # run builds only some of its classes, most of them a few times (the cache makes the database's without calling
    # __init__): a class binds its arguments in Python, and compiles its __init__ only once it has been called
    # COMPILE_AFTER times (a fleet's builds and verdicts).
    defaults = {name: option for name, option in options.items() if option.factory is not None
                or option.default is not _NO_DEFAULT}
    calls = 0

    def first_init(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls >= COMPILE_AFTER:
            compile_init()(self, *args, **kwargs)
            return
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments but {len(args)} were given")
        values = dict(zip(fields, args, strict=False))  # the fields not given positionally come below
        for name, value in kwargs.items():
            if name not in options or name in values:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        if kwargs or len(values) < len(fields):
            for name in fields:
                if name in values:
                    continue
                option = defaults.get(name)
                if option is None:
                    raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
                values[name] = option.factory() if option.factory is not None else option.default
            values = {name: values[name] for name in fields}  # in field order, as the compiled one stores them
        self.__dict__.update(values)

    first_init.__qualname__ = f"{cls.__qualname__}.__init__"
    # setattr: the class gets its methods here, after type checkers have read it (dataclass_transform above)
    setattr(cls, "__init__", first_init)  # noqa: B010
    setattr(cls, "__match_args__", fields)  # noqa: B010
    cls._options = options
    cls._fields = fields
    cls._values = staticmethod(_tuple_getter(tuple(n for n in fields if options[n].compared)))
    cls._shown = tuple(n for n in fields if options[n].shown)
    if not eq:
        setattr(cls, "__eq__", object.__eq__)  # noqa: B010
        setattr(cls, "__hash__", object.__hash__)  # noqa: B010
    return cls


def replace(value: _T, /, **changes: Any) -> _T:
    """A copy of the frozen value `value` with the fields named changed: `dataclasses.replace`, which it calls
    for a dataclass, so that one `replace` serves both kinds of frozen value."""
    if not isinstance(value, Record):
        import dataclasses  # noqa: PLC0415 - dataclasses (with inspect) stays off the solve path

        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    unknown = set(changes) - set(value._fields)
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field {sorted(unknown)[0]!r}")
    current = {name: getattr(value, name) for name in value._fields}
    return type(value)(**(current | changes))


def _tuple_getter(fields: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    if len(fields) == 1:  # attrgetter of one name gives the value, not a 1-tuple
        single = attrgetter(fields[0])
        return lambda obj: (single(obj),)
    return attrgetter(*fields) if fields else (lambda obj: ())
