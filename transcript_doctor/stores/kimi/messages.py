"""ContextMessage builders shared by the kimi-code folds.

History messages are plain dicts in the journal's own ContextMessage shape. tdoc adds one private
key, `_src`, naming where a message came from (`("rec", line)`, `("step", uuid, line)`,
`("synth", tool_call_id)`); it is stripped from every output.
"""

from __future__ import annotations

from typing import Any

from .jsnum import js_stringify

Msg = dict[str, Any]
INTERRUPTED_TEXT = (
    "Tool execution was interrupted before its result was recorded. "
    "Do not assume the tool completed successfully."
)
TRANSCRIPT_KEYS = ("id", "role", "content", "toolCalls", "toolCallId", "isError", "origin")


def step_assistant(uuid: Any, line: int, partial: bool) -> Msg:
    if uuid.__class__ is not str and not isinstance(uuid, (int, type(None))):
        uuid = repr(uuid)  # an id of another JSON type: tagged by its text
    if partial:
        return {"role": "assistant", "content": [], "toolCalls": [], "partial": True, "_src": ("step", uuid, line)}
    return {"role": "assistant", "content": [], "toolCalls": [], "_src": ("step", uuid, line)}


def tool_call(event: dict[str, Any]) -> dict[str, Any]:
    """The ToolCall a `tool.call` event records: built once (arguments serialised as JS would),
    then shared by every fold that keeps it, like the tool message below."""
    call = event.get("\x00call")
    if call is None:
        call = event["\x00call"] = {
            "type": "function",
            "id": event.get("toolCallId"),
            "name": event.get("name"),
            "arguments": js_stringify(event["args"]) if "args" in event else None,
        }
        if "extras" in event:
            call["extras"] = event["extras"]
    return call


def tool_message(event: dict[str, Any], line: int) -> Msg:
    """The tool message a `tool.result` event adds: built once, then shared by every fold that
    keeps it (history messages are never mutated in place; compaction copies what it trims)."""
    cached = event.get("\x00message")
    if cached is not None:
        return cached
    result = event.get("result") if isinstance(event.get("result"), dict) else {}
    output = result.get("output")
    content = output if isinstance(output, list) else [{"type": "text", "text": output if isinstance(output, str) else ""}]
    msg: Msg = {"role": "tool", "content": content, "toolCalls": [], "toolCallId": event.get("toolCallId")}
    if "isError" in result:
        msg["isError"] = result["isError"]
    if "note" in result:
        msg["note"] = result["note"]
    msg["_src"] = ("rec", line)
    event["\x00message"] = msg
    return msg


def interrupted_message(tool_call_id: Any) -> Msg:
    return {
        "role": "tool",
        "content": [{"type": "text", "text": INTERRUPTED_TEXT}],
        "toolCalls": [],
        "toolCallId": tool_call_id,
        "isError": True,
        "_src": ("synth", tool_call_id),
    }


def appended(message: Any, line: int) -> Msg:
    """A `context.append_message` payload as a history entry (a shallow copy, tagged)."""
    msg = dict(message) if isinstance(message, dict) else {"role": None, "content": []}
    msg["_src"] = ("rec", line)
    return msg


def for_transcript(msg: Msg) -> Msg:
    """v2 transcript entries keep only the display keys of an appended message."""
    out = {k: msg[k] for k in TRANSCRIPT_KEYS if k in msg}
    if "_src" in msg:
        out["_src"] = msg["_src"]
    return out


def public(msg: Msg) -> Msg:
    """The message without tdoc's private keys."""
    return {k: v for k, v in msg.items() if not k.startswith("_")}


def is_swarm_reminder(msg: Msg) -> bool:
    origin = msg.get("origin")
    return isinstance(origin, dict) and origin.get("kind") == "injection" and origin.get("variant") == "swarm_mode"
