"""Hermes databases of every schema generation, built with plain sqlite3 from Hermes' DDL (docs/hermes.md §1)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from transcript_doctor.core import scan
from transcript_doctor.model import TdocError
from transcript_doctor.stores import Options, open_store
from transcript_doctor.stores.options import SqliteOptions

GENERATIONS = (6, 11, 16, 21, 30)
_S = {
    6: ["id TEXT PRIMARY KEY", "source TEXT NOT NULL", "user_id TEXT", "model TEXT", "model_config TEXT",
        "system_prompt TEXT", "parent_session_id TEXT REFERENCES sessions(id)", "started_at REAL NOT NULL",
        "ended_at REAL", "end_reason TEXT", "message_count INTEGER DEFAULT 0", "tool_call_count INTEGER DEFAULT 0",
        "input_tokens INTEGER DEFAULT 0", "output_tokens INTEGER DEFAULT 0", "title TEXT"],
    11: ["api_call_count INTEGER DEFAULT 0", "handoff_state TEXT", "handoff_platform TEXT", "handoff_error TEXT"],
    16: [],
    21: ["session_key TEXT", "chat_id TEXT", "chat_type TEXT", "thread_id TEXT", "display_name TEXT", "origin_json TEXT",
         "expiry_finalized INTEGER DEFAULT 0", "cwd TEXT", "git_branch TEXT", "estimated_cost_usd REAL",
         "compression_fallback_streak INTEGER NOT NULL DEFAULT 0", "rewind_count INTEGER NOT NULL DEFAULT 0",
         "archived INTEGER NOT NULL DEFAULT 0"],
    30: ["created_source TEXT", "system_prompt_hash TEXT", "title_source TEXT", "last_activity_at REAL",
         "pinned INTEGER NOT NULL DEFAULT 0", "hidden INTEGER NOT NULL DEFAULT 0", "tool_names TEXT"],
}
_M = {
    6: ["id INTEGER PRIMARY KEY AUTOINCREMENT", "session_id TEXT NOT NULL REFERENCES sessions(id)", "role TEXT NOT NULL",
        "content TEXT", "tool_call_id TEXT", "tool_calls TEXT", "tool_name TEXT", "timestamp REAL NOT NULL",
        "token_count INTEGER", "finish_reason TEXT", "reasoning TEXT", "reasoning_details TEXT",
        "codex_reasoning_items TEXT"],
    11: ["reasoning_content TEXT", "codex_message_items TEXT"],
    16: ["platform_message_id TEXT", "observed INTEGER DEFAULT 0", "active INTEGER NOT NULL DEFAULT 1"],
    21: ["effect_disposition TEXT", "compacted INTEGER NOT NULL DEFAULT 0"],
    30: ["_compressed_summary INTEGER NOT NULL DEFAULT 0", "api_content TEXT", "display_kind TEXT",
         "display_metadata TEXT", "display_identity BLOB", "display_order INTEGER"],
}
_FTS_TEXT = "COALESCE({t}.content, '') || ' ' || COALESCE({t}.tool_name, '') || ' ' || COALESCE({t}.tool_calls, '')"
LEGACY_FTS = "".join(
    f"""
CREATE VIRTUAL TABLE {name} USING fts5(content{tok});
CREATE TRIGGER {name}_insert AFTER INSERT ON messages BEGIN
  INSERT INTO {name}(rowid, content) VALUES (new.id, {_FTS_TEXT.format(t='new')}); END;
CREATE TRIGGER {name}_delete AFTER DELETE ON messages BEGIN DELETE FROM {name} WHERE rowid = old.id; END;
CREATE TRIGGER {name}_update AFTER UPDATE ON messages BEGIN
  DELETE FROM {name} WHERE rowid = old.id;
  INSERT INTO {name}(rowid, content) VALUES (new.id, {_FTS_TEXT.format(t='new')}); END;
"""
    for name, tok in (("messages_fts", ""), ("messages_fts_trigram", ", tokenize='trigram'"))
)
V30_FTS = """
CREATE VIEW messages_fts_src AS SELECT id, CASE WHEN role = 'tool' THEN substr(content, 1, 8192) ELSE content END
  AS content, tool_name, tool_calls FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content, tool_name, tool_calls) VALUES (new.id,
  CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 8192) ELSE new.content END, new.tool_name, new.tool_calls); END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls) VALUES ('delete', old.id,
  CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 8192) ELSE old.content END, old.tool_name, old.tool_calls); END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_calls, role ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls) VALUES ('delete', old.id,
  CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 8192) ELSE old.content END, old.tool_name, old.tool_calls);
  INSERT INTO messages_fts(rowid, content, tool_name, tool_calls) VALUES (new.id,
  CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 8192) ELSE new.content END, new.tool_name, new.tool_calls); END;
