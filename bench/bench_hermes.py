"""Scan throughput on a large Hermes state.db, beside a plain SELECT of the same rows.

    python bench/bench_hermes.py                      # 2,000 sessions x 100 messages = 200,000 rows
    python bench/bench_hermes.py --sessions 500 --per-session 40 --db /tmp/state.db --keep
    python bench/bench_hermes.py --db /tmp/state.db          # measure an existing database again
    python bench/bench_hermes.py --db /tmp/state.db --jobs 0 # the scan as `tdoc scan` runs it by default

The database is built with plain sqlite3 in the schema-v21 shape (WAL, FTS5 + trigram tables fed
by triggers), with a little poison sprinkled in (a leaked "(empty)" answer every 50th session, an
unanswered tool call every 70th) so the checks have work to report. The figure that matters is
the ratio of a full `scan` to tdoc's own message query plus the JSON parse of the same rows, taken
per round over --rounds interleaved rounds (median and min-max spread), the scan in this process
(`--jobs 1`, the default) or, with `--jobs 0`, split over one worker process per CPU. Figures are printed, never
asserted: they depend on the machine. `--stages` adds where a scan's time goes: each stage run on
its own, cumulatively (read the rows; + rebuild the sessions as Hermes resumes them; + Hermes' own
rules; + the shared rules; the integrity check alone), as CPU seconds and as a multiple of the
own query.
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (21);
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, model_config TEXT, system_prompt TEXT,
  parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
  message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, title TEXT,
  rewind_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, effect_disposition TEXT,
  timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT,
  reasoning_details TEXT, codex_reasoning_items TEXT, codex_message_items TEXT, platform_message_id TEXT,
  observed INTEGER DEFAULT 0, active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(content);
CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id,
    COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, ''));
  INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id,
    COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, ''));
END;
"""
COLUMNS = "session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason"


def session_rows(index: int, per_session: int, ts: float) -> list[tuple]:
    sid = f"20260901_{index // 3600:02d}{index // 60 % 60:02d}{index % 60:02d}_{index:06x}"
    rows: list[tuple] = []
    turn = 0
    while len(rows) < per_session:
        turn += 1
        cid = f"call_{index}_{turn}"
        calls = json.dumps([{"id": cid, "type": "function",
                             "function": {"name": "terminal", "arguments": json.dumps({"command": f"make step{turn}"})}}])
        rows.append((sid, "user", f"Please run step {turn} of the build and report.", None, None, None, ts, None))
        rows.append((sid, "assistant", "", None, calls, None, ts + 0.1, "tool_calls"))
        rows.append((sid, "tool", json.dumps({"output": f"step {turn} ok", "exit_code": 0}), cid, None, "terminal",
                     ts + 0.2, None))
        rows.append((sid, "assistant", f"Step {turn} finished without errors; the artefacts are in build/.", None,
                     None, None, ts + 0.3, "stop"))
        ts += 1.0
    rows = rows[:per_session]
    if index % 50 == 0:
        last = rows[-1]
        rows[-1] = last[:2] + ("(empty) again risk. Need progress + tool.",) + last[3:7] + ("stop",)
    if index % 70 == 0 and len(rows) >= 3:  # a user message where the last result should be
        rows[-2] = (sid, "user", "still there?", None, None, None, rows[-2][6], None)
    return rows


