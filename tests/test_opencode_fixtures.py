"""The OpenCode fixtures beyond their labels (tests/test_cases.py checks those): exact locations and evidence."""

from __future__ import annotations

import shutil
from pathlib import Path

from .test_opencode_support import FIXTURES, copy_fixture_db, scan


def test_labelled_findings_point_at_the_message_the_note_names(tmp_path: Path) -> None:
    by_key = {(f.code, f.session): f for f in scan(copy_fixture_db(tmp_path))}
    t401 = by_key[("T401", "ses_0391ce5bfffeYxMT3gWDcEwIVi")]
    assert (t401.table, t401.row) == ("message", "msg_fc6e31fb8004PoOER4PlgQ0tTD")
    assert t401.position is None  # only step markers: OpenCode does not send it
    assert t401.evidence["retry_safe"] is True
    t402 = by_key[("T402", "ses_038ef1effff8UAVsuWJttBiXht")]
    assert t402.evidence["retry_safe"] is False
    assert t402.evidence["run_tokens"]["input"] == 5120
    w101 = by_key[("W101", "ses_02e6b787ffbdj08JDLFU573eDd")]
    assert (w101.row, w101.position) == ("msg_fd1948cf8045u8ejjdoPwsrIe3", 1)
    assert w101.fix is not None and w101.fix.applicability == "safe"
    s307 = by_key[("S307", "ses_02ef4ccbffc4zsT4uAtILthzwA")]
    assert (s307.table, s307.row) == ("part", "prt_fd10b38cc040gsAhlGXaZTj7B6")
    assert s307.evidence["stop_reason"] == "end_turn"
    t404 = by_key[("T404", "ses_032ed08fffd0clP3xjdMd5hBDo")]
    assert (t404.table, t404.row, t404.evidence["status"]) == ("part", "prt_fcd12fc96035cINaLl9QgWXovE", "running")
    e601 = by_key[("E601", "ses_0297c0afffa8TGvsHKSNjYzrTq")]
    assert e601.evidence["named_position"] == 7 and e601.evidence["rule"] == "W103"
    assert e601.evidence["record"] == {"position": 7, "found": False, "request_length": 1}

def test_export_findings_carry_file_lines(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    shutil.copyfile(next(FIXTURES.glob("export-*.json")), path)
    (t403,) = [f for f in scan(path) if f.code == "T403"]
    lines = path.read_text().splitlines()
    assert lines[t403.line - 1].strip() == "{"
    assert '"msg_fdb78e63800aXQ89cUYE05FOH9"' in lines[t403.line + 1]
    assert lines[t403.end_line - 1].strip() == "}"
    assert t403.row is None and t403.position == 3  # user, assistant, user, assistant
