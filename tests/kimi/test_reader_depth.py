"""The reader's cheap depth pre-check never lets a line nested too deep through.

`reader._may_be_deep` stands in front of the exact `values.depth_exceeds` walk: it may say "maybe"
for a line that is fine (the walk then says no), never "no" for a line nested beyond the limit.
"""

from __future__ import annotations

import io

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor import values
from transcript_doctor.stores.kimi.read.reader import LONG_LINE, ReadStats, _may_be_deep, read_records

LIMIT = values.MAX_DEPTH
HEADER = b'{"type":"metadata","protocol_version":"1.4","created_at":1}\n'


def _objects(depth: int, key: str = "") -> bytes:
    """The shortest object-only nesting of `depth` levels: `{"":{"":...{}...}}`."""
    text = "{}"
    for _ in range(depth - 1):
        text = '{"' + key + '":' + text + "}"
    return text.encode()


def _record(value: bytes) -> bytes:
    return b'{"type":"context.append_message","message":' + value + b"}\n"


def test_the_shortest_object_nesting_beyond_the_limit_is_caught() -> None:
    raw = _record(_objects(LIMIT + 1))
    assert values.depth_exceeds(orjson.loads(raw)) and _may_be_deep(raw)
    assert len(_objects(LIMIT)) < 5 * LIMIT  # the bound the pre-check uses is tight


def test_a_deep_line_is_a_problem_and_its_neighbours_are_records() -> None:
    deep = _record(_objects(LIMIT))  # the record adds one level: LIMIT + 1 in all
    fine = _record(_objects(LIMIT - 1))
    stats = ReadStats()
    items = list(read_records(io.BytesIO(HEADER + fine + deep + fine), stats))
    kinds = [getattr(item, "kind", "record") for item in items]
    assert kinds == ["record", "record", "corrupt", "record"]


NESTING = st.lists(st.sampled_from(["[", "{", "k", "pad"]), min_size=LIMIT - 5, max_size=LIMIT + 5)


def _nest(shape: list[str]) -> bytes:
    """A value nested one level per `[`/`{`/`k` entry (`k`: an object with a long key), with
    `pad` entries adding sibling text at that level."""
    inner = b"0"
    for step in reversed(shape):
        if step == "[":
            inner = b"[" + inner + b"]"
        elif step == "{":
            inner = b'{"":' + inner + b"}"
        elif step == "k":
            inner = b'{"key with [brackets] in it":' + inner + b"}"
        else:
            inner = b'["pad", ' + inner + b"]"
    return inner


@settings(max_examples=200, deadline=None)
@given(NESTING)
def test_the_pre_check_holds_for_every_line_nested_too_deep(shape: list[str]) -> None:
    raw = _record(_nest(shape))
    if values.depth_exceeds(orjson.loads(raw)):
        assert _may_be_deep(raw)


@settings(max_examples=100, deadline=None)
@given(st.integers(LIMIT - 3, LIMIT + 3), st.sampled_from(["", "k", "a key"]))
def test_the_pre_check_holds_for_object_chains(depth: int, key: str) -> None:
    raw = _record(_objects(depth, key))
    if values.depth_exceeds(orjson.loads(raw)):
        assert _may_be_deep(raw)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 * LIMIT), st.integers(0, 3 * LONG_LINE), st.booleans())
def test_the_pre_check_counts_braces_exactly_on_long_lines(braces: int, padding: int, bracket: bool) -> None:
    """On long lines the braces are found one by one: the verdict is still `count > limit`."""
    raw = b'{"output":"' + b"{" * braces + b"x" * padding + (b"[" if bracket else b"") + b'"}\n'
    assert _may_be_deep(raw) == (values.may_be_deep(raw) and (bracket or len(raw) >= 5 * LIMIT))


def test_the_read_says_whether_some_line_might_nest_too_deep() -> None:
    fine = _record(_objects(3))
    deep_enough_to_check = _record(b"[" + b"[]," * LIMIT + b"[]]")  # brackets enough, two levels deep
    for lines, expected in (([fine, fine], False), ([fine, deep_enough_to_check], True),
                            ([_record(_objects(LIMIT))], True)):
        stats = ReadStats()
        list(read_records(io.BytesIO(HEADER + b"".join(lines)), stats))
        assert stats.may_nest is expected


def test_without_the_depth_check_a_deep_line_parses() -> None:
    """The check a heal's replay of its own output may skip (when the original read found no line
    that might nest too deep) is the one that makes such a line a problem."""
    deep = _record(_objects(LIMIT))
    for check, kind in ((True, "corrupt"), (False, "record")):
        items = list(read_records(io.BytesIO(HEADER + deep), ReadStats(), depth_check=check))
        assert getattr(items[1], "kind", "record") == kind
