"""Read OpenCode sessions from `opencode.db` (SQLite) or from `opencode export` JSON.

Both sources produce the same plain values: an `OcSession` holding its `OcMessage`s in replay
order, each with its `OcPart`s in id order. `info` and `data` are the MessageV2 / Part objects
as stored; the ids OpenCode adds back when it hydrates a row (`id`, `sessionID`, `messageID`) are
the `id` / `session_id` / `message_id` fields beside them, which is where tdoc reads them (a
database row's `data` is left without them: nothing reads them there, and a scan is cheaper).

Database rules (docs/opencode.md §1): columns are selected defensively (they vary by
version), messages are ordered by `(time_created, id)`, parts by id, and a part belongs to the
message its `message_id` names. Rows whose `data` does not decode to an object are kept out of
the session and reported as `RecordProblem`s (F504), never raised.

Exports (one JSON document) are read by `export.parse_export` into the same values.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ... import values
from ...errors import sqlite_failure
from ...fixes.sqlite import columns, decode_text, open_readonly, quote_ident, tables
from ...model import Loc, TdocError, make_loc
from ...values import may_be_deep

loads = orjson.loads
JSONDecodeError = orjson.JSONDecodeError

MESSAGE_TABLE = "message"
PART_TABLE = "part"
SESSION_TABLE = "session"
_UNDECODABLE = "Could not decode to UTF-8"  # sqlite3's error for TEXT that `str` cannot read
REQUIRED = {MESSAGE_TABLE: ("id", "session_id", "data"), PART_TABLE: ("id", "message_id", "data")}


class _Row:
    """A message or part row: located at its row of `TABLE` (`loc`), built when first asked for
    (most rows are never located: only a finding names one), and compared field by field over
    `FIELDS` and `loc`, as the dataclasses these classes replace were."""

    __slots__ = ()
    TABLE: str
    FIELDS: tuple[str, ...]
    id: str
    _loc: Loc | None

    @property
    def loc(self) -> Loc:
        loc = self._loc
        if loc is None:
            loc = self._loc = make_loc(None, None, self.id, self.TABLE)
        return loc

    def _compared(self) -> tuple[Any, ...]:
        return (*[getattr(self, name) for name in self.FIELDS], self.loc)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces


class OcPart(_Row):
    """One part: its ids, its `data`, its `type` (`data["type"]` when it is text, else "") and
    where it lives (`loc`: its row of the part table unless given)."""

    __slots__ = ("id", "message_id", "data", "type", "_loc")
    TABLE = PART_TABLE
    FIELDS = ("id", "message_id", "data", "type")

    def __init__(self, id: str, message_id: str, data: dict[str, Any], loc: Loc | None = None) -> None:
        self.id = id
        self.message_id = message_id
        self.data = data
        t = data.get("type")
        self.type = t if isinstance(t, str) else ""
        self._loc = loc

    def __repr__(self) -> str:
        return f"OcPart(id={self.id!r}, message_id={self.message_id!r}, type={self.type!r}, loc={self.loc!r})"


class OcMessage(_Row):
    """One message: its ids, its `info`, its `role` (`info["role"]` when it is text, else ""), its
    parts and where it lives (`loc`: its row of the message table unless given)."""

    __slots__ = ("id", "session_id", "info", "parts", "role", "_loc")
    TABLE = MESSAGE_TABLE
    FIELDS = ("id", "session_id", "info", "parts", "role")

    def __init__(self, id: str, session_id: str, info: dict[str, Any], parts: list[OcPart] | None = None,
                 loc: Loc | None = None) -> None:  # fmt: skip
        self.id = id
        self.session_id = session_id
        self.info = info
        self.parts: list[OcPart] = [] if parts is None else parts
        r = info.get("role")
        self.role = r if isinstance(r, str) else ""
        self._loc = loc

    def __repr__(self) -> str:
        return f"OcMessage(id={self.id!r}, role={self.role!r}, parts={len(self.parts)}, loc={self.loc!r})"


@dataclass(slots=True)
class RecordProblem:
    """A row or element that could not be read (F504)."""

    session: str | None
    table: str | None
    row: str | None
    detail: str
    line: int | None = None


@dataclass
class OcSession:
    id: str
    title: str | None = None
    parent_id: str | None = None
    messages: list[OcMessage] = field(default_factory=list)
    problems: list[RecordProblem] = field(default_factory=list)


# --------------------------------------------------------------------------- decoding


def decode_json(raw: Any) -> Any:
    """JSON as JS JSON.parse reads it (lone surrogates too), under the reader-boundary rule of
    `transcript_doctor.values` (no Infinity, no nesting orjson cannot write back)."""
    if isinstance(raw, memoryview):
        raw = bytes(raw)
    if not isinstance(raw, (bytes, str)):
        raise TypeError(f"a {type(raw).__name__}, not JSON text")
    return values.loads(raw)


def _decode_row(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) or (None, why it is unreadable)."""
    if raw is None:
        return None, "data is NULL"
    try:
        value = decode_json(raw)
    except (ValueError, TypeError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None, f"data is not valid JSON ({str(exc)[:120]})"
    if not isinstance(value, dict):
        return None, f"data is a JSON {type(value).__name__}, not an object"
    return value, None


def _text(raw: Any) -> str | None:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, (bytes, memoryview)):
        return bytes(raw).decode("utf-8", "replace")
    return None


