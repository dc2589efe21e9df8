"""Rebuild a session the way Hermes resumes it (`get_messages_as_conversation`).

Active rows in id order become Hermes messages (`messages.py`: content decoded, user/assistant
strings sanitised and stripped, stale `[tool]` markers blanked on tool-calling rows); the
background-review harness prompts and the reply after each are dropped. With ancestors, sessions
are merged root to tip and a replayed user message is dropped. Each kept row also becomes a
`model.Message` carrying the index Hermes' request gives it (the system prompt is message 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...model import Message
from .content import EMPTY_TOOL_RESPONSE_NUDGE, MEMORY_NOTE, head_startswith, is_stale_marker, sanitize_context
from .messages import hermes_dict, json_or_raw, to_message, wire_content
from .reader import SessionInfo
from .rows import Row

REQUEST_OFFSET = 1  # Hermes sends [system prompt, *history]
HARNESS_PREFIXES = (
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)


class Entry:
    """A row Hermes sends: the row, the `content` of its Hermes message dict, its shared-model
    message; the whole dict (`wire`) is built when first asked for (a scan never asks)."""

    __slots__ = ("row", "content", "message", "_wire")

    def __init__(self, row: Row, content: Any, message: Message) -> None:
        self.row = row
        self.content = content
        self.message = message
        self._wire: dict[str, Any] | None = None

    @property
    def wire(self) -> dict[str, Any]:
        if self._wire is None:
            self._wire = hermes_dict(self.row, self.content)
        return self._wire


@dataclass(slots=True)
class Dropped:
    row: Row
    reason: str  # inactive | background-review-harness | harness-reply | replayed-user


# --------------------------------------------------------------------------- conversations


def _dedupe_replayed_users(rows: Iterable[Row], inactive: list[Dropped], dropped: list[Dropped]) -> list[Row]:
    """The active rows of a merged lineage without a user message the child replayed."""
    kept: list[Row] = []
    last_user: Any = None
    for row in rows:
        if not row.active:
            inactive.append(Dropped(row, "inactive"))
            continue
        content = wire_content(row)
        if row.role == "user":
            if last_user is not None and content == last_user:
                dropped.append(Dropped(row, "replayed-user"))
                continue
            last_user = content
        elif row.role == "assistant" and (content or row.tool_calls_raw is not None and row.tool_calls):
            last_user = None
        kept.append(row)
    return kept


def build(rows: Iterable[Row], *, lineage: bool = False) -> tuple[list[Entry], list[Dropped]]:
    """The conversation Hermes resumes from `rows` (id-ordered), and the rows it leaves out
    (the inactive ones first, then the replayed users, then the harness rows, each in row order).

    The hot path of a scan: `wire_content` is written out (a user/assistant string is sanitised
    only when it holds the memory fencing `sanitize_context` strips), and each Entry is filled
    slot by slot. Pinned to the general helpers by tests/hermes/test_fast_paths.py."""
    inactive: list[Dropped] = []
    dropped: list[Dropped] = []
    if lineage:
        rows = _dedupe_replayed_users(rows, inactive, dropped)
    entries: list[Entry] = []
    append = entries.append
    new = Entry.__new__
    skip_reply = False
    position = REQUEST_OFFSET
    for row in rows:
        if not row.active:
            inactive.append(Dropped(row, "inactive"))
            continue
        role = row.role
        content = row.content
        if role == "assistant":
            if content.__class__ is str:
                if "memory-context" in content or MEMORY_NOTE in content:
                    content = sanitize_context(content)
                content = content.strip()
            if content and row.tool_calls and is_stale_marker(content):  # "" is never a marker
                content = ""
            if skip_reply:
                dropped.append(Dropped(row, "harness-reply"))
                skip_reply = False
                continue
        elif role == "user":
            if content.__class__ is str:
                if "memory-context" in content or MEMORY_NOTE in content:
                    content = sanitize_context(content)
                content = content.strip()  # so `head_startswith` is `startswith`
                if content.startswith(HARNESS_PREFIXES):
                    dropped.append(Dropped(row, "background-review-harness"))
                    skip_reply = True
                    continue
            elif isinstance(content, str) and head_startswith(content, HARNESS_PREFIXES):  # a str subclass
                dropped.append(Dropped(row, "background-review-harness"))
                skip_reply = True
                continue
        elif role == "system" and isinstance(content, str) and head_startswith(content, HARNESS_PREFIXES):
            dropped.append(Dropped(row, "background-review-harness"))
            skip_reply = True
            continue
        skip_reply = False
        entry = new(Entry)
        entry.row = row
        entry.content = content
        entry.message = to_message(row, content, position)
        entry._wire = None
        append(entry)
        position += 1
    return entries, inactive + dropped


# --------------------------------------------------------------------------- turns


def is_scaffolding_prompt(row: Row) -> bool:
    """A user row the runtime wrote to continue a turn (hidden, `[System: …]`, the empty nudge)."""
    if row.display_kind == "hidden":
        return True
    content = row.content if isinstance(row.content, str) else ""
    return head_startswith(content, ("[System:", EMPTY_TOOL_RESPONSE_NUDGE[:60]))


def turns(entries: list[Entry]) -> list[tuple[int, int, int | None]]:
    """(start, end, ender) index triples: a turn runs from a real user prompt to the next one.

    `ender` is the index of the turn's last assistant entry (None when it has none).
    """
    out: list[tuple[int, int, int | None]] = []
    start = 0
    ender: int | None = None
    for i, entry in enumerate(entries):
        role = entry.row.role
        if role == "assistant":
            ender = i
        elif role == "user" and i > start and not is_scaffolding_prompt(entry.row):
            out.append((start, i, ender))
            start, ender = i, None
    if entries:
        out.append((start, len(entries), ender))
    return out


# --------------------------------------------------------------------------- lineage


def lineage(sessions: dict[str, SessionInfo], session_id: str, max_hops: int = 100) -> list[str]:
    """Session ids root -> `session_id`, following `parent_session_id` (cycle-safe)."""
    chain = [session_id]
    seen = {session_id}
    current = sessions.get(session_id)
    while current and current.parent_session_id and len(chain) <= max_hops:
        parent = current.parent_session_id
        if parent in seen or parent not in sessions:
            break
        chain.append(parent)
        seen.add(parent)
        current = sessions[parent]
    return list(reversed(chain))


def _excluded_child(info: SessionInfo) -> bool:
    config = json_or_raw(info.model_config) if info.model_config else None
    marked = isinstance(config, dict) and ("_branched_from" in config or "_delegate_from" in config)
    return marked or info.source == "tool"


def resume_tip(sessions: dict[str, SessionInfo], session_id: str, has_messages: set[str], depth: int = 32) -> str:
    """The session Hermes actually resumes when asked for `session_id` (its live continuation)."""
    children: dict[str, list[SessionInfo]] = {}
    for info in sessions.values():
        if info.parent_session_id:
            children.setdefault(info.parent_session_id, []).append(info)
    path = [session_id]
    seen = {session_id}
    for _ in range(depth):
        kids = [c for c in children.get(path[-1], []) if not _excluded_child(c) and c.id not in seen]
        if not kids:
            break
        nxt = max(kids, key=lambda c: c.started_at or 0.0).id
        path.append(nxt)
        seen.add(nxt)
    for sid in reversed(path):
        if sid in has_messages:
            return sid
    return session_id
