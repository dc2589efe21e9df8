"""An OpenCode assistant message whose only text part is whitespace (anomalyco/opencode#31259) is W101,
in the database and in the `opencode export` JSON; whitespace beside other content is W102.

The case is data in tests/cases/opencode-whitespace/: a reviewable SQL script that fills an empty
database with OpenCode's schema, the export of its first session, and the labels."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.model import Finding

from .test_opencode_support import fixture_schema, scan

CASE = Path(__file__).resolve().parent / "cases" / "opencode-whitespace"
LABELS = json.loads((CASE / "expected.json").read_text())


def build_db(tmp_path: Path) -> Path:
    path = tmp_path / "opencode.db"
    conn = sqlite3.connect(path)
    try:
        for sql in fixture_schema():
            conn.execute(sql)
        conn.execute(
            "INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('p1', '/p', 0, 0, '[]')"
        )
        conn.executescript((CASE / LABELS["db"]["script"]).read_text())
        conn.commit()
    finally:
        conn.close()
    return path


def _db_hit(f: Finding, entry: dict[str, Any]) -> bool:
    return f.code == entry["code"] and f.session == entry["session"] and f.row == entry["row"]


def _export_hit(f: Finding, entry: dict[str, Any]) -> bool:
    return f.code == entry["code"] and f.evidence.get("message_id") == entry["message"]


@pytest.fixture(scope="module")
def db_findings(tmp_path_factory: pytest.TempPathFactory) -> list[Finding]:
    return scan(build_db(tmp_path_factory.mktemp("oc-ws")))


@pytest.mark.parametrize("entry", LABELS["db"]["must_find"], ids=lambda e: f"{e['code']}-{e['row']}")
def test_database_must_find(db_findings: list[Finding], entry: dict[str, Any]) -> None:
    (f,) = [f for f in db_findings if _db_hit(f, entry)]
    assert f.position == entry["position"]
    if f.code == "W101":
        assert f.fix is not None and f.fix.applicability == "safe"


@pytest.mark.parametrize("entry", LABELS["db"]["must_not_find"], ids=lambda e: f"{e['code']}-{e['row']}")
def test_database_must_not_find(db_findings: list[Finding], entry: dict[str, Any]) -> None:
    assert not [f for f in db_findings if _db_hit(f, entry)], entry["note"]


def test_export_json_agrees_with_the_database(db_findings: list[Finding]) -> None:
    findings = scan(CASE / LABELS["export"]["store"])
    for entry in LABELS["export"]["must_find"]:
        (f,) = [f for f in findings if _export_hit(f, entry)]
        assert f.position == entry["position"] and f.line is not None
        twin = [d for d in db_findings if d.code == f.code and d.row == entry["message"]]
        assert [d.position for d in twin] == [f.position]
    for entry in LABELS["export"]["must_not_find"]:
        assert not [f for f in findings if _export_hit(f, entry)]


def test_heal_removes_the_whitespace_message_and_a_rescan_is_clean(tmp_path: Path) -> None:
    path = build_db(tmp_path)
    res = CliRunner().invoke(app, ["heal", "--in-place", "--no-backup", "--select", "W101", str(path)])
    assert res.exit_code == 0, res.stdout
    assert not [f for f in scan(path) if f.code == "W101"]
    conn = sqlite3.connect(path)
    try:
        kept = {r[0] for r in conn.execute("SELECT id FROM message WHERE session_id = 'ses_ws'")}
    finally:
        conn.close()
    assert "msg_ws_0002" not in kept and "msg_ws_0006" not in kept and "msg_ws_0004" in kept
