"""OpenCode readers, the replayed request (toModelMessages) and the per-message rules."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.conversation import Conversation
from transcript_doctor.model import TdocError
from transcript_doctor.replay_view import replay_path
from transcript_doctor.rules.engine import check_conversation
from transcript_doctor.stores import Options, detect, open_store
from transcript_doctor.stores.opencode.projection import project
from transcript_doctor.stores.opencode.reader import OcMessage, OcPart

from .test_opencode_support import (
    FIXTURES,
    ZERO_TOKENS,
    Db,
    copy_fixture_db,
    reasoning,
    scan,
    step_finish,
    step_start,
    text,
    tool,
)


@pytest.fixture
def db(tmp_path: Path) -> Db:
    return Db(tmp_path / "opencode.db")


def _replay(path: Path, session: str = "ses_test") -> dict:
    return replay_path(str(path), Options(session=session))


# --------------------------------------------------------------------------- detection and reading


def test_detection_is_by_content(tmp_path: Path) -> None:
    assert detect(copy_fixture_db(tmp_path)).format == "opencode-db"
    export = tmp_path / "renamed.db"
    export.write_bytes(next(FIXTURES.glob("export-*.json")).read_bytes())
    assert detect(export).format == "opencode-export"
    other = tmp_path / "state.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT)")
    conn.close()
    assert not detect_format(other, "opencode-db")
    plain = tmp_path / "list.json"
    plain.write_text(json.dumps({"info": {"id": "x"}, "data": []}))
    assert not detect_format(plain, "opencode-export")


def detect_format(path: Path, fmt: str) -> bool:
    try:
        return detect(path).format == fmt
    except TdocError:
        return False


def test_counts_and_unreadable_rows(db: Db) -> None:
    sid = db.session()
    u = db.user(sid)
    db.assistant(sid, u, [step_start(), text("fine"), step_finish()])
    db.conn.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES "
                    "('msg_bad', 'ses_test', 1, 1, '{not json')")
    db.conn.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES "
                    "('prt_bad', ?, 'ses_test', 1, 1, '[1, 2]')", (u,))
    path = db.close()
    store = open_store(path, str(path), Options())
    assert (store.session_count, store.record_count) == (1, 3 + 5)  # msg_bad and prt_bad count as records
    store.close()
    bad = {(f.table, f.row) for f in scan(path) if f.code == "F504"}
    assert bad == {("message", "msg_bad"), ("part", "prt_bad")}


def test_scanning_creates_no_files_beside_a_wal_database(tmp_path: Path) -> None:
    path = copy_fixture_db(tmp_path)
    assert path.read_bytes()[18:20] == b"\x02\x02"  # WAL mode in the header
    scan(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]


def test_invalid_utf8_in_data_is_f504_not_a_failed_read(db: Db) -> None:
    sid = db.session()
    db.user(sid)
    bad = b'{"type": "text", "text": "caf\xe9"}'  # Latin-1, not UTF-8, stored as TEXT
    db.conn.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                    "SELECT 'prt_zz', id, session_id, 0, 0, CAST(? AS TEXT) FROM message LIMIT 1", (bad,))
    findings = scan(db.close())
    assert [(f.code, f.row) for f in findings if f.code == "F504"] == [("F504", "prt_zz")]


def test_minimal_columns_and_ordering(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT)")
    conn.execute("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, data TEXT)")
    rows = [("msg_2", {"role": "assistant", "parentID": "msg_1", "time": {"created": 2, "completed": 3},
                       "finish": "stop", "cost": 0, "tokens": ZERO_TOKENS}),
            ("msg_1", {"role": "user", "time": {"created": 1}})]
    for mid, info in rows:
        conn.execute("INSERT INTO message VALUES (?, 'ses_old', ?)", (mid, json.dumps(info)))
    conn.execute("INSERT INTO part VALUES ('prt_b', 'msg_2', ?)", (json.dumps(text(" world")),))
    conn.execute("INSERT INTO part VALUES ('prt_a', 'msg_2', ?)", (json.dumps(text("hello")),))
    conn.execute("INSERT INTO part VALUES ('prt_c', 'msg_1', ?)", (json.dumps(text("hi")),))
    conn.commit()
    conn.close()
    replay = _replay(path, "ses_old")
    assert [m["role"] for m in replay["history"]] == ["user", "assistant"]  # ordered by id without time_created
    assert [c["text"] for c in replay["history"][1]["content"]] == ["hello", " world"]  # parts by id
    assert replay["runs"][0]["verdict"] == "answer"


def test_messages_order_by_time_created_then_id(db: Db) -> None:
    sid = db.session()
    u = db.user(sid)
    late = db.assistant(sid, u, [text("second")], mid="msg_000000000001")  # lower id, later time below
    db.conn.execute("UPDATE message SET time_created = time_created + 1000 WHERE id = ?", (late,))
    db.assistant(sid, u, [text("first")], finish="tool-calls", mid="msg_000000000099")
    path = db.close()
    history = _replay(path)["history"]
    assert [m["content"][0]["text"] for m in history[1:]] == ["first", "second"]


def test_export_is_read_with_lines(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_bytes(next(FIXTURES.glob("export-*.json")).read_bytes())
    store = open_store(path, str(path), Options())
    assert (store.session_count, store.record_count) == (1, 4 + 9)
    (view,) = store.views(Options())
    first = view.session.messages[0]
    assert (first.loc.line, first.loc.end_line, first.loc.row) == (15, 38, None)
    assert (first.parts[0].loc.line, first.parts[0].loc.end_line) == (30, 36)
    store.close()


@pytest.mark.parametrize("content", [b"", b"{", b'{"info": {"id": "ses_1"}, "messages": 3}', b"[1]",
                                     b'{"info": {"id": "ses_1"}, "messages": []} trailing', b"\xff\xfe{"])
def test_broken_exports_are_errors_not_tracebacks(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "e.json"
    path.write_bytes(content)
    with pytest.raises(TdocError):
        open_store(path, str(path), Options(), forced="opencode-export")


def test_export_message_entries_that_are_not_objects_are_f504(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"info": {"id": "ses_1"}, "messages": [
        {"info": {"id": "msg_1", "role": "user"}, "parts": [{"id": "prt_1", **text("hi")}, 7]}, "junk"]}, indent=2))
    f504 = [f for f in scan(path) if f.code == "F504"]
    assert len(f504) == 2 and all(f.line for f in f504)


# --------------------------------------------------------------------------- the replayed request


def test_projection_rules(db: Db) -> None:
    sid = db.session()
    u = db.user(sid, parts=[text("visible"), text("hidden", ignored=True),
                            {"type": "file", "mime": "text/plain", "url": "file:///a"},
                            {"type": "file", "mime": "image/png", "url": "data:image/png;base64,AA"}])
    db.assistant(sid, u, [step_start(), step_finish("unknown")], finish="unknown")  # only markers: dropped
    db.assistant(sid, u, [step_start(), text("calling"), tool("running", call="c1"),
                          tool("completed", call="c2", time={"start": 1, "end": 2, "compacted": 3}),
                          step_finish("tool-calls"), step_start(), text("done"), step_finish()])
    db.assistant(sid, u, [step_start(), text("partial")], error={"name": "APIError", "data": {"message": "x"}})
    db.assistant(sid, u, [step_start(), text("cut")], error={"name": "MessageAbortedError", "data": {}})
    db.assistant(sid, u, [step_start(), reasoning("")], error={"name": "MessageAbortedError", "data": {}})
    replay = _replay(db.close())
    history = replay["history"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "assistant"]
    assert [c.get("text", c["type"]) for c in history[0]["content"]] == ["visible", "file"]
    results = {c["toolCallId"]: c["output"] for c in history[2]["content"]}
    assert results["c1"] == {"type": "error-text", "value": "[Tool execution was interrupted]"}
    assert results["c2"] == {"type": "text", "value": "[Old tool result content cleared]"}
    assert history[4]["content"] == [{"type": "text", "text": "cut"}]
    kinds = [a["kind"] for a in replay["anomalies"]]
    assert kinds.count("errored_assistant_skipped") == 2
    assert {"ignored_part_dropped", "step_markers_only_dropped", "interrupted_tool", "tool_output_cleared"} <= set(kinds)


def test_history_starts_at_the_last_completed_compaction(db: Db) -> None:
    sid = db.session()
    u1 = db.user(sid, "old question")
    db.assistant(sid, u1, [text("old answer")])
    c = db.user(sid, parts=[{"type": "compaction", "auto": True}])
    db.assistant(sid, c, [text("summary of it all")], summary=True)
    u2 = db.user(sid, "new question")
    db.assistant(sid, u2, [text("new answer")])
    history = _replay(db.close())["history"]
    assert history[0]["content"] == [{"type": "text", "text": "What did we do so far?"}]
    assert len(history) == 4


@pytest.mark.parametrize("next_model, vacuous", [("claude-sonnet-5", False), ("gpt-5.6", True)])
def test_a_different_model_loses_reasoning_signatures(db: Db, next_model: str, vacuous: bool) -> None:
    sid = db.session()
    u1 = db.user(sid, model="claude-sonnet-5")
    db.assistant(sid, u1, [step_start(), reasoning("", signature="sig")], model="claude-sonnet-5")
    db.user(sid, "next", model=next_model)  # the model the next request goes to
    w101 = [f for f in scan(db.close()) if f.code == "W101"]
    assert [f.position for f in w101] == ([1] if vacuous else [])


# --------------------------------------------------------------------------- per-message rules


def test_w101_positive_and_near_misses(db: Db) -> None:
    sid = db.session()
    u = db.user(sid)
    vac = db.assistant(sid, u, [step_start(), text(" \n"), reasoning(""), step_finish()])
    u2 = db.user(sid)
    db.assistant(sid, u2, [step_start(), reasoning("", signature="s"), step_finish()])  # signed
    u3 = db.user(sid)
    db.assistant(sid, u3, [step_start(), step_finish("unknown")], finish="unknown", tokens="zero", cost=0)  # markers
    u4 = db.user(sid)
    db.assistant(sid, u4, [step_start(), text(""), tool(), step_finish("tool-calls")], finish="tool-calls")
    db.assistant(sid, u4, [step_start(), reasoning("thinking out loud"), text("ok"), step_finish()])
    findings = scan(db.close())
    w101 = [f for f in findings if f.code == "W101"]
    assert [f.row for f in w101] == [vac]
    (w102,) = [f for f in findings if f.code == "W102"]  # the blank text beside the tool call
    assert w102.fix is not None and w102.fix.edits[0].table == "part"


def test_w101_in_one_step_of_a_longer_message_deletes_only_that_step(db: Db) -> None:
    sid = db.session()
    u = db.user(sid)
    mid = db.assistant(sid, u, [step_start(), reasoning(""), step_finish("unknown"), step_start(), text("real"),
                                step_finish()])
    (w101,) = [f for f in scan(db.close()) if f.code == "W101"]
    assert w101.row == mid
    assert [(e.table, e.op) for e in w101.fix.edits] == [("part", "delete")]


def test_t404_only_for_finished_messages(db: Db) -> None:
    sid = db.session()
    u = db.user(sid)
    db.assistant(sid, u, [text("a"), tool("pending", call="p1")], finish="tool-calls")
    db.assistant(sid, u, [text("b"), tool("error", call="e1")], finish="tool-calls")
    db.assistant(sid, u, [text("c"), tool("running", call="r1")], error={"name": "MessageAbortedError", "data": {}})
    db.assistant(sid, u, [text("d"), tool("running", call="r2")], completed=False, finish=None)
    t404 = [f.evidence["call_id"] for f in scan(db.close()) if f.code == "T404"]
    assert t404 == ["p1", "r1"]


def test_e601_maps_the_named_position_into_the_failed_request(db: Db) -> None:
    sid = db.session()
    u = db.user(sid)
    db.assistant(sid, u, [step_start(), text("calling"), tool(call="c1"), step_finish("tool-calls")],
                 finish="tool-calls")
    err = {"name": "APIError", "data": {"message": "messages.1: `tool_use` ids were found without `tool_result` "
                                                   "blocks immediately after", "statusCode": 400}}
    db.assistant(sid, u, [step_start()], error=err)
    db.assistant(sid, u, [step_start()], error={"name": "APIError", "data": {"message": "overloaded"}})
    (e601,) = [f for f in scan(db.close()) if f.code == "E601"]
    assert e601.evidence["record"]["found"] and e601.evidence["record"]["role"] == "assistant"
    assert e601.evidence["record"]["position"] == 1 and e601.position is None


def test_replay_runs_and_locate(tmp_path: Path) -> None:
    path = copy_fixture_db(tmp_path)
    replay = replay_path(str(path), Options(session="ses_033ffb17ffebndz9Vlpse32itH"))
    assert [r["verdict"] for r in replay["runs"]] == ["answer", "answer", "answer"]
    assert replay["runs"][0]["assistant_messages"][0] == "msg_fcc005394017vCS82CvXyjowhW"
    store = open_store(path, str(path), Options())
    where = store.locate(1, "ses_038b8307fff20ePsdTfa2pLFoH")
    assert where == {"session": "ses_038b8307fff20ePsdTfa2pLFoH", "line": None, "end_line": None,
                     "row": "msg_fc747d4f8010ghqNWgeZD8TYZK", "table": "message", "role": "assistant"}
    assert store.locate(9, "ses_038b8307fff20ePsdTfa2pLFoH") is None
    assert len(store.replay(Options())) == 10
    with pytest.raises(TdocError):
        store.replay(Options(session="ses_nope"))
    store.close()


# --------------------------------------------------------------------------- invariants

_PART = st.one_of(
    st.just(step_start()), st.just(step_finish()), st.builds(text, st.sampled_from(["", " ", "hi"])),
    st.builds(reasoning, st.sampled_from(["", "hm"])),
    st.builds(tool, st.sampled_from(["pending", "running", "completed", "error", "weird"])),
)
_ERROR = st.sampled_from([None, {"name": "APIError", "data": {}}, {"name": "MessageAbortedError", "data": {}}])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(_PART, max_size=8), _ERROR), max_size=8))
def test_replay_always_answers_every_call_right_after_it(spec: list) -> None:
    """Whatever state tool parts are in, the request pairs each (uniquely named) call with one result."""
    messages, n = [], 0
    for is_user, parts, error in spec:
        n += 1
        info = {"role": "user"} if is_user else {"role": "assistant", "parentID": "m0", "error": error}
        oc = [OcPart(f"p{n}_{i}", f"m{n}", {**p, "callID": f"call_{n}_{i}"}) for i, p in enumerate(parts)]
        messages.append(OcMessage(f"m{n}", "s", info, oc))
    projection = project(messages)
    assert [m.position for m in projection.messages] == sorted(m.position for m in projection.messages)
    assert {m.position for m in projection.messages} == set(range(len(projection.wire)))
    assert all(w["content"] for w in projection.wire)  # never an empty request message
    pairing = {"W103", "W104", "W106", "W107"}
    found = check_conversation(Conversation("x", "opencode-db", None, projection.messages), pairing)
    assert not list(found)
