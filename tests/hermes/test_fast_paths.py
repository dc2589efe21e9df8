"""The Hermes scan's short cuts, each pinned to the general code it stands in for.

* `visible_text_for_sentinel_check` returns a string as it is (the flattening of a string);
* `starts_with_sentinel` rules a text out on its first visible character;
* `find_markers` rules the prefix markers out with one `startswith`;
* `rows_from_batch` takes the plain path per cached signature, as `row_from_values` does;
* `_plain_tool_calls` keeps a parse that `_parse_tool_calls` reports nothing about, and sends the
  rest down the checked path;
* `to_message` takes string content without `content_parts`, and it and `tool_call` build their
  objects slot by slot (compared with the constructors' objects);
* `build` computes each row's content once and builds the message dict only when asked
  (`Entry.wire`), with the dropped rows in the order the two-phase build gave them.

Each is compared with a reference written out here (the general helpers, or the code the fast path
replaced) on generated inputs and on labelled near misses.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_hermes_reader_fast import cells as reader_cells
from transcript_doctor.encode import dumps
from transcript_doctor.model import UNPLACED, Message, Part, ToolCall
from transcript_doctor.stores.hermes.content import (
    EMPTY_RESPONSE_SENTINEL,
    LEAKED_SENTINEL_PREFIX_RE,
    flatten_message_text,
    head_startswith,
    starts_with_sentinel,
    visible_text_for_sentinel_check,
)
from transcript_doctor.stores.hermes.messages import (
    content_parts,
    hermes_dict,
    is_placeholder_text,
    reasoning_parts,
    to_message,
    tool_call,
    wire_content,
)
from transcript_doctor.stores.hermes.resume import HARNESS_PREFIXES, REQUEST_OFFSET, Dropped, build
from transcript_doctor.stores.hermes.rows import (
    _NEEDS_REPAIR,
    MESSAGE_COLUMNS,
    Row,
    _parse_tool_calls,
    _plain_tool_calls,
    row_from_values,
    rows_from_batch,
)
from transcript_doctor.stores.hermes.scaffolding import _ANYWHERE, _PREFIXED, MARKERS, find_markers

SENTINELISH = st.text(alphabet=st.sampled_from([" ", "\t", "\u3000", "(", ")", "e", "E", "m", "p", "t", "y", "x", "<"]),
                      max_size=12)
MARKERISH = st.one_of(
    st.text(max_size=8),
    st.builds(lambda a, m, b: a + m + b, st.sampled_from(["", " ", "\n ", "ok "]),
              st.sampled_from([m.text for m in MARKERS] + ["[Sys", "<mem", "--- END"]), st.text(max_size=4)),
)


# --------------------------------------------------------------------------- content tests


@given(st.one_of(SENTINELISH, st.text(max_size=10)))
def test_visible_text_of_a_string_is_the_string_flattened(text: str) -> None:
    assert visible_text_for_sentinel_check(text) == flatten_message_text(text) == text


def _reference_sentinel(visible: str, literal: bool) -> bool:
    head = visible.lstrip() if visible[:1].isspace() else visible
    if literal:
        return head.startswith(EMPTY_RESPONSE_SENTINEL)
    return LEAKED_SENTINEL_PREFIX_RE.match(head) is not None


@given(SENTINELISH, st.booleans())
def test_sentinel_prefix_test_matches_the_plain_regex_and_literal(text: str, literal: bool) -> None:
    assert starts_with_sentinel(text, literal=literal) is _reference_sentinel(text, literal)


@pytest.mark.parametrize(("text", "found"), [
    ("(empty)", True), ("  ( EMPTY ) again", True), ("\u3000(empty", True),
    ("empty", False), ("x(empty)", False), ("(emptyish", False), ("", False), ("((empty)", False),
])
def test_sentinel_prefix_labelled(text: str, found: bool) -> None:
    assert starts_with_sentinel(text) is found is _reference_sentinel(text, False)


def _reference_markers(text: str) -> list[tuple[Any, int]]:
    """`find_markers` as it was: every prefix marker tried one by one."""
    found: list[tuple[Any, int]] = []
    head_offset = len(text) - len(text.lstrip()) if text[:1].isspace() else 0
    for marker in _PREFIXED:
        if text.startswith(marker.text, head_offset):
            found.append((marker, head_offset))
    for first, group in _ANYWHERE.items():
        if first not in text:
            continue
        for marker in group:
            at = text.find(marker.text)
            if at >= 0:
                found.append((marker, at))
    return found


@given(MARKERISH)
def test_find_markers_matches_the_marker_by_marker_search(text: str) -> None:
    assert find_markers(text) == _reference_markers(text)


@pytest.mark.parametrize("text", [
    "[CONTEXT COMPACTION] summary", "  Operation interrupted", "ok [CONTEXT COMPACTION]", "[System: x",
    "(No response generated)", "no marker here", "",
])
def test_find_markers_labelled(text: str) -> None:
    assert find_markers(text) == _reference_markers(text)


# --------------------------------------------------------------------------- tool calls

CALL_VALUES = st.one_of(st.none(), st.text(max_size=3), st.integers(-2, 2), st.sampled_from([2**64, 1.5, True]),
                        st.lists(st.integers(), max_size=1))


@st.composite
def tool_calls_json(draw: st.DrawFn) -> str:
    import json

    def call() -> Any:
        if draw(st.integers(0, 6)) == 0:
            return draw(st.one_of(st.integers(), st.text(max_size=3), st.none()))
        item = {k: draw(CALL_VALUES) for k in ("id", "call_id", "type") if draw(st.booleans())}
        if draw(st.booleans()):
            fn = draw(st.one_of(st.none(), st.text(max_size=2)))
            item["function"] = fn if draw(st.integers(0, 3)) == 0 else {"name": draw(CALL_VALUES), "arguments": "{}"}
        return item

    if draw(st.integers(0, 8)) == 0:
        return draw(st.sampled_from(["", "not json", "{}", "[1e400]", "3"]))
    return json.dumps([call() for _ in range(draw(st.integers(0, 3)))])


@settings(max_examples=400, deadline=None)
@given(tool_calls_json())
def test_plain_tool_calls_match_the_checked_parse(raw: str) -> None:
    problems: list[str] = []
    checked = _parse_tool_calls(raw, problems)
    plain = _plain_tool_calls(raw)
    if problems:
        assert plain is _NEEDS_REPAIR
    else:
        assert plain == checked


# --------------------------------------------------------------------------- messages and build

TEXT = st.one_of(st.none(), st.sampled_from(["", " ", "Done.", "(empty)", "[terminal]", "<think>x</think>",
                                             "Tool was interrupted", HARNESS_PREFIXES[0] + " now", " hello  "]))
CONTENT = st.one_of(TEXT, st.sampled_from([
    '\x00json:[{"type": "text", "text": "hi"}, {"type": "thinking", "thinking": "t", "signature": "s"}]',
    '\x00json:{"type": "image_url"}', '\x00json:[" ", {"type": "text", "text": ""}]', "\x00json:[1, null]",
]))
CALLS = st.sampled_from([None, "", "[]", '[{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]',
                         '[{"id": "c2", "function": {"name": "t", "arguments": {"a": 1}}}, 7]', "bad"])


@st.composite
def rows(draw: st.DrawFn, count: int) -> list[Row]:
    out = []
    for i in range(count):
        cells = {
            "id": i + 1, "session_id": "s", "role": draw(st.sampled_from(["user", "assistant", "tool", "system"])),
            "content": draw(CONTENT), "tool_calls": draw(CALLS), "tool_call_id": draw(st.sampled_from([None, "c1", "c2"])),
            "active": draw(st.sampled_from([None, 1, 0])), "api_content": draw(st.one_of(st.none(), TEXT)),
            "reasoning": draw(TEXT), "reasoning_content": draw(TEXT), "finish_reason": draw(st.sampled_from([None, "stop"])),
            "reasoning_details": draw(st.sampled_from([None, '[{"signature": "x"}]', "junk"])),
            "timestamp": draw(st.sampled_from([None, 1.5e9])),
        }
        out.append(row_from_values(tuple(cells.get(c) for c in MESSAGE_COLUMNS)))
    return out


def _reference_message(row: Row, wire: dict[str, Any], position: int) -> Message:
    """`to_message` without its string short cut: every content through `content_parts`."""
    content = row.api_content if row.api_content is not None else wire["content"]
    parts = content_parts(content)
    if row.role == "assistant" and (row.reasoning_content or row.reasoning or row.reasoning_details is not None
                                    or row.codex_reasoning_items is not None):
        parts += reasoning_parts(row)
    extra: dict[str, Any] = {"row": row}
    if row.role == "tool":
        extra["placeholder"] = is_placeholder_text("".join(p.text for p in parts if p.kind == "text"))
    return Message(role=row.role, parts=parts, tool_calls=[tool_call(c) for c in row.tool_calls] if row.tool_calls else [],
                   tool_call_id=row.tool_call_id if row.role == "tool" else None, loc=UNPLACED, position=position, extra=extra)


@settings(max_examples=300, deadline=None)
@given(rows(1))
def test_to_message_matches_the_general_parts(one: list[Row]) -> None:
    row = one[0]
    wire = hermes_dict(row)
    assert wire["content"] == wire_content(row)
    assert to_message(row, wire_content(row), 3) == _reference_message(row, wire, 3)


def _reference_build(rows: list[Row], lineage: bool) -> tuple[list[tuple[Any, dict[str, Any], Message]], list[Dropped]]:
    """The two-phase build: every active row's dict first, then the lineage dedupe, then the harness."""
    dropped: list[Dropped] = []
    pairs = []
    for row in rows:
        if not row.active:
            dropped.append(Dropped(row, "inactive"))
        else:
            pairs.append((row, hermes_dict(row)))
    if lineage:
        kept, last_user = [], None
        for row, wire in pairs:
            if wire["role"] == "user":
                if last_user is not None and wire["content"] == last_user:
                    dropped.append(Dropped(row, "replayed-user"))
                    continue
                last_user = wire["content"]
            elif wire["role"] == "assistant" and (wire.get("content") or wire.get("tool_calls")):
                last_user = None
            kept.append((row, wire))
        pairs = kept
    entries: list[tuple[Any, dict[str, Any], Message]] = []
    skip_reply = False
    for row, wire in pairs:
        content = wire.get("content")
        if wire["role"] in ("user", "system") and isinstance(content, str) and head_startswith(content, HARNESS_PREFIXES):
            dropped.append(Dropped(row, "background-review-harness"))
            skip_reply = True
            continue
        if skip_reply and wire["role"] == "assistant":
            dropped.append(Dropped(row, "harness-reply"))
            skip_reply = False
            continue
        skip_reply = False
        entries.append((row.id, wire, _reference_message(row, wire, REQUEST_OFFSET + len(entries))))
    return entries, dropped


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 12).flatmap(rows), st.booleans())
def test_build_matches_the_two_phase_build(session: list[Row], lineage: bool) -> None:
    entries, dropped = build(session, lineage=lineage)
    expected, expected_dropped = _reference_build(session, lineage)
    assert [(e.row.id, e.wire, e.message) for e in entries] == expected
    assert [(d.row.id, d.reason) for d in dropped] == [(d.row.id, d.reason) for d in expected_dropped]


