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
from ...model import Loc, Message, Part, ToolCall
from ...rules.shared.w103_orphan_tool_call import RULE as ORPHAN_TOOL_CALL
from ...rules.shared.w104_orphan_tool_result import RULE as ORPHAN_TOOL_RESULT
from ...rules.shared.w105_duplicate_tool_call_id import RULE as DUPLICATE_TOOL_CALL_ID
from ...rules.shared.w106_duplicate_tool_result import RULE as DUPLICATE_TOOL_RESULT
from .items import ASSISTANT_SIDE, Item, tool_call
from .reconstruct import RAW_TARGET, Entry, Request

# The shared rules that describe what the Responses API rejects: it does not need outputs right
# after their calls (W107), accepts any first item (W108), consecutive assistant items (W109) and
# empty reasoning or text items (W101, W102). Sending to Codex, W103 and W104 are repairs instead.
RAW_CODES = frozenset(
    {ORPHAN_TOOL_CALL.code, ORPHAN_TOOL_RESULT.code, DUPLICATE_TOOL_CALL_ID.code, DUPLICATE_TOOL_RESULT.code,
     "F507", "F508"})
CODEX_CODES = RAW_CODES - {ORPHAN_TOOL_CALL.code, ORPHAN_TOOL_RESULT.code}


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


def _calls_by_id(messages: list[Message]) -> dict[str, tuple[Message, ToolCall]]:
    found: dict[str, tuple[Message, ToolCall]] = {}
    for msg in messages:
        for call in msg.tool_calls:
            found.setdefault(call.id, (msg, call))
    return found


def repairs(request: Request, messages: list[Message], editor: Editor) -> list[Repair]:
    """Codex's own repairs: an "aborted" output for each unanswered call, orphan outputs dropped."""
    found = []
    calls = _calls_by_id(messages) if request.added else {}
    for added in request.added:
        call_id = added.item.call_id or ""
        msg, call = calls[call_id]
        where = "at the end of the history" if added is request.entries[-1] else "mid-history"
        found.append(Repair(
            ORPHAN_TOOL_CALL.code, f"tool call {call_id!r} ({call.name or 'unnamed'}) in {msg.role} message at request position "
                    f"{msg.position} has no output; Codex sends \"aborted\" for it at input[{added.position}] "
                    "on every request (older builds and other replayers fail)",
            "every-request", source=Loc(added.item.line, added.item.line), position=msg.position, subject=call_id,
            evidence={"tool_call_id": call_id, "tool_name": call.name, "where": where,
                      "synthetic_output_position": added.position},
            fix=editor.answer_call(msg, call),
        ))
    for msg in messages:
        if msg.role == "tool" and msg.position is None:
            call_id = msg.tool_call_id or ""
            found.append(Repair(
                ORPHAN_TOOL_RESULT.code, f"tool output for {call_id!r} answers no call; Codex drops it before every request",
                "every-request", source=msg.loc, subject=call_id, evidence={"tool_call_id": call_id},
                fix=editor.remove_message(msg),
            ))
    return found


def conversation(path: str, fmt: str, session: str | None, request: Request, unsent: list[tuple[Item, str]],
                 editor: Editor, target: str, live: bool) -> Conversation:
    """The conversation the shared rules see. For Codex itself, W103 and W104 are repairs (Codex
    answers unanswered calls and drops orphan outputs on every request); for the raw Responses API
    target nothing is repaired and the shared rules report them."""
    messages = to_messages(request.entries)
    off = [Message(item.role or item.kind, list(item.parts), loc=Loc(item.line, item.line),
                   extra={"unsent": reason}) for item, reason in unsent]
    raw = target == RAW_TARGET
    return Conversation(
        path=path, format=fmt, session=session, messages=messages,
        repairs=[] if raw else repairs(request, messages, editor),
        unsent=off, editor=editor, codes=RAW_CODES if raw else CODEX_CODES,
        empty_parts_vacuous=False, live=live, target=target,
    )
