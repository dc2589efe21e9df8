"""The OpenCode scan's short cuts are pinned to the general paths they stand for.

* The projection leaves its messages and parts unplaced; the conversation's locator places one
  when a finding names it. Its findings must equal those of the same messages placed up front by
  an id lookup (the general rule), and with unique ids each part is placed at its own source.
* `first_position` / `part_position`, derived from the shared-model messages, must equal what the
  request (`wire`) says: the first position naming each message and part.
* A run's verdict reads the merged run evidence only for an empty final text: the verdict must be
  the one computed with the merged evidence at hand, and a one-message run's evidence is that
  message's own.
* The reader's inline parse of `data` cells must accept and refuse exactly what `_decode_row` does.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.opencode.sessions import ABSENT, sessions, single_run, single_runs
from tests.test_opencode_support import fixture_schema
from transcript_doctor.conversation import Conversation
from transcript_doctor.model import Loc
from transcript_doctor.rules.engine import check_conversation
from transcript_doctor.stores.opencode import checks, completion, projection
from transcript_doctor.stores.opencode.projection import project
from transcript_doctor.stores.opencode.reader import DbReader, OcMessage, OcPart, OcSession, _decode_row, _message, open_db
from transcript_doctor.stores.opencode.runs import Evidence, analyse, build_runs

STORE = SimpleNamespace(display="x.db", format="opencode-db")


def _by_id_reference(conversation: Conversation, session: OcSession) -> Conversation:
    """The conversation placed by hand, message by message and part by part, as the general rule
    says (the last holder of an id, as an id lookup finds it), with no locator: what the engine
    then reads from `Message.loc` / `Part.source` and their `evidence`."""
    by_id = {m.id: m for m in session.messages}
    messages = copy.deepcopy(conversation.messages)
    for msg in messages:
        oc = by_id.get(msg.extra["message_id"])
        msg.loc = oc.loc if oc is not None else Loc()
        msg.evidence = {"message_id": oc.id if oc is not None else None}
        parts = {p.id: p for p in oc.parts} if oc is not None else {}
        for part, pid in zip(msg.parts, msg.extra["part_of"]):
            found = parts.get(pid)
            part.source = found.loc if found is not None else None
            part.evidence = {"part_id": pid}
    return Conversation(conversation.path, conversation.format, conversation.session, messages,
                        editor=conversation.editor, codes=conversation.codes)


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_the_locator_places_findings_where_the_placed_model_does(session: OcSession) -> None:
    """Every shared rule's findings, placed by the locator when one is made, equal the findings
    over the same messages placed up front (`Conversation.where` without a locator)."""
    conversation = checks.conversation(STORE, analyse(session, False))
    reference = _by_id_reference(conversation, session)
    codes = checks.SHARED_CODES
    assert list(check_conversation(conversation, codes)) == list(check_conversation(reference, codes))


@settings(max_examples=200, deadline=None)
@given(sessions(repeat_ids=False))
def test_with_unique_ids_each_part_is_placed_at_the_part_it_was_projected_from(session: OcSession) -> None:
    """`part_of` lines up with the projected parts: the part the locator names holds the text the
    projected part carries (text and reasoning are carried as they are stored)."""
    conversation = checks.conversation(STORE, analyse(session, False))
    by_id = {m.id: m for m in session.messages}
    by_place = {id(p.loc): p for m in session.messages for p in m.parts}
    for msg in conversation.messages:
        oc = by_id[msg.extra["message_id"]]
        loc, evidence = conversation.where(msg)
        assert loc is oc.loc and evidence == {"message_id": oc.id}
        for index, part in enumerate(msg.parts):
            loc, evidence = conversation.where(msg, index)
            source = by_place[id(loc)]  # a part's own place, never its message's
            assert any(source is p for p in oc.parts)
            assert evidence == {"message_id": oc.id, "part_id": source.id}
            if msg.role != "tool" and source.type in ("text", "reasoning"):
                text = source.data.get("text")
                assert part.text == (text if isinstance(text, str) else "")


def test_repeated_ids_are_placed_at_their_last_holder() -> None:
    """Near miss of the above: where ids repeat, the lookup finds the last holder, not each one's own."""
    first = OcMessage("m", "s", {"role": "user"}, loc=Loc(row="m", table="message"))
    second = OcMessage("m", "s", {"role": "user"}, loc=Loc(row="m2", table="message"))
    for msg in (first, second):
        msg.parts.append(OcPart("p", "m", {"type": "text", "text": "hi"}, Loc(row=msg.loc.row, table="part")))
    session = OcSession("s", messages=[first, second])
    conversation = checks.conversation(STORE, analyse(session))
    assert conversation.where(conversation.messages[0])[0] is second.loc
    assert conversation.where(conversation.messages[0], 0)[0] is second.parts[0].loc


