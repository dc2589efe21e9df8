"""The Hermes store kinds: `state.db` (format `hermes-db`) and the session export (`hermes-export`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from ...conversation import Conversation
from ...errors import sqlite_failure
from ...fixes.sqlite import IntegrityCheck, columns
from ...heal.plan import HealPlan
from ...model import Finding, TdocError
from ...rules.registry import finding
from ..base import HealOptions, Options, Store, StoreKind
from ..collector import paused_per_item
from ..options import SqliteOptions
from ..shard import owns_store
from . import plan
from .checks import SessionScan, scan_session, session_pass
from .reader import KNOWN_SCHEMA_VERSION, Database, SessionInfo, is_hermes_schema, open_database
from .replay import replay_session
from .rows import Row
from .sniff import sniff_db, sniff_export


class HermesDbStore(Store):
    format = "hermes-db"
    system = "hermes"

    def __init__(self, path: Path, display: str, options: Options | None = None) -> None:
        super().__init__(path, display)
        self._conn: sqlite3.Connection | None = None
        self._db: Database | None = None
        self._integrity = IntegrityCheck(path)  # F506's check, begun by `start`
        self.shard = options.shard if options is not None else None  # `stores.shard`: None reads every session
        try:
            db = self.database()
            if not is_hermes_schema(self.connection()):
                raise TdocError(f"{display}: a SQLite database, but not a Hermes state.db (no sessions/messages tables)")
            self.version = db.version
            self.sessions: dict[str, SessionInfo] = db.sessions()  # all of them, whatever the shard: a session's lineage may cross shards
            self._records = db.message_count() if owns_store(self.shard) else 0
            self.schema = _schema(self.connection())
        except (sqlite3.Error, UnicodeError) as exc:
            self.close()
            raise sqlite_failure(display, exc) from None
        except BaseException:
            self.close()
            raise
        self.actions: dict[tuple, list[plan.Action]] = {}
        self.kept_rows: dict[Any, Row] = {}
        self._native = session_pass()

    # ------------------------------------------------------------------ connection

    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_database(self.path, self.display)
        return self._conn

    def database(self) -> Database:
        if self._db is None or self._conn is None:
            self._db = Database(self.connection(), self.display, self.shard)
        return self._db

    def reopen(self) -> HermesDbStore:
        return HermesDbStore(self.path, self.display)

    def close(self) -> None:
        self._integrity.cancel()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
            self._db = None

    # ------------------------------------------------------------------ Store API

    @property
    def session_count(self) -> int:
        shard = self.shard
        return len(self.sessions) if shard is None else sum(1 for sid in self.sessions if shard.holds(sid))

    @property
    def record_count(self) -> int:
        return self._records

    def session_activity(self) -> dict[str, tuple[float | None, int]]:
        rows = self.connection().execute(
            "SELECT session_id, MAX(timestamp), COUNT(*) FROM messages GROUP BY session_id").fetchall()
        found: dict[str, tuple[float | None, int]] = {sid: (None, 0) for sid in self.sessions}
        found.update({str(sid): (last if isinstance(last, (int, float)) else None, n) for sid, last, n in rows})
        return found

    def iter_sessions(self, session_ids: list[str] | None = None) -> Iterator[tuple[str, list[Row]]]:
        return self.database().iter_sessions(session_ids)

    def session_scans(self, session_ids: list[str] | None = None) -> Iterator[SessionScan]:
        """Each session read and resumed (with the cyclic collector paused: `stores.collector`)."""
        yield from paused_per_item(self._resumed(session_ids))

    def _resumed(self, session_ids: list[str] | None) -> Iterator[SessionScan]:
        for sid, rows in self.iter_sessions(session_ids):
            scan = SessionScan(self.display, self.format, sid, rows, schema=self.schema)
            del rows  # the scan holds them: released with it, before the next session is read
            yield scan
            del scan

    def scan_sessions(self, session_ids: list[str] | None = None, keep_rows: bool = False) -> Iterator[Finding]:
        """Every finding of the sessions named (all: None), with their fix actions kept for a heal."""
        for scan in self.session_scans(session_ids):
            if keep_rows:
                self.kept_rows.update((r.id, r) for r in scan.rows)
            yield from scan_session(scan)
            self.actions.update(scan.actions)

    def start(self, options: Options, codes: frozenset[str]) -> None:
        if "F506" in codes and owns_store(self.shard):
            self._integrity.start(options.get(SqliteOptions).deep)

    def conversations(self, options: Options) -> Iterator[Conversation]:
        yield from self._native.conversations(self.session_scans())

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        if owns_store(self.shard):
            yield from self.store_findings(options.get(SqliteOptions).deep, codes)
        yield from self._native.findings(self.session_scans, codes)

    def store_findings(self, deep: bool, codes: Collection[str]) -> Iterator[Finding]:
        """F506 (SQLite integrity) and F505 (a schema newer than tdoc knows), when selected."""
        if "F506" in codes:
            yield from self._integrity_findings(deep)
        if "F505" in codes and self.version is not None and self.version > KNOWN_SCHEMA_VERSION:
            yield finding("F505", f"schema version {self.version} is newer than tdoc knows ({KNOWN_SCHEMA_VERSION}); rows are read as-is",
                          path=self.display, format=self.format,
                          evidence={"schema_version": self.version, "known": KNOWN_SCHEMA_VERSION})

    def _integrity_findings(self, deep: bool) -> Iterator[Finding]:
        problems = [
            line for p in self._integrity.problems(self.connection(), deep) for line in p.splitlines()
            if not line.startswith("***")
        ]
        if problems:
            check = "integrity_check" if deep else "quick_check"
            yield finding("F506", f"PRAGMA {check} reports {len(problems)} problem(s), first: {problems[0][:160]}",
                          path=self.display, format=self.format, evidence={"check": check, "problems": problems[:20]})

    def replay(self, options: Options) -> Any:
        wanted = [options.session] if options.session else None
        if options.session and options.session not in self.sessions:
            raise TdocError(f"{self.display}: no session {options.session!r} (see `tdoc scan` for session ids)")
        rows_by_session = dict(self.iter_sessions(wanted))
        ids = wanted or sorted(set(self.sessions) | set(rows_by_session))
        objects = [replay_session(self, sid, rows_by_session.get(sid, [])) for sid in ids]
        return objects[0] if options.session else objects

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        from .resume import build

        sid = session or (next(iter(self.sessions)) if len(self.sessions) == 1 else None)
        if sid is None:
            return None
        for _, rows in self.iter_sessions([sid]):
            entries, _ = build(rows)
            for e in entries:
                if e.message.position == position:
                    return {"session": sid, "line": None, "end_line": None, "row": e.row.id,
                            "table": "messages", "role": e.row.role}
        return None

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        from .heal import plan_heal

        if "id" not in self.schema.message_columns:  # rows cannot be addressed (a renamed or missing column)
            raise TdocError(f"{self.display}: the messages table has no id column, so tdoc cannot address the rows "
                            "to heal; this is not a schema Hermes writes")
        return plan_heal(self, findings, options)


def _schema(conn: sqlite3.Connection) -> plan.Schema:
    cjk = tuple(
        (name, sql or "")
        for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages\\_fts\\_cjk%' ESCAPE '\\'"
        )
    )
    return plan.Schema(
        message_columns=frozenset(columns(conn, "messages")),
        session_columns=frozenset(columns(conn, "sessions")),
        cjk_triggers=cjk,
    )


class HermesDbKind(StoreKind):
    format = "hermes-db"
    system = "hermes"
    splits_sessions = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_db(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        return HermesDbStore(path, display, options)


class HermesExportKind(StoreKind):
    format = "hermes-export"
    system = "hermes"
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_export(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        from .export import HermesExportStore

        return HermesExportStore(path, display, options)