def test_build_labelled_harness_and_replayed_user() -> None:
    def row(i: int, role: str, content: str, active: int = 1) -> Row:
        cells = {"id": i, "session_id": "s", "role": role, "content": content, "active": active}
        return row_from_values(tuple(cells.get(c) for c in MESSAGE_COLUMNS))

    session = [row(1, "user", "hi"), row(2, "assistant", "", 0), row(3, "user", "hi"),
               row(4, "user", HARNESS_PREFIXES[1]), row(5, "assistant", "saved"), row(6, "assistant", "ok")]
    entries, dropped = build(session, lineage=True)
    assert [e.row.id for e in entries] == [1, 6]
    assert [(d.row.id, d.reason) for d in dropped] == [
        (2, "inactive"), (3, "replayed-user"), (4, "background-review-harness"), (5, "harness-reply")]
    assert entries[0].wire == {"role": "user", "content": "hi"}
    assert entries[1].message.parts == [Part("text", "ok")]
    assert [e.message.position for e in entries] == [REQUEST_OFFSET, REQUEST_OFFSET + 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(reader_cells(), max_size=6))
def test_rows_from_batch_is_row_from_values_of_each(batch: list[tuple]) -> None:
    assert rows_from_batch(batch) == [row_from_values(c) for c in batch]


