"""Fix actions for Hermes findings and their translation into row changes and SQL.

Actions mirror what Hermes itself does to its database: rows are deactivated (`active=0,
compacted=0`, as its rewind does) rather than deleted unless `--purge`; content and tool calls are
rewritten the way Hermes serialises them; nothing is ever inserted between existing ids (replay
order is by id), so an unanswered call gets a synthetic error result only when it ends the session.
Several findings may touch one row: their actions are composed per row before any SQL is built.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...model import Applicability, Edit, Fix
from ...rules.registry import RULES
from ...text import excerpt, is_blank, terminal_safe
from .content import JSON_PREFIX, encode_content

INTERRUPTED_RESULT = "Tool call interrupted: no result was recorded, its outcome is unknown. (added by tdoc)"
_BAD = {0: "\ufffd"}


@dataclass
class Schema:
    """What the database can store (older generations lack columns)."""

    message_columns: frozenset[str] = frozenset({"active", "compacted"})
    session_columns: frozenset[str] = frozenset()
    cjk_triggers: tuple[tuple[str, str], ...] = ()  # (name, sql) of the optional CJK FTS triggers


@dataclass(frozen=True)
class Action:
    kind: str  # deactivate | drop_part | drop_call | scrub | insert_result | bump_rewind
    row: Any
    session: str
    index: int | None = None
    call_id: str | None = None
    tool_name: str | None = None


@dataclass
class Change:
    op: str  # update | delete | insert
    table: str
    row: Any = None
    set: dict[str, Any] = field(default_factory=dict)
    session: str | None = None

    def edit(self) -> Edit:
        shown = {k: (excerpt(v) if isinstance(v, str) else v) for k, v in self.set.items()}
        return Edit(op=self.op, table=self.table, row=self.row, set=shown or None)


# --------------------------------------------------------------------------- actions per finding


_SUMMARIES = {
    "drop_part": "drop blank part {index} of row {row}",
    "drop_call": "remove call {call_id} from row {row}",
    "scrub": "replace NUL bytes and lone surrogates in row {row} with U+FFFD",
    "insert_result": "append an error result for {call_id} after row {row} ('interrupted, outcome unknown', never a success)",
    "bump_rewind": "count it in sessions.rewind_count",
}


def _rows_phrase(rows: list[Any]) -> str:
    ids = sorted(rows, key=id_order)
    if len(ids) > 2 and all(isinstance(i, int) for i in ids) and ids[-1] - ids[0] == len(ids) - 1:
        return f"rows {ids[0]}-{ids[-1]}"
    return ("row " if len(ids) == 1 else "rows ") + ", ".join(str(i) for i in ids)


def summarize(actions: list[Action]) -> str:
    deactivated = [a.row for a in actions if a.kind == "deactivate"]
    parts = []
    if deactivated:
        parts.append(f"deactivate {_rows_phrase(deactivated)} (active=0, as Hermes' rewind does)")
    parts += [_SUMMARIES[a.kind].format(**a.__dict__) for a in actions if a.kind != "deactivate"]
    return "; ".join(parts)


def fix_of(actions: list[Action], scan: Any, note: str = "", applicability: Applicability = "unsafe") -> Fix | None:
    """The Fix that `actions` make: a summary (plus `note`) and the row edits."""
    if not actions:
        return None
    changes = compose(actions, {r.id: r for r in scan.rows}, scan.schema, purge=False)
    return Fix(applicability, summarize(actions) + note, tuple(c.edit() for c in changes))


def describe(code: str, actions: list[Action], scan: Any) -> Fix | None:
    """The Fix of a finding of a Hermes-only rule: the rule's applicability and the actions' edits."""
    rule = RULES[code]
    if rule.fix == "none":
        return None
    fix = fix_of(actions, scan, applicability=rule.fix)
    if fix is not None and code == "S301":
        fix = Fix(fix.applicability, "rewind the turn so it can be retried: " + fix.summary, fix.edits)
    return fix


# --------------------------------------------------------------------------- composition


def id_order(value: Any) -> tuple[int, Any]:
    """Row ids sort numerically (Hermes' ids are integers); anything else after them, as text."""
    return (0, value) if isinstance(value, int) else (1, str(value))


def scrub(value: Any) -> Any:
    """Replace NUL and lone surrogates in every string of `value` (the JSON prefix is kept)."""
    if isinstance(value, str):
        if value.startswith(JSON_PREFIX):
            return value
        out = value.translate(_BAD)
        if any("\ud800" <= ch <= "\udfff" for ch in out):
            out = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in out)
        return out
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    return value


def _vacuous_content(content: Any) -> bool:
    if content is None or isinstance(content, str):
        return is_blank(content)
    if isinstance(content, list):
        return all(isinstance(p, dict) and p.get("type") == "text" and is_blank(p.get("text")) for p in content)
    return False


