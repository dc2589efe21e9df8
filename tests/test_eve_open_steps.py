"""C203 for a step (v<=26) or model run (v27) still open when the stream ends, and its near-misses.

Each case builds a stream and names what C203 must say about the attempt that opens on the line
`start` returns: `None` (no C203 there) or the state the finding records (`open-at-end` with or
without the live note, `abandoned`, `failed`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

try:  # tests/ imported as a package, or as a plain directory on sys.path
    from .test_eve_fixtures import V26, V27, scan
except ImportError:
    from test_eve_fixtures import V26, V27, scan  # type: ignore[no-redef]


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], tuple[V26 | V27, int]]  # the stream and the line opening the attempt under test
    state: str | None  # open-at-end | abandoned | failed | None (no C203 for that attempt)
    live: bool = False  # the finding says the stream may still be live
    fixable: bool = False  # a safe removal fix is offered


# ----------------------------------------------------------------------------- v <= 26


def v26_open_with_partial_text() -> tuple[V26, int]:
    s = V26()
    s.ev("session.started", sessionId="wrun_x")
    s.turn("t0", human="summarise the incident")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="The outage began at")
    return s, start


def v26_open_vacuous() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", human="hi")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    return s, start


def v26_open_after_a_tool_round() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", schedule="nightly")
    s.step("t0", 0, "Checking.", finish="tool-calls")
    start = s.ev("step.started", turnId="t0", stepIndex=1)
    s.ev("actions.requested", turnId="t0", stepIndex=1, actions=[{"callId": "c1", "toolName": "q", "input": {}}])
    s.ev("action.result", turnId="t0", stepIndex=1, callId="c1", output={"rows": 3})
    return s, start


def v26_open_then_session_completed() -> tuple[V26, int]:
    s, start = v26_open_with_partial_text()
    s.ev("session.completed")
    return s, start


def v26_open_then_next_turn() -> tuple[V26, int]:
    s, start = v26_open_with_partial_text()
    s.turn("t1", human="still there?")
    s.step("t1", 0, "Yes.")
    s.ev("turn.completed", turnId="t1")
    return s, start


def v26_settled_last_step() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", human="hi")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.reply("t0", 0, "Hello.")
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")  # the turn itself is still open
    return s, start


def v26_open_mid_stream_then_retry() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", human="restart it")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="Restar")
    s.step("t0", 0, "Restarted.")  # the durable retry re-opens step 0 and settles it
    return s, start


def v26_open_then_next_step() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", human="go")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.step("t0", 1, "Went.")
    return s, start


def v26_failed_last_step() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", human="go")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("step.failed", turnId="t0", stepIndex=0, code="MODEL_CALL_FAILED", message="503 unavailable")
    return s, start


def v26_open_when_the_turn_completed() -> tuple[V26, int]:
    s = V26()
    s.turn("t0", human="go")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("turn.completed", turnId="t0")
    return s, start


# ----------------------------------------------------------------------------- v27


def v27_open_run_with_partial_text() -> tuple[V27, int]:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0", trigger={"kind": "schedule", "name": "nightly"}))
    start = s.commit(s.fact("model.requested", "t0", "r1", runId="r1"), s.fact("model.started", "t0", "r1", runId="r1"))
    s.progress(s.fact("content.delta", "t0", "r1", partId="p1", kind="text", delta="Nightly report: "))
    return s, start


def v27_requested_never_started() -> tuple[V27, int]:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("delivery.consumed", "t0", message="status?"))
    start = s.commit(s.fact("model.requested", "t0", "r1", runId="r1"))
    return s, start


def v27_open_then_session_ended() -> tuple[V27, int]:
    s, start = v27_open_run_with_partial_text()
    s.commit(s.fact("session.ended", outcome="completed"))
    return s, start


def v27_settled_last_run() -> tuple[V27, int]:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("delivery.consumed", "t0", message="status?"))
    s.run("t0", "r1", "All green.")
    return s, len(s.lines) - 2  # the commit holding model.started (run() returns the reply's line)


def v27_open_run_then_retry() -> tuple[V27, int]:
    s, start = v27_open_run_with_partial_text()
    s.run("t0", "r2", "Nightly report: 3 errors.", retry="empty-response")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=["part_r2"]))
    return s, start


def v27_failed_last_run() -> tuple[V27, int]:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    start = s.commit(s.fact("model.started", "t0", "r1", runId="r1"))
    s.commit(s.fact("model.settled", "t0", "r1", outcome="failed", error={"code": "X", "message": "502 Bad Gateway"}))
    return s, start


CASES = [
    Case("v26 open step with partial text", v26_open_with_partial_text, "open-at-end", live=True),
    Case("v26 open vacuous step", v26_open_vacuous, "open-at-end", live=True, fixable=True),
    Case("v26 open step after a tool round", v26_open_after_a_tool_round, "open-at-end", live=True),
    Case("v26 open step, session completed", v26_open_then_session_completed, "open-at-end"),
    Case("v26 open step, a later turn ran", v26_open_then_next_turn, "open-at-end"),
    Case("v26 settled last step", v26_settled_last_step, None),
    Case("v26 open step retried mid-stream", v26_open_mid_stream_then_retry, "abandoned"),
    Case("v26 open step, a later step ran", v26_open_then_next_step, "abandoned", fixable=True),
    Case("v26 failed last step", v26_failed_last_step, "failed"),
    Case("v26 open step, turn completed", v26_open_when_the_turn_completed, "abandoned", fixable=True),
    Case("v27 open run with partial text", v27_open_run_with_partial_text, "open-at-end", live=True),
    Case("v27 run requested, never started", v27_requested_never_started, "open-at-end", live=True, fixable=True),
    Case("v27 open run, session ended", v27_open_then_session_ended, "open-at-end"),
    Case("v27 settled last run", v27_settled_last_run, None),
    Case("v27 open run retried", v27_open_run_then_retry, "abandoned"),
    Case("v27 failed last run", v27_failed_last_run, "failed"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_c203_for_attempts_left_open(tmp_path: Path, case: Case) -> None:
    stream, start = case.build()
    found = [f for f in scan(stream.write(tmp_path / "s.ndjson")) if f.code == "C203" and f.line == start]
    if case.state is None:
        assert found == []
        return
    (f,) = found
    at_end = case.state == "open-at-end"
    assert f.evidence["open_at_stream_end"] is at_end
    assert f.evidence["status"] == ("open" if at_end else case.state)
    assert f.evidence["stream_may_be_live"] is case.live
    assert ("may still be live" in f.message) is case.live
    assert ("still open when the stream ended" in f.message) is at_end
    assert (f.fix is not None) is case.fixable
    if f.fix is not None:
        assert f.fix.applicability == "safe"
        assert all(start <= e.line <= (f.end_line or start) and e.op == "delete" for e in f.fix.edits)


def test_an_open_step_with_text_is_not_fixable_and_names_its_partial(tmp_path: Path) -> None:
    stream, start = v26_open_with_partial_text()
    (f,) = [f for f in scan(stream.write(tmp_path / "s.ndjson")) if f.code == "C203"]
    assert (f.line, f.end_line, f.session) == (start, start + 1, "wrun_x")
    assert f.evidence["partial_text"] == "The outage began at"
    assert "partial assistant" in f.message and f.fix is None


def test_a_vacuous_open_step_is_removed_by_heal(tmp_path: Path) -> None:
    """The safe fix deletes exactly the line of the attempt, and a rescan is clean."""
    stream, start = v26_open_vacuous()
    path = stream.write(tmp_path / "s.ndjson")
    before = path.read_bytes().splitlines()
    result = CliRunner().invoke(app, ["heal", "--in-place", "--no-backup", str(path)])
    assert result.exit_code == 0, result.stdout
    assert path.read_bytes().splitlines() == before[: start - 1] + before[start:]
    assert scan(path) == []
