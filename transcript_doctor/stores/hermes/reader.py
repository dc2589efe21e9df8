"""Read Hermes `state.db` files of every schema generation (v6 … v30), never writing to them.

Columns are selected by name after `PRAGMA table_info` (old databases lack many, reconciled ones
gain them), a missing or NULL `active` reads as 1, `\\x00json:` content is decoded and
`tool_calls` parsed as Hermes does (bad JSON -> `[]`). Rows are streamed session by session.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import values
from ...errors import sqlite_failure
from ...fixes.sqlite import columns, decode_text, open_readonly, quote_ident, tables
from ..shard import Shard, shard_of
from .rows import MESSAGE_COLUMNS, Row, finite_number, rows_from_batch

KNOWN_SCHEMA_VERSION = 30
SESSION_COLUMNS = (
    "id", "source", "parent_session_id", "started_at", "ended_at", "end_reason", "model", "model_config",
    "system_prompt", "system_prompt_hash", "message_count", "tool_call_count", "rewind_count", "title",
)


@dataclass
class SessionInfo:
    id: str
    source: str | None = None
    parent_session_id: str | None = None
    started_at: float | None = None
    end_reason: str | None = None
    model: str | None = None
    model_config: Any = None
    system_prompt: str | None = None
    message_count: int | None = None
    tool_call_count: int | None = None
    title: str | None = None
    line: int | None = None  # export line


def open_database(path: Path, display: str | None = None) -> sqlite3.Connection:
    """A read-only connection that creates nothing next to the database and never waits
    (`fixes.sqlite.open_readonly`: `immutable=1` for a WAL file with no `-wal`, TEXT decoded
    without raising so lone surrogates and bad bytes survive for F507)."""
    return open_readonly(path, display)


def is_hermes_schema(conn: sqlite3.Connection) -> bool:
    names = tables(conn)
    if "messages" not in names or "sessions" not in names:
        return False
    cols = set(columns(conn, "messages"))
    return {"session_id", "role", "content", "tool_call_id"} <= cols


def schema_version(conn: sqlite3.Connection) -> int | None:
    if "schema_version" not in tables(conn):
        return None
    try:
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row and isinstance(row[0], int) else None


class Database:
    """The tables of one Hermes database, read lazily."""

    def __init__(self, conn: sqlite3.Connection, display: str = "the Hermes database", shard: Shard | None = None) -> None:
        self.conn = conn
        self.display = display
        self.shard = shard  # read only this shard's sessions (`stores.shard`); None: all of them
        try:
            self.tables = tables(conn)
            self.message_columns = [c for c in MESSAGE_COLUMNS if c in set(columns(conn, "messages"))]
            self.session_columns = [c for c in SESSION_COLUMNS if c in set(columns(conn, "sessions"))]
            self.version = schema_version(conn)
        except (sqlite3.Error, UnicodeError) as exc:
            raise sqlite_failure(display, exc) from None

    def _query(self, sql: str, params: tuple = ()) -> Iterator[tuple]:
        try:
            yield from self.conn.execute(sql, params)
        except (sqlite3.Error, UnicodeError) as exc:
            raise sqlite_failure(self.display, exc) from None

    def sessions(self) -> dict[str, SessionInfo]:
        cols = self.session_columns
        prompt_sql = ""
        if "system_prompt_hash" in cols and "system_prompts" in self.tables:
            prompt_sql = ", (SELECT prompt FROM system_prompts p WHERE p.hash = s.system_prompt_hash)"
        sql = f"SELECT {', '.join('s.' + quote_ident(c) for c in cols)}{prompt_sql} FROM sessions s"
        out: dict[str, SessionInfo] = {}
        for cells in self._query(sql):
            d = dict(zip(cols, cells))
            info = _session_info(d)
            if prompt_sql and info.system_prompt is None:
                info.system_prompt = values.text_or_none(cells[len(cols)])
            out[info.id] = info
        return out

    def message_count(self) -> int:
        return next(self._query("SELECT count(*) FROM messages"))[0]

    def iter_sessions(self, session_ids: list[str] | None = None) -> Iterator[tuple[str, list[Row]]]:
        """(session_id, its rows in id order) for all sessions, or only those named, in
        session_id order, each group gathered as its rows are read.

        A session is a run of rows whose session_id cell holds one value of one type, named by
        that value as text: the text '7' and the number 7, or NULL and '', are two sessions (as
        they are to SQLite's `=`) even where they sort side by side, so a shard of the store
        (`stores.shard`) groups its rows exactly as a read of the whole store does."""
        current: Any = _NO_ROW
        name = ""
        rows: list[Row] = []
        for batch in self._batches(session_ids):
            for cells, row in zip(batch, rows_from_batch(batch)):
                raw = cells[1]
                if raw != current or raw.__class__ is not current.__class__:
                    if rows:
                        yield name, rows
                    current, name, rows = raw, row.session_id, []
                rows.append(row)
        if rows:
            yield name, rows

    def _batches(self, session_ids: list[str] | None) -> Iterator[list[tuple]]:
        """The message query's rows in batches. Every column of MESSAGE_COLUMNS is selected, as
        NULL where this schema lacks it, so rows unpack positionally (the hot path of a scan)."""
        have = set(self.message_columns)
        select = ", ".join(quote_ident(c) if c in have else f"NULL AS {quote_ident(c)}" for c in MESSAGE_COLUMNS)
        where, params = self._where(session_ids)
        sql = f"SELECT {select} FROM messages{where} ORDER BY session_id, id"
        try:
            cursor = self.conn.execute(sql, params)
            while batch := cursor.fetchmany(512):
                yield batch
        except (sqlite3.Error, UnicodeError) as exc:
            raise sqlite_failure(self.display, exc) from None

    def _where(self, session_ids: list[str] | None) -> tuple[str, tuple[Any, ...]]:
        """The message query's WHERE clause (with its leading space) and parameters: the sessions
        named, and of those only this reader's shard's. The shard's ids are picked in SQL among the
        distinct ones, so a worker reads only its own rows (`LIMIT -1` keeps SQLite from pushing
        the test down into the DISTINCT scan, which would call it once per row); a NULL id never
        matches IN. Ids that SQLite holds equal (7 and 7.0, which sort together interleaved by row
        id) share a shard: DISTINCT keeps one of them and IN takes them all, and a number is hashed
        as the text of its REAL value, so whichever one DISTINCT keeps (a writer may change that
        between two shards' reads) picks the same shard. Other values are hashed by their text as
        `decode_text` reads it, so two ids read as one string share a shard too."""
        terms: list[str] = []
        params: tuple[Any, ...] = ()
        if session_ids is not None:
            terms.append(f"session_id IN ({','.join('?' * len(session_ids))})")
            params = tuple(session_ids)
        shard = self.shard
        if shard is not None:
            self.conn.create_function("tdoc_shard", 2, _sql_shard, deterministic=True)
            key = ("CASE WHEN typeof(s) IN ('integer', 'real') THEN CAST(CAST(s AS REAL) AS BLOB)"
                   " ELSE CAST(s AS BLOB) END")  # fmt: skip
            term = ("session_id IN (SELECT s FROM (SELECT DISTINCT session_id AS s FROM messages LIMIT -1)"
                    f" WHERE tdoc_shard({key}, ?) = ?)")  # fmt: skip
            terms.append(f"({term} OR session_id IS NULL)" if shard.holds(None) else term)
            params += (shard.count, shard.index)
        return (f" WHERE {' AND '.join(terms)}" if terms else ""), params


_NO_ROW = object()  # `iter_sessions` before its first row


def _sql_shard(key: bytes | None, count: int) -> int:
    """`tdoc_shard(key, count)`: the shard of a session id whose bytes are `key` (None: NULL), its
    text read as every TEXT cell is (`decode_text`), so two ids read as one text share a shard."""
    return shard_of(None if key is None else decode_text(key), count)


def _session_info(d: dict[str, Any]) -> SessionInfo:
    """Session columns under the reader-boundary rule: text fields are text, counts and times
    finite numbers, anything else None (an export may hold any JSON type in any field)."""
    text = values.text_or_none
    return SessionInfo(
        id=str(d.get("id")),
        source=text(d.get("source")),
        parent_session_id=text(d.get("parent_session_id")),
        started_at=_number_or_none(d.get("started_at")),
        end_reason=text(d.get("end_reason")),
        model=text(d.get("model")),
        model_config=d.get("model_config") if values.problem(d.get("model_config")) is None else None,
        system_prompt=text(d.get("system_prompt")),
        message_count=_int_or_none(d.get("message_count")),
        tool_call_count=_int_or_none(d.get("tool_call_count")),
        title=text(d.get("title")),
    )


def _number_or_none(value: Any) -> float | None:
    return value if finite_number(value) else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and values.is_id(value) else None


def session_from_mapping(d: dict[str, Any], line: int | None = None) -> SessionInfo:
    info = _session_info(d)
    info.line = line
    return info