CREATE VIEW messages_fts_trigram_src AS SELECT id, content, tool_name FROM messages WHERE role <> 'tool';
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tool_name, content='messages_fts_trigram_src',
  content_rowid='id', tokenize='trigram');
CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages WHEN new.role <> 'tool' BEGIN
  INSERT INTO messages_fts_trigram(rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name); END;
CREATE TRIGGER messages_fts_trigram_delete AFTER DELETE ON messages WHEN old.role <> 'tool' BEGIN
  INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content, tool_name)
  VALUES ('delete', old.id, old.content, old.tool_name); END;
CREATE TRIGGER messages_fts_trigram_update AFTER UPDATE OF content, tool_name, tool_calls, role ON messages BEGIN
  INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content, tool_name)
  SELECT 'delete', old.id, old.content, old.tool_name WHERE old.role <> 'tool';
  INSERT INTO messages_fts_trigram(rowid, content, tool_name) SELECT new.id, new.content, new.tool_name
  WHERE new.role <> 'tool'; END;
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
"""
CJK_TRIGGERS = """
CREATE TRIGGER messages_fts_cjk_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts_cjk(rowid, content) VALUES (new.id, new.content); END;
CREATE TRIGGER messages_fts_cjk_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts_cjk(messages_fts_cjk, rowid, content) VALUES ('delete', old.id, old.content); END;
CREATE TRIGGER messages_fts_cjk_update AFTER UPDATE OF content, tool_name, tool_calls, role ON messages BEGIN
  INSERT INTO messages_fts_cjk(messages_fts_cjk, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts_cjk(rowid, content) VALUES (new.id, new.content); END;
"""


def columns_for(table: dict[int, list[str]], generation: int) -> list[str]:
    return [c for g in GENERATIONS if g <= generation for c in table[g]]


def ddl(generation: int, *, nullable_active: bool = False) -> str:
    msgs = columns_for(_M, generation)
    if nullable_active:
        msgs = ["active INTEGER DEFAULT 1" if c.startswith("active ") else c for c in msgs]
    return (
        f"CREATE TABLE schema_version (version INTEGER NOT NULL);\n"
        f"INSERT INTO schema_version VALUES ({generation});\n"
        f"CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);\n"
        f"CREATE TABLE sessions ({', '.join(columns_for(_S, generation))});\n"
        f"CREATE TABLE messages ({', '.join(msgs)});\n"
        f"CREATE INDEX idx_messages_session ON messages(session_id, timestamp);\n"
        + (V30_FTS if generation >= 23 else LEGACY_FTS)
    )


def _value(key: str, value):
    if key == "content" and isinstance(value, (list, dict)):
        return "\x00json:" + json.dumps(value)
    if key == "tool_calls" and isinstance(value, list):
        return json.dumps(value) if value else None
    return value


def build_db(path: Path, generation: int, sessions: list[dict], *, wal: bool = True, cjk: bool = False,
             nullable_active: bool = False) -> Path:
    """A Hermes database of `generation` holding `sessions` ({id, messages: [...], ...session columns})."""
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(ddl(generation, nullable_active=nullable_active))
    scols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    mcols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    ts = 1_787_000_000.0
    for s in sessions:
        row = {"source": "cli", "started_at": ts, **{k: v for k, v in s.items() if k != "messages"}}
        row = {k: v for k, v in row.items() if k in scols}
        conn.execute(f"INSERT INTO sessions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
        for m in s["messages"]:
            ts += 1.0
            values = {"session_id": s["id"], "timestamp": ts, **{k: _value(k, v) for k, v in m.items()}}
            values = {k: v for k, v in values.items() if k in mcols}
            conn.execute(f"INSERT INTO messages ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                         tuple(values.values()))
    conn.commit()
    if cjk:  # the CJK index exists, but its tokenizer (a loadable extension) is not available here
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute("INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) VALUES ('table', "
                     "'messages_fts_cjk', 'messages_fts_cjk', 0, 'CREATE VIRTUAL TABLE messages_fts_cjk USING "
                     "fts5(content, tokenize=''cjk_unicode61'')')")
        conn.commit()
        conn.close()
        conn = sqlite3.connect(path)
        conn.executescript(CJK_TRIGGERS)
        conn.commit()
    conn.close()
    return path


def call(cid: str, name: str = "terminal", args: str = '{"command": "ls"}') -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def poisoned_session(sid: str = "20260901_100000_aaaaaa") -> dict:
    return {
        "id": sid,
        "messages": [
            {"role": "user", "content": "Run the tests."},
            {"role": "assistant", "content": "", "tool_calls": [call("c1")], "finish_reason": "tool_calls"},
            {"role": "tool", "content": '{"output": "ok"}', "tool_call_id": "c1", "tool_name": "terminal"},
            {"role": "assistant", "content": "(empty) need tool", "finish_reason": "stop"},
            {"role": "user", "content": "Anything else?"},
            {"role": "assistant", "content": None, "finish_reason": "stop"},
            {"role": "user", "content": "Read the file."},
            {"role": "assistant", "content": "Reading.", "tool_calls": [call("c2", "read_file")], "finish_reason": "tool_calls"},
        ],
    }


def codes(path: Path, **kw) -> list[tuple[str, object]]:
    report = scan([str(path)])
    assert report.files[0].error is None, report.files[0].error
    return sorted((f.code, f.row) for f in report.findings)


@pytest.mark.parametrize("generation", GENERATIONS)
def test_every_generation_scans(tmp_path: Path, generation: int) -> None:
    db = build_db(tmp_path / "state.db", generation, [poisoned_session()])
    assert codes(db) == [("S301", 4), ("T403", 8), ("W101", 6), ("W103", 8)]
    assert open_store(db, str(db), Options()).format == "hermes-db"


@pytest.mark.parametrize("generation", (16, 21, 30))
def test_inactive_rows_are_invisible(tmp_path: Path, generation: int) -> None:
    session = poisoned_session()
    for m in session["messages"][3:]:
        m["active"] = 0
    db = build_db(tmp_path / "state.db", generation, [session])
    assert codes(db) == []


def test_null_active_reads_as_live(tmp_path: Path) -> None:
    session = poisoned_session()
    for m in session["messages"]:
        m["active"] = None
    db = build_db(tmp_path / "state.db", 16, [session], nullable_active=True)
    assert ("S301", 4) in codes(db)


def test_newer_schema_version_is_reported(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.db", 30, [poisoned_session()])
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 31")
    assert ("F505", None) in codes(db)


def test_v30_columns(tmp_path: Path) -> None:
    session = {"id": "s30", "system_prompt_hash": "h1", "messages": [
        {"role": "user", "content": "[CONTEXT COMPACTION — REFERENCE ONLY] summary", "_compressed_summary": 1},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "api_content": "Promoted answer.", "finish_reason": "stop"},
        {"role": "user", "content": "[System: Continue now.]", "display_kind": "hidden"},
        {"role": "assistant", "content": "[read_file]", "tool_calls": [call("c9", "read_file")], "finish_reason": "tool_calls"},
        {"role": "tool", "content": "data", "tool_call_id": "c9", "tool_name": "read_file"},
        {"role": "assistant", "content": "Done.", "finish_reason": "stop"},
    ]}
    db = build_db(tmp_path / "state.db", 30, [session])
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO system_prompts VALUES ('h1', 'You are Hermes.')")
    assert codes(db) == []  # api_content is not vacuous; a stale [tool] marker is blanked, not a leak
    store = open_store(db, str(db), Options())
    replay = store.replay(Options(session="s30"))
    assert replay["system_prompt"] == "You are Hermes."
    assert replay["history"][4]["content"] == ""  # the stale marker, as Hermes v30 replays it
    assert replay["history"][2]["api_content"] == "Promoted answer."


def test_bad_text_and_bad_json(tmp_path: Path) -> None:
    session = {"id": "sbad", "messages": [
        {"role": "user", "content": "hi\x00there"},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", args='{"path": ')], "finish_reason": "tool_calls"},
        {"role": "tool", "content": "x", "tool_call_id": "c1"},
        {"role": "assistant", "content": "ok", "finish_reason": "stop"},
    ]}
    db = build_db(tmp_path / "state.db", 21, [session])
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('sbad', 'user', CAST(x'61eda08062' AS TEXT), 9e9)")
        conn.execute("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('sbad', 'assistant', 'ok', '[not json', 9e9 + 1)")
    found = codes(db)
    assert ("F507", 1) in found and ("F507", 5) in found  # NUL, and a lone surrogate stored as CESU bytes
    assert ("F508", 2) in found
    assert ("F504", 6) in found  # Hermes reads the junk tool_calls as []
    replay = open_store(db, str(db), Options()).replay(Options(session="sbad"))
    json.dumps(replay, ensure_ascii=False).encode("utf-8")  # replay output is always encodable


def test_not_a_hermes_database(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE session (id TEXT)")
    report = scan([str(db)])
    assert report.files[0].error and "not a store tdoc recognises" in report.files[0].error
    with pytest.raises(TdocError):
        open_store(db, str(db), Options(), forced="hermes-db")


def test_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = build_db(folder / "state.db", 21, [poisoned_session()])
    before = sorted(os.listdir(folder))
    folder.chmod(0o555)
    try:
        assert ("S301", 4) in codes(db)
        assert sorted(os.listdir(folder)) == before
    finally:
        folder.chmod(0o755)


_HOLDER = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp, finish_reason) "
                 "VALUES ('20260901_100000_aaaaaa', 'user', 'later question', 9e9, NULL)")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp, finish_reason) "
                 "VALUES ('20260901_100000_aaaaaa', 'assistant', '(Empty) again', 9e9 + 1, 'stop')")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) "
                 "VALUES ('20260901_100000_aaaaaa', 'user', 'uncommitted', 9e9 + 2)")
    print("ready", flush=True)
    sys.stdin.readline()
    conn.execute("ROLLBACK")
""")


