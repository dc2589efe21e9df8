"""`tdoc replay` for Hermes: the conversation Hermes would resume, in its own message-dict shape."""

from __future__ import annotations

import sqlite3
from typing import Any

from ...errors import sqlite_failure
from ...text import json_safe
from .plan import id_order
from .resume import REQUEST_OFFSET, build, lineage, resume_tip
from .rows import Row


def replay_session(store: Any, session_id: str, rows: list[Row]) -> dict[str, Any]:
    """One replay object: the resumed history, what was left out and why, and the lineage view."""
    sessions = store.sessions
    info = sessions.get(session_id)
    entries, dropped = build(rows)
    chain = lineage(sessions, session_id)
    lineage_history = None
    if len(chain) > 1:
        chain_rows = sorted(
            (r for _, rs in store.iter_sessions(chain) for r in rs), key=lambda r: id_order(r.id)
        )
        merged, _ = build(chain_rows, lineage=True)
        lineage_history = [e.wire for e in merged]
    return json_safe({
        "format": store.format,
        "engine": None,
        "session": session_id,
        "source": info.source if info else None,
        "model": info.model if info else None,
        "parent_session_id": info.parent_session_id if info else None,
        "resumes_into": resume_tip(sessions, session_id, _sessions_with_rows(store)),
        "system_prompt": info.system_prompt if info else None,
        "request_offset": REQUEST_OFFSET,
        "history": [e.wire for e in entries],
        "rows": [e.row.id for e in entries],
        "dropped": [{"row": d.row.id, "role": d.row.role, "reason": d.reason} for d in dropped],
        "lineage": chain,
        "lineage_history": lineage_history,
        "errors": [{"row": r.id, "problem": p} for r in rows for p in r.problems],
    })


def _sessions_with_rows(store: Any) -> set[str]:
    cached = getattr(store, "_with_rows", None)
    if cached is None:
        cached = {sid for sid, _ in store.iter_sessions()} if store.format == "hermes-export" else _db_with_rows(store)
        store._with_rows = cached
    return cached


def _db_with_rows(store: Any) -> set[str]:
    conn = store.connection()
    try:
        return {r[0] for r in conn.execute("SELECT DISTINCT session_id FROM messages")}
    except (sqlite3.Error, UnicodeError) as exc:
        raise sqlite_failure(store.display, exc) from None
