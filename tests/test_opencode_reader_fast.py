"""The OpenCode reader's inline paths are pinned to the general ones.

`_row_data` (the inline orjson parse of a `data` cell, and the row's id test) must accept exactly
the rows `_decode_row` accepts, with the same value, and refuse the rest for the same reason; `_part` must build the `OcPart` the dataclass builds;
`message_evidence`'s one pass over the parts must agree with `finish_reason` and the activity tests.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.model import Loc
from transcript_doctor.stores.opencode import completion
from transcript_doctor.stores.opencode.reader import OcPart, _decode_row, _part, _row_data

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=12,
)
SPECIAL = st.sampled_from([
    b'{"type": "text", "text": "\\ud800"}',  # a lone surrogate: orjson refuses, JSON.parse reads it
    b'{"a": 1e400}', b'{"a": NaN}', b"[1, 2]", b'"text"', b"{bad", b"\xff\xfe{}", b"", b"null",
    b"{" + b'"k": [' * 250 + b"]" * 250 + b"}",  # deeper than the reader-boundary rule allows
    b'{"deep": ' + b"[" * 150 + b"]" * 150 + b"}",  # long but within the limit
])
CELLS = st.one_of(
    JSON_VALUES.map(lambda v: json.dumps(v).encode()), SPECIAL, st.binary(max_size=8), st.none(),
    JSON_VALUES.map(json.dumps), st.integers(), SPECIAL.map(memoryview),
)


@settings(max_examples=500, deadline=None)
@given(CELLS, st.sampled_from(["prt_1", 7, None]))
def test_inline_parse_accepts_what_the_general_path_accepts(raw: object, rid: object) -> None:
    value, problem = _decode_row(raw)
    if value is None:
        assert _row_data(raw, rid) == (None, problem)
    elif not isinstance(rid, str):
        assert _row_data(raw, rid) == (None, "id is not text")
    else:
        assert _row_data(raw, rid) == (value, None)


def test_inline_part_equals_the_dataclass_part() -> None:
    data = {"type": "tool", "id": "prt_1"}
    loc = Loc(row="prt_1", table="part")
    assert _part("prt_1", "msg_1", data, loc, "tool") == OcPart("prt_1", "msg_1", data, loc)
    untyped = {"type": 7}
    assert _part("p", "m", untyped, loc, "") == OcPart("p", "m", untyped, loc)


PART = st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["text", "tool", "reasoning", "step-finish", "step-start", 3]),
    "reason": st.one_of(st.none(), st.sampled_from(["stop", " ", "", "  tool-calls ", "\u00a0"]), st.integers()),
})
INFO = st.fixed_dictionaries({}, optional={
    "finish": st.one_of(st.none(), st.sampled_from(["stop", " ", "", " length "]), st.integers()),
    "cost": st.one_of(st.none(), st.floats(), st.integers(), st.booleans()),
    "tokens": st.fixed_dictionaries({}, optional={"input": st.one_of(st.integers(), st.floats(), st.booleans()),
                                                  "cache": st.fixed_dictionaries({}, optional={"read": st.integers()})}),
})


@settings(max_examples=400, deadline=None)
@given(INFO, st.lists(PART, max_size=5))
def test_one_pass_evidence_matches_the_separate_tests(info: dict, parts: list[dict]) -> None:
    ev = completion.message_evidence(info, parts)
    assert ev.finish == completion.finish_reason(info, parts)
    assert ev.tool_activity == any(p.get("type") == "tool" for p in parts)
    assert ev.reasoning_activity == any(p.get("type") == "reasoning" for p in parts)
    assert ev.cost == completion.known_number(info.get("cost"))
    assert ev.turns == 1
