"""The Hermes reader's plain-row path is pinned to its checked path: same Row for any cells.

`row_from_values` takes `_plain_row` when every cell has a type that needs no repair; this test
feeds both paths rows of every column type SQLite or an export can hand over (text, integers at
and beyond the 64-bit range, floats with inf/nan, bytes, `\\x00json:` content, tool-call JSON good
and bad, lists, dicts, booleans) and requires equal results.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.hermes.rows import MESSAGE_COLUMNS, _checked_row, row_from_values

TEXTS = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["", " ", "\x00json:[]", "\x00json:{bad", "\x00x"]))
INTS = st.one_of(st.integers(-3, 3), st.sampled_from([2**63 - 1, -(2**63), 2**64, -(2**63) - 1]))
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1.5e9))
ANY = st.one_of(TEXTS, INTS, FLOATS, st.booleans(), st.binary(max_size=6), st.lists(st.integers(), max_size=2),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
CALLS = st.one_of(
    TEXTS,
    st.sampled_from([
        '[{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]',
        '[{"id": 5, "function": {"name": 3}}]', '{"id": "c"}', "[1, 2]", "not json", "[1e400]",
    ]),
)
# Mostly plain cells, with any column sometimes replaced by any value.
PLAIN = {
    "id": st.one_of(st.integers(1, 10**6), st.text(max_size=5)), "session_id": st.text(max_size=6),
    "role": st.sampled_from(["user", "assistant", "tool", "system"]), "tool_calls": CALLS,
    "timestamp": st.one_of(st.none(), FLOATS, INTS), "active": st.one_of(st.none(), INTS),
    "compacted": st.one_of(st.none(), INTS), "_compressed_summary": st.one_of(st.none(), INTS),
}


@st.composite
def cells(draw: st.DrawFn) -> tuple:
    out = []
    for name in MESSAGE_COLUMNS:
        strategy = PLAIN.get(name, st.one_of(TEXTS, INTS))
        out.append(draw(ANY) if draw(st.integers(0, 9)) == 0 else draw(strategy))
    return tuple(out)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@settings(max_examples=600, deadline=None)
@given(cells())
def test_plain_path_matches_checked_path(values: tuple) -> None:
    fast, checked = row_from_values(values), _checked_row(values)
    for name in fast.__slots__:  # type: ignore[attr-defined]
        assert _same(getattr(fast, name), getattr(checked, name)), name


def _row(**cells: object) -> tuple:
    return tuple(cells.get(name) for name in MESSAGE_COLUMNS)


def test_ordinary_rows_take_the_plain_path_and_match() -> None:
    from transcript_doctor.stores.hermes.rows import _plain_row

    rows = [
        _row(id=1, session_id="s", role="user", content="run the build", timestamp=1.5e9, active=1),
        _row(id=2, session_id="s", role="assistant", content="", finish_reason="tool_calls", timestamp=1.5e9,
             tool_calls='[{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]'),
        _row(id=3, session_id="s", role="tool", content='{"output": "ok"}', tool_call_id="c1", tool_name="terminal",
             timestamp=1.5e9, active=0, compacted=1, token_count=12, api_content=""),
    ]
    for values in rows:
        fast = _plain_row(values)
        assert fast is not None
        assert fast == _checked_row(values)


def test_rows_that_need_repair_leave_the_plain_path() -> None:
    from transcript_doctor.stores.hermes.rows import _plain_row

    needing = [
        _row(id=1, session_id="s", role="user", content="\x00json:[1]"),  # encoded content
        _row(id=1, session_id="s", role="user", timestamp=float("inf")),
        _row(id=2**64, session_id="s", role="user"),
        _row(id=1, session_id="s", role="assistant", tool_calls="not json"),
    ]
    for values in needing:
        assert _plain_row(values) is None
        assert row_from_values(values) == _checked_row(values)


@given(st.text(alphabet=st.sampled_from([" ", "\t", "\u3000", "\x1c", "a", "[", "S", "\n"]), max_size=8),
       st.sampled_from(["[S", "a", ("[S", "a "), ""]))
def test_head_startswith_is_lstrip_startswith(text: str, prefix: str | tuple[str, ...]) -> None:
    from transcript_doctor.stores.hermes.content import head_startswith

    assert head_startswith(text, prefix) == text.lstrip().startswith(prefix)
