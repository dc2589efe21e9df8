"""The eve fixture streams beyond their labels (tests/test_cases.py checks those), and the stream builders the other eve tests use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.model import Finding
from transcript_doctor.stores import Options, detect, open_store

EVE = Path(__file__).resolve().parent.parent / "fixtures" / "eve"
EXPECTED = sorted(EVE.glob("*.expected.json"))


# ----------------------------------------------------------------------------- builders


class V26:
    """A version <= 26 stream, built event by event; each call returns the event's line number."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def ev(self, kind: str, /, event_id: str | None = None, **data: Any) -> int:
        n = len(self.lines) + 1
        meta = {"id": event_id or f"evt_{n:026d}", "at": "2026-08-01T00:00:00.000Z"}
        self.lines.append(orjson.dumps({"type": kind, "data": data, "meta": meta}))
        return n

    def raw(self, line: bytes) -> int:
        self.lines.append(line)
        return len(self.lines)

    def turn(self, turn_id: str, human: str | None = None, schedule: str | None = None) -> int:
        trigger = {"kind": "schedule", "name": schedule} if schedule else None
        line = self.ev("turn.started", turnId=turn_id, **({"trigger": trigger} if trigger else {}))
        if human is not None:
            self.ev("message.received", turnId=turn_id, message=human, parts=[{"type": "text", "text": human}])
        return line

    def reply(
        self, turn_id: str, step: int, text: str | None, finish: str = "stop", deltas: int = 2, seq: int = 0
    ) -> int:
        """Stream `text` as deltas and complete it; the line of `message.completed`."""
        if text:
            cut = max(1, len(text) // deltas)
            for i in range(0, len(text), cut):
                self.ev(
                    "message.appended", turnId=turn_id, stepIndex=step, sequence=seq, messageDelta=text[i : i + cut]
                )
        return self.ev(
            "message.completed", turnId=turn_id, stepIndex=step, sequence=seq, message=text, finishReason=finish
        )

    def step(self, turn_id: str, step: int, text: str | None, finish: str = "stop") -> int:
        """A whole step that ends in a reply; the line of its `message.completed`."""
        self.ev("step.started", turnId=turn_id, stepIndex=step)
        line = self.reply(turn_id, step, text, finish)
        self.ev("step.completed", turnId=turn_id, stepIndex=step, finishReason=finish)
        return line

    def write(self, path: Path, final_newline: bool = True) -> Path:
        path.write_bytes(b"\n".join(self.lines) + (b"\n" if final_newline else b""))
        return path


class V27:
    """A version 27 stream of commits and progress records."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    @staticmethod
    def fact(kind: str, turn: str | None = None, run: str | None = None, /, **data: Any) -> dict[str, Any]:
        scope = {k: v for k, v in (("turnId", turn), ("runId", run)) if v is not None}
        return {"type": kind, "data": data, "scope": scope}

    def commit(self, *facts: dict[str, Any]) -> int:
        self.lines.append(orjson.dumps({"at": "2026-08-01T00:00:00.000Z", "facts": list(facts)}))
        return len(self.lines)

    def progress(self, fact: dict[str, Any]) -> int:
        self.lines.append(orjson.dumps({"progress": fact}))
        return len(self.lines)

    def run(
        self,
        turn: str,
        run: str,
        text: str | None,
        phase: str = "reply",
        finish: str = "stop",
        retry: str | None = None,
        part: str | None = None,
    ) -> int:
        """A model run that completes `text`; the line of the commit holding `content.completed`."""
        started: dict[str, Any] = {"runId": run, **({"retryReason": retry} if retry else {})}
        self.commit(self.fact("model.requested", turn, run, runId=run), self.fact("model.started", turn, run, **started))
        line = None
        if text is not None:
            part = part or f"part_{run}"
            self.progress(self.fact("content.delta", turn, run, partId=part, kind="text", delta=text))
            line = self.commit(
                self.fact("content.completed", turn, run, partId=part, kind="text", phase=phase, value=text)
            )
        settled = self.commit(self.fact("model.settled", turn, run, runId=run, outcome="completed", finishReason=finish))
        return line or settled

    def write(self, path: Path) -> Path:
        path.write_bytes(b"\n".join(self.lines) + b"\n")
        return path


def scan(path: Path) -> list[Finding]:
    store = open_store(path, str(path), Options())
    try:
        return check_store(store, ScanConfig())
    finally:
        store.close()


def codes(findings: list[Finding]) -> list[tuple[str, int | None]]:
    return [(f.code, f.line) for f in findings]


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module", params=EXPECTED, ids=[p.name for p in EXPECTED])
def labelled(request: pytest.FixtureRequest) -> tuple[dict[str, Any], list[Finding]]:
    expected = orjson.loads(request.param.read_bytes())
    return expected, scan(EVE / expected["store"])


def test_fixtures_are_detected_as_eve_streams() -> None:
    for path in EVE.glob("*.ndjson"):
        assert detect(path).format == "eve-stream"


def test_two_line_rejections_are_reported_once(labelled: tuple[dict[str, Any], list[Finding]]) -> None:
    expected, findings = labelled
    wanted = [e for e in expected["must_find"] if e["name"] == "recorded-provider-rejection"]
    found = [f for f in findings if f.code == "E601"]
    assert len(found) == len(wanted)
    for f in found:
        assert f.end_line is not None and f.end_line == f.line + 1
        assert f.evidence["lines"] == [f.line, f.end_line]


def test_findings_name_their_turn_and_session() -> None:
    for f in scan(EVE / "support-chat.v26.ndjson"):
        assert f.session == "wrun_01K2T0C8R3N5W7Y9B2D4F6H8JA"
        assert f.format == "eve-stream"
        assert f.evidence["turn"].startswith("turn_")
