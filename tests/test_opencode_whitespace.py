"""An OpenCode assistant message whose only text part is whitespace (anomalyco/opencode#31259) is W101,
in the database and in the `opencode export` JSON; whitespace beside other content is W102.

The labelled case is data: tests/cases/opencode-db/whitespace-assistant.sql (a reviewable script
that builds the database, checked by tests/test_cases.py with its .expected.toml) and
tests/cases/opencode-export/whitespace-assistant.json (the export of its first session). These
tests add what the labels cannot say: the two formats agree, and heal removes the messages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from transcript_doctor.cli import app

from .test_opencode_support import scan

CASES = Path(__file__).resolve().parent / "cases"
SQL = CASES / "opencode-db" / "whitespace-assistant.sql"
EXPORT = CASES / "opencode-export" / "whitespace-assistant.json"
WHITESPACE_ONLY = ("msg_ws_0002", "msg_ws_0006")


def build_db(tmp_path: Path) -> Path:
    path = tmp_path / "opencode.db"
    conn = sqlite3.connect(path)
    try:
        conn.executescript(SQL.read_text())
    finally:
        conn.close()
    return path


def test_export_and_database_agree(tmp_path: Path) -> None:
    db = {(f.row, f.position) for f in scan(build_db(tmp_path)) if f.code == "W101"}
    export = {(f.evidence["message_id"], f.position) for f in scan(EXPORT) if f.code == "W101"}
    assert db == export == {("msg_ws_0002", 1), ("msg_ws_0006", 5)}
    lines = sorted(f.line for f in scan(EXPORT) if f.code == "W101")
    assert all(line is not None for line in lines) and len(lines) == 2


def test_heal_removes_the_whitespace_messages_and_a_rescan_is_clean(tmp_path: Path) -> None:
    path = build_db(tmp_path)
    res = CliRunner().invoke(app, ["heal", "--in-place", "--no-backup", "--select", "W101", str(path)])
    assert res.exit_code == 0, res.stdout
    assert not [f for f in scan(path) if f.code == "W101"]
    conn = sqlite3.connect(path)
    try:
        kept = {r[0] for r in conn.execute("SELECT id FROM message WHERE session_id = 'ses_ws'")}
    finally:
        conn.close()
    assert kept.isdisjoint(WHITESPACE_ONLY) and "msg_ws_0004" in kept
