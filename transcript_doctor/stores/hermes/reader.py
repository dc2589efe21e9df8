"""Read Hermes `state.db` files of every schema generation (v6 … v30), never writing to them.

Columns are selected by name after `PRAGMA table_info` (old databases lack many, reconciled ones
gain them), a missing or NULL `active` reads as 1, `\\x00json:` content is decoded and
`tool_calls` parsed as Hermes does (bad JSON -> `[]`). Rows are streamed session by session.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from ...fixes.sqlite import columns, quote_ident, tables
from ...model import TdocError
from .content import decode_content

KNOWN_SCHEMA_VERSION = 30
MESSAGE_COLUMNS = (
    "id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "effect_disposition",
    "timestamp", "token_count", "finish_reason", "reasoning", "reasoning_content", "reasoning_details",
    "codex_reasoning_items", "codex_message_items", "platform_message_id", "observed", "active", "compacted",
    "_compressed_summary", "api_content", "display_kind",
)
SESSION_COLUMNS = (
    "id", "source", "parent_session_id", "started_at", "ended_at", "end_reason", "model", "model_config",
    "system_prompt", "system_prompt_hash", "message_count", "tool_call_count", "rewind_count", "title",
)


@dataclass(slots=True)
class Row:
    """One `messages` row (or one exported message), decoded the way Hermes reads it."""

    id: int | str | None
    session_id: str
    role: str
    content: Any = None  # decoded: str, list, dict or None
    content_raw: Any = None  # as stored
    api_content: Any = None  # decoded wire replacement (v30), None when unset
    tool_calls: list[Any] | None = None  # parsed; Hermes reads bad JSON as []
    tool_calls_raw: Any = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    reasoning_details: Any = None
    codex_reasoning_items: Any = None
    codex_message_items: Any = None
    active: bool = True
    compacted: bool = False
    compressed_summary: bool = False
    display_kind: str | None = None
    timestamp: float | None = None
    effect_disposition: str | None = None
    platform_message_id: str | None = None
    observed: Any = None
    token_count: Any = None
    problems: list[str] | tuple[()] = ()  # decoding problems (F504)
    line: int | None = None  # export line


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


def _decode_text(raw: bytes) -> str:
    """SQLite TEXT to str without ever raising: lone surrogates and bad bytes survive for F507."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "surrogateescape")


