"""ContextMessage builders shared by the kimi-code folds.

History messages are plain dicts in the journal's own ContextMessage shape. tdoc adds one private
key, `_src`, naming where a message came from (`("rec", line)`, `("step", uuid, line)`,
`("synth", tool_call_id)`); it is stripped from every output.
"""

from __future__ import annotations

from typing import Any

from ..read.js_stringify import js_stringify

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


# The folds of one replay apply each event one after the other, so the message or call an event
# makes is built by the first and shared with the rest through a one-slot cache keyed by the
# event's identity (never by keys stored in the event: a journal could carry any key). The slot
# holds the event, so its identity cannot be reused while it is cached.
_LAST_CALL: list[Any] = [None, None]
_LAST_RESULT: list[Any] = [None, None]
# Arguments wait in the call under a key no parsed JSON can hold until the replay ends; then
# `settle_arguments` serialises them for the calls still in a history (most are compacted away).
_ARGS = object()


def tool_call(event: dict[str, Any]) -> dict[str, Any]:
    """The ToolCall a `tool.call` event records, shared by every fold that keeps it; its
    `arguments` are set by `settle_arguments` at the end of the replay."""
    if _LAST_CALL[0] is event:
        return _LAST_CALL[1]  # type: ignore[no-any-return]
    call: dict[Any, Any] = {"type": "function", "id": event.get("toolCallId"), "name": event.get("name"),
                            "arguments": None}
    if "args" in event:
        call[_ARGS] = event["args"]
    if "extras" in event:
        call["extras"] = event["extras"]
    _LAST_CALL[0], _LAST_CALL[1] = event, call
    return call


def call_arguments(call: dict[Any, Any]) -> Any:
    """A tool call's `arguments`, also before the end of the replay settled them."""
    return js_stringify(call[_ARGS]) if _ARGS in call else call.get("arguments")


def settle_arguments(messages: list[Msg]) -> None:
    """Serialise, as JSON.stringify would, the arguments of the tool calls these messages hold."""
    for m in messages:
        calls = m.get("toolCalls")
        if calls.__class__ is list:
            for call in calls:
                if call.__class__ is dict and _ARGS in call:
                    call["arguments"] = js_stringify(call.pop(_ARGS))


def tool_message(event: dict[str, Any], line: int) -> Msg:
    """The tool message a `tool.result` event adds, shared by every fold that keeps it (history
    messages are never mutated in place; compaction copies what it trims)."""
    if _LAST_RESULT[0] is event:
        return _LAST_RESULT[1]  # type: ignore[no-any-return]
    result = event.get("result") if isinstance(event.get("result"), dict) else {}
    output = result.get("output")
    content = output if isinstance(output, list) else [{"type": "text", "text": output if isinstance(output, str) else ""}]
    msg: Msg = {"role": "tool", "content": content, "toolCalls": [], "toolCallId": event.get("toolCallId")}
    if "isError" in result:
        msg["isError"] = result["isError"]
    if "note" in result:
        msg["note"] = result["note"]
    msg["_src"] = ("rec", line)
    _LAST_RESULT[0], _LAST_RESULT[1] = event, msg
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
