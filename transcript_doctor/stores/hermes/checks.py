"""Hermes rules over one resumed session: the conversation the shared rules read, and the rules
only Hermes has (sentinels, scaffolding, terminality, unreadable rows). Findings carry the
session, the `messages.id` row (or the export line), the request position, and a fix whose edits
mirror Hermes' own operations (see `plan.py` and `editor.py`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...conversation import Conversation, NoEdits
from ...model import Finding, Loc, Message
from ...rules.engine import check_conversation, shared_codes
from ...rules.registry import finding
from ...text import excerpt, json_safe
from ..session_pass import SessionPass
from . import plan
from .content import (
    EMPTY_TOOL_RESPONSE_NUDGE,
    head_startswith,
    leaked_empty_sentinel,
    starts_with_sentinel,
    visible_text_for_sentinel_check,
)
from .editor import HermesEditor, fix_signature
from .resume import Entry, build, turns
from .rows import Row
from .scaffolding import find_markers, marker_evidence
from .thinking import has_content_after_think_block, has_inline_thinking, strip_think_blocks

TERMINAL_FINISH = frozenset({"stop", "end_turn"})
NATIVE_CODES = frozenset({"F504", "S301", "S304", "S305", "T403", "T405"})


def safe_excerpt(text: str) -> str:
    """An excerpt that JSON encoders accept (lone surrogates escaped)."""
    return excerpt(text).encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass
class SessionScan:
    """One session as Hermes resumes it, and the fix actions of the findings made on it."""

    path: str
    format: str
    session: str
    rows: list[Row]
    export: bool = False
    schema: plan.Schema = field(default_factory=plan.Schema)
    entries: list[Entry] = field(default_factory=list)
    actions: dict[tuple, list[plan.Action]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.entries, _dropped = build(self.rows)  # each message keeps its row (`extra["row"]`), which places it

    def loc_of(self, row: Row | None) -> Loc:
        if row is None:
            return Loc()
        if self.export:
            return Loc(line=row.line)
        return Loc(row=row.id, table="messages")

    def place(self, msg: Message, part: int | None) -> tuple[Loc, dict[str, Any]]:
        """Where a message of the conversation lives (`conversation.Locator`): its row (the line of
        an export, named by its message id too); a part lives in its message's row."""
        row = msg.extra.get("row")
        return self.loc_of(row), {"message_id": row.id} if self.export and row is not None else {}

    def conversation(self) -> Conversation:
        """The request Hermes would send on resume, for the shared rules."""
        editor = NoEdits() if self.export else HermesEditor(self)
        return Conversation(self.path, self.format, self.session, [e.message for e in self.entries], editor=editor,
                            locator=self.place)

    def make(self, code: str, text: str, msg: Message | None, *, actions: list[plan.Action],
             evidence: dict[str, Any] | None = None, row: Row | None = None) -> Finding:
        """A finding of a Hermes-only rule on `row` (or the row of `msg`) with its fix actions."""
        row = row or (msg.extra.get("row") if msg is not None else None)
        evidence = json_safe(dict(evidence or {}))  # ids and text straight from the store
        if self.export and row is not None:
            evidence.setdefault("message_id", row.id)
        loc = self.loc_of(row)
        f = finding(
            code, text, path=self.path, format=self.format, session=self.session,
            line=loc.line, row=loc.row, table=loc.table,
            position=msg.position if msg is not None else None, evidence=evidence,
        )
        f.subject = "|".join(map(str, finding_key(f)[2:]))  # row, line, call id, part and call index
        if actions and not self.export:
            f.fix = plan.describe(code, actions, self)
            self.actions[finding_key(f)] = actions
        return f


def finding_key(f: Finding) -> tuple:
    ev = f.evidence
    return (f.code, f.session, str(f.row), str(f.line), ev.get("tool_call_id"), ev.get("part_index"), ev.get("call_index"))


