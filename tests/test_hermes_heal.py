"""Healing Hermes databases in place: backup, BEGIN IMMEDIATE, FTS kept consistent, idempotent."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

try:  # tests/ may or may not be a package
    from tests.test_hermes_schemas import build_db, call
except ImportError:
    from test_hermes_schemas import build_db, call
from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.heal import database
from transcript_doctor.heal.database import run as run_sql
from transcript_doctor.heal.pipeline import heal_findings
from transcript_doctor.heal.plan import SqlWrite
from transcript_doctor.heal.restore import restore
from transcript_doctor.healing import identity
from transcript_doctor.model import RefusedError
from transcript_doctor.stores import HealOptions, Options, open_store
from transcript_doctor.stores.options import RowHealOptions

HERMES = Path(__file__).resolve().parent.parent / "fixtures" / "hermes"
DATABASES = ["hermes-state-v21.db", "hermes-state-v21-b.db", "hermes-state-v30.db"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def findings(path: Path) -> list:
    store = open_store(path, str(path), Options())
    try:
        return check_store(store, ScanConfig())
    finally:
        store.close()


def heal(path: Path, fs: list, **kw):
    store = open_store(path, str(path), Options())
    try:
        return heal_findings(store, fs, ScanConfig(), HealOptions(**{"mode": "in-place", "unsafe_fixes": True, **kw}))
    finally:
        store.close()


def fixable(fs: list, unsafe: bool = True) -> list:
    return [f for f in fs if f.fix and (f.fix.applicability == "safe" or unsafe)]


def fts_rows(path: Path, table: str, term: str) -> set[int]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f'"{term}"',))}


def fts_check(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        for table in ("messages_fts", "messages_fts_trigram"):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


@pytest.fixture
def copy(tmp_path: Path):
    def make(name: str) -> Path:
        dest = tmp_path / name
        shutil.copy(HERMES / name, dest)
        return dest

    return make


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("name", DATABASES)
def test_heal_fixture(copy, name: str, unsafe: bool) -> None:
    db = copy(name)
    before = findings(db)
    todo = fixable(before, unsafe)
    if not todo:
        assert name == "hermes-state-v30.db" and not unsafe  # its two findings are unsafe fixes
        return
    result = heal(db, todo)
    fixed = {identity(f) for f in result.applied}
    assert result.written and result.changed and not [f for f in result.remaining if identity(f) in fixed]
    assert Path(result.backup).is_file()
    assert {identity(f) for f in findings(Path(result.backup))} == {identity(f) for f in before}
    after = findings(db)
    assert not [f for f in after if identity(f) in fixed]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    fts_check(db)
    # healing again changes nothing, not even the file
    state = digest(db)
    again = heal(db, fixable(after, unsafe))
    assert not again.changed and not again.written and digest(db) == state


def test_untouched_rows_still_match_full_text(copy) -> None:
    db = copy("hermes-state-v21.db")
    terms = ("parser", "turn", "chart", "summarize")
    before = {t: fts_rows(db, "messages_fts", t) for t in terms}
    assert before["parser"] == {1, 2, 17, 19} and 14 in before["turn"]
    heal(db, fixable(findings(db)))
    after = {t: fts_rows(db, "messages_fts", t) for t in terms}
    # deactivated rows stay searchable (Hermes keeps soft-deleted rows in the index); row 19 lost
    # its unanswered call, whose text was part of the indexed string
    assert after == {**before, "parser": {1, 2, 17}}
    assert 14 in fts_rows(db, "messages_fts_trigram", "turn 1")


def test_v30_external_content_fts_after_heal(copy) -> None:
    db = copy("hermes-state-v30.db")
    heal(db, fixable(findings(db)))
    assert fts_rows(db, "messages_fts", "endpoints") == {14}
    inserted = fts_rows(db, "messages_fts", "interrupted")
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT id, role, tool_call_id, effect_disposition, active FROM messages "
                           "WHERE tool_call_id = 'call_dd1' AND role = 'tool'").fetchone()
        counts = conn.execute("SELECT message_count, tool_call_count FROM sessions WHERE id = '20260826_120000_506172'").fetchone()
        rewinds = conn.execute("SELECT rewind_count FROM sessions WHERE id = '20260825_083000_4f5061'").fetchone()
    assert row[1:] == ("tool", "call_dd1", "unknown", 1) and inserted == {row[0]}
    assert counts == (6, 1)  # 5 active rows + the synthetic result; one tool call
    assert rewinds == (1,)


def test_safe_only_leaves_unsafe_findings(copy) -> None:
    db = copy("hermes-state-v21.db")
    result = heal(db, fixable(findings(db), unsafe=False))
    assert [f.code for f in result.applied] == ["S305"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id, active, compacted FROM messages WHERE id IN (8, 9)").fetchall() == [(8, 0, 0), (9, 0, 0)]
        assert conn.execute("SELECT message_count FROM sessions WHERE id = '20260811_090000_b4d5e6f7'").fetchone() == (6,)
    assert {f.code for f in findings(db)} == {"S301", "T403", "T405", "W103"}


def test_locked_database_is_refused_untouched(copy) -> None:
    db = copy("hermes-state-v21-b.db")
    todo = fixable(findings(db))
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        state = digest(db)
        with pytest.raises(RefusedError) as info:
            heal(db, todo)
        assert info.value.exit_code == 3
        assert digest(db) == state
        assert not list(db.parent.glob("*.tdoc-backup-*"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert heal(db, todo).written


def test_cli_heal_locked_exit_3(copy) -> None:
    db = copy("hermes-state-v30.db")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(app, ["heal", str(db), "--in-place", "--unsafe-fixes"])
        assert result.exit_code == 3
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert {f.code for f in findings(db)} == {"S301", "W103"}


def test_cli_heal_in_place_and_dry_run(copy) -> None:
    db = copy("hermes-state-v21-b.db")
    state = digest(db)
    dry = CliRunner().invoke(app, ["heal", str(db)])
    assert dry.exit_code == 1 and digest(db) == state
    done = CliRunner().invoke(app, ["heal", str(db), "--in-place", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert {f.code for f in findings(db)} == {"S304"}
    assert CliRunner().invoke(app, ["heal", str(db)]).exit_code == 0


def test_dry_run_prints_the_sql_plan(copy) -> None:
    db = copy("hermes-state-v21-b.db")
    state = digest(db)
    store = open_store(db, str(db), Options())
    result = heal_findings(store, fixable(findings(db)), ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))
    store.close()
    assert result.changed and not result.written and digest(db) == state
    assert "UPDATE messages SET active = 0, compacted = 0 WHERE id = 2;" in result.diff
    assert result.diff.startswith("BEGIN IMMEDIATE;") and "PRAGMA quick_check;" in result.diff


def test_output_mode_heals_a_copy(copy, tmp_path: Path) -> None:
    db = copy("hermes-state-v30.db")
    state = digest(db)
    out = tmp_path / "healed.db"
    result = heal(db, fixable(findings(db)), mode="output", output=out)
    assert result.output == str(out) and result.backup is None
    assert digest(db) == state
    assert findings(out) == []


def test_purge_deletes_rows_and_keeps_fts(copy) -> None:
    db = copy("hermes-state-v21-b.db")
    heal(db, fixable(findings(db)), settings=(RowHealOptions(purge=True),))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM messages WHERE id IN (2, 12, 15, 26)").fetchone() == (0,)
    fts_check(db)
    assert fts_rows(db, "messages_fts", "lockfile") == {1, 4, 8}
    assert fts_rows(db, "messages_fts", "exit_code") == {11, 14}  # rows 12 and 15 are gone


def test_stale_findings_are_skipped(copy) -> None:
    db = copy("hermes-state-v21-b.db")
    todo = fixable(findings(db))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE messages SET content = 'A real answer now.' WHERE id = 2")
    result = heal(db, todo)
    assert {(s["code"], s["row"]) for s in result.skipped} == {("W101", 2)}
    assert {f.row for f in result.applied} == {12, 15, 26}


def test_change_during_heal_is_refused(copy, monkeypatch) -> None:
    db = copy("hermes-state-v21-b.db")
    real = database.run

    def racing(path, write, backup):
        with sqlite3.connect(path) as conn:  # another writer slips in before our transaction
            conn.execute("UPDATE messages SET content = 'edited' WHERE id = 1")
        return real(path, write, backup)

    monkeypatch.setattr(database, "run", racing)
    with pytest.raises(RefusedError):
        heal(db, fixable(findings(db)))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT active FROM messages WHERE id = 2").fetchone() == (1,)


def test_any_subset_and_empty(copy) -> None:
    db = copy("hermes-state-v21.db")
    fs = fixable(findings(db))
    assert not heal(db, []).changed
    only = [f for f in fs if f.code == "W103"]
    result = heal(db, only)
    assert [f.code for f in result.applied] == ["W103"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT tool_calls, active FROM messages WHERE id = 19").fetchone() == (None, 1)


def _session(messages: list[dict]) -> list[dict]:
    return [{"id": "sfix", "messages": messages}]


def test_heal_rewrites_content_the_way_hermes_stores_it(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.db", 21, _session([
        {"role": "assistant", "content": "Hello first."},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}, {"type": "text", "text": " "}],
         "finish_reason": "stop"},
        {"role": "user", "content": "bad \x00 byte"},
        {"role": "assistant", "content": "", "tool_calls": [call("d1"), call("d1")], "finish_reason": "tool_calls"},
        {"role": "tool", "content": "r", "tool_call_id": "d1"},
        {"role": "assistant", "content": "done", "finish_reason": "stop"},
    ]))
    before = findings(db)
    assert {f.code for f in before} >= {"W102", "W105", "W108", "F507"}
    heal(db, fixable(before))
    assert {f.code for f in findings(db)} <= {"W109"}
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT id, content FROM messages WHERE id IN (3, 4)").fetchall())
        calls = conn.execute("SELECT tool_calls FROM messages WHERE id = 5").fetchone()[0]
        first = conn.execute("SELECT active FROM messages WHERE id = 1").fetchone()
    assert rows[3] == '\x00json:[{"type": "text", "text": "answer"}]'
    assert rows[4] == "bad \ufffd byte"
    assert json.loads(calls) == [call("d1")]
    assert first == (0,)


def test_schema_without_active_column_needs_purge(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.db", 11, _session([
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "", "finish_reason": "stop"},
    ]))
    fs = fixable(findings(db))
    assert fs and all(not f.fix.edits for f in fs)  # nothing the pipeline may apply without a purge

    def plan(**kw):
        store = open_store(db, str(db), Options())
        try:
            return store.plan_heal(fs, HealOptions(mode="in-place", **kw))
        finally:
            store.close()

    kept = plan()
    assert kept.write is None and "no `active` column" in kept.skipped[0]["reason"]
    purge = plan(settings=(RowHealOptions(purge=True),))
    assert isinstance(purge.write, SqlWrite)
    run_sql(db, purge.write, None)
    assert findings(db) == []


def test_cjk_index_follows_hermes_convention(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""}], "finish_reason": "stop"},
    ]
    db = build_db(tmp_path / "state.db", 30, _session(messages), cjk=True)
    with sqlite3.connect(db) as conn, pytest.raises(sqlite3.OperationalError, match="cjk_unicode61"):
        conn.execute("UPDATE messages SET content = 'x' WHERE id = 1")
    result = heal(db, fixable(findings(db)))
    assert result.written and any("fts_cjk_stale" in w for w in result.warnings)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM state_meta WHERE key = 'fts_cjk_stale'").fetchone() == ("1",)
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_fts_cjk_%'").fetchone() == (0,)


def test_cjk_triggers_kept_when_only_deactivating(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "finish_reason": "stop"}]
    db = build_db(tmp_path / "state.db", 30, _session(messages), cjk=True)
    result = heal(db, fixable(findings(db)))
    assert result.written and result.warnings == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_fts_cjk_%'").fetchone() == (3,)


def test_restore_puts_the_backup_back_in_the_same_file(copy) -> None:
    db = copy("hermes-state-v21-b.db")
    inode = db.stat().st_ino
    result = heal(db, fixable(findings(db)))
    restore(db, backup=Path(result.backup))
    assert db.stat().st_ino == inode
    assert {f.row for f in findings(db) if f.code.startswith("W")} == {2, 12, 15, 26}
