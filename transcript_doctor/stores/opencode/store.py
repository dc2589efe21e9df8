"""The two OpenCode store kinds: `opencode-db` (SQLite `opencode.db`) and `opencode-export` JSON."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...conversation import Conversation
from ...fixes.fingerprint import Fingerprint
from ...fixes.sqlite import IntegrityCheck
from ...heal.plan import HealPlan
from ...model import Finding, TdocError
from ...rules import finding
from ..base import HealOptions, Options, Store, StoreKind
from ..collector import paused_per_item
from ..options import SqliteOptions
from ..shard import owns_store
from .checks import session_pass
from .export import parse_export
from .reader import (
    MESSAGE_TABLE,
    PART_TABLE,
    DbReader,
    OcSession,
    SessionRow,
    open_db,
)
from .runs import SessionView, analyse
from .sniff import sniff_db, sniff_export

SYSTEM = "opencode"


def _location(view: SessionView, position: int) -> dict[str, Any] | None:
    wire = view.projection.wire
    if not 0 <= position < len(wire):
        return None
    origin = wire[position]["origin"]
    msg = next((m for m in view.session.messages if m.id == origin["message"]), None)
    loc = msg.loc if msg else None
    return {
        "session": view.session.id,
        "line": loc.line if loc else None,
        "end_line": loc.end_line if loc else None,
        "row": loc.row if loc else None,
        "table": loc.table if loc else None,
        "role": wire[position]["role"],
    }


class OpencodeDbStore(Store):
    format = "opencode-db"
    system = SYSTEM

    def __init__(self, path: Path, display: str, options: Options) -> None:
        super().__init__(path, display)
        self.conn = open_db(path, display)
        self.shard = options.shard  # `stores.shard`: None reads every session
        try:
            self.reader = DbReader(self.conn, display)
            self.rows = self.reader.sessions()
            if self.shard is not None:
                self.rows = [row for row in self.rows if self.shard.holds(row.id)]
        except BaseException:
            self.conn.close()
            raise
        self._records: int | None = None
        self._pass = session_pass(self)
        self._integrity = IntegrityCheck(path)  # F506's check, begun by `start`

    @property
    def session_count(self) -> int:
        return len(self.rows)

    @property
    def record_count(self) -> int:
        if self._records is None:  # the store's rows: shard 0 counts them for every shard
            owner = owns_store(self.shard)
            self._records = self.reader.count(MESSAGE_TABLE) + self.reader.count(PART_TABLE) if owner else 0
        return self._records

    def session_activity(self) -> dict[str, tuple[float | None, int]]:
        counts = dict(self.conn.execute(f"SELECT session_id, COUNT(*) FROM {MESSAGE_TABLE} GROUP BY session_id"))
        return {row.id: (row.updated / 1000 if isinstance(row.updated, (int, float)) else None,  # ms in OpenCode
                         counts.get(row.id, 0)) for row in self.rows}  # fmt: skip

    def _rows(self, session: str | None) -> list[SessionRow]:
        if session is None:
            return self.rows
        rows = [r for r in self.rows if r.id == session]
        if not rows:
            raise TdocError(f"{self.display}: no session {session!r}")
        return rows

    def views(self, options: Options, wire: bool = False) -> Iterator[SessionView]:
        """Each session read and analysed (with the cyclic collector paused: `stores.collector`);
        `wire`: with the request's wire shape (replay), which the rules do not read."""
        rows = self._rows(options.session)
        yield from paused_per_item(analyse(self.reader.read_session(row), wire) for row in rows)

    def start(self, options: Options, codes: frozenset[str]) -> None:
        if "F506" in codes and owns_store(self.shard):
            self._integrity.start(options.get(SqliteOptions).deep)

    def conversations(self, options: Options) -> Iterator[Conversation]:
        yield from self._pass.conversations(self.views(options))

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        if "F506" in codes and owns_store(self.shard):
            yield from self.store_findings(options)
        yield from self._pass.findings(lambda: self.views(options), codes)

    def store_findings(self, options: Options) -> Iterator[Finding]:
        deep = options.get(SqliteOptions).deep
        problems = self._integrity.problems(self.conn, deep)
        if problems:
            check = "integrity_check" if deep else "quick_check"
            yield finding("F506", f"PRAGMA {check} failed: {problems[0]}", path=self.display, format=self.format,
                          evidence={"check": check, "problems": problems[:20], "count": len(problems)})

    def replay(self, options: Options) -> Any:
        out = [v.replay_dict(self.format) for v in self.views(options, wire=True)]
        return out[0] if options.session is not None else out

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        rows = self._rows(session) if session else self.rows
        if not rows:
            return None
        # Without a session, the one most recently updated: the one a live error came from.
        row = rows[0] if session else max(rows, key=lambda r: (r.updated if isinstance(r.updated, (int, float)) else -1))
        return _location(analyse(self.reader.read_session(row)), position)

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        from .heal import plan_db

        return plan_db(self, findings, options)

    def close(self) -> None:
        self._integrity.cancel()
        self.conn.close()


class OpencodeExportStore(Store):
    format = "opencode-export"
    system = SYSTEM

    def __init__(self, path: Path, display: str, options: Options) -> None:
        super().__init__(path, display)
        try:
            taken = time.time_ns()
            st = path.stat()
            self.data = path.read_bytes()
        except OSError as exc:
            raise TdocError(f"{display}: cannot read: {exc.strerror or exc}") from None
        # What was parsed, for the change check before a heal replaces the file.
        self.fingerprint = Fingerprint.from_stat(st, hashlib.sha256(self.data).hexdigest(), taken)
        self.session: OcSession
        self.session, self._records = parse_export(self.data, display)
        self._pass = session_pass(self)

    @property
    def session_count(self) -> int:
        return 1

    @property
    def record_count(self) -> int:
        return self._records

    def views(self, options: Options, wire: bool = False) -> Iterator[SessionView]:
        self.check_session(options, self.session.id)
        yield analyse(self.session, wire)

    def conversations(self, options: Options) -> Iterator[Conversation]:
        yield from self._pass.conversations(self.views(options))

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        yield from self._pass.findings(lambda: self.views(options), codes)

    def replay(self, options: Options) -> Any:
        return next(self.views(options, wire=True)).replay_dict(self.format)

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        if session is not None and session != self.session.id:
            return None
        return _location(analyse(self.session), position)

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        from .heal import plan_export

        return plan_export(self, findings, options)


class OpencodeDbKind(StoreKind):
    format = OpencodeDbStore.format
    system = SYSTEM
    splits_sessions = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_db(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        return OpencodeDbStore(path, display, options)


class OpencodeExportKind(StoreKind):
    format = OpencodeExportStore.format
    system = SYSTEM

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_export(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        return OpencodeExportStore(path, display, options)