def _wire_positions(wire: list) -> tuple[dict, dict]:
    first: dict = {}
    parts: dict = {}
    for position, sent in enumerate(wire):
        first.setdefault(sent["origin"]["message"], position)
        for pid in sent["origin"]["parts"]:
            parts.setdefault(pid, position)
    return first, parts


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_positions_derived_from_the_messages_are_the_requests(session: OcSession) -> None:
    projection = project(session.messages)
    assert (projection.first_position, projection.part_position) == _wire_positions(projection.wire)


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_a_verdict_is_the_one_the_merged_evidence_gives(session: OcSession) -> None:
    _assert_verdicts_from_merged_evidence(session)


@settings(max_examples=400, deadline=None)
@given(single_runs())
@example(single_run([(None, True, ABSENT, [{"type": "text", "text": "hi"}, {"type": "step-finish", "reason": " "}])]))
@example(single_run([(None, True, " ", [{"type": "step-finish", "reason": "stop"}, {"type": "text", "text": "hi"},
                                        {"type": "step-finish", "reason": "\u00a0"}])]))
@example(single_run([(None, True, " Stop\u00a0", [{"type": "text", "text": "hi"}])]))
@example(single_run([(None, True, "stop", [{"type": "text", "text": "Empty response: {'stop_reason': 'end_turn'}"}])]))
def test_a_final_message_judged_in_one_pass_gets_the_general_verdict(session: OcSession) -> None:
    """The commonest final (completed, unerrored, with text) is judged in one pass over its parts
    (`runs._answered`): every finish shape, text flag and part mix must give `decide`'s verdict."""
    _assert_verdicts_from_merged_evidence(session)


def _assert_verdicts_from_merged_evidence(session: OcSession) -> None:
    for run in build_runs(session.messages):
        final = run.final
        if final is None:
            continue
        parts = [p.data for p in final.parts]
        merged = Evidence()
        for msg in run.assistants:
            merged = completion.merge(merged, completion.message_evidence(msg.info, [p.data for p in msg.parts]))
        assert run.evidence() == merged
        eager = completion.decide(final.info, parts, merged, open_run=run.open)
        assert run.decision == eager


# --------------------------------------------------------------------------- the reader

CELLS = st.one_of(
    st.sampled_from([b'{"type": "text", "text": "\\ud800"}', b'{"a": 1e400}', b'{"a": NaN}', b"[1, 2]", b'"text"',
                     b"{bad", b"\xff\xfe{}", b"", b"null", b'{"k": ' + b"[" * 250 + b"]" * 250 + b"}",
                     b'{"deep": ' + b"[" * 150 + b"]" * 150 + b"}", b'{"type": "text", "text": "' + b"x" * 600 + b'"}']),
    st.dictionaries(st.sampled_from(["type", "text", "role"]), st.sampled_from(["text", "user", 1, None]), max_size=3)
    .map(lambda d: json.dumps(d).encode()),
    st.integers(-(2**63), 2**63 - 1), st.text(max_size=4),
)
IDS = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.none())


def _expected(conn: sqlite3.Connection, sql: str, table: str) -> tuple[list[tuple], list[str]]:
    """(id, object) of the readable rows and the ids of the refused ones, by `_decode_row` alone."""
    kept, refused = [], []
    for rid, raw in conn.execute(sql):
        value, _problem = _decode_row(raw)
        if value is None or not isinstance(rid, str):
            refused.append(f"{table}:{rid}")
        else:
            kept.append((rid, value))
    return kept, refused


def _strip(value: dict, keys: tuple[str, ...]) -> dict:
    return {k: v for k, v in value.items() if k not in keys}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(IDS, CELLS), max_size=5), st.lists(CELLS, max_size=5), st.booleans())
