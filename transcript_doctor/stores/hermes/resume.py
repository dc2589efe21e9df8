"""Rebuild a session the way Hermes resumes it (`get_messages_as_conversation`).

Active rows in id order become Hermes message dicts (content decoded, user/assistant strings
sanitised and stripped, stale `[tool]` markers blanked on tool-calling rows); the background-review
harness prompts and the reply after each are dropped. With ancestors, sessions are merged root to
tip and a replayed user message is dropped. Each kept row also becomes a `model.Message` carrying
the index Hermes' request gives it (the system prompt is message 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ... import values
from ...encode import dumps
from ...model import Loc, Message, Part, ToolCall
from .content import (
    EMPTY_TOOL_RESPONSE_NUDGE,
    MEDIA_PART_TYPES,
    NON_VISIBLE_PART_TYPES,
    head_startswith,
    is_stale_marker,
    part_type,
    resumed_text,
)
from .reader import SessionInfo
from .rows import Row

REQUEST_OFFSET = 1  # Hermes sends [system prompt, *history]
HARNESS_PREFIXES = (
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
)
_PLACEHOLDER_HINTS = ("interrupted", "outcome unknown", "outcome is unknown", "no result provided")


@dataclass(slots=True)
class Entry:
    """A row Hermes sends: the row, its Hermes message dict and its shared-model message."""

    row: Row
    wire: dict[str, Any]
    message: Message


@dataclass(slots=True)
class Dropped:
    row: Row
    reason: str  # inactive | background-review-harness | harness-reply | replayed-user


# --------------------------------------------------------------------------- Hermes dicts


def _json_or_raw(value: Any) -> Any:
    """A JSON text column parsed under the reader-boundary rule (`values.loads`), else as stored."""
    if isinstance(value, str):
        try:
            return values.loads(value)
        except ValueError:
            return value
    return value


def hermes_dict(row: Row) -> dict[str, Any]:
    """The message dict Hermes' resume builds from one row."""
    role = row.role
    content = row.content
    if (role == "user" or role == "assistant") and content.__class__ is str:
        content = resumed_text(content)
    if role == "assistant" and row.tool_calls and is_stale_marker(content):
        content = ""
    msg: dict[str, Any] = {"role": role, "content": content}
    if row.api_content is not None:
        msg["api_content"] = row.api_content
    if row.tool_call_id is not None:
        msg["tool_call_id"] = row.tool_call_id
    if row.tool_name is not None:
        msg["tool_name"] = row.tool_name
    if row.effect_disposition is not None:
        msg["effect_disposition"] = row.effect_disposition
    if row.tool_calls_raw is not None:
        msg["tool_calls"] = row.tool_calls or []
    if row.platform_message_id is not None:
        msg["message_id"] = row.platform_message_id
    if row.observed:
        msg["observed"] = True
    if row.timestamp is not None:
        msg["timestamp"] = row.timestamp
    if role == "assistant":
        msg["finish_reason"] = row.finish_reason
        msg["reasoning"] = row.reasoning
        msg["reasoning_content"] = row.reasoning_content
        if row.reasoning_details is not None:
            msg["reasoning_details"] = _json_or_raw(row.reasoning_details)
        if row.codex_reasoning_items is not None:
            msg["codex_reasoning_items"] = _json_or_raw(row.codex_reasoning_items)
        if row.codex_message_items is not None:
            msg["codex_message_items"] = _json_or_raw(row.codex_message_items)
    return msg


# --------------------------------------------------------------------------- shared model


def _content_parts(content: Any) -> list[Part]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [Part("text", content)]
    items = content if isinstance(content, list) else [content]
    return [_part(item) for item in items]


def _part(item: Any) -> Part:
    if isinstance(item, str):
        return Part("text", item)
    if not isinstance(item, dict):
        return Part("other")
    kind = part_type(item)
    if kind in NON_VISIBLE_PART_TYPES:
        text = next((item[k] for k in ("thinking", "text", "content", "reasoning") if isinstance(item.get(k), str)), "")
        signed = "signature" in item or kind == "redacted_thinking" or "data" in item
        return Part("reasoning", text, signed=signed)
    if kind in MEDIA_PART_TYPES:
        return Part("media")
    if kind in ("text", "output_text", "input_text") or (not kind and isinstance(item.get("text"), str)):
        value = item.get("text")
        return Part("text", value if isinstance(value, str) else "")
    return Part("other")


def _signed_items(raw: Any, key: str) -> bool:
    value = _json_or_raw(raw)
    items = value if isinstance(value, list) else [value]
    return any(isinstance(i, dict) and i.get(key) not in (None, "") for i in items)


