"""Golden tests for the eve rules: a positive case and near-misses for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from transcript_doctor.model import Finding
from transcript_doctor.stores.eve.filler import filler_kind

try:  # tests/ imported as a package, or as a plain directory on sys.path
    from .test_eve_fixtures import V26, V27, codes, scan
except ImportError:
    from test_eve_fixtures import V26, V27, codes, scan  # type: ignore[no-redef]


def _only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def _one_turn(tmp_path: Path, text: str | None, finish: str = "stop", **turn) -> tuple[Path, int]:
    s = V26()
    s.ev("session.started", sessionId="wrun_t")
    s.turn("t0", **turn)
    line = s.step("t0", 0, text, finish)
    s.ev("turn.completed", turnId="t0")
    return s.write(tmp_path / "s.ndjson"), line


# ----------------------------------------------------------------------------- S302 / S303


@pytest.mark.parametrize(
    "text",
    ["<evedev-empty-delivery/>", "<eve-empty-delivery></eve-empty-delivery>", "&lt;eve_empty_delivery&gt;",
     "```xml\n<eve-empty-delivery/>\n```", "<EVE-EMPTY-DELIVERY/>!"],
)  # fmt: skip
def test_s302_mangled_marker_posted(tmp_path: Path, text: str) -> None:
    path, line = _one_turn(tmp_path, text, human="anything new?")
    (f,) = scan(path)
    assert (f.code, f.line, f.severity) == ("S302", line, "error")
    assert f.evidence["form"] == "mangled" and f.evidence["turn"] == "t0"
    assert f.evidence["text"] == text and f.session == "wrun_t"
    assert f.fix is None


@pytest.mark.parametrize(
    "text",
    ["The tag <evedev-empty-delivery/> is corrupted.", "Reply with <eve-empty-delivery> to stay quiet.",
     "<eve-empty-deliveryx/>", "<p>Here is the report.</p>"],
)  # fmt: skip
def test_s302_s303_near_misses_in_prose(tmp_path: Path, text: str) -> None:
    path, _ = _one_turn(tmp_path, text, human="why the weird tag?")
    assert scan(path) == []


def test_s302_not_when_the_runtime_stayed_silent(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", schedule="digest")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="<evedev-empty-delivery/>")
    s.ev("message.completed", turnId="t0", stepIndex=0, sequence=0, message=None, finishReason="stop")
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")
    s.ev("turn.completed", turnId="t0")
    assert scan(s.write(tmp_path / "s.ndjson")) == []


def test_s302_not_when_v27_withheld_the_reply_part(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0", trigger={"kind": "schedule"}))
    s.run("t0", "r1", "<evedev-empty-delivery/>")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=[]))
    assert scan(s.write(tmp_path / "s.ndjson")) == []


def test_s302_when_v27_delivered_the_reply_part(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0", trigger={"kind": "schedule"}))
    line = s.run("t0", "r1", "<evedev-empty-delivery/>")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=["part_r1"]))
    assert codes(scan(s.write(tmp_path / "s.ndjson"))) == [("S302", line)]


def test_s302_exact_marker_recorded_as_delivered_text(tmp_path: Path) -> None:
    path, line = _one_turn(tmp_path, "<eve-empty-delivery/>", human="hi")
    (f,) = scan(path)
    assert (f.code, f.line, f.evidence["form"]) == ("S302", line, "exact")


@pytest.mark.parametrize(
    "text",
    ["No new alerts since the 09:00 digest. <eve-empty-delivery/>",
     "&lt;eve-empty-delivery/&gt; nothing else to add", "Done.\n\n<eve-empty-delivery/>\n\nBye."],
)  # fmt: skip
def test_s303_exact_marker_inside_a_reply(tmp_path: Path, text: str) -> None:
    path, line = _one_turn(tmp_path, text, human="alerts?")
    (f,) = scan(path)
    assert (f.code, f.line, f.severity) == ("S303", line, "warning")


def test_s303_not_for_a_whole_reply_marker_with_punctuation(tmp_path: Path) -> None:
    path, line = _one_turn(tmp_path, "<eve-empty-delivery/>.", human="alerts?")
    assert codes(scan(path)) == [("S302", line)]


def test_marker_rules_count_a_reemitted_reply_once(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.reply("t0", 0, "<evedev-empty-delivery/>")
    s.ev("step.started", turnId="t0", stepIndex=0)  # durable retry
    line = s.reply("t0", 0, "<evedev-empty-delivery/>")
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="stop")
    s.ev("turn.completed", turnId="t0")
    findings = scan(s.write(tmp_path / "s.ndjson"))
    assert [(f.code, f.line, f.evidence["reemitted"]) for f in _only(findings, "S302")] == [("S302", line, 1)]


# ----------------------------------------------------------------------------- S306


@pytest.mark.parametrize(
    "text", ["I now have all the data I need.", "Here is the report:", "Let me compile the weekly digest."]
)
def test_s306_filler_in_a_scheduled_turn(tmp_path: Path, text: str) -> None:
    path, line = _one_turn(tmp_path, text, schedule="nightly")
    (f,) = scan(path)
    assert (f.code, f.line) == ("S306", line)
    assert f.evidence["trigger"] == {"kind": "schedule", "name": "nightly"}
    assert f.evidence["session_has_human"] is False


def test_s306_filler_after_a_task_result(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0")
    s.ev("message.received", turnId="t0", kind="task.result", message="[Task result] done")
    line = s.step("t0", 0, "I have everything I need.")
    s.ev("turn.completed", turnId="t0")
    assert codes(scan(s.write(tmp_path / "s.ndjson"))) == [("S306", line)]


@pytest.mark.parametrize(
    "text",
    ["Rotated 4 keys; 0 failures.", "All systems healthy; nothing new overnight.", "Nothing to report.",
     "Here is the report: all green, no incidents.", "See https://status.example for details.",
     "- api: healthy\n- billing: healthy", "I checked every dashboard and all services are healthy."],
)  # fmt: skip
def test_s306_real_short_answers_are_not_filler(tmp_path: Path, text: str) -> None:
    path, _ = _one_turn(tmp_path, text, schedule="nightly")
    assert scan(path) == []


def test_s306_not_in_a_human_turn(tmp_path: Path) -> None:
    path, _ = _one_turn(tmp_path, "I now have all the data I need.", human="status?")
    assert scan(path) == []


def test_s306_not_when_narration_is_followed_by_the_report(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", schedule="nightly")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.reply("t0", 0, "Here is the report:", finish="tool-calls")
    s.ev("actions.requested", turnId="t0", stepIndex=0, actions=[{"callId": "c1", "toolName": "q", "input": {}}])
    s.ev("action.result", turnId="t0", stepIndex=0, callId="c1", output={"n": 3})
    s.ev("step.completed", turnId="t0", stepIndex=0, finishReason="tool-calls")
    s.step("t0", 1, "Builds: 3 passed, 0 failed.")
    s.ev("turn.completed", turnId="t0")
    assert scan(s.write(tmp_path / "s.ndjson")) == []


def test_s306_v27_names_the_empty_run_it_followed(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0", trigger={"kind": "schedule", "name": "n"}))
    empty_settled = s.run("t0", "r1", None)  # requested, started, settled with no content
    line = s.run("t0", "r2", "Compiling the numbers now:", retry="empty-response")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=["part_r2"]))
    (f,) = scan(s.write(tmp_path / "s.ndjson"))
    assert (f.code, f.line) == ("S306", line)
    empty_start = empty_settled - 1
    assert f.evidence["empty_response_retry"] == {"retry_reason": "empty-response", "empty_line": empty_start}
    assert f"empty model reply (line {empty_start})" in f.message


def test_filler_is_bounded_in_length() -> None:
    assert filler_kind("I now have all the data I need. " * 5) is None
    assert filler_kind(None) is None and filler_kind("   ") is None


# ----------------------------------------------------------------------------- T403


def test_t403_cut_off_by_length(tmp_path: Path) -> None:
    path, line = _one_turn(tmp_path, "## Changelog\n- 3.0.1: fixed", finish="length", human="changelog?")
    (f,) = scan(path)
    assert (f.code, f.line) == ("T403", line)
    assert "length" in f.evidence["reason"]


def test_t403_v27_narration_is_the_last_text(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("delivery.consumed", "t0", message="check it"))
    line = s.run("t0", "r1", "Checking the dashboards next.", phase="narration", finish="tool-calls")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=[]))
    (f,) = scan(s.write(tmp_path / "s.ndjson"))
    assert (f.code, f.line) == ("T403", line)


def test_t403_reply_then_the_turn_failed(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="go")
    line = s.step("t0", 0, "Starting the migration now.")
    s.ev("step.started", turnId="t0", stepIndex=1)
    s.ev("step.failed", turnId="t0", stepIndex=1, code="MODEL_CALL_FAILED", message="500 oops")
    s.ev("turn.failed", turnId="t0", code="MODEL_CALL_FAILED", message="500 oops")
    findings = scan(s.write(tmp_path / "s.ndjson"))
    (f,) = _only(findings, "T403")
    assert f.line == line and "later step failed" in f.evidence["reason"]


@pytest.mark.parametrize("finish", ["stop", "end_turn"])
def test_t403_not_for_a_terminal_reply(tmp_path: Path, finish: str) -> None:
    path, _ = _one_turn(tmp_path, "Yes, merged.", finish=finish, human="merged?")
    assert scan(path) == []


def test_t403_not_while_the_turn_is_still_running(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="go")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.reply("t0", 0, "Looking it up.", finish="tool-calls")
    assert _only(scan(s.write(tmp_path / "s.ndjson")), "T403") == []  # the open step is C203 (test_eve_open_steps)


# ----------------------------------------------------------------------------- C203


def test_c203_failed_step_with_partial_text(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="restart")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("message.appended", turnId="t0", stepIndex=0, sequence=0, messageDelta="Restarting the wor")
    end = s.ev("step.failed", turnId="t0", stepIndex=0, code="MODEL_CALL_FAILED", message="503 unavailable")
    s.step("t0", 0, "Restarted.")  # the retry: its step.started is the next line
    s.ev("turn.completed", turnId="t0")
    (f,) = scan(s.write(tmp_path / "s.ndjson"))
    assert (f.code, f.line, f.end_line) == ("C203", start, end)
    assert f.evidence["partial_text"] == "Restarting the wor"
    assert f.evidence["retried_at"] == end + 1
    assert f.fix is None  # it left partial text and an error record


def test_c203_abandoned_vacuous_attempt_is_safely_removable(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    start = s.ev("step.started", turnId="t0", stepIndex=0)
    s.step("t0", 0, "Hello.")
    s.ev("turn.completed", turnId="t0")
    (f,) = scan(s.write(tmp_path / "s.ndjson"))
    assert (f.code, f.line, f.evidence["status"], f.evidence["vacuous"]) == ("C203", start, "abandoned", True)
    assert f.fix is not None and f.fix.applicability == "safe"
    assert [e.as_dict() for e in f.fix.edits] == [{"op": "delete", "line": start}]


def test_c203_v27_failed_run(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    start = s.commit(s.fact("model.started", "t0", "r1", runId="r1"))
    s.progress(s.fact("content.delta", "t0", "r1", partId="p", kind="text", delta="Nightly rep"))
    s.commit(s.fact("model.settled", "t0", "r1", outcome="failed", error={"code": "X", "message": "502 Bad Gateway"}))
    s.run("t0", "r2", "Nightly report: 3 errors.")
    s.commit(s.fact("turn.settled", "t0", turnId="t0", outcome="completed", reply=["part_r2"]))
    findings = scan(s.write(tmp_path / "s.ndjson"))
    assert codes(findings) == [("C203", start)]
    assert findings[0].evidence["error"]["message"] == "502 Bad Gateway"


def test_c203_not_for_settled_steps(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="hi")
    s.step("t0", 0, "Done: 2 items.")
    s.ev("turn.completed", turnId="t0")
    s.turn("t1", human="more")
    s.step("t1", 0, "Two more.")
    assert scan(s.write(tmp_path / "s.ndjson")) == []


# ----------------------------------------------------------------------------- E601


def test_e601_step_and_turn_failure_reported_once(tmp_path: Path) -> None:
    s = V26()
    s.turn("t0", human="summarise")
    s.ev("step.started", turnId="t0", stepIndex=0)
    msg = "400 Invalid request: the message at position 9 with role 'assistant' must not be empty"
    first = s.ev("step.failed", turnId="t0", stepIndex=0, code="MODEL_CALL_FAILED", message=msg)
    last = s.ev("turn.failed", turnId="t0", code="MODEL_CALL_FAILED", message=msg)
    (f,) = _only(scan(s.write(tmp_path / "s.ndjson")), "E601")
    assert (f.line, f.end_line, f.position) == (first, last, 9)
    assert f.evidence["pattern"] == "empty-message-at-position" and f.evidence["points_to"] == "W101"
    assert f.evidence["lines"] == [first, last] and f.evidence["scopes"] == ["step", "turn"]


def test_e601_v27_error_object(tmp_path: Path) -> None:
    s = V27()
    s.commit(s.fact("turn.started", "t0", turnId="t0"))
    s.commit(s.fact("model.started", "t0", "r1", runId="r1"))
    err = {"code": "MODEL_CALL_FAILED", "message": "400 messages.3.content.1: `tool_use` ids must be unique"}
    line = s.commit(s.fact("model.settled", "t0", "r1", outcome="failed", error=err))
    (f,) = _only(scan(s.write(tmp_path / "s.ndjson")), "E601")
    assert (f.line, f.end_line, f.position, f.evidence["points_to"]) == (line, None, 3, "W105")


@pytest.mark.parametrize(
    "message",
    ["429 Too Many Requests: rate limit exceeded", "503 Service Unavailable", "502 Bad Gateway",
     "The model did not return a response. Please try again."],
)  # fmt: skip
def test_e601_not_for_transient_errors(tmp_path: Path, message: str) -> None:
    s = V26()
    s.turn("t0", human="go")
    s.ev("step.started", turnId="t0", stepIndex=0)
    s.ev("step.failed", turnId="t0", stepIndex=0, code="MODEL_CALL_FAILED", message=message)
    s.ev("turn.failed", turnId="t0", code="MODEL_CALL_FAILED", message=message)
    assert _only(scan(s.write(tmp_path / "s.ndjson")), "E601") == []


def test_e601_separate_turns_are_separate_findings(tmp_path: Path) -> None:
    s = V26()
    msg = "400 roles must alternate between user and assistant"
    for t in ("t0", "t1"):
        s.turn(t, human="go")
        s.ev("turn.failed", turnId=t, code="MODEL_CALL_FAILED", message=msg)
    found = _only(scan(s.write(tmp_path / "s.ndjson")), "E601")
    assert [f.evidence["turn"] for f in found] == ["t0", "t1"]