def build(path: Path, sessions: int, per_session: int) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    total = 0
    ts = 1_788_000_000.0
    for i in range(sessions):
        rows = session_rows(i, per_session, ts)
        sid = rows[0][0]
        conn.execute("INSERT INTO sessions (id, source, model, started_at, message_count) VALUES (?, 'cli', 'gpt-5.6', ?, ?)",
                     (sid, ts, len(rows)))
        conn.executemany(f"INSERT INTO messages ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        total += len(rows)
        ts += per_session
    conn.commit()
    conn.close()
    return total


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def plain_select(path: Path) -> tuple[int, float]:
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    start = time.perf_counter()
    count = sum(1 for _ in conn.execute("SELECT * FROM messages ORDER BY session_id, id"))
    elapsed = time.perf_counter() - start
    conn.close()
    return count, elapsed


def own_query(path: Path) -> tuple[int, float, float]:
    """tdoc's own message query (every column it reads) and a JSON parse of the JSON-bearing columns."""
    import orjson

    from transcript_doctor.stores.hermes.content import JSON_PREFIX
    from transcript_doctor.stores.hermes.reader import MESSAGE_COLUMNS, Database, open_database

    conn = open_database(path)
    db = Database(conn)
    have = set(db.message_columns)
    select = ", ".join(c if c in have else f"NULL AS {c}" for c in MESSAGE_COLUMNS)
    content, calls = MESSAGE_COLUMNS.index("content"), MESSAGE_COLUMNS.index("tool_calls")
    start, cpu = _clocks()
    count = 0
    cursor = conn.execute(f"SELECT {select} FROM messages ORDER BY session_id, id")
    while batch := cursor.fetchmany(512):
        for values in batch:
            count += 1
            text = values[content]
            if isinstance(text, str) and text.startswith(JSON_PREFIX):
                orjson.loads(text[len(JSON_PREFIX):])
            if values[calls]:
                orjson.loads(values[calls])
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    conn.close()
    return count, elapsed, cpu


def _cpu_with_workers() -> float:
    """This process's CPU time and that of its ended children (a scan's worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def tdoc_scan(path: Path, jobs: int = 1) -> tuple[int, int, float, float]:
    from transcript_doctor.core import ScanConfig, scan

    start, cpu = time.perf_counter(), _cpu_with_workers()
    report = scan([str(path)], ScanConfig(jobs=jobs))
    elapsed, cpu = time.perf_counter() - start, _cpu_with_workers() - cpu
    result = report.files[0]
    if result.error:
        raise SystemExit(f"scan failed: {result.error}")
    return result.records, len(report.findings), elapsed, cpu


def _stage_runs(path: Path) -> dict[str, float]:
    """CPU seconds of each cumulative stage of a scan (the collector paused as the store pauses it)."""
    from transcript_doctor.fixes.sqlite import integrity_problems
    from transcript_doctor.rules.engine import check_conversation, shared_codes
    from transcript_doctor.stores.collector import paused_per_item
    from transcript_doctor.stores.hermes.checks import NATIVE_CODES, native_session_findings
    from transcript_doctor.stores.hermes.store import HermesDbStore

    store = HermesDbStore(path, str(path))

    def natives() -> None:
        for session in store.session_scans():
            list(native_session_findings(session, NATIVE_CODES))

    def shared() -> None:
        for session in store.session_scans():
            list(native_session_findings(session, NATIVE_CODES))
            list(check_conversation(session.conversation(), shared_codes()))

    stages = {
        "read rows": lambda: [None for _ in paused_per_item(store.iter_sessions())],
        "+ rebuild sessions": lambda: [None for _ in store.session_scans()],
        "+ Hermes rules": natives,
        "+ shared rules": shared,
        "integrity check": lambda: integrity_problems(store.connection()),
    }
    out = {}
    for name, run in stages.items():
        cpu = time.process_time()
        run()
        out[name] = time.process_time() - cpu
    store.close()
    return out


def print_stages(path: Path, rounds: int) -> None:
    runs = []
    for _ in range(rounds):
        _, _, own_cpu = own_query(path)
        runs.append({name: cpu / own_cpu for name, cpu in _stage_runs(path).items()})
    print("stages (CPU, cumulative, median multiple of the own query's CPU time):")
    for name in runs[0]:
        print(f"  {name:<20} {statistics.median(r[name] for r in runs):5.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--db", type=Path, help="where to build the database (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of own query / scan")
    parser.add_argument("--stages", action="store_true", help="also time the stages of a scan, one by one")
    parser.add_argument("--jobs", type=int, default=1, help="the scan's -j: 1 (default) scans in this process, as "
                        "the target states; 0 as `tdoc scan` does by default (the database split over the CPUs)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "state.db"
        if path.exists():  # a database built by an earlier run (--db, --keep): measured as it is
            print(f"using {path} ({path.stat().st_size / 1e6:.1f} MB)")
        else:
            start = time.perf_counter()
            total = build(path, args.sessions, args.per_session)
            print(f"built {total:,} messages in {args.sessions:,} sessions ({time.perf_counter() - start:.1f}s, "
                  f"{path.stat().st_size / 1e6:.1f} MB)")
        rows, select_s = plain_select(path)
        print(f"plain SELECT : {rows:>9,} rows in {select_s:6.2f}s = {rows / select_s:>12,.0f} rows/s")
        ratios, cpu_ratios, own_times, scan_times = [], [], [], []
        for _ in range(args.rounds):  # interleaved, so machine drift touches both alike
            rows, own_s, own_cpu = own_query(path)
            records, findings, scan_s, scan_cpu = tdoc_scan(path, args.jobs)
            ratios.append(scan_s / own_s)
            cpu_ratios.append(scan_cpu / own_cpu)
            own_times.append(own_s)
            scan_times.append(scan_s)
        own_s, scan_s = statistics.median(own_times), statistics.median(scan_times)
        print(f"own query    : {rows:>9,} rows in {own_s:6.2f}s = {rows / own_s:>12,.0f} rows/s "
              "(tdoc's SELECT + JSON parse of content and tool_calls)")
        print(f"tdoc scan    : {records:>9,} rows in {scan_s:6.2f}s = {records / scan_s:>12,.0f} rows/s "
              f"({findings:,} findings)")
        print(f"scan / select: {scan_s / select_s:.1f}x the time of reading the rows")
        print(f"scan / own query: median {statistics.median(ratios):.2f}x over {args.rounds} rounds, -j {args.jobs} "
              f"({min(ratios):.2f}-{max(ratios):.2f}; target <= 2.5)")
        print(f"  in CPU time   : median {statistics.median(cpu_ratios):.2f}x (the workers' too) "
              f"({min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}; wall time also counts waiting for a busy machine)")
        if args.stages:
            print_stages(path, args.rounds)
        if args.keep and args.db is None:
            kept = Path.cwd() / "bench-state.db"
            path.replace(kept)
            print(f"kept {kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