# --------------------------------------------------------------------------- database


def open_db(path: Path, display: str | None = None) -> sqlite3.Connection:
    """A read-only connection that creates nothing beside the database and never waits.

    OpenCode keeps its database in WAL mode: with no `-wal` file beside it no process has it
    open and it is read `immutable=1`; with one, `mode=ro` reads the committed WAL pages too
    (`fixes.sqlite.open_readonly`).
    """
    return open_readonly(path, display)


@dataclass(slots=True)
class SessionRow:
    id: str
    title: str | None
    parent_id: str | None
    updated: Any


class DbReader:
    """Reads sessions through any connection (read-only for scans, the write one while healing)."""

    def __init__(self, conn: sqlite3.Connection, display: str) -> None:
        self.conn = conn
        self.display = display
        try:
            names = tables(conn)
            self.cols = {t: set(columns(conn, t)) for t in (MESSAGE_TABLE, PART_TABLE, SESSION_TABLE) if t in names}
        except (sqlite3.Error, UnicodeError) as exc:
            raise sqlite_failure(display, exc, "read the schema of") from None
        for table, needed in REQUIRED.items():
            missing = [c for c in needed if c not in self.cols.get(table, ())]
            if missing:
                raise TdocError(f"{display}: not an OpenCode database (table {table} lacks {', '.join(missing)})")

    def _query(self, sql: str, params: tuple = ()) -> Iterator[tuple]:
        try:
            yield from self.conn.execute(sql, params)
        except (sqlite3.Error, UnicodeError) as exc:
            raise sqlite_failure(self.display, exc) from None

    def count(self, table: str) -> int:
        return next(self._query(f"SELECT count(*) FROM {quote_ident(table)}"))[0]

    def sessions(self, only: str | None = None) -> list[SessionRow]:
        """Sessions in creation order: the `session` table plus ids only messages name."""
        found: dict[str, SessionRow] = {}
        scols = self.cols.get(SESSION_TABLE, set())
        if "id" in scols:
            pick = [c if c in scols else "NULL" for c in ("id", "title", "parent_id", "time_updated")]
            order = "time_created, id" if "time_created" in scols else "id"
            for sid, title, parent, updated in self._query(
                f"SELECT {', '.join(pick)} FROM session ORDER BY {order}"
            ):
                if isinstance(sid, str):
                    found[sid] = SessionRow(sid, _text(title), _text(parent), updated)
        for (sid,) in self._query("SELECT DISTINCT session_id FROM message"):
            if isinstance(sid, str) and sid not in found:
                found[sid] = SessionRow(sid, None, None, None)
        rows = list(found.values())
        return [r for r in rows if r.id == only] if only else rows

    def read_session(self, row: SessionRow) -> OcSession:
        conn = self.conn
        if conn.text_factory is decode_text:  # the read-only connection (`open_db`)
            conn.text_factory = str  # the same text for valid UTF-8, decoded without a Python call per cell
            try:
                return self._read(row)
            except sqlite3.OperationalError:  # a TEXT cell that is not UTF-8 (`_read` lets only that through)
                pass
            finally:
                conn.text_factory = decode_text
        return self._read(row)  # (again) with each TEXT cell read as `decode_text` reads it

    def _read(self, row: SessionRow) -> OcSession:
        session = OcSession(row.id, row.title, row.parent_id)
        try:
            self._attach_parts(session, self._read_messages(session))
        except sqlite3.OperationalError as exc:
            if self.conn.text_factory is str and str(exc).startswith(_UNDECODABLE):
                raise  # `read_session` reads the session again, as `decode_text` reads text
            raise sqlite_failure(self.display, exc) from None
        except (sqlite3.Error, UnicodeError) as exc:
            raise sqlite_failure(self.display, exc) from None
        return session

    def _read_messages(self, session: OcSession) -> dict[str, OcMessage]:
        """The session's readable message rows, in replay order; by id."""
        order = "time_created, id" if "time_created" in self.cols[MESSAGE_TABLE] else "id"
        sid = session.id
        messages = session.messages
        by_id: dict[str, OcMessage] = {}
        for mid, raw in self.conn.execute(
            f"SELECT id, CAST(data AS BLOB) FROM message WHERE session_id = ? ORDER BY {order}", (sid,)
        ):
            try:  # `_shallow_object(raw, mid)`, written out as in `_attach_parts`
                info = loads(raw) if raw.__class__ is bytes and mid.__class__ is str else None
            except JSONDecodeError:
                info = None
            if info.__class__ is not dict or (len(raw) >= _SHALLOW and may_be_deep(raw, info)):
                info, problem = _general_row(raw, mid)
                if info is None:
                    session.problems.append(RecordProblem(sid, MESSAGE_TABLE, _text(mid), problem))
                    continue
            msg = _message(mid, sid, info)
            messages.append(msg)
            by_id[mid] = msg
        return by_id

    def _attach_parts(self, session: OcSession, by_id: dict[str, OcMessage]) -> None:
        """Each readable part appended to its message (the last message of a repeated id)."""
        # A part belongs to the message its message_id names (as OpenCode hydrates it), whatever
        # its own session_id says; the (message_id, id) index serves this as well as part.session_id.
        sql = (
            "SELECT id, message_id, CAST(data AS BLOB) FROM part WHERE message_id IN "
            "(SELECT id FROM message WHERE session_id = ?) ORDER BY message_id, id"
        )
        sid = session.id
        current: OcMessage | None = None
        parts: list[OcPart] = []
        new, part_class = _new, OcPart
        for pid, mid, raw in self.conn.execute(sql, (sid,)):
            if current is None or current.id != mid:
                current = by_id.get(mid)
                if current is None:
                    continue  # its message row was unreadable (already reported)
                parts = current.parts
            # `_shallow_object(raw, pid)`, written out (the reader's hottest loop): its value or None
            try:
                data = loads(raw) if raw.__class__ is bytes and pid.__class__ is str else None
            except JSONDecodeError:
                data = None
            if data.__class__ is not dict or (len(raw) >= _SHALLOW and may_be_deep(raw, data)):
                data, problem = _general_row(raw, pid)
                if data is None:
                    session.problems.append(RecordProblem(sid, PART_TABLE, _text(pid), problem))
                    continue
            kind = data.get("type")
            part = new(part_class)  # `OcPart(pid, mid, data)` without `__init__` (pinned by tests/test_opencode_reader_fast.py)
            part.id, part.message_id, part.data, part._loc = pid, mid, data, None
            part.type = kind if kind.__class__ is str else ""
            parts.append(part)