def test_rows_from_batch_near_misses_and_every_slot_filled() -> None:
    """The written-out cell checks send each near miss where `row_from_values` does, and a plain
    row is filled in every slot (an unfilled one would fail the comparison)."""
    plain = {"id": 1, "session_id": "s", "role": "assistant", "content": "ok", "timestamp": 1.5e9, "active": 1,
             "tool_calls": '[{"id": "c1", "function": {"name": "t", "arguments": "{}"}}]', "api_content": ""}
    misses: list[dict[str, Any]] = [
        {}, {"active": True}, {"id": 1.0}, {"id": 2**63}, {"id": True}, {"content": b"x"}, {"content": 5},
        {"content": "\x00json:[1]"}, {"api_content": "\x00json:{}"}, {"timestamp": float("inf")},
        {"timestamp": 2**64}, {"timestamp": "1"}, {"tool_calls": "not json"}, {"tool_calls": '[{"id": 5}]'},
        {"token_count": 1.5}, {"observed": b""}, {"compacted": "1"}, {"display_kind": 3}, {"role": None},
        {"session_id": 7}, {"reasoning_details": 2.5},
    ]
    batch = [tuple({**plain, **miss}.get(c) for c in MESSAGE_COLUMNS) for miss in misses]
    got = rows_from_batch(batch)
    assert got == [row_from_values(c) for c in batch]
    assert got[0].problems == () and got[0].line is None