def _row_change(row: Any, acts: list[Action], schema: Schema, purge: bool) -> Change | None:
    kinds = {a.kind for a in acts}
    content = copy.deepcopy(row.content)
    calls = copy.deepcopy(row.tool_calls) if row.tool_calls is not None else None
    new: dict[str, Any] = {}
    drop_parts = sorted({a.index for a in acts if a.kind == "drop_part" and a.index is not None}, reverse=True)
    if drop_parts and isinstance(content, list):
        for i in drop_parts:
            if i < len(content):
                del content[i]
        new["content"] = encode_content(content)
    if calls is not None and "drop_call" in kinds:
        calls = _drop_calls(calls, [a for a in acts if a.kind == "drop_call"])
        new["tool_calls"] = json.dumps(calls) if calls else None
    if "scrub" in kinds:
        new["content"] = encode_content(scrub(content)) if isinstance(content, (list, dict)) else scrub(row.content_raw)
        if row.api_content is not None:
            new["api_content"] = encode_content(scrub(row.api_content))
        if calls:
            new["tool_calls"] = json.dumps(scrub(calls))
    emptied = row.role == "assistant" and "drop_call" in kinds and not calls and _vacuous_content(content)
    if "deactivate" in kinds or emptied:
        if purge:
            return Change("delete", "messages", row.id, session=row.session_id)
        if "active" not in schema.message_columns:
            return None  # no soft delete before schema v16; the caller reports it as skipped
        new = {"active": 0, **({"compacted": 0} if "compacted" in schema.message_columns else {})}
    return Change("update", "messages", row.id, new, session=row.session_id) if new else None


def _drop_calls(calls: list[Any], acts: list[Action]) -> list[Any]:
    drop_idx = {a.index for a in acts if a.index is not None}
    drop_ids = {a.call_id for a in acts if a.index is None and a.call_id is not None}
    kept = []
    for i, call in enumerate(calls):
        cid = call.get("id") if isinstance(call, dict) else None
        if i in drop_idx or (cid in drop_ids):
            drop_ids.discard(cid)  # by id: the first (unanswered) occurrence only
            continue
        kept.append(call)
    return kept


def compose(actions: Iterable[Action], rows: dict[Any, Any], schema: Schema, *, purge: bool) -> list[Change]:
    """Per-row changes for a set of actions (deduplicated, composed), then session-level ones."""
    by_row: dict[Any, list[Action]] = {}
    sessions_rewound: set[str] = set()
    inserts: dict[tuple[str, str | None], Action] = {}
    for a in actions:
        if a.kind == "bump_rewind":
            sessions_rewound.add(a.session)
        elif a.kind == "insert_result":
            inserts.setdefault((a.session, a.call_id), a)
        elif a.row in rows:
            by_row.setdefault(a.row, []).append(a)
    changes = [c for rid in sorted(by_row, key=id_order) if (c := _row_change(rows[rid], by_row[rid], schema, purge))]
    deactivated = {c.row for c in changes if c.op == "delete" or c.set.get("active") == 0}
    for _key, a in sorted(inserts.items(), key=lambda kv: str(kv[0])):
        if a.row not in deactivated and a.row in rows:
            changes.append(_insert_result(a, rows, schema))
    if "rewind_count" in schema.session_columns:
        for sid in sorted(sessions_rewound):
            changes.append(Change("update", "sessions", sid, {"rewind_count": "rewind_count + 1"}, session=sid))
    return changes


def _insert_result(a: Action, rows: dict[Any, Any], schema: Schema) -> Change:
    session_rows = [r for r in rows.values() if r.session_id == a.session]
    last_ts = max((r.timestamp for r in session_rows if isinstance(r.timestamp, (int, float))), default=0.0)
    values: dict[str, Any] = {
        "session_id": a.session, "role": "tool", "content": INTERRUPTED_RESULT,
        "tool_call_id": a.call_id, "tool_name": a.tool_name or None, "timestamp": last_ts + 1e-6,
    }
    if "effect_disposition" in schema.message_columns:
        values["effect_disposition"] = "unknown"
    return Change("insert", "messages", None, values, session=a.session)


# --------------------------------------------------------------------------- SQL


def statements(changes: list[Change]) -> list[tuple[str, tuple]]:
    out: list[tuple[str, tuple]] = []
    for c in changes:
        if c.op == "delete":
            out.append(("DELETE FROM messages WHERE id = ?", (c.row,)))
        elif c.op == "insert":
            cols = list(c.set)
            out.append((f"INSERT INTO messages ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                        tuple(c.set[k] for k in cols)))
        elif c.table == "sessions":
            out.append(("UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = ?", (c.row,)))
        else:
            cols = list(c.set)
            out.append((f"UPDATE messages SET {', '.join(f'{k} = ?' for k in cols)} WHERE id = ?",
                        tuple(c.set[k] for k in cols) + (c.row,)))
    return out


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + terminal_safe(excerpt(str(value), 80)).replace("\n", "\\n").replace("'", "''") + "'"


def render(stmts: list[tuple[str, tuple]]) -> str:
    """The SQL plan as text, parameters inlined (long values cut) — for dry runs, not execution."""
    lines = ["BEGIN IMMEDIATE;"]
    for sql, params in stmts:
        parts = sql.split("?")
        text = parts[0] + "".join(_literal(p) + rest for p, rest in zip(params, parts[1:]))
        lines.append(text + ";")
    lines.append("-- recompute sessions.message_count / tool_call_count of the touched sessions")
    lines.append("PRAGMA quick_check;")
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n"
