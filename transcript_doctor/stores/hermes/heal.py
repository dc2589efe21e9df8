"""Heal plans for a Hermes `state.db`: edit it in place, the way Hermes itself edits it.

The findings handed in are matched against a fresh read of the database (a finding that no longer
holds is skipped), their fix actions are composed per row, and the resulting SQL runs inside one
`BEGIN IMMEDIATE` transaction the heal pipeline opens after its backup (docs/heal.md). Inside
the transaction tdoc checks the touched sessions did not change since they were read, keeps the
FTS triggers consistent (the optional CJK index follows Hermes' own convention when its tokenizer
is not loadable), recomputes `message_count`/`tool_call_count`, and `quick_check` runs before
commit. A locked database is refused (exit 3) untouched. The file is never swapped.
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import TYPE_CHECKING, Any

import orjson

from ...fixes.sqlite import integrity_problems, quote_ident
from ...heal.plan import HealPlan, SqlWrite
from ...model import Finding, RefusedError, TdocError
from ..base import HealOptions
from ..options import RowHealOptions
from . import plan
from .checks import finding_key

if TYPE_CHECKING:
    from .store import HermesDbStore


def plan_heal(store: HermesDbStore, findings: list[Finding], options: HealOptions) -> HealPlan:
    """Match the findings against a fresh read, compose the row changes, and hand the pipeline
    the statements to run inside its transaction (after checking the sessions did not change)."""
    out = HealPlan()
    wanted = [f for f in findings if f.fix is not None and f.fix.applicability != "none"]
    sessions = sorted({f.session for f in wanted if f.session})
    store.close()  # no read transaction of ours may stand in the way of the write
    fresh = store.reopen()
    try:
        damaged = integrity_problems(fresh.connection())
        if damaged:
            raise TdocError(f"{store.display}: the database fails quick_check ({damaged[0].splitlines()[-1][:120]}); "
                            "heal refused: restore it from a backup first")
        fresh_by_key = {finding_key(f): f for f in fresh.scan_sessions(sessions, keep_rows=True)}
        actions = _match(wanted, fresh_by_key, fresh, options, out)
        changes = plan.compose(actions, fresh.kept_rows, fresh.schema, purge=options.get(RowHealOptions).purge)
        touched = sorted({c.session for c in changes if c.session})
        fingerprint = session_fingerprint(fresh.connection(), touched)
        schema = fresh.schema
    finally:
        fresh.close()
    stmts = plan.statements(changes)
    out.edits = [c.edit() for c in changes]
    if not stmts:
        out.applied = []
        return out

    def apply(conn: sqlite3.Connection) -> None:
        if session_fingerprint(conn, touched) != fingerprint:
            raise RefusedError(f"{store.display}: the database changed while tdoc worked; nothing written")
        _prepare_cjk(conn, schema, changes, out.warnings)
        for sql, params in stmts:
            conn.execute(sql, params)
        recompute_counters(conn, touched, schema)

    out.write = SqlWrite(apply, plan.render(stmts))
    return out


def _match(wanted: list[Finding], fresh: dict[tuple, Finding], store: Any, options: HealOptions,
           result: HealPlan) -> list[plan.Action]:
    actions: list[plan.Action] = []
    seen: set[tuple] = set()
    for f in wanted:
        key = finding_key(f)
        if key in seen:
            continue
        seen.add(key)
        current = fresh.get(key)
        reason = None
        if current is None:
            reason = "no longer present in the database"
        elif current.fix is None:
            reason = "no automatic fix for this finding in a Hermes database"
        else:
            acts = store.actions.get(key, [])
            if any(a.kind == "deactivate" for a in acts) and not options.get(RowHealOptions).purge and "active" not in store.schema.message_columns:
                reason = "this schema has no `active` column (before v16): rerun with --purge to delete rows"
        if reason or current is None:
            result.skipped.append({"code": f.code, "session": f.session, "row": f.row, "reason": reason})
            continue
        result.applied.append(current)
        actions.extend(store.actions.get(key, []))
    return actions


def session_fingerprint(conn: sqlite3.Connection, sessions: list[str]) -> str:
    """A hash of the touched sessions' rows: any concurrent change to them shows up here."""
    digest = hashlib.sha256()
    cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    wanted = [c for c in ("id", "active", "role", "content", "api_content", "tool_calls", "tool_call_id") if c in cols]
    select = ", ".join(quote_ident(c) for c in wanted)
    for sid in sessions:
        digest.update(repr(sid).encode("utf-8", "backslashreplace"))  # ids may hold undecodable bytes
        for values in conn.execute(f"SELECT {select} FROM messages WHERE session_id = ? ORDER BY id", (sid,)):
            digest.update(repr(values).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def recompute_counters(conn: sqlite3.Connection, sessions: list[str], schema: plan.Schema) -> None:
    """What Hermes keeps: message_count = active rows, tool_call_count = their tool calls."""
    cols = schema.session_columns & {"message_count", "tool_call_count"}
    if not cols:
        return
    live = "COALESCE(active, 1) = 1" if "active" in schema.message_columns else "1"
    for sid in sessions:
        count = calls = 0
        for (raw,) in conn.execute(f"SELECT tool_calls FROM messages WHERE session_id = ? AND {live}", (sid,)):
            count += 1
            calls += _call_count(raw)
        sets = {"message_count": count, "tool_call_count": calls}
        assignments = ", ".join(f"{c} = ?" for c in sorted(cols))
        conn.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", tuple(sets[c] for c in sorted(cols)) + (sid,))


def _call_count(raw: Any) -> int:
    if not raw:
        return 0
    try:
        value = orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError):
        return 0
    return len(value) if isinstance(value, list) else 0


def _fires(trigger_sql: str, changes: list[plan.Change]) -> bool:
    sql = " ".join(trigger_sql.upper().split())
    for c in changes:
        if c.table != "messages":
            continue
        if c.op == "delete" and "AFTER DELETE" in sql or c.op == "insert" and "AFTER INSERT" in sql:
            return True
        if c.op == "update" and "AFTER UPDATE" in sql:
            if "AFTER UPDATE OF" not in sql:
                return True
            listed = sql.split("AFTER UPDATE OF", 1)[1].split(" ON ", 1)[0]
            if any(col.upper() in {x.strip() for x in listed.split(",")} for col in c.set):
                return True
    return False


def _prepare_cjk(conn: sqlite3.Connection, schema: plan.Schema, changes: list[plan.Change], warnings: list[str]) -> None:
    """Hermes' convention when the cjk_unicode61 tokenizer cannot be loaded: drop the three CJK
    triggers and mark the index stale (`state_meta.fts_cjk_stale = '1'`); Hermes rebuilds it with
    `hermes sessions optimize-storage`. tdoc never loads native extensions itself."""
    triggers: dict[str, str] = dict(schema.cjk_triggers)
    if not triggers or not any(_fires(sql, changes) for sql in triggers.values()):
        return
    try:
        conn.execute("SELECT count(*) FROM messages_fts_cjk WHERE 0").fetchall()
        return  # the tokenizer is available in this connection: the triggers work
    except sqlite3.DatabaseError:
        pass
    for name in triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {quote_ident(name)}")
    conn.execute(
        "INSERT INTO state_meta(key, value) VALUES ('fts_cjk_stale', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    )
    warnings.append(
        "the CJK full-text index (cjk_unicode61) is not loadable here: following Hermes' convention, its "
        "triggers were dropped and state_meta.fts_cjk_stale=1; run `hermes sessions optimize-storage` to rebuild it"
    )
