"""One row as Hermes resumes it: the content its message dict carries, the dict itself, and the
shared-model `Message` the rules read.

`wire_content` is what Hermes puts in a resumed message's `content` (user/assistant strings
sanitised and stripped, a stale `[tool]` marker blanked on a tool-calling row). The whole message
dict (`hermes_dict`) is built only where it is shown (`tdoc replay`); a scan reads the content and
the row. `to_message` takes the common shapes (string content, calls whose fields are text)
without a detour; `tests/hermes/test_fast_paths.py` pins it to the general helpers.
"""

from __future__ import annotations

from typing import Any

from ... import values
from ...encode import dumps
from ...model import NAMED_LATER, UNPLACED, Message, Part, ToolCall
from .content import MEDIA_PART_TYPES, NON_VISIBLE_PART_TYPES, is_stale_marker, part_type, resumed_text
from .rows import Row

# --------------------------------------------------------------------------- Hermes dicts


def json_or_raw(value: Any) -> Any:
    """A JSON text column parsed under the reader-boundary rule (`values.loads`), else as stored."""
    if isinstance(value, str):
        try:
            return values.loads(value)
        except ValueError:
            return value
    return value


def wire_content(row: Row) -> Any:
    """The `content` of the message dict Hermes' resume builds from `row`."""
    role = row.role
    content = row.content
    if (role == "user" or role == "assistant") and content.__class__ is str:
        content = resumed_text(content)
    if role == "assistant" and content and row.tool_calls and is_stale_marker(content):  # "" is never a marker
        content = ""
    return content


def hermes_dict(row: Row, content: Any = None) -> dict[str, Any]:
    """The message dict Hermes' resume builds from one row (`content`: its `wire_content`, when known)."""
    role = row.role
    msg: dict[str, Any] = {"role": role, "content": wire_content(row) if content is None else content}
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
            msg["reasoning_details"] = json_or_raw(row.reasoning_details)
        if row.codex_reasoning_items is not None:
            msg["codex_reasoning_items"] = json_or_raw(row.codex_reasoning_items)
        if row.codex_message_items is not None:
            msg["codex_message_items"] = json_or_raw(row.codex_message_items)
    return msg


# --------------------------------------------------------------------------- shared model


def content_parts(content: Any) -> list[Part]:
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
    value = json_or_raw(raw)
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


# The hot path of a scan (one message per row) builds these objects slot by slot, as
# `model.make_message` and its siblings do, written out: each of those calls costs about 500
# instructions more (bench/bench_instructions.py hermes: 803M against 819M on 10,000 messages).
# tests/hermes/test_fast_paths.py compares what it builds with the constructors'.
_new_message = Message.__new__
_new_part = Part.__new__
_new_call = ToolCall.__new__


def tool_call(item: Any) -> ToolCall:
    """The shared-model call of one parsed `tool_calls` item."""
    if not isinstance(item, dict):
        return ToolCall(id="")
    fn = item.get("function")
    if not isinstance(fn, dict):
        fn = {}
    args = fn.get("arguments")
    if args is not None and args.__class__ is not str and not isinstance(args, str):
        args = dumps(args)  # orjson, or escaped JSON for values orjson refuses (lone surrogates)
    call_id = item.get("id") or item.get("call_id") or ""
    name = fn.get("name") or item.get("name") or ""
    call = _new_call(ToolCall)  # `ToolCall(call_id, name, args)`, slot by slot (see `to_message`)
    call.id = call_id if call_id.__class__ is str else str(call_id)
    call.name = name if name.__class__ is str else str(name)
    call.arguments = args
    call.state = None
    return call


def is_placeholder_text(text: str) -> bool:
    if len(text) > 300:  # lower-casing never shortens a text
        return False
    lower = text.lower()  # the hints: "interrupted", "outcome unknown", "outcome is unknown", "no result provided"
    return len(lower) <= 300 and ("interrupted" in lower or "outcome unknown" in lower or "outcome is unknown" in lower
                                  or "no result provided" in lower)


def to_message(row: Row, content: Any, position: int) -> Message:
    """The shared-model message of a row Hermes sends (`content`: its `wire_content`), unplaced:
    `extra["row"]` keeps the row, from which `checks.SessionScan.place` makes its location and
    evidence when a finding names it. Built slot by slot (the fields of `Message(...)`)."""
    role = row.role
    if row.api_content is not None:
        content = row.api_content
    if content.__class__ is str:
        if content:
            part = _new_part(Part)
            part.kind = "text"
            part.text = content
            part.signed = False
            part.source = None
            part.evidence = NAMED_LATER
            parts = [part]
        else:
            parts = []
    else:
        parts = content_parts(content)
    if role == "assistant" and (row.reasoning_content or row.reasoning or row.reasoning_details is not None
                                or row.codex_reasoning_items is not None):
        parts += reasoning_parts(row)
    extra: dict[str, Any] = {"row": row}
    if role == "tool":  # the visible text: string content is its only text part
        text = content if content.__class__ is str else "".join(p.text for p in parts if p.kind == "text")
        extra["placeholder"] = is_placeholder_text(text)
    message = _new_message(Message)
    message.role = role
    message.parts = parts
    message.tool_calls = list(map(tool_call, row.tool_calls)) if row.tool_calls else []
    message.tool_call_id = row.tool_call_id if role == "tool" else None
    message.is_error = False
    message.loc = UNPLACED
    message.position = position
    message.extra = extra
    message.evidence = NAMED_LATER
    return message
