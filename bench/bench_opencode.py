"""Scan throughput on a synthetic OpenCode database.

    python bench/bench_opencode.py [--messages 100000] [--per-session 100] [--db PATH] [--keep] [--jobs N]

Builds an `opencode.db` with the fixture's schema (tables, columns, indexes) holding the given
number of messages: sessions of user/assistant runs with step markers, text, reasoning and
completed tool parts, and a sprinkling of the poisoned shapes (empty completions, vacuous
messages, `length` finishes, running tools) so every check has work to do. Then it scans the
database the way `tdoc scan -j 1` does (`--jobs 0`: as `tdoc scan` does by default, the database
split over one worker per CPU) and prints one JSON object with the sizes and the timings.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transcript_doctor.core import ScanConfig, scan  # noqa: E402

FIXTURE_DB = ROOT / "fixtures" / "opencode" / "opencode.db"
T0 = 1_786_000_000_000
TOKENS = {"total": 5200, "input": 5000, "output": 200, "reasoning": 0, "cache": {"read": 0, "write": 0}}
ZERO = {"total": 0, "input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
ANSWER = "The retry wrapper backs off exponentially and only retries idempotent requests. " * 4


def schema() -> list[str]:
    conn = sqlite3.connect(f"file:{FIXTURE_DB}?immutable=1", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    finally:
        conn.close()


def _assistant(parent: str, finish: str, tokens: dict, cost: float) -> dict:
    return {"role": "assistant", "time": {"created": T0, "completed": T0 + 2000}, "parentID": parent,
            "modelID": "claude-sonnet-5", "providerID": "anthropic", "mode": "build", "agent": "build",
            "path": {"cwd": "/p", "root": "/p"}, "cost": cost, "tokens": tokens, "finish": finish}


def _parts(kind: int, call: str) -> list[dict]:
    """Parts of an assistant message; `kind` picks a healthy or a poisoned shape."""
    start = {"type": "step-start", "snapshot": "0" * 40}
    finish = {"type": "step-finish", "reason": "stop", "cost": 0.01, "tokens": TOKENS}
    if kind == 1:  # empty zero-work completion (T401)
        return [start, {**finish, "reason": "unknown", "tokens": ZERO, "cost": 0}]
    if kind == 2:  # vacuous message (W101, T402)
        return [start, {"type": "reasoning", "text": "", "time": {"start": T0}}, {"type": "text", "text": " "}, finish]
    if kind == 3:  # tool round
        tool = {"type": "tool", "callID": call, "tool": "bash", "state": {
            "status": "completed", "input": {"command": "npm test"}, "output": "ok\n" * 20, "title": "bash",
            "metadata": {}, "time": {"start": T0, "end": T0 + 900}}}
        return [start, {"type": "text", "text": "Running the tests."}, tool, {**finish, "reason": "tool-calls"}]
    think = {"type": "reasoning", "text": "Check the call sites first.", "time": {"start": T0, "end": T0 + 10},
             "metadata": {"anthropic": {"signature": "c2ln"}}}
    return [start, think, {"type": "text", "text": ANSWER}, finish]


def rows(n_messages: int, per_session: int) -> Iterator[tuple[str, tuple, list[tuple]]]:
    """(session id, message row, part rows) in insertion order."""
    seq = 0
    for s in range(0, n_messages, per_session):
        sid = f"ses_bench{s // per_session:08d}"
        user = None
        for i in range(min(per_session, n_messages - s)):
            seq += 1
            mid = f"msg_{seq:012d}"
            if i % 3 == 0:
                user = mid
                info, parts = {"role": "user", "time": {"created": T0}, "agent": "build",
                               "model": {"providerID": "anthropic", "modelID": "claude-sonnet-5"}}, [
                    {"type": "text", "text": f"Question {i} about the retry policy?"}]
            else:
                idle_run = (s // per_session + i // 3) % 97 == 0  # both replies empty and zero-work: T401
                kind = 1 if idle_run else 3 if i % 3 == 1 else 2 if seq % 89 == 0 else 0
                fin = "tool-calls" if kind == 3 else "unknown" if kind == 1 else "length" if seq % 83 == 0 else "stop"
                info = _assistant(user or mid, fin, ZERO if kind == 1 else TOKENS, 0 if kind == 1 else 0.01)
                parts = _parts(kind, f"toolu_{seq:012d}")
            part_rows = [(f"prt_{seq:012d}{k:03d}", mid, sid, T0 + seq, T0 + seq, json.dumps(p))
                         for k, p in enumerate(parts)]
            yield sid, (mid, sid, T0 + seq, T0 + seq, json.dumps(info)), part_rows


def build(path: Path, n_messages: int, per_session: int) -> dict:
    conn = sqlite3.connect(path)
    for sql in schema():
        conn.execute(sql)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('p', '/p', 0, 0, '[]')")
    sessions: set[str] = set()
    messages: list[tuple] = []
    parts: list[tuple] = []
    totals = [0, 0]

    def flush() -> None:
        conn.executemany("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?)",
                         messages)
        conn.executemany("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                         "VALUES (?,?,?,?,?,?)", parts)
        totals[0] += len(messages)
        totals[1] += len(parts)
        messages.clear()
        parts.clear()

    for sid, msg, part_rows in rows(n_messages, per_session):
        if sid not in sessions:
            sessions.add(sid)
            conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                         "time_updated) VALUES (?, 'p', 's', '/p', 'bench', '1', ?, ?)", (sid, T0, T0))
        messages.append(msg)
        parts.extend(part_rows)
        if len(messages) >= 5000:  # bounded memory, so max_rss reflects the scan
            flush()
    flush()
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"sessions": len(sessions), "messages": totals[0], "parts": totals[1]}


def existing_sizes(path: Path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        count = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("session", "message", "part")}
    finally:
        conn.close()
    return {"sessions": count["session"], "messages": count["message"], "parts": count["part"]}


def own_queries(path: Path) -> tuple[float, float]:
    """tdoc's own per-session message and part queries with an orjson parse of every row's data."""
    from transcript_doctor.fixes.sqlite import decode_text
    from transcript_doctor.stores.opencode.reader import DbReader, open_db

    conn = open_db(path)
    reader = DbReader(conn, str(path))
    started, cpu = time.perf_counter(), time.process_time()
    for row in reader.sessions():
        conn.text_factory = str  # as `DbReader.read_session` reads a session's rows (valid UTF-8)
        for _mid, raw in conn.execute(
            "SELECT id, CAST(data AS BLOB) FROM message WHERE session_id = ? ORDER BY time_created, id", (row.id,)
        ):
            orjson.loads(raw)
        for _pid, _message, raw in conn.execute(
            "SELECT id, message_id, CAST(data AS BLOB) FROM part WHERE message_id IN "
            "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id",
            (row.id,),
        ):
            orjson.loads(raw)
        conn.text_factory = decode_text
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    conn.close()
    return seconds, cpu


def _cpu_with_workers() -> float:
    """This process's CPU time and that of its ended children (a scan's worker processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--per-session", type=int, default=100)
    ap.add_argument("--db", type=Path, help="use (or build, if missing) this database")
    ap.add_argument("--keep", action="store_true", help="keep the generated database")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of own queries / scan")
    ap.add_argument("--jobs", type=int, default=1, help="the scan's -j: 1 (default) scans in this process, as the "
                    "target states; 0 as `tdoc scan` does by default (the database split over the CPUs)")
    args = ap.parse_args(argv)
    tmp = None
    path = args.db
    if path is None:
        tmp = Path(tempfile.mkdtemp(prefix="tdoc-bench-"))
        path = tmp / "opencode.db"
    sizes = {}
    if not path.exists():
        started = time.perf_counter()
        sizes = build(path, args.messages, args.per_session)
        sizes["build_seconds"] = round(time.perf_counter() - started, 2)
    if not sizes:
        sizes = existing_sizes(path)
    ratios, cpu_ratios, walls, cpus, owns = [], [], [], [], []
    for _ in range(args.rounds):  # interleaved, so machine drift touches both alike
        own, own_cpu = own_queries(path)
        started, cpu = time.perf_counter(), _cpu_with_workers()
        report = scan([str(path)], ScanConfig(jobs=args.jobs))
        walls.append(time.perf_counter() - started)
        cpus.append(_cpu_with_workers() - cpu)
        owns.append(own)
        ratios.append(walls[-1] / own)
        cpu_ratios.append(cpus[-1] / own_cpu)
    seconds, cpu, own = statistics.median(walls), statistics.median(cpus), statistics.median(owns)
    (result,) = report.files
    counts: dict[str, int] = {}
    for f in report.findings:
        counts[f.code] = counts.get(f.code, 0) + 1
    messages = sizes["messages"]
    out = {
        **sizes,
        "db_bytes": path.stat().st_size,
        "scan_seconds": round(seconds, 2),
        "scan_cpu_seconds": round(cpu, 2),
        "own_queries_seconds": round(own, 2),  # the same queries and an orjson parse of every row
        "scan_vs_own_queries": round(statistics.median(ratios), 2),  # median per-round ratio; target <= 2.5
        "scan_vs_own_queries_spread": [round(min(ratios), 2), round(max(ratios), 2)],  # wall time includes waiting for a busy machine's CPUs
        "scan_vs_own_queries_cpu": round(statistics.median(cpu_ratios), 2),  # the same ratio in CPU time (workers' too)
        "scan_vs_own_queries_cpu_spread": [round(min(cpu_ratios), 2), round(max(cpu_ratios), 2)],
        "rounds": args.rounds,
        "jobs": args.jobs,
        "messages_per_second": round(messages / seconds),
        "messages_per_cpu_second": round(messages / cpu),
        "records_per_second": round(result.records / seconds),
        "mb_per_second": round(path.stat().st_size / seconds / 1e6, 1),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "error": result.error,
        "findings": dict(sorted(counts.items())),
    }
    print(json.dumps(out, indent=2))
    if args.keep and tmp is not None:
        print(f"kept {path}", file=sys.stderr)
    elif tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if result.error is None else 2


if __name__ == "__main__":
    sys.exit(main())