def test_reads_a_database_another_process_holds_open(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.db", 21, [poisoned_session()])
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert Path(f"{db}-wal").exists()
        found = codes(db)
        # the committed rows still in the WAL are seen; the open transaction's row is not
        assert ("S301", 10) in found
        store = open_store(db, str(db), Options())
        assert store.record_count == 10
        store.close()
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)


def test_damaged_database_is_f506_and_heal_refuses(tmp_path: Path) -> None:
    from transcript_doctor.core import ScanConfig
    from transcript_doctor.heal.pipeline import heal_findings
    from transcript_doctor.stores import HealOptions

    db = build_db(tmp_path / "state.db", 21, [poisoned_session()], wal=False)
    with sqlite3.connect(db) as conn:
        conn.executescript("CREATE TABLE filler (x TEXT); CREATE INDEX idx_filler ON filler (x);")
        conn.executemany("INSERT INTO filler VALUES (?)", [(f"value {i:05d} " * 5,) for i in range(3000)])
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'idx_filler'").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    start = (root - 1) * page + 12  # the index root's cell pointers
    data[start : start + 28] = b"\xff" * 28
    db.write_bytes(bytes(data))
    found = codes(db)
    assert ("F506", None) in found and ("S301", 4) in found  # the messages are still read

    deep = [f for f in scan([str(db)], ScanConfig(options=Options(settings=(SqliteOptions(deep=True),)))).findings if f.code == "F506"]
    assert deep[0].evidence["check"] == "integrity_check" and deep[0].evidence["problems"]
    store = open_store(db, str(db), Options())
    fixable = [f for f in scan([str(db)]).findings if f.fix]
    with pytest.raises(TdocError, match="quick_check"):
        heal_findings(store, fixable, ScanConfig(), HealOptions(mode="in-place", unsafe_fixes=True))
    store.close()