def test_build_labelled_fencing_and_harness_shapes() -> None:
    def row(i: int, role: str, content: str, calls: str | None = None) -> Row:
        cells = {"id": i, "session_id": "s", "role": role, "content": content, "tool_calls": calls}
        return row_from_values(tuple(cells.get(c) for c in MESSAGE_COLUMNS))

    fenced = "<memory-context>recalled</memory-context>  hello "
    session = [row(1, "user", fenced), row(2, "assistant", " [terminal] ", '[{"id": "c"}]'),
               row(3, "user", "  \n" + HARNESS_PREFIXES[0]), row(4, "assistant", "reply"),
               row(5, "system", "\t" + HARNESS_PREFIXES[1]), row(6, "user", "next"),
               row(7, "assistant", "[System note: The following is recalled memory context, NOT new user input.\nok")]
    entries, dropped = build(session)
    expected, expected_dropped = _reference_build(session, False)
    assert [(e.row.id, e.wire, e.message) for e in entries] == expected
    assert [(d.row.id, d.reason) for d in dropped] == [(d.row.id, d.reason) for d in expected_dropped]
    assert entries[0].content == "hello" and entries[1].content == ""


def _reference_call(item: Any) -> ToolCall:
    """`tool_call` through the constructor."""
    if not isinstance(item, dict):
        return ToolCall(id="")
    fn = item.get("function") if isinstance(item.get("function"), dict) else {}
    args = fn.get("arguments")
    if args is not None and not isinstance(args, str):
        args = dumps(args)
    call_id = item.get("id") or item.get("call_id") or ""
    name = fn.get("name") or item.get("name") or ""
    return ToolCall(str(call_id), str(name), args)


SCALARS = st.one_of(st.none(), st.just(""), st.text(max_size=3), st.integers(-2, 2), st.booleans())
CALL_ITEMS = st.one_of(
    SCALARS,
    st.fixed_dictionaries({}, optional={
        "id": SCALARS, "call_id": SCALARS, "name": SCALARS, "type": SCALARS,
        "function": st.one_of(SCALARS, st.fixed_dictionaries({}, optional={
            "name": SCALARS, "arguments": st.one_of(SCALARS, st.dictionaries(st.text(max_size=2), SCALARS, max_size=2)),
        })),
    }),
)


@settings(max_examples=400, deadline=None)
@given(CALL_ITEMS)
def test_tool_call_matches_the_constructor(item: Any) -> None:
    got = tool_call(item)
    assert got == _reference_call(item)
    assert ToolCall(*got.fields()) == got  # every slot filled


def test_tool_call_labelled() -> None:
    item = {"id": 7, "function": {"name": "bash", "arguments": {"cmd": "ls"}}}
    assert tool_call(item) == ToolCall("7", "bash", '{"cmd":"ls"}', None)
    assert tool_call({"call_id": "c", "name": "n"}) == ToolCall("c", "n", None)
    assert tool_call("junk") == ToolCall("")