def reasoning_parts(row: Row) -> list[Part]:
    """Reasoning Hermes replays beside the content (non-empty text, or signed provider items)."""
    parts: list[Part] = []
    for text in (row.reasoning_content, row.reasoning):
        if isinstance(text, str) and text and all(p.text != text for p in parts):
            parts.append(Part("reasoning", text))
    if row.reasoning_details is not None and _signed_items(row.reasoning_details, "signature"):
        parts.append(Part("reasoning", "", signed=True))
    if row.codex_reasoning_items is not None and _signed_items(row.codex_reasoning_items, "encrypted_content"):
        parts.append(Part("reasoning", "", signed=True))
    return parts


def _tool_call(item: Any) -> ToolCall:
    if not isinstance(item, dict):
        return ToolCall(id="")
    fn = item.get("function") if isinstance(item.get("function"), dict) else {}
    args = fn.get("arguments")
    if args is not None and not isinstance(args, str):
        args = dumps(args)  # orjson, or escaped JSON for values orjson refuses (lone surrogates)
    call_id = item.get("id") or item.get("call_id") or ""
    return ToolCall(id=str(call_id), name=str(fn.get("name") or item.get("name") or ""), arguments=args)


def is_placeholder_text(text: str) -> bool:
    if len(text) > 300:  # lower-casing never shortens a text
        return False
    lower = text.lower()
    return len(lower) <= 300 and any(h in lower for h in _PLACEHOLDER_HINTS)


def to_message(row: Row, wire: dict[str, Any], position: int, loc: Loc) -> Message:
    """The shared-model message of a row Hermes sends; `extra["row"]` keeps the row."""
    role = row.role
    content = row.api_content if row.api_content is not None else wire["content"]
    parts = [Part("text", content)] if content.__class__ is str and content else _content_parts(content)
    if role == "assistant" and (row.reasoning_content or row.reasoning or row.reasoning_details is not None
                                or row.codex_reasoning_items is not None):
        parts += reasoning_parts(row)
    extra: dict[str, Any] = {"row": row}
    if role == "tool":
        extra["placeholder"] = is_placeholder_text("".join(p.text for p in parts if p.kind == "text"))  # visible text
    return Message(
        role=role,
        parts=parts,
        tool_calls=[_tool_call(c) for c in row.tool_calls] if row.tool_calls else [],
        tool_call_id=row.tool_call_id if role == "tool" else None,
        loc=loc,
        position=position,
        extra=extra,
    )


# --------------------------------------------------------------------------- conversations


def _harness_prompt(wire: dict[str, Any]) -> bool:
    content = wire.get("content")
    return (
        wire["role"] in ("user", "system")
        and isinstance(content, str)
        and head_startswith(content, HARNESS_PREFIXES)
    )


def _dedupe_replayed_users(pairs: list[tuple[Row, dict[str, Any]]], dropped: list[Dropped]) -> list[tuple[Row, dict[str, Any]]]:
    kept: list[tuple[Row, dict[str, Any]]] = []
    last_user: Any = None
    for row, wire in pairs:
        if wire["role"] == "user":
            if last_user is not None and wire["content"] == last_user:
                dropped.append(Dropped(row, "replayed-user"))
                continue
            last_user = wire["content"]
        elif wire["role"] == "assistant" and (wire.get("content") or wire.get("tool_calls")):
            last_user = None
        kept.append((row, wire))
    return kept


def build(rows: Iterable[Row], *, lineage: bool = False, export: bool = False) -> tuple[list[Entry], list[Dropped]]:
    """The conversation Hermes resumes from `rows` (id-ordered), and the rows it leaves out."""
    dropped: list[Dropped] = []
    pairs: list[tuple[Row, dict[str, Any]]] = []
    for row in rows:
        if not row.active:
            dropped.append(Dropped(row, "inactive"))
        else:
            pairs.append((row, hermes_dict(row)))
    if lineage:
        pairs = _dedupe_replayed_users(pairs, dropped)
    entries: list[Entry] = []
    skip_reply = False
    for row, wire in pairs:
        role = wire["role"]
        if (role == "user" or role == "system") and _harness_prompt(wire):
            dropped.append(Dropped(row, "background-review-harness"))
            skip_reply = True
            continue
        if skip_reply and role == "assistant":
            dropped.append(Dropped(row, "harness-reply"))
            skip_reply = False
            continue
        skip_reply = False
        position = REQUEST_OFFSET + len(entries)
        loc = Loc(row.line) if export else Loc(None, None, row.id, "messages")
        entries.append(Entry(row, wire, to_message(row, wire, position, loc)))
    return entries, dropped


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
        if entry.row.role == "user" and not is_scaffolding_prompt(entry.row) and i > start:
            out.append((start, i, ender))
            start, ender = i, None
        if entry.row.role == "assistant":
            ender = i
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
    config = _json_or_raw(info.model_config) if info.model_config else None
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
