"""The request Codex sends, as the shared conversation model (`transcript_doctor.conversation`).

The Responses API takes a flat list of items; the shared rules reason about messages. One model
response (its reasoning, text, calls and web searches in a row) becomes one assistant message
whose calls are its tool calls; each output becomes a tool message; user and developer messages
stay as they are. A message's `position` is the `input[N]` of its first item, its `loc` the lines
of its items. Codex's own repairs (synthetic outputs, dropped orphan outputs) become `Repair`s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...conversation import Conversation, Editor, Repair
from ...model import Loc, Message, Part
from .items import ASSISTANT_SIDE, Item, tool_call
from .reconstruct import Entry, Request

# The shared rules that describe what the Responses API rejects: it does not need outputs right
# after their calls (W107), accepts any first item (W108), consecutive assistant items (W109) and
# empty reasoning or text items (W101, W102).
CODEX_CODES = frozenset({"W103", "W104", "W105", "W106", "F507", "F508"})


def is_assistant_side(item: Item) -> bool:
    return item.kind in ASSISTANT_SIDE or (item.kind == "message" and item.role == "assistant")


def _group_message(group: list[Entry]) -> Message:
    parts: list[Part] = []
    calls = []
    call_lines: dict[str, int] = {}
    for entry in group:
        item = entry.item
        if item.is_call:
            calls.append(tool_call(item))
            call_lines.setdefault(item.call_id or "", item.line)
        elif item.kind == "web_search_call" or item.kind == "image_generation_call":
            parts.append(Part("other"))
        elif item.kind in ("message", "reasoning"):
            parts.extend(item.parts)
        else:  # a call without a call id: sent, but nothing can answer it
            parts.append(Part("other"))
    first = group[0]
    return Message(
        role="assistant", parts=parts, tool_calls=calls,
        loc=Loc(line=min(e.item.line for e in group), end_line=max(e.item.line for e in group)),
        position=first.position,
        extra={"items": [_item_ref(e) for e in group], "call_lines": call_lines,
               "sources": {e.item.source for e in group}},
    )


def _item_ref(entry: Entry) -> dict[str, Any]:
    item = entry.item
    return {"position": entry.position, "line": item.line, "kind": item.kind, "call_id": item.call_id,
            "source": item.source, "index": item.index}


def _single(entry: Entry) -> Message:
    item = entry.item
    extra = {"items": [_item_ref(entry)], "sources": {item.source}}
    if item.is_output:
        text = item.text
        return Message(role="tool", parts=list(item.parts), tool_call_id=item.call_id or "",
                       loc=Loc(line=item.line, end_line=item.line), position=entry.position,
                       extra={**extra, "placeholder": text.strip() == "aborted"})
    return Message(role=item.role or item.kind, parts=list(item.parts), loc=Loc(line=item.line, end_line=item.line),
                   position=entry.position, extra=extra)


def to_messages(entries: Iterable[Entry]) -> list[Message]:
    """The messages of `entries` in order; synthetic outputs are repairs, not messages."""
    messages: list[Message] = []
    group: list[Entry] = []
    for entry in entries:
        if entry.item.source == "synthetic":
            continue
        if is_assistant_side(entry.item) and entry.position is not None:
            group.append(entry)
            continue
        if group:
            messages.append(_group_message(group))
            group = []
        messages.append(_single(entry))
    if group:
        messages.append(_group_message(group))
    return messages


def repairs(request: Request, calls: dict[str, Entry]) -> list[Repair]:
    found = []
    for added in request.added:
        call_id = added.item.call_id or ""
        call = calls.get(call_id)
        found.append(Repair(
            "W103", f"Codex adds an \"aborted\" output for call {call_id!r} before every request",
            "every-request", source=Loc(line=added.item.line, end_line=added.item.line),
            position=call.position if call else None, subject=call_id,
            evidence={"synthetic_output_position": added.position},
        ))
    for item in request.dropped:
        found.append(Repair(
            "W104", f"Codex drops the output for {item.call_id!r} (no call issued it) before every request",
            "every-request", source=Loc(line=item.line, end_line=item.line), subject=item.call_id or "",
        ))
    return found


def conversation(path: str, fmt: str, session: str | None, request: Request, unsent: list[tuple[Item, str]],
                 editor: Editor, target: str, live: bool) -> Conversation:
    calls = {e.item.call_id or "": e for e in request.entries if e.item.is_call}
    messages = to_messages(request.entries)
    off = [Message(role=item.role or item.kind, parts=list(item.parts), loc=Loc(line=item.line, end_line=item.line),
                   extra={"unsent": reason}) for item, reason in unsent]
    return Conversation(
        path=path, format=fmt, session=session, messages=messages,
        repairs=repairs(request, calls) if target != "responses" else [],
        unsent=off, editor=editor, codes=CODEX_CODES, empty_parts_vacuous=False, live=live, target=target,
    )