def scan_session(scan: SessionScan) -> Iterator[Finding]:
    """Every finding of one session, shared rules included (what a heal re-checks)."""
    conversation = scan.conversation()
    for f in check_conversation(conversation, shared_codes()):
        if f.fix is not None and isinstance(conversation.editor, HermesEditor):
            scan.actions[finding_key(f)] = conversation.editor.actions[fix_signature(f.fix)]
        yield f
    yield from native_session_findings(scan, NATIVE_CODES)


def session_pass() -> SessionPass[SessionScan]:
    """Conversations and Hermes-only findings from one read of each session."""
    return SessionPass(SessionScan.conversation, native_session_findings, NATIVE_CODES)


def native_session_findings(scan: SessionScan, codes: Collection[str]) -> Iterator[Finding]:
    """The findings only Hermes can see in one session, for the selected `codes`."""
    if "F504" in codes:
        yield from _record_problems(scan)
    if not {"S301", "S304", "S305", "T403", "T405"} & set(codes):
        return
    nudged = set()
    for f in _recovery_nudges(scan):
        nudged.update(f.evidence["rows"])
        yield f
    sentinel_rows: set[Any] = set(nudged)
    for f in _turn_enders(scan, nudged):
        if f.code == "S301":
            sentinel_rows.add(f.evidence["message_id"] if scan.export else f.row)
        yield f
    yield from _scaffolding(scan, sentinel_rows)


def _record_problems(scan: SessionScan) -> Iterator[Finding]:
    for row in scan.rows:
        for problem in row.problems:
            yield scan.make("F504", f"{row.role} row {row.id}: {problem}", None,
                            evidence={"problem": problem, "message_id": row.id}, row=row, actions=[])


# --------------------------------------------------------------------------- S305


def _is_nudge(entry: Entry) -> bool:
    content = entry.content
    return entry.row.role == "user" and isinstance(content, str) and head_startswith(content, EMPTY_TOOL_RESPONSE_NUDGE[:60])


def _recovery_nudges(scan: SessionScan) -> Iterator[Finding]:
    entries = scan.entries
    for entry, nxt in zip(entries, entries[1:]):
        if entry.row.role != "assistant" or entry.row.tool_calls or nxt.row.role != "user" or not _is_nudge(nxt):
            continue
        visible = visible_text_for_sentinel_check(entry.content)
        if not starts_with_sentinel(visible):
            continue
        rows = [entry.row.id, nxt.row.id]
        yield scan.make(
            "S305",
            f"persisted empty-response recovery pair (rows {rows[0]} and {rows[1]}): replaying it teaches the model to answer '(empty)'",
            entry.message,
            evidence={"rows": rows, "assistant_text": safe_excerpt(visible), "nudge": safe_excerpt(nxt.content)},
            actions=[plan.Action("deactivate", entry.row.id, scan.session), plan.Action("deactivate", nxt.row.id, scan.session)],
        )


# --------------------------------------------------------------------------- turn enders: S301, T403, T405


def _turn_enders(scan: SessionScan, nudged: set[Any]) -> Iterator[Finding]:
    entries = scan.entries
    all_turns = turns(entries)
    for t, (start, end, ender) in enumerate(all_turns):
        if ender is None:
            continue
        entry = entries[ender]
        last_turn = t == len(all_turns) - 1
        leak = None if entry.row.id in nudged or entry.row.tool_calls else _leak(scan, entry, start, end, last_turn)
        if leak is not None:
            yield leak
        terminality = _terminality(scan, entry)
        if terminality is not None:
            yield terminality


