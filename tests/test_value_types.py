"""The value classes written without @dataclass behave as the dataclasses they replaced.

`value_types.Value` and `FrozenValue` derive equality, repr, hashing, immutability, copying,
pickling and `replace` from a class's `__slots__`, taken to be its constructor's parameters in
order; every subclass in the package is checked for that, so a field added to `__slots__` but not
to `__init__` (or in another order) fails here rather than in a report.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import pickle
import pkgutil
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

import transcript_doctor
from transcript_doctor.conversation import Repair
from transcript_doctor.core import ScanConfig
from transcript_doctor.model import Edit, Finding, Fix, Loc, Message, Part
from transcript_doctor.stores.base import HealOptions, Options
from transcript_doctor.stores.options import KimiOptions
from transcript_doctor.value_types import FrozenValue, Value, replace


def _value_classes() -> list[type[Value]]:
    for info in pkgutil.walk_packages(transcript_doctor.__path__, "transcript_doctor."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency (fleet's dask) is not installed
            continue
    found: list[type[Value]] = []
    pending: list[type[Value]] = [Value]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.__module__.startswith("transcript_doctor.") and sub is not FrozenValue:
                found.append(sub)
    return found


VALUE_CLASSES = _value_classes()


def test_the_package_has_value_classes() -> None:
    assert {Finding, Fix, Edit, Message, Options, KimiOptions, ScanConfig, Repair} <= set(VALUE_CLASSES)


@pytest.mark.parametrize("cls", VALUE_CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_the_constructor_takes_the_slots_in_order(cls: type[Value]) -> None:
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    assert tuple(params) == cls.__slots__
    assert "__dict__" not in dir(cls)  # every base has slots: no attribute outside the fields


# The dataclasses these classes were, as reference: what each operation gave then.
@dataclass
class RefLoc:
    line: int | None = None
    end_line: int | None = None
    row: int | str | None = None
    table: str | None = None


@dataclass(frozen=True)
class RefEdit:
    op: str
    line: int | None = None
    text: str | None = None
    table: str | None = None
    row: int | str | None = None
    set: dict[str, Any] | None = None


@dataclass
class RefPart:
    kind: str
    text: str = ""
    signed: bool = False
    source: RefLoc | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


def _shown(reference: object) -> str:
    return repr(reference).replace("Ref", "")


@pytest.mark.parametrize("args", [(), (3,), (3, 4, "r", "t"), (None, None, 7)])
def test_a_mutable_value_compares_and_shows_as_its_dataclass(args: tuple[Any, ...]) -> None:
    assert repr(Loc(*args)) == _shown(RefLoc(*args))
    assert Loc(*args) == Loc(*args) and Loc(*args) != Loc(99)  # near miss: one field differs
    assert Loc(*args) != RefLoc(*args)  # another class never equals, as with dataclasses
    with pytest.raises(TypeError):
        hash(Loc(*args))  # mutable: unhashable
    loc = Loc(*args)
    loc.line = 5
    assert loc.line == 5


def test_defaults_are_fresh_per_object_as_default_factories() -> None:
    a, b = Part("text"), Part("text")
    a.evidence["k"] = 1
    assert b.evidence == {} and Message("user").parts is not Message("user").parts
    assert repr(Part("text", "hi", source=Loc(1))) == _shown(RefPart("text", "hi", source=RefLoc(1)))


def test_a_frozen_value_is_hashable_immutable_and_shows_as_its_dataclass() -> None:
    edit = Edit("delete", line=2)
    assert repr(edit) == _shown(RefEdit("delete", line=2))
    assert hash(edit) == hash(Edit("delete", line=2)) and edit != Edit("delete", line=3)
    assert {edit, Edit("delete", line=2)} == {edit}
    with pytest.raises(FrozenInstanceError):
        edit.line = 3  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del edit.op  # type: ignore[misc]
    assert edit.line == 2


@pytest.mark.parametrize("value", [
    Edit("replace", line=4, text="x"), Fix("safe", "delete line 2", (Edit("delete", line=2),)), KimiOptions("v1"),
    Finding("W101", "vacuous-assistant", "warning", "m", "p", "kimi-wire", line=3, fix=Fix("safe", "s")),
    Options(settings=(KimiOptions("v2"),)), ScanConfig(select=["W"], options=Options(session="s")),
], ids=lambda v: type(v).__name__)  # fmt: skip
def test_copies_and_pickles_are_equal(value: Value) -> None:
    assert copy.copy(value) == value and copy.deepcopy(value) == value
    assert pickle.loads(pickle.dumps(value)) == value  # what worker processes send and receive


def test_replace_changes_the_named_fields_only() -> None:
    fix = Fix("safe", "delete line 2", (Edit("delete", line=2),))
    assert replace(fix, applicability="unsafe") == Fix("unsafe", "delete line 2", (Edit("delete", line=2),))
    assert fix.applicability == "safe"
    options = HealOptions(mode="output", output="out.jsonl")
    moved = replace(options, diff=True)
    assert moved.output == options.output and moved.diff and not options.diff
    with pytest.raises(TypeError, match="no field 'colour'"):
        replace(fix, colour="red")
