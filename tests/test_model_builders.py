"""`model.make_*` build what the constructors build.

The readers' hot paths build locations, parts, calls and messages through `make_loc`, `make_part`,
`make_call` and `make_message` (no `__init__` call). For any fields given, each must give an object
equal to its class's constructor's, of the same class, with every slot set; a class that gains a
field must gain it in its builder too (the slot comparison fails otherwise).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.model import Loc, Message, Part, ToolCall, make_call, make_loc, make_message, make_part

MAYBE_INT = st.one_of(st.none(), st.integers(-3, 3))
TEXT = st.text(max_size=4)
EVIDENCE = st.dictionaries(TEXT, st.one_of(TEXT, MAYBE_INT), max_size=2)
LOCS = st.builds(Loc, MAYBE_INT, MAYBE_INT, st.one_of(MAYBE_INT, TEXT), st.one_of(st.none(), TEXT))
PARTS = st.builds(Part, TEXT, TEXT, st.booleans(), st.one_of(st.none(), LOCS), EVIDENCE)
CALLS = st.builds(ToolCall, TEXT, TEXT, st.one_of(st.none(), TEXT), st.one_of(st.none(), TEXT))


def _same(built: Any, constructed: Any) -> None:
    assert built.__class__ is constructed.__class__
    assert [getattr(built, name) for name in built.__slots__] == [getattr(constructed, n) for n in constructed.__slots__]
    assert built == constructed


@settings(max_examples=200, deadline=None)
@given(MAYBE_INT, MAYBE_INT, st.one_of(MAYBE_INT, TEXT), st.one_of(st.none(), TEXT))
def test_make_loc(line: Any, end_line: Any, row: Any, table: Any) -> None:
    _same(make_loc(line, end_line, row, table), Loc(line, end_line, row, table))


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT, st.booleans(), st.one_of(st.none(), LOCS), EVIDENCE)
def test_make_part(kind: str, text: str, signed: bool, source: Any, evidence: dict[str, Any]) -> None:
    _same(make_part(kind, text, signed, source, evidence), Part(kind, text, signed, source, evidence))


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT, st.one_of(st.none(), TEXT), st.one_of(st.none(), TEXT))
def test_make_call(call_id: str, name: str, arguments: Any, state: Any) -> None:
    _same(make_call(call_id, name, arguments, state), ToolCall(call_id, name, arguments, state))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["user", "assistant", "tool"]), st.lists(PARTS, max_size=2), st.lists(CALLS, max_size=2),
       st.one_of(st.none(), TEXT), st.booleans(), LOCS, MAYBE_INT, EVIDENCE, EVIDENCE)
def test_make_message(role: str, parts: list[Part], calls: list[ToolCall], call_id: Any, is_error: bool, loc: Loc,
                      position: Any, extra: dict[str, Any], evidence: dict[str, Any]) -> None:
    _same(make_message(role, parts, calls, call_id, is_error, loc, position, extra, evidence),
          Message(role, parts, calls, call_id, is_error, loc, position, extra, evidence))


def test_builders_cover_every_slot() -> None:
    """Each builder takes one argument per slot, in slot order (as the constructors do)."""
    import inspect

    for builder, cls in ((make_loc, Loc), (make_part, Part), (make_call, ToolCall), (make_message, Message)):
        assert tuple(inspect.signature(builder).parameters) == cls.__slots__