def _shallow_object(raw: Any, rid: Any) -> dict[str, Any] | None:
    """The common row: a text id and a BLOB that orjson reads as an object too short, or with too
    few brackets, to nest deeper than the reader-boundary rule allows. None: anything else, which
    `_row_data` decides (the same rows `_row_data`'s first step accepts, with the same value).

    The row loops of `DbReader` write this test out rather than call it (a call per row cost 5%
    of a scan); tests/test_opencode_reader_fast.py and tests/opencode/test_scan_paths.py read
    databases through them and compare with `_row_data` / `_decode_row` row by row."""
    if raw.__class__ is bytes and rid.__class__ is str:
        try:
            value = loads(raw)
        except JSONDecodeError:
            return None
        if value.__class__ is dict and (len(raw) < _SHALLOW or not may_be_deep(raw, value)):
            return value
    return None


def _row_data(raw: Any, rid: Any) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """A row's `data` cell as the JSON object it holds, or None and why the row is unreadable
    (its cell holds no object, `_decode_row` says why, or its id is not text).

    The common case first (`_shallow_object`); anything else goes through `_general_row`."""
    value = _shallow_object(raw, rid)
    return (value, None) if value is not None else _general_row(raw, rid)


def _general_row(raw: Any, rid: Any) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """`_row_data` for a row `_shallow_object` left: `_decode_row`, the general path, once, so
    both accept the same rows."""
    decoded, problem = _decode_row(raw)
    if decoded is None:
        return None, problem or "id is not text"
    if rid.__class__ is not str:
        return None, "id is not text"
    return decoded, None


_SHALLOW = 2 * (values.MAX_DEPTH + 1)  # a JSON text this short cannot nest deeper than MAX_DEPTH
_new = object.__new__


def _message(mid: str, sid: str, info: dict[str, Any]) -> OcMessage:
    """An `OcMessage` without a call of `__init__` (the reader's hot path); equal to
    `OcMessage(mid, sid, info)` (pinned by tests/test_opencode_reader_fast.py)."""
    msg = _new(OcMessage)
    role = info.get("role")
    msg.id, msg.session_id, msg.info, msg.parts, msg._loc, msg.role = mid, sid, info, [], None, role if role.__class__ is str else ""
    return msg