def wal_header(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    return len(header) >= 20 and header[18] == 2 and header[19] == 2


def open_database(path: Path) -> sqlite3.Connection:
    """A read-only connection that creates nothing next to the database.

    A WAL-mode file with no `-wal` beside it has no writer and no uncheckpointed pages: open it
    `immutable=1` (plain `mode=ro` would create `-wal`/`-shm`). With a live `-wal`, read through
    `mode=ro` so the committed WAL pages are seen; a read-only directory falls back to immutable.
    """
    if not path.is_file():
        raise TdocError(f"{path}: no such file")
    has_wal = Path(f"{path}-wal").exists()
    params = "mode=ro"
    if (wal_header(path) and not has_wal) or (not os.access(path.parent, os.W_OK) and not has_wal):
        params += "&immutable=1"
    uri = f"file:{quote(str(path.resolve()))}?{params}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5.0)
        conn.text_factory = _decode_text
        conn.execute("PRAGMA query_only=ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise TdocError(f"{path}: not a readable SQLite database ({exc})") from None
    return conn


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

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.tables = tables(conn)
        self.message_columns = [c for c in MESSAGE_COLUMNS if c in set(columns(conn, "messages"))]
        self.session_columns = [c for c in SESSION_COLUMNS if c in set(columns(conn, "sessions"))]
        self.version = schema_version(conn)

    def _query(self, sql: str, params: tuple = ()) -> Iterator[tuple]:
        try:
            yield from self.conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            raise TdocError(f"cannot read the Hermes database: {exc}") from None

    def sessions(self) -> dict[str, SessionInfo]:
        cols = self.session_columns
        prompt_sql = ""
        if "system_prompt_hash" in cols and "system_prompts" in self.tables:
            prompt_sql = ", (SELECT prompt FROM system_prompts p WHERE p.hash = s.system_prompt_hash)"
        sql = f"SELECT {', '.join('s.' + quote_ident(c) for c in cols)}{prompt_sql} FROM sessions s"
        out: dict[str, SessionInfo] = {}
        for values in self._query(sql):
            d = dict(zip(cols, values))
            info = _session_info(d)
            if prompt_sql and info.system_prompt is None:
                info.system_prompt = values[len(cols)]
            out[info.id] = info
        return out

    def message_count(self) -> int:
        return next(self._query("SELECT count(*) FROM messages"))[0]

    def iter_rows(self, session_ids: list[str] | None = None) -> Iterator[Row]:
        """Rows in (session_id, id) order; all sessions, or only those named.

        Every column of MESSAGE_COLUMNS is selected, as NULL where this schema lacks it, so rows
        unpack positionally (the hot path of a scan).
        """
        have = set(self.message_columns)
        select = ", ".join(quote_ident(c) if c in have else f"NULL AS {quote_ident(c)}" for c in MESSAGE_COLUMNS)
        if session_ids is None:
            sql, params = f"SELECT {select} FROM messages ORDER BY session_id, id", ()
        else:
            marks = ",".join("?" * len(session_ids))
            sql, params = f"SELECT {select} FROM messages WHERE session_id IN ({marks}) ORDER BY session_id, id", tuple(session_ids)
        try:
            cursor = self.conn.execute(sql, params)
            while batch := cursor.fetchmany(512):
                for values in batch:
                    yield row_from_values(values)
        except sqlite3.DatabaseError as exc:
            raise TdocError(f"cannot read the Hermes database: {exc}") from None


def _session_info(d: dict[str, Any]) -> SessionInfo:
    return SessionInfo(
        id=str(d.get("id")),
        source=d.get("source"),
        parent_session_id=d.get("parent_session_id"),
        started_at=d.get("started_at"),
        end_reason=d.get("end_reason"),
        model=d.get("model"),
        model_config=d.get("model_config"),
        system_prompt=d.get("system_prompt"),
        message_count=d.get("message_count"),
        tool_call_count=d.get("tool_call_count"),
        title=d.get("title"),
    )


def session_from_mapping(d: dict[str, Any], line: int | None = None) -> SessionInfo:
    info = _session_info(d)
    info.line = line
    return info


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    try:
        return bool(int(value))
    except (TypeError, ValueError):
        return default


def _parse_tool_calls(raw: Any, problems: list[str]) -> list[Any] | None:
    """Stored JSON text (database) or an already parsed list (export); Hermes reads junk as []."""
    if raw is None or raw == "":
        return None
    value = raw
    if isinstance(raw, (str, bytes)):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            problems.append(f"tool_calls is not valid JSON ({exc}); Hermes reads it as []")
            return []
    if not isinstance(value, list):
        problems.append("tool_calls is not a JSON list; Hermes reads it as []")
        return []
    return value


def row_from_values(values: tuple) -> Row:
    """A Row from the values of MESSAGE_COLUMNS, in that order."""
    (mid, session_id, role, content_raw, tool_call_id, tool_calls_raw, tool_name, effect_disposition, timestamp,
     token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
     codex_message_items, platform_message_id, observed, active, compacted, compressed, api_raw, display_kind) = values
    problems: list[str] = []
    if isinstance(content_raw, bytes):
        problems.append("content is stored as a BLOB, not TEXT")
        content_raw = _decode_text(content_raw)
    content = content_raw
    if isinstance(content_raw, str) and content_raw.startswith("\x00"):
        content, err = decode_content(content_raw)
        if err:
            problems.append(err)
    api_content = api_raw
    if isinstance(api_raw, str) and api_raw.startswith("\x00"):
        api_content, err = decode_content(api_raw)
        if err:
            problems.append(err.replace("content", "api_content", 1))
    tool_calls = None if tool_calls_raw is None else _parse_tool_calls(tool_calls_raw, problems)
    return Row(
        mid, session_id if isinstance(session_id, str) else str(session_id or ""),
        role if isinstance(role, str) else str(role),
        content, content_raw, None if api_content in (None, "") else api_content, tool_calls, tool_calls_raw,
        tool_call_id, tool_name, finish_reason, reasoning, reasoning_content, reasoning_details,
        codex_reasoning_items, codex_message_items,
        True if active is None else _flag(active, True),
        False if not compacted else _flag(compacted, False),
        False if not compressed else _flag(compressed, False),
        display_kind, timestamp, effect_disposition, platform_message_id, observed, token_count,
        problems or (),
    )


def row_from_mapping(d: dict[str, Any], *, line: int | None = None) -> Row:
    """A Row from an exported message (decoded content, parsed tool calls) or any column mapping."""
    row = row_from_values(tuple(d.get(c) for c in MESSAGE_COLUMNS))
    row.line = line
    return row


def group_by_session(rows: Iterator[Row]) -> Iterator[tuple[str, list[Row]]]:
    """Consecutive rows of one session as (session_id, rows); input is session-ordered."""
    current: str | None = None
    batch: list[Row] = []
    for row in rows:
        if row.session_id != current:
            if batch:
                yield current or "", batch
            current, batch = row.session_id, []
        batch.append(row)
    if batch:
        yield current or "", batch
