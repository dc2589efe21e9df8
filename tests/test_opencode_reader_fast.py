"""The OpenCode reader's inline paths are pinned to the general ones.

`_row_data` (the inline orjson parse of a `data` cell, and the row's id test) must accept exactly
the rows `_decode_row` accepts, with the same value, and refuse the rest for the same reason; the
reader's row loops must read a database as `_row_data` reads its rows one by one, and build the
`OcMessage`s and `OcPart`s the dataclasses build; `message_evidence`'s one pass over the parts must
agree with `finish_reason` and the activity tests.
"""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from transcript_doctor.model import Loc
from transcript_doctor.stores.opencode import completion
from transcript_doctor.stores.opencode.completion import Evidence
from transcript_doctor.stores.opencode.reader import OcMessage, OcPart, _decode_row, _row_data, _text

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


COUNT = st.one_of(st.integers(-(2**70), 2**70), st.floats(), st.booleans(), st.none(), st.text(max_size=2))
TOKENS = st.one_of(st.none(), st.integers(), st.fixed_dictionaries({}, optional={
    "input": COUNT, "output": COUNT, "reasoning": COUNT,
    "cache": st.one_of(st.none(), st.fixed_dictionaries({}, optional={"read": COUNT, "write": COUNT})),
}))


@settings(max_examples=400, deadline=None)
@given(TOKENS, st.lists(PART, max_size=3))
@example({"input": 1, "output": 2, "reasoning": 0, "cache": {"read": 3, "write": True}}, [])  # one bool among ints
def test_token_counts_are_the_known_number_of_each_field(tokens: object, parts: list[dict]) -> None:
    """`_tokens`'s all-ints short cut gives what `known_number` gives field by field, and the
    evidence built without the named tuple's `__new__` equals the one its constructor builds
    from the separate definitions of each field."""
    info = {} if tokens is None else {"tokens": tokens}
    cache = tokens.get("cache") if isinstance(tokens, dict) else None
    fields = [(tokens if isinstance(tokens, dict) else {}).get(k) for k in ("input", "output", "reasoning")]
    fields += [(cache if isinstance(cache, dict) else {}).get(k) for k in ("read", "write")]
    expected = tuple(completion.known_number(v) for v in fields)
    got = completion._tokens(info)
    assert got == expected and all(a is b for a, b in zip(got, expected))
    ev = completion.message_evidence(info, parts)
    assert type(ev) is Evidence
    assert ev == Evidence(expected, None, completion.finish_reason(info, parts),
                          any(p.get("type") == "tool" for p in parts), any(p.get("type") == "reasoning" for p in parts), 1)


ROW_IDS = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.none())
DEEP = b'{"k": ' + b"[" * 250 + b"]" * 250 + b"}"  # valid JSON nested deeper than the reader-boundary rule allows
MESSAGE_CELLS = st.one_of(st.just(b'{"role": "user"}'), st.just(DEEP), CELLS)  # mostly readable: their parts are read
ROW_CELLS = st.one_of(st.just(DEEP), SPECIAL, CELLS)  # the special shapes (deep, surrogates, refused JSON) often


def _reference(conn: object) -> tuple[list[tuple], list[tuple]]:
    """What `read_session` must give for session "s": the rows its queries select (SQLite orders
    and casts them), read with `_row_data` (the general path) one by one."""
    readable, problems, parts = {}, [], {}
    for mid, raw in conn.execute("SELECT id, CAST(data AS BLOB) FROM message ORDER BY time_created, id"):
        info, problem = _row_data(raw, mid)
        if info is None:
            problems.append(("message", _text(mid), problem))
            continue
        readable[mid] = info
    for pid, mid, raw in conn.execute("SELECT id, message_id, CAST(data AS BLOB) FROM part ORDER BY message_id, id"):
        if mid not in readable:
            continue
        data, problem = _row_data(raw, pid)
        if data is None:
            problems.append(("part", _text(pid), problem))
            continue
        parts.setdefault(mid, []).append((pid, data))
    messages = [(mid, info, parts.get(mid, [])) for mid, info in readable.items()]
    return messages, problems


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3", 7, b"m2"]), st.integers(0, 3), MESSAGE_CELLS), max_size=4,
                unique_by=lambda r: r[0]),
       st.lists(st.tuples(ROW_IDS, st.sampled_from(["m1", "m2", "m3"]), ROW_CELLS), max_size=6))
