"""The `hermes sessions export` JSONL reader: detection, line problems, findings by line."""

from __future__ import annotations

import json
from pathlib import Path

from transcript_doctor.core import scan
from transcript_doctor.stores import HealOptions, Options, detect, open_store

HERMES = Path(__file__).resolve().parent.parent / "fixtures" / "hermes"


def session_line(sid: str, messages: list[dict]) -> str:
    return json.dumps({"id": sid, "source": "cli", "user_id": None, "started_at": 1.0, "messages": messages})


def test_detection_by_content(tmp_path: Path) -> None:
    renamed = tmp_path / "sessions.txt"
    renamed.write_bytes((HERMES / "hermes-export-v21.jsonl").read_bytes())
    assert detect(renamed).format == "hermes-export"
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": "x", "type": "metadata"}\n{"source": "cli"}\n')
    assert detect(other, "hermes-export").format == "hermes-export"  # forced
    assert scan([str(other)]).files[0].error  # but not recognised by content


def test_torn_and_corrupt_lines(tmp_path: Path) -> None:
    good = session_line("s1", [
        {"id": 1, "session_id": "s1", "role": "user", "content": "q", "active": 1},
        {"id": 2, "session_id": "s1", "role": "assistant", "content": "(empty)", "finish_reason": "stop", "active": 1},
    ])
    path = tmp_path / "export.jsonl"
    path.write_text(good + "\n{not json\n[1, 2]\n" + good.replace("s1", "s2") + "\n" + good[:40])
    report = scan([str(path)])
    found = sorted((f.code, f.line, f.session) for f in report.findings)
    assert found == [("F501", 5, None), ("F502", 2, None), ("F504", 3, None), ("S301", 1, "s1"), ("S301", 4, "s2")]
    s301 = [f for f in report.findings if f.code == "S301"][0]
    assert s301.evidence["message_id"] == 2 and s301.row is None and s301.fix is None
    assert report.files[0].sessions == 2 and report.files[0].records == 4


def test_export_is_not_healed() -> None:
    store = open_store(HERMES / "hermes-export-v21.jsonl", "export", Options())
    findings = list(store.scan_sessions())
    plan = store.plan_heal(findings, HealOptions(mode="in-place"))
    assert plan.write is None and plan.warnings and len(plan.skipped) == len(findings)


def test_locate_in_export() -> None:
    store = open_store(HERMES / "hermes-export-v21.jsonl", "export", Options())
    hit = store.locate(4, "20260810_120000_a1b2c3")
    assert (hit["line"], hit["message_id"], hit["role"]) == (1, 4, "assistant")
    assert store.locate(99, "20260810_120000_a1b2c3") is None
    assert store.locate(1) is None  # several sessions: the session must be named
