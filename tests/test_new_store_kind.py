"""A store kind added from outside the package gets every shared rule: the chat-log demonstration.

`tests/chatlog.py` defines the kind and registers it with one call; no shared file names it. The
labelled cases in `tests/cases/chat-log/` pin each rule's positive and near-miss; this test pins
that the whole shared catalogue reaches the new kind, with fixes from its editor.
"""

from __future__ import annotations

from pathlib import Path

from tests import chatlog
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.rules.engine import shared_codes
from transcript_doctor.stores import detect, kinds

CASES = Path(__file__).resolve().parent / "cases" / "chat-log"


def test_registered_kind_is_detected_by_content() -> None:
    assert kinds()["chat-log"] is chatlog.KIND
    assert detect(CASES / "w101-vacuous-assistant.jsonl").format == "chat-log"


def test_every_shared_rule_reaches_the_new_kind() -> None:
    report = scan(str(CASES), ScanConfig(jobs=1))
    assert {fr.format for fr in report.files} == {"chat-log"}
    assert {f.code for f in report.findings} == shared_codes()


def test_fixes_come_from_the_new_kinds_editor() -> None:
    report = scan(str(CASES / "w101-vacuous-assistant.jsonl"), ScanConfig(jobs=1))
    (w101,) = report.findings
    assert w101.fix is not None and w101.fix.applicability == "safe"
    assert [e.as_dict() for e in w101.fix.edits] == [{"op": "delete", "line": 2}]
