"""Healing OpenCode stores: delete the parts and messages the fixes name, nothing else.

Databases: one `BEGIN IMMEDIATE` transaction through `fixes.sqlite.heal_database` (backup API
first, exit 3 when another process holds a lock, `quick_check` before commit). Inside the
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
from pathlib import Path
from typing import IO, Any

from ...fixes.atomic import backup_path_for, check_writable, make_backup, write_atomic
from ...fixes.sqlite import backup_database, heal_database, restore_database
from ...model import Edit, Finding, RefusedError, TdocError
from ..base import HealOptions, HealResult
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
        out = [("DELETE FROM part WHERE id = ?", (pid,)) for pid in self.parts]
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

    def edits(self) -> list[dict[str, Any]]:
        return [Edit("delete", table="part", row=p).as_dict() for p in self.parts] + [
            Edit("delete", table="message", row=m).as_dict() for m in self.messages
        ]


def _skip(f: Finding, reason: str) -> dict[str, Any]:
    return {"code": f.code, "session": f.session, "row": f.row, "line": f.line, "reason": reason}


def _plan(findings: Iterable[Finding], options: HealOptions) -> Plan:
    plan = Plan()
    for f in findings:
        plan.add(f, options)
    return plan


def _result(store: Any, plan: Plan) -> HealResult:
    return HealResult(path=store.display, format=store.format, changed=bool(plan), applied=plan.applied,
                      skipped=plan.skipped, edits=plan.edits())


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


def heal_db(store: Any, findings: list[Finding], options: HealOptions) -> HealResult:
    plan = _plan(findings, options)
    result = _result(store, plan)
    result.diff = plan.sql() if plan else None
    if not plan or options.mode == "dry-run":
        return result
    target = Path(store.path)
    if options.mode == "output":
        target = _copy_database(store, options.output)
    backup = options.backup and options.mode == "in-place"
    try:
        made = heal_database(target, [], backup=backup, backup_dir=options.backup_dir,
                             after=lambda conn: _apply(conn, store, plan))
    except BaseException:
        if options.mode == "output":
            target.unlink(missing_ok=True)  # never leave a half-healed copy behind
        raise
    result.written = True
    result.backup = str(made) if made else None
    result.output = str(target) if options.mode == "output" else None
    return result


def restore_db(path: Path, backup: Path) -> None:
    """Put the backup back in place (see fixes.sqlite.restore_database)."""
    restore_database(path, backup, "OpenCode")


def _copy_database(store: Any, output: Path | None) -> Path:
    if output is None:
        raise TdocError("--output needs a path")
    if output.exists():
        raise TdocError(f"{output}: already exists; choose a new path")
    backup_database(store.conn, output, (Path(store.path).stat().st_mode & 0o777) | 0o200)
    return output


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


def heal_export(store: Any, findings: list[Finding], options: HealOptions) -> HealResult:
    plan = _plan(findings, options)
    result = _result(store, plan)
    if not plan:
        return result
    original: bytes = store.data
    doc = json.loads(original.decode("utf-8-sig"))
    if _render(doc) not in (original, original.rstrip(b"\n") + b"\n"):
        raise TdocError(f"{store.display}: cannot rewrite this export without reformatting it; "
                        "heal the database it came from, or `opencode import` it and heal that")
    keep_newline = original.endswith(b"\n")
    new = _render(_edited(doc, plan))
    new = new if keep_newline else new.rstrip(b"\n")
    result.diff = _diff(store.display, original, new)
    if options.mode == "dry-run":
        return result
    path = Path(store.path)
    st = check_writable(path) if options.mode == "in-place" else path.stat()
    target = path if options.mode == "in-place" else options.output
    if target is None:
        raise TdocError("--output needs a path")

    def produce(out: IO[bytes]) -> None:
        out.write(new)

    if options.mode == "in-place" and options.backup:
        result.backup = str(make_backup(path, backup_path_for(path, options.backup_dir), st.st_mode & 0o777))
    write_atomic(target, produce, mode=st.st_mode & 0o777, expected=store.fingerprint, original=path)
    result.written = True
    result.output = str(target) if options.mode == "output" else None
    return result


def _diff(display: str, old: bytes, new: bytes) -> str:
    a = old.decode("utf-8-sig").splitlines(keepends=True)
    b = new.decode("utf-8").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=display, tofile=f"{display} (healed)"))