def test_the_inline_read_loops_read_as_row_data_reads(rows_m: list[tuple], rows_p: list[tuple]) -> None:
    import sqlite3

    from transcript_doctor.stores.opencode.reader import DbReader, SessionRow

    rows_p = list({(r[0], r[1]): r for r in rows_p if r[0] is not None}.values())  # (id, message) unique, ids not NULL
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE message (id, session_id, time_created, data)")
    conn.execute("CREATE TABLE part (id, message_id, session_id, data)")
    conn.executemany("INSERT INTO message VALUES (?, 's', ?, ?)", [(m, o, _cell(raw)) for m, o, raw in rows_m])
    conn.executemany("INSERT INTO part VALUES (?, ?, 's', ?)", [(p, m, _cell(raw)) for p, m, raw in rows_p])
    session = DbReader(conn, ":memory:").read_session(SessionRow("s", None, None, None))
    got_messages = [(m.id, m.info, [(p.id, p.data) for p in m.parts]) for m in session.messages]
    for m in session.messages:  # each message and part the one the dataclass builds (`role`/`type` rules included)
        assert m == OcMessage(m.id, "s", m.info, m.parts, Loc(row=m.id, table="message"))
        assert all(p == OcPart(p.id, m.id, p.data, Loc(row=p.id, table="part")) for p in m.parts)
    got_problems = [(p.table, p.row, p.detail) for p in session.problems]
    want_messages, want_problems = _reference(conn)
    assert got_messages == want_messages
    assert sorted(got_problems, key=repr) == sorted(want_problems, key=repr)


def _cell(raw: object) -> object:
    if isinstance(raw, int) and not -(2**63) <= raw < 2**63:
        return str(raw)  # SQLite stores 64-bit integers; a larger one is stored as its text here
    return bytes(raw) if isinstance(raw, memoryview) else raw


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m", "M", "n"]), st.integers(0, 2)), max_size=4),
       st.lists(st.tuples(st.sampled_from(["p", "P", "q"]), st.sampled_from(["m", "M", "n"])), max_size=6),
       st.sampled_from(["", " COLLATE NOCASE", " COLLATE RTRIM"]))
@example([("m", 0), ("M", 0)], [("p", "m"), ("P", "M"), ("p", "m")], " COLLATE NOCASE")  # m's parts not adjacent
def test_each_part_joins_the_message_its_id_names_whatever_the_collation(rows_m: list[tuple], rows_p: list[tuple],
                                                                          collate: str) -> None:
    """The part loop switches message when the row's message_id changes: under a collation that
    orders rows unlike Python (or with repeated ids) a message's parts may come apart, and each
    must still join the message its message_id names exactly (the last of a repeated id), in the
    order the query gives them."""
    import sqlite3

    from transcript_doctor.stores.opencode.reader import DbReader, SessionRow

    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE message (id TEXT{collate}, session_id, time_created, data)")
    conn.execute(f"CREATE TABLE part (id TEXT{collate}, message_id TEXT{collate}, session_id, data)")
    conn.executemany("INSERT INTO message VALUES (?, 's', ?, '{\"role\": \"user\"}')", rows_m)
    conn.executemany("INSERT INTO part VALUES (?, ?, 's', '{\"type\": \"text\", \"text\": \"x\"}')", rows_p)
    session = DbReader(conn, ":memory:").read_session(SessionRow("s", None, None, None))
    last = {m.id: m for m in session.messages}
    expected: dict[str, list[str]] = {}
    query = ("SELECT id, message_id FROM part WHERE message_id IN (SELECT id FROM message WHERE session_id = 's') "
             "ORDER BY message_id, id")
    for pid, mid in conn.execute(query):
        if mid in last:
            expected.setdefault(mid, []).append(pid)
    for msg in session.messages:
        assert [p.id for p in msg.parts] == (expected.get(msg.id, []) if last[msg.id] is msg else [])
        assert all(p.message_id == msg.id for p in msg.parts)


@given(st.one_of(st.integers(-(2**70), 2**70), st.floats(), st.booleans(), st.none(), st.text(max_size=2),
                 st.lists(st.integers(), max_size=1)))
def test_known_number_takes_exactly_the_finite_numbers(value: object) -> None:
    """The int fast path of `known_number` agrees with its definition: a finite int or float, never a bool."""
    import math

    finite = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    assert completion.known_number(value) == (value if finite else None)
    assert completion.known_number(value) is (value if finite else None)
