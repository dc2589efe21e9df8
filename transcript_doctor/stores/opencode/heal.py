"""Healing OpenCode stores: delete the parts and messages the fixes name, nothing else.

Databases: the heal pipeline runs the plan in one `BEGIN IMMEDIATE` transaction (backup first,
exit 3 when another process holds a lock, `quick_check` before commit; docs/heal.md). Inside the
transaction, before anything is deleted, the sessions concerned are read again and checked
again: every fix asked for must still be produced by the current rows, otherwise the store
changed since the scan and nothing is written (exit 3). Parts are deleted explicitly before
their message, and the message's part count is checked to be zero afterwards, so the result
holds whether or not the connection enforces foreign keys (`ON DELETE CASCADE` needs
`PRAGMA foreign_keys=ON`, which cannot be switched on inside a transaction).

Exports: rewritten only when re-serialising the parsed document reproduces the file byte for
byte (`JSON.stringify(value, null, 2)` layout), so untouched records stay identical.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from ...heal.plan import BytesWrite, HealPlan, SqlWrite, patch_name
from ...model import Edit, Finding, RefusedError, TdocError
from ..base import HealOptions
from .checks import session_findings
from .reader import DbReader
from .runs import analyse


class Plan:
    """The rows to delete, parts before messages, each once."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.messages: list[str] = []
        self.applied: list[Finding] = []
        self.skipped: list[dict[str, Any]] = []

    def add(self, f: Finding, options: HealOptions) -> None:
        fix = f.fix
        if fix is None or not fix.edits:
            return
        if fix.applicability == "unsafe" and not options.unsafe_fixes:
            self.skipped.append(_skip(f, "unsafe fix; pass --unsafe-fixes"))
            return
        if fix.applicability not in ("safe", "unsafe"):
            return
        if any(e.op != "delete" or e.table not in ("part", "message") or not isinstance(e.row, str) for e in fix.edits):
            self.skipped.append(_skip(f, "not an OpenCode row deletion"))
            return
        for e in fix.edits:
            target = self.parts if e.table == "part" else self.messages
            if e.row not in target:
                target.append(e.row)  # type: ignore[arg-type]
        self.applied.append(f)

    def __bool__(self) -> bool:
        return bool(self.parts or self.messages)

    def statements(self) -> list[tuple[str, tuple[str, ...]]]:
        out: list[tuple[str, tuple[str, ...]]] = [("DELETE FROM part WHERE id = ?", (pid,)) for pid in self.parts]
        out += [("DELETE FROM message WHERE id = ?", (mid,)) for mid in self.messages]
        return out

    def sql(self) -> str:
        lines = ["BEGIN IMMEDIATE;"]
        for f in self.applied:
            lines.append(f"-- {f.code} {f.session or ''}: {f.fix.summary if f.fix else ''}")
        for sql, (key,) in self.statements():
            lines.append(sql.replace("?", "'" + key.replace("'", "''") + "'") + ";")
        lines.append("PRAGMA quick_check;")
        lines.append("COMMIT;")
        return "\n".join(lines) + "\n"

    def edit_list(self) -> list[Edit]:
        return [Edit("delete", table="part", row=p) for p in self.parts] + [
            Edit("delete", table="message", row=m) for m in self.messages
        ]


def _skip(f: Finding, reason: str) -> dict[str, Any]:
    return {"code": f.code, "session": f.session, "row": f.row, "line": f.line, "reason": reason}


def _plan(findings: Iterable[Finding], options: HealOptions) -> Plan:
    plan = Plan()
    for f in findings:
        plan.add(f, options)
    return plan


def _heal_plan(plan: Plan) -> HealPlan:
    return HealPlan(applied=plan.applied, skipped=plan.skipped, edits=plan.edit_list())


# --------------------------------------------------------------------------- databases


def _fix_key(f: Finding) -> tuple[Any, ...]:
    edits = tuple(sorted((e.table or "", str(e.row)) for e in (f.fix.edits if f.fix else ())))
    return f.code, f.session, edits


def _verify(conn: sqlite3.Connection, store: Any, plan: Plan) -> None:
    """Inside the write transaction: the fixes must follow from the rows as they are now."""
    reader = DbReader(conn, store.display)
    sessions = {f.session for f in plan.applied}
    current: set[tuple[Any, ...]] = set()
    for row in reader.sessions():
        if row.id in sessions:
            view = analyse(reader.read_session(row))
            current.update(_fix_key(f) for f in session_findings(store, view) if f.fix)
    stale = [f for f in plan.applied if _fix_key(f) not in current]
    if stale:
        raise RefusedError(
            f"{store.display}: the store changed since it was scanned ({stale[0].code} in session "
            f"{stale[0].session} no longer applies); nothing written"
        )


def _apply(conn: sqlite3.Connection, store: Any, plan: Plan) -> None:
    _verify(conn, store, plan)
    for sql, params in plan.statements():
        if conn.execute(sql, params).rowcount != 1:
            raise RefusedError(f"{store.display}: row {params[0]} vanished during the heal; rolled back")
    for mid in plan.messages:
        left = conn.execute("SELECT count(*) FROM part WHERE message_id = ?", (mid,)).fetchone()[0]
        if left:
            raise RefusedError(f"{store.display}: message {mid} gained {left} part(s) during the heal; rolled back")


def plan_db(store: Any, findings: list[Finding], options: HealOptions) -> HealPlan:
    """Row deletions, run by the pipeline in one transaction after `_verify` re-read the rows."""
    plan = _plan(findings, options)
    out = _heal_plan(plan)
    if plan:
        out.write = SqlWrite(lambda conn: _apply(conn, store, plan), plan.sql())
    return out


# --------------------------------------------------------------------------- exports


def _render(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _edited(doc: dict[str, Any], plan: Plan) -> dict[str, Any]:
    gone_msgs, gone_parts = set(plan.messages), set(plan.parts)
    messages = []
    for entry in doc.get("messages") or []:
        info = entry.get("info") if isinstance(entry, dict) else None
        if isinstance(info, dict) and info.get("id") in gone_msgs:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("parts"), list):
            entry = {**entry, "parts": [p for p in entry["parts"] if not (isinstance(p, dict) and p.get("id") in gone_parts)]}
        messages.append(entry)
    return {**doc, "messages": messages}


def plan_export(store: Any, findings: list[Finding], options: HealOptions) -> HealPlan:
    """The whole export re-serialised without the deleted messages and parts."""
    plan = _plan(findings, options)
    out = _heal_plan(plan)
    out.read_as = store.fingerprint
    if not plan:
        return out
    original: bytes = store.data
    doc = json.loads(original.decode("utf-8-sig"))
    if _render(doc) not in (original, original.rstrip(b"\n") + b"\n"):
        raise TdocError(f"{store.display}: cannot rewrite this export without reformatting it; "
                        "heal the database it came from, or `opencode import` it and heal that")
    new = _render(_edited(doc, plan))
    new = new if original.endswith(b"\n") else new.rstrip(b"\n")
    name = patch_name(store.display)
    out.write = BytesWrite(new, _diff(f"a/{name}", f"b/{name}", original, new))
    return out


def _diff(old_name: str, new_name: str, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8").splitlines(keepends=True)
    b = new.decode("utf-8").splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(a, b, fromfile=old_name, tofile=new_name):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)

