"""Reading eve streams: both formats, delta and cumulative text, retries, bad lines, detection."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.model import TdocError
from transcript_doctor.stores import Options, detect
from transcript_doctor.stores.eve.reader import read_stream, sniff
from transcript_doctor.stores.eve.replay import history, replay
from transcript_doctor.stores.eve.store import EveStore
from transcript_doctor.stores.eve.v26 import EVENT_TYPES
from transcript_doctor.stores.eve.v27 import FACT_TYPES

try:  # tests/ imported as a package, or as a plain directory on sys.path
    from .test_eve_fixtures import V26, V27, scan
except ImportError:
    from test_eve_fixtures import V26, V27, scan  # type: ignore[no-redef]

# ----------------------------------------------------------------------------- v <= 26


def test_delta_text_is_concatenated(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="Hel")
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="lo")
    line = s.ev("message.completed", turnId="t0", stepIndex=0, sequence=0, message="Hello", finishReason="stop")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert stream.version == "<=26" and stream.text_mode == "delta"
    (reply,) = stream.turns[0].replies
    assert (reply.line, reply.text, reply.streamed, reply.phase) == (line, "Hello", "Hello", "reply")


def test_cumulative_text_replaces_instead_of_appending(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, message="Hel")
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, message="Hello")
    s.ev("step.failed", turnId="t0", stepIndex=0, code="MODEL_CALL_FAILED", message="boom")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert stream.text_mode == "cumulative"
    step = stream.turns[0].steps[0]
    assert step.status == "failed" and step.streamed_text == "Hello"


def test_a_retried_step_streams_from_empty_again(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="restart it")
    first = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="Restar")
    # The durable step is retried: the same events again, new ids, no settle of the first attempt.
    second = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="Restarted.")
    done = s.ev("message.completed", turnId="t0", stepIndex=0, sequence=0, message="Restarted.", finishReason="stop")
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")
    s.ev("turn.completed", turnId="t0")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    turn = stream.turns[0]
    a1, a2 = turn.steps
    assert (a1.line, a1.attempt, a1.status, a1.streamed_text) == (first, 1, "abandoned", "Restar")
    assert (a2.line, a2.attempt, a2.status) == (second, 2, "completed")
    (reply,) = turn.replies
    assert (reply.line, reply.streamed, reply.attempt) == (done, "Restarted.", 2)


def test_a_reemitted_completion_counts_once(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", schedule="digest")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.reply("t0", 0, "Done: 3 jobs ran.")
    again = s.reply("t0", 0, "Done: 3 jobs ran.")  # a retry re-emits deltas and the completion
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")
    s.ev("turn.completed", turnId="t0")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    (reply,) = stream.turns[0].replies
    assert (reply.line, reply.reemitted, reply.streamed) == (again, 1, "Done: 3 jobs ran.")
    assert [st.status for st in stream.turns[0].steps] == ["completed"]


def test_duplicate_event_ids_are_skipped(tmp_path: Path) -> None:
    s = V26()
    s.ev("session.started", sessionId="wrun_1")
    s.turn("t0", human="hi")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.reply("t0", 0, "Hello there.")
    copy = s.lines[-1]
    s.raw(copy)  # the same event fetched twice (overlapping cursors)
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert stream.duplicates == 1
    assert stream.session_id == "wrun_1"
    assert stream.turns[0].replies[0].reemitted == 0


def test_message_null_is_intentional_silence(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", schedule="digest")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="<eve-empty-delivery/>")
    s.ev("message.completed", turnId="t0", stepIndex=0, sequence=0, message=None, finishReason="stop")
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")
    s.ev("turn.completed", turnId="t0")
    path = s.write(tmp_path / "s.ndjson")
    stream = read_stream(path)
    (reply,) = stream.turns[0].replies
    assert reply.silent and reply.streamed == "<eve-empty-delivery/>"
    assert history(stream) == []  # nothing enters the model history
    assert scan(path) == []


def test_several_completions_per_turn_keep_their_phase(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="any alerts?")
    s.ev("step.started", turnId="t0", stepIndex=0)
    narration = s.reply("t0", 0, "Checking the alert feed.", finish="tool-calls")
    s.ev("actions.requested", turnId="t0", stepIndex=0, actions=[{"callId": "c1", "toolName": "alerts", "input": {}}])
    s.ev("action.result", turnId="t0", stepIndex=0, callId="c1", toolName="alerts", output={"alerts": []})
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="tool-calls")
    answer = s.step("t0", 1, "No alerts right now.")
    s.ev("turn.completed", turnId="t0")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    replies = stream.turns[0].replies
    assert [(r.line, r.phase) for r in replies] == [(narration, "narration"), (answer, "reply")]
    roles = [m["role"] for m in history(stream)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert history(stream)[1]["content"][-1]["type"] == "tool-call"


def test_human_and_runtime_inputs(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hello")
    s.ev("turn.completed", turnId="t0")
    s.turn("t1")
    s.ev("message.received", turnId="t1", kind="task.result", message="[Task result] done")
    s.ev("turn.completed", turnId="t1")
    s.turn("t2", schedule="nightly")
    s.ev("turn.completed", turnId="t2")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert [t.human for t in stream.turns] == [True, False, False]
    assert stream.turns[2].trigger == {"kind": "schedule", "name": "nightly"}


def test_a_stream_read_from_a_cursor_opens_turns_and_steps_on_demand(tmp_path: Path) -> None:
    s = V26()
    line = s.ev("message.appended", turnId="t9", stepIndex=3, sequence=0, messageDelta="Half")
    s.ev("message.completed", turnId="t9", stepIndex=3, sequence=0, message="Half done.", finishReason="stop")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    (turn,) = stream.turns
    assert (turn.id, turn.line, turn.steps[0].key, turn.steps[0].line) == ("t9", line, "3", line)


def test_clear_and_compaction_reset_the_rebuilt_history(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="one")
    s.step("t0", 0, "First answer.")
    s.ev("turn.completed", turnId="t0")
    s.ev("context.cleared")
    s.turn("t1", human="two")
    s.step("t1", 0, "Second answer.")
    s.ev("compaction.completed", turnId="t1", summary="Summary of turn two.")
    s.ev("turn.completed", turnId="t1")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert history(stream) == [{"role": "user", "content": "Summary of turn two."}]
    assert [c.op for c in stream.context] == ["clear"]


# ----------------------------------------------------------------------------- v27


def test_v27_commits_and_progress(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("delivery.consumed", "t0", kind="message", message="status?"))
    line = s.run("t0", "run_1", "All green.")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=["part_run_1"]))
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert stream.version == "27"
    (turn,) = stream.turns
    assert turn.human and turn.outcome == "completed" and turn.reply_parts == ["part_run_1"]
    (reply,) = turn.replies
    assert (reply.line, reply.text, reply.streamed, reply.finish_reason) == (line, "All green.", "All green.", "stop")
    assert turn.steps[0].line == 2 + 1  # the commit holding model.requested/model.started


def test_v27_retried_run_is_a_new_step_with_its_reason(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0", trigger={"kind": "schedule"}))
    s.run("t0", "run_1", None)  # an empty run
    s.run("t0", "run_2", "Report: 12 builds.", retry="empty-response")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    first, second = stream.turns[0].steps
    assert first.vacuous and first.settled
    assert second.retry_reason == "empty-response" and second.attempt == 1


def test_v27_reemitted_run_start_opens_a_second_attempt(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("model.started", "t0", "run_1", runId="run_1"))
    s.progress(s.fact("content.delta", "t0", "run_1", partId="p1", kind="text", delta="Hal"))
    s.commit(s.fact("model.started", "t0", "run_1", runId="run_1"))
    s.progress(s.fact("content.delta", "t0", "run_1", partId="p1", kind="text", delta="Hello."))
    s.commit(s.fact("content.completed", "t0", "run_1", partId="p1", kind="text", phase="reply", value="Hello."))
    s.commit(s.fact("model.settled", "t0", "run_1", outcome="completed", finishReason="stop"))
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    a1, a2 = stream.turns[0].steps
    assert (a1.status, a1.streamed_text, a2.status, a2.attempt) == ("abandoned", "Hal", "completed", 2)
    assert stream.turns[0].replies[0].streamed == "Hello."


def test_v27_shared_commit_lines_are_marked(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("model.started", "t0", "r1", runId="r1"), s.fact("model.started", "t0", "r2", runId="r2"))
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    assert all(step.shared for step in stream.turns[0].steps)


# ----------------------------------------------------------------------------- bad input


def test_torn_final_line_and_corrupt_lines_become_problems(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.raw(b'{"type": "step.started", "data": ')
    s.raw(b"[1, 2]")
    s.raw(b'{"type": "x", "data": "not an object"}')
    s.raw(b'{"at": "2026", "facts": []}')
    s.raw(b'{"type":"turn.completed","data":{"turnId":"t0"}}')
    s.raw(b'{"type":"message.completed","data":{"message":"cut\xff')
    path = s.write(tmp_path / "s.ndjson", final_newline=False)
    stream = read_stream(path)
    got = [(p.code, p.line) for p in stream.problems]
    assert got == [("F502", 3), ("F502", 4), ("F504", 5), ("F504", 6), ("F501", 8)]
    assert stream.turns[0].outcome == "completed"
    torn = [f for f in scan(path) if f.code == "F501"][0]
    assert torn.fix is not None and torn.fix.applicability == "safe"
    assert [e.as_dict() for e in torn.fix.edits] == [{"op": "delete", "line": 8}]


def test_invalid_utf8_in_the_middle_is_corrupt(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.raw(b'{"type":"turn.completed","data":{"turnId":"\xff"}}')
    s.ev("turn.completed", turnId="t0")
    stream = read_stream(s.write(tmp_path / "s.ndjson"))
    (problem,) = stream.problems
    assert problem.code == "F502" and "not UTF-8" in problem.message


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.ndjson"
    path.write_bytes(b"not json\n{also not\n")
    with pytest.raises(TdocError, match="no readable eve stream event"):
        read_stream(path)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"type":"session.started","data":{},"meta":{"id":"evt_1"}}\n', True),
        (b'\n{"type":"turn.started","data":{"turnId":"t"}}\n', True),
        (b'{"at":"2026","facts":[{"type":"turn.started","data":{}}]}\n', True),
        (b'{"progress":{"type":"content.delta","data":{}}}\n', True),
        (b'{"type":"session.started","data":{"x":"' + b"a" * 70000, True),  # first line longer than the head
        (b'{"at":"2026","facts":[{"type":"turn.st', True),
        (b'{"type":"metadata","protocol_version":"1.4","created_at":1}\n', False),  # kimi-code wire
        (b'{"type":"turn.begin","time":1}\n', False),
        (b'{"id":"s1","messages":[]}\n', False),
        (b'{"at":"2026","facts":[{"type":"unknown.fact"}]}\n', False),
        # a fact `type` that is an object or a list (found by bench/fuzz.py): unknown, not a crash
        (b'{"at":"2026","facts":[{"type":{"turn.started":1}}]}\n', False),
        (b'{"at":"2026","facts":[{"type":["turn.started"]},{"type":"turn.started"}]}\n', True),
        (b'{"progress":{"type":{"a":[1]},"data":{}}}\n', False),
        (b"SQLite format 3\x00", False),
        (b"", False),
    ],
)
def test_sniff(head: bytes, expected: bool) -> None:
    assert sniff(head) is expected


def test_sniff_skips_a_corrupt_first_line(tmp_path: Path) -> None:
    s = V26()
    s.raw(b"{torn")
    s.turn("t0", human="hi")
    assert detect(s.write(tmp_path / "s.ndjson")).format == "eve-stream"


def test_replay_json_shape(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.step("t0", 0, "`<evedev-empty-delivery/>`")
    s.ev("turn.completed", turnId="t0")
    path = s.write(tmp_path / "s.ndjson")
    store = detect(path).open(path, "s.ndjson", Options())
    out = store.replay(Options())
    orjson.dumps(out)  # JSON-able
    assert out["format"] == "eve-stream" and out["stream_version"] == "<=26"
    (turn,) = out["turns"]
    assert turn["human"] is True and turn["outcome"] == "completed"
    assert turn["replies"][0]["marker"] == "mangled"
    assert out["history"][0] == {"role": "user", "content": "hi"}
    assert out == replay(store.stream, "s.ndjson")


# ----------------------------------------------------------------------------- scale


def _long_stream(path: Path, deltas: int) -> Path:
    """One reply streamed as `deltas` appends, then a failed step (so the text stays partial)."""
    head = b'{"type":"turn.started","data":{"turnId":"t0"}}\n{"type":"step.started","data":{"turnId":"t0","stepIndex":0}}\n'
    delta = b'{"type":"message.appended","data":{"turnId":"t0","stepIndex":0,"sequence":0,"messageDelta":"' + b"x" * 200 + b'"}}\n'
    tail = b'{"type":"step.failed","data":{"turnId":"t0","stepIndex":0,"message":"cut"}}\n'
    with open(path, "wb") as fh:
        fh.write(head)
        for _ in range(deltas):
            fh.write(delta)
        fh.write(tail)
    return path


def _cpu(fn) -> float:
    import time

    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


def test_many_appends_to_one_reply_read_in_linear_time(tmp_path: Path) -> None:
    small = _long_stream(tmp_path / "small.ndjson", 5_000)
    large = _long_stream(tmp_path / "large.ndjson", 40_000)
    stream = read_stream(large)
    step = stream.turns[0].steps[0]
    assert len(step.streamed_text) == 40_000 * 200 and len(step.lines) == 40_002
    # Appending to a growing string or scanning the step's line list would make this ~64x; linear
    # work ~8x. The line sits at their geometric mean, so timing noise of 2.5x cannot flip it.
    growth = (_cpu(lambda: read_stream(large)) + 1e-3) / (_cpu(lambda: read_stream(small)) + 1e-3)
    assert growth < 22.0, f"8x the appends took {growth:.1f}x the time"


# ----------------------------------------------------------------------------- hostile input

_ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
_FIELDS = ["turnId", "stepIndex", "sequence", "message", "messageDelta", "finishReason", "actions", "callId",
           "code", "error", "kind", "trigger", "runId", "partId", "phase", "value", "outcome", "reply", "delta"]  # fmt: skip
_DATA = st.dictionaries(st.sampled_from(_FIELDS), _ANY | st.sampled_from(["t0", "t1", 0, 1, "r1", "p1"]), max_size=6)
_V26_EVENT = st.builds(
    lambda t, d, i: {"type": t, "data": d, "meta": {"id": i}},
    st.sampled_from(sorted(EVENT_TYPES)),
    _DATA | _ANY,
    st.sampled_from(["e1", "e2", "e3", None, 7]),
)
_V27_FACT = st.builds(
    lambda t, d, s: {"type": t, "data": d, "scope": s},
    st.sampled_from(sorted(FACT_TYPES)),
    _DATA | _ANY,
    st.fixed_dictionaries({}, optional={"turnId": st.sampled_from(["t0", "t1", 3]), "runId": st.sampled_from(["r1", "r2", None])}),
)
_V27_RECORD = st.one_of(
    st.builds(lambda f: {"at": "2026", "facts": f}, st.lists(_V27_FACT | _ANY, max_size=3) | _ANY),
    st.builds(lambda f: {"progress": f}, _V27_FACT),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(_V26_EVENT, min_size=1, max_size=12) | st.lists(_V27_RECORD, min_size=1, max_size=12))
def test_hostile_records_never_crash_the_reader_or_the_rules(tmp_path: Path, records: list) -> None:
    path = tmp_path / "fuzz.ndjson"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n")
    try:
        stream = read_stream(path)
    except TdocError:
        return
    orjson.dumps(replay(stream, "fuzz"))
    for f in check_store(EveStore(path, "fuzz", stream), ScanConfig()):
        assert f.code in {"S302", "S303", "S306", "T403", "C203", "E601", "F501", "F502", "F504"}
