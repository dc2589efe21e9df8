"""Base classes of tdoc's value classes (findings, messages, options), and `replace` for them.

`@dataclass` writes each class's methods as source text and compiles it when its module is
imported: 2-4 M instructions a class, which a small `tdoc scan` paid for some thirty classes at
every start-up (issue 20). The classes on the scan path therefore write their `__init__` by hand
and list their fields in `__slots__`, in the order of the constructor's parameters; these bases
derive the rest from `__slots__`, as a dataclass would from its fields:

* `Value`: equality field by field with an object of the same class, `Class(field=value, ...)` as
  repr, unhashable (a dataclass with `eq=True`);
* `FrozenValue`: the same, hashable, and immutable once built (`frozen=True`): `__init__` sets
  the fields with `assign`, and a copy or a pickle is rebuilt through the constructor.

`tests/test_value_types.py` checks every subclass's constructor against its `__slots__`.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, TypeVar

V = TypeVar("V", bound="Value")


class Value:
    """Compared and shown by the fields named in the subclass's `__slots__`; unhashable (Python sets
    `__hash__` to None in a class that defines `__eq__` alone), as a mutable dataclass is."""

    __slots__: tuple[str, ...] = ()

    def fields(self) -> tuple[Any, ...]:
        """The field values, in `__slots__` (constructor) order."""
        return tuple([getattr(self, name) for name in self.__slots__])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self.fields() == other.fields()
        return NotImplemented

    def __repr__(self) -> str:
        shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in self.__slots__])
        return f"{self.__class__.__qualname__}({shown})"


class FrozenValue(Value):
    """A `Value` that cannot change once built: hashable, copied and pickled by its constructor."""

    __slots__: tuple[str, ...] = ()

    def assign(self, *values: Any) -> None:
        """Set the fields, in `__slots__` order (for `__init__` only)."""
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:
        return hash(self.fields())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, self.fields())


def replace(obj: V, **changes: Any) -> V:
    """A new `obj` with the fields in `changes` set, the others as they are (`dataclasses.replace`)."""
    unknown = changes.keys() - set(obj.__slots__)
    if unknown:
        raise TypeError(f"{obj.__class__.__qualname__} has no field {sorted(unknown)[0]!r}")
    return obj.__class__(*[changes[name] if name in changes else getattr(obj, name) for name in obj.__slots__])