@example(messages=[], parts=[b'{"k": ' + b"[" * 250 + b"]" * 250 + b"}"], owned=True)
def test_the_reader_keeps_exactly_the_rows_the_general_decoder_reads(messages: list, parts: list, owned: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "opencode.db"
        conn = sqlite3.connect(path)
        for sql in fixture_schema():
            conn.execute(sql)
        conn.executemany("INSERT OR IGNORE INTO message (id, session_id, time_created, time_updated, data) "
                         "VALUES (?, 's', 0, 0, ?)", [("a", b'{"role": "user"}')] * owned + [(mid, raw) for mid, raw in messages if mid is not None])
        conn.executemany("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                         "VALUES (?, 'a', 's', 0, 0, ?)", [(f"p{i}", raw) for i, raw in enumerate(parts)])
        conn.commit()
        conn.close()
        read = open_db(path)
        try:
            reader = DbReader(read, str(path))
            rows = [r for r in reader.sessions() if r.id == "s"]
            session = reader.read_session(rows[0]) if rows else OcSession("s")
            kept, refused = _expected(read, "SELECT id, CAST(data AS BLOB) FROM message ORDER BY time_created, id", "message")
            readable = any(mid == "a" for mid, _ in kept)
            part_kept, part_refused = _expected(read, "SELECT id, CAST(data AS BLOB) FROM part ORDER BY id", "part") if readable else ([], [])
        finally:
            read.close()
    assert [(m.id, _strip(m.info, ("id", "sessionID"))) for m in session.messages] == kept
    owner = [m for m in session.messages if m.id == "a"]
    assert [(p.id, _strip(p.data, ("id", "sessionID", "messageID"))) for m in owner for p in m.parts] == part_kept
    assert [f"{p.table}:{p.row}" for p in session.problems] == refused + part_refused


def test_the_inline_message_equals_the_constructed_message() -> None:
    loc = Loc(row="m", table="message")
    for info in ({"role": "assistant"}, {"role": 7}, {}):
        built = _message("m", "s", info)
        assert built == OcMessage("m", "s", info) == OcMessage("m", "s", info, [], loc)
        assert built.loc == loc  # placed when first asked for: its row of the message table
        assert built != OcMessage("m", "s", info, [], Loc(row="m2", table="message"))


@settings(max_examples=200, deadline=None)
@given(sessions())
def test_a_projection_without_the_wire_shape_is_the_same_otherwise(session: OcSession) -> None:
    full, lean = project(session.messages), project(session.messages, wire=False)
    assert lean.messages == full.messages
    assert (lean.anomalies, lean.start, lean.sent) == (full.anomalies, full.start, len(full.wire))
    assert (lean.first_position, lean.part_position) == (full.first_position, full.part_position)
    with pytest.raises(RuntimeError):
        lean.wire  # noqa: B018  (a replay of a lean projection would be a bug: it says so)


INPUTS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
              st.text(alphabet=st.sampled_from(["a", " ", "\x00", "\ud800", "\udc00", "é", "{", '"']), max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=8,
)


def _encoded_arguments(state: object) -> str | None:
    """What the projection handed the rules before: any input that is not text, JSON-encoded."""
    from transcript_doctor.encode import dumps

    value = state.get("input") if isinstance(state, dict) else None
    if value is None:
        return None
    return value if isinstance(value, str) else dumps(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(INPUTS, min_size=1, max_size=3))
@example(["{\"broken", {"k": "\x00\ud800"}, [1, "\udc00"]])
def test_the_rules_say_of_an_input_what_they_say_of_its_encoding(inputs: list) -> None:
    """A tool input that is not text reaches the rules as no arguments (OpenCode encodes it itself):
    F507 and F508 must find exactly what they found in its JSON encoding."""
    from unittest import mock

    from transcript_doctor.rules.engine import check_conversation

    msg = OcMessage("m1", "s", {"role": "assistant", "time": {"created": 1, "completed": 2}}, loc=Loc(row="m1", table="message"))
    for i, value in enumerate(inputs):
        state = {"status": "completed", "input": value, "output": "ok"}
        msg.parts.append(OcPart(f"p{i}", "m1", {"type": "tool", "callID": f"c{i}", "tool": "bash", "state": state}))

    def findings() -> list:
        session = OcSession("s", messages=[copy.deepcopy(msg)])
        conversation = checks.conversation(STORE, analyse(session, False))
        return [(f.code, f.message, f.row) for f in check_conversation(conversation, {"F507", "F508"})]

    now = findings()
    with mock.patch.object(projection, "_arguments", _encoded_arguments):
        before = findings()
    assert now == before
    # F508 where the text is broken JSON, or the value holds what orjson cannot read back from its encoding
    assert any(code == "F508" for code, _, _ in now) == any(
        _is_broken(v) if isinstance(v, str) else _unreadable_encoding(v) for v in inputs)


def _unreadable_encoding(value: object) -> bool:
    """Whether orjson refuses to read back the JSON encoding of `value` (a lone surrogate escaped,
    for one): what F508 reports of a non-text input."""
    import orjson

    from transcript_doctor.encode import dumps

    try:
        orjson.loads(dumps(value))
    except orjson.JSONDecodeError:
        return True
    return False


def _is_broken(text: str) -> bool:
    import orjson

    from transcript_doctor.text import is_blank

    if is_blank(text):
        return False
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return True
    return False
