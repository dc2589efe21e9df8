"""The request Codex sends, as the shared conversation model (`transcript_doctor.conversation`).

The Responses API takes a flat list of items; the shared rules reason about messages. One model
response (its reasoning, text, calls and web searches in a row) becomes one assistant message
whose calls are its tool calls; each output becomes a tool message; user and developer messages
stay as they are. A message's `position` is the `input[N]` of its first item, its `loc` the lines
of its items. Codex's own repairs (synthetic outputs, dropped orphan outputs) become `Repair`s.
"""

from __future__ import annotations

from collections.abc import Iterable

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


# `Message.extra` of a Codex message: "written" (every item is a line of its own, so the editor may
# edit it: not part of a compacted line or synthesised) and, for model responses, "call_lines".


def _group_message(group: list[Entry]) -> Message:
    parts: list[Part] = []
    calls = []
    call_lines: dict[str, int] = {}
    written = True
    for entry in group:
        item = entry.item
        written = written and item.source == "line"
        if item.is_call:
            calls.append(tool_call(item))
            call_lines.setdefault(item.call_id or "", item.line)
        elif item.kind == "message" or item.kind == "reasoning":
            parts.extend(item.parts)
        else:  # web searches, image generations, a call without a call id: content nothing answers
            parts.append(Part("other"))
    return Message("assistant", parts, calls, loc=Loc(group[0].item.line, group[-1].item.line),
                   position=group[0].position, extra={"written": written, "call_lines": call_lines})


def _single(entry: Entry) -> Message:
    item = entry.item
    loc = Loc(item.line, item.line)
    extra: dict[str, object] = {"written": item.source == "line"}
    if item.is_output:
        extra["placeholder"] = len(item.parts) == 1 and item.parts[0].text.strip() == "aborted"
        return Message("tool", item.parts, tool_call_id=item.call_id or "", loc=loc, position=entry.position,
                       extra=extra)
    return Message(item.role or item.kind, item.parts, loc=loc, position=entry.position, extra=extra)


def to_messages(entries: Iterable[Entry]) -> list[Message]:
    """The messages of `entries` in order; synthetic outputs are repairs, not messages."""
    messages: list[Message] = []
    append = messages.append
    group: list[Entry] = []
    for entry in entries:
        item = entry.item
        if item.source == "synthetic":
            continue
        if (item.kind in ASSISTANT_SIDE or item.role == "assistant") and entry.position is not None:
            group.append(entry)
            continue
        if group:
            append(_group_message(group))
            group = []
        append(_single(entry))
    if group:
        append(_group_message(group))
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