def _leak(scan: SessionScan, entry: Entry, start: int, end: int, last_turn: bool) -> Finding | None:
    """S301 on the turn-ending answer `entry` (it has no tool calls), or None."""
    for field_name, content in (("content", entry.content), ("api_content", entry.row.api_content)):
        if content is None or content.__class__ is str and content[:1] != "(" and not content[:1].isspace():
            continue  # `starts_with_sentinel` needs a "(" first
        if not leaked_empty_sentinel(content):
            continue
        visible = visible_text_for_sentinel_check(content)
        literal = leaked_empty_sentinel(content, literal=True)
        turn_rows = [e.row.id for e in scan.entries[start:end]]
        where = "ends the session; every resume replays it" if last_turn else "is followed by a new user turn"
        return scan.make(
            "S301",
            f"turn-ending assistant answer starts with the '(empty)' sentinel and {where}",
            entry.message,
            evidence={"field": field_name, "text": safe_excerpt(visible), "finish_reason": entry.row.finish_reason,
                      "literal_prefix": literal, "session_end": last_turn, "turn_rows": turn_rows,
                      "message_id": entry.row.id},
            actions=[plan.Action("deactivate", rid, scan.session) for rid in turn_rows]
            + [plan.Action("bump_rewind", None, scan.session)],
        )
    return None


def _reasoning_present(entry: Entry, text: str) -> bool:
    if has_inline_thinking(text):
        return True
    return any(p.kind == "reasoning" and (p.text or p.signed) for p in entry.message.parts)


def _terminality(scan: SessionScan, entry: Entry) -> Finding | None:
    """T403 or T405 on the turn-ending assistant `entry`, or None."""
    row = entry.row
    content = row.api_content if row.api_content is not None else entry.content
    visible = visible_text_for_sentinel_check(content)
    has_text = has_content_after_think_block(visible)
    if has_text:
        reasons = []
        if row.finish_reason is not None and row.finish_reason not in TERMINAL_FINISH:
            reasons.append(f"finish_reason {row.finish_reason!r}")
        if row.tool_calls:
            reasons.append(f"{len(row.tool_calls)} tool call(s)")
        if reasons:
            return scan.make(
                "T403",
                f"the turn's last assistant reply has text but is not a terminal answer ({', '.join(reasons)})",
                entry.message,
                evidence={"finish_reason": row.finish_reason, "tool_calls": len(row.tool_calls or []),
                          "reasons": reasons, "text": safe_excerpt(visible)},
                actions=[],
            )
    elif not row.tool_calls and _reasoning_present(entry, visible):
        return scan.make(
            "T405",
            "the turn ends with an assistant reply that holds only reasoning, no visible answer",
            entry.message,
            evidence={"finish_reason": row.finish_reason, "text": safe_excerpt(visible),
                      "after_think_strip": safe_excerpt(strip_think_blocks(visible))},
            actions=[],
        )
    return None


# --------------------------------------------------------------------------- S304


def _scaffolding(scan: SessionScan, skip_rows: set[Any]) -> Iterator[Finding]:
    for entry in scan.entries:
        row = entry.row
        if row.role != "assistant" or row.id in skip_rows:
            continue
        content = row.content
        if content.__class__ is str and not (content and find_markers(content)):  # `_scaffolding_in`'s None
            found = None
        else:
            found = _scaffolding_in(scan, entry, "content", content)
        if found is None and row.api_content is not None:
            found = _scaffolding_in(scan, entry, "api_content", row.api_content)
        if found is not None:
            yield found


def _scaffolding_in(scan: SessionScan, entry: Entry, field_name: str, content: Any) -> Finding | None:
    """S304 on one field of an assistant row, or None when it carries no marker."""
    if content is None:
        return None
    text = content if content.__class__ is str else visible_text_for_sentinel_check(content)
    found = find_markers(text) if text else []
    if not found:
        return None
    evidence: dict[str, Any] = marker_evidence(text, found)
    evidence["field"] = field_name
    evidence["text"] = safe_excerpt(evidence["text"])
    return scan.make(
        "S304",
        f"assistant {field_name} carries runtime scaffolding ({', '.join(evidence['markers'])})",
        entry.message,
        evidence=evidence,
        actions=[],
    )