def test_hostile_column_values_never_crash(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.db", 21, [{"id": "h", "messages": [{"role": "user", "content": "q"}]}])
    with sqlite3.connect(db) as conn:
        rows = [
            ("assistant", sqlite3.Binary(b"\xff\xfe blob"), None, 1.0),
            ("assistant", "\x00json:[broken", None, 2.0),
            ("assistant", "ok", '{"not": "a list"}', 3.0),
            ("assistant", "ok", '[1, "x", {"function": 5}]', 4.0),
            ("tool", 42, None, 5.0),
        ]
        conn.executemany("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('h', ?, ?, ?, ?)", rows)
        conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (7, 'user', 'int session id', 6.0)")
        conn.execute("INSERT INTO messages (session_id, role, content, tool_call_id, timestamp) "
                     "VALUES ('h', 'tool', 'r', CAST(x'63eda080' AS TEXT), 7.0)")
    report = scan([str(db)])
    assert report.files[0].error is None
    problems = {(f.code, f.row) for f in report.findings if f.code == "F504"}
    assert problems == {("F504", 2), ("F504", 3), ("F504", 4)}
    assert ("W104", 8) in {(f.code, f.row) for f in report.findings}
    from typer.testing import CliRunner

    from transcript_doctor.cli import app

    cli = CliRunner().invoke(app, ["scan", str(db), "--format", "json"])
    assert cli.exit_code == 1 and json.loads(cli.stdout)["findings"]
    store = open_store(db, str(db), Options())
    for obj in store.replay(Options()):
        json.dumps(obj)
    store.close()
