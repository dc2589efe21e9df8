"""Message shaping for the kimi-code request projection, common to both engines.

* tool-result rendering (docs/kimi-replay.md §6): history keeps the raw tool output, the request gets it
  wrapped in the engine's `<system>` markers;
* content cleaning: blank text parts never reach the provider;
* the wire shape of a request message, and the working `Item` (message + history sources) the
  projection passes move around.
"""

from __future__ import annotations

from typing import Any

from transcript_doctor.text import js_trim

from ..engines.vacuous import is_blank_text

EMPTY_OUTPUT = "<system>Tool output is empty.</system>"
ERROR_HEADER = "<system>ERROR: Tool execution failed.</system>"
ERROR_EMPTY = "<system>ERROR: Tool execution failed. Tool output is empty.</system>"
EMPTY_OUTPUT_PLAIN = "Tool output is empty."
UNAVAILABLE = (
    "Tool result is not available in the current context. "
    "Do not assume the tool completed successfully."
)

# Keys a request message keeps; everything else in a ContextMessage stays in the history.
_WIRE_KEYS = ("name", "toolCallId", "partial", "tools")


class Item:
    """A request message under construction and the history indices it came from."""

    __slots__ = ("msg", "sources", "mergeable")

    def __init__(self, msg: dict, sources: list[int] | None = None, mergeable: bool = False) -> None:
        self.msg = msg
        self.sources: list[int] = [] if sources is None else sources
        self.mergeable = mergeable  # a user message the projection may merge with a neighbour

    @property
    def role(self) -> Any:
        return self.msg.get("role")

    @property
    def calls(self) -> list[dict]:
        return self.msg["toolCalls"]

    @property
    def content(self) -> list:
        return self.msg["content"]


def anomaly(kind: str, **details: Any) -> dict:
    """An anomaly record `{kind, toolCallId?, role?, trailing?}` (absent keys left out)."""
    out: dict[str, Any] = {"kind": kind}
    for key in ("toolCallId", "role", "trailing"):
        if key in details:
            out[key] = details[key]
    return out


def text_part(text: str) -> dict:
    return {"type": "text", "text": text}


def parts_of(msg: dict) -> list:
    """The content parts of a message; a bare string is one text part, non-object parts (which
    no valid log holds) are left out."""
    content = msg.get("content")
    if isinstance(content, str):
        return [text_part(content)]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def calls_of(msg: dict) -> list[dict]:
    calls = msg.get("toolCalls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _key(value: Any) -> Any:
    """An id usable as a dict key (ids are strings in practice; anything odd is compared by repr)."""
    return value if value is None or isinstance(value, (str, int)) else repr(value)


def call_id(call: dict) -> Any:
    return _key(call.get("id"))


def result_id(msg: dict) -> Any:
    """The `toolCallId` a tool message answers (None when it has none)."""
    return _key(msg.get("toolCallId"))


def has_tools(msg: dict) -> bool:
    tools = msg.get("tools")
    return isinstance(tools, list) and len(tools) > 0


def is_mergeable_user(msg: dict) -> bool:
    """Only prompts with `origin.kind == 'user'` merge; a missing origin does not."""
    origin = msg.get("origin")
    return msg.get("role") == "user" and isinstance(origin, dict) and origin.get("kind") == "user"


def is_text(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "text"


def joined_text(parts: list) -> str:
    """The text parts of one message, concatenated (kosong `extractText` with no separator)."""
    return "".join(p.get("text") or "" for p in parts if is_text(p))


def non_text(parts: list) -> list:
    return [p for p in parts if not is_text(p)]


def _merge_group(group: list[Item], engine: str) -> Item:
    """v1 joins every prompt's text with a blank line, empty ones included, and always emits the
    text part; v2 joins only non-empty texts and has no text part when none has text. Media and
    other non-text parts follow in order."""
    texts = [joined_text(it.content) for it in group]
    if engine == "v2":
        texts = [t for t in texts if t]
    content = [text_part("\n\n".join(texts))] if texts else []
    content += [p for it in group for p in non_text(it.content)]
    msg = {**group[0].msg, "content": content, "toolCalls": []}
    return Item(msg, [s for it in group for s in it.sources], True)


def merge_user_runs(items: list[Item], engine: str) -> list[Item]:
    """Fold each run of adjacent mergeable user prompts into one message (a run of one is left
    as it is). Merging a whole run at once keeps long runs linear."""
    result: list[Item] = []
    run: list[Item] = []
    for item in [*items, None]:
        if item is not None and item.mergeable:
            run.append(item)
            continue
        if run:
            result.append(run[0] if len(run) == 1 else _merge_group(run, engine))
            run = []
        if item is not None:
            result.append(item)
    return result


# --------------------------------------------------------------------------- tool results


def _single_text(parts: list) -> str | None:
    if len(parts) == 1 and is_text(parts[0]):
        text = parts[0].get("text")
        return text if isinstance(text, str) else ""
    return None


def _render_single(text: str, is_error: bool) -> list:
    if is_error:
        return [text_part(ERROR_EMPTY if text == "" else f"{ERROR_HEADER}\n{text}")]
    if js_trim(text) in ("", EMPTY_OUTPUT_PLAIN):
        return [text_part(EMPTY_OUTPUT)]
    return [text_part(text)]


def _render_parts(parts: list, is_error: bool) -> list:
    if all(is_blank_text(p) for p in parts):
        return [text_part(ERROR_EMPTY if is_error else EMPTY_OUTPUT)]
    if is_error:
        return [text_part(ERROR_HEADER), *parts]
    return list(parts)


def _append_note(parts: list, note: Any) -> list:
    if not isinstance(note, str) or note == "":
        return parts
    single = _single_text(parts)
    if single is not None:
        return [text_part(f"{single}\n{note}")]
    return [*parts, text_part(note)]


def render_tool_result(msg: dict) -> list:
    """The content a tool message is sent with: error/empty markers, then the note."""
    parts = parts_of(msg)
    is_error = bool(msg.get("isError"))
    single = _single_text(parts)
    if single is not None:
        rendered = _render_single(single, is_error)
    else:
        rendered = _render_parts(parts, is_error)
    return _append_note(rendered, msg.get("note"))


def synthetic_result(tool_call_id: Any) -> Item:
    """The placeholder answer for a call whose result is not in the history."""
    msg = {"role": "tool", "content": [text_part(UNAVAILABLE)], "toolCalls": [],
           "toolCallId": tool_call_id}
    return Item(msg, [])


def is_placeholder(item: Item) -> bool:
    content = item.content
    return bool(content) and is_text(content[0]) and content[0].get("text") == UNAVAILABLE


# --------------------------------------------------------------------------- cleaning


def sendable_content(msg: dict) -> list:
    """Content before cleaning: tool messages are rendered, others taken as recorded."""
    return render_tool_result(msg) if msg.get("role") == "tool" else parts_of(msg)


def drop_blank_texts(parts: list, role: Any, anomalies: list[dict]) -> list:
    """Remove blank text parts; a non-empty whitespace text is reported, an empty one is not."""
    kept = []
    for part in parts:
        if not is_blank_text(part):
            kept.append(part)
        elif part.get("text"):
            anomalies.append(anomaly("whitespace_text_dropped", role=role))
    return kept


def wire_message(msg: dict, content: list) -> dict:
    """`{role, name?, content, toolCalls, toolCallId?, partial?, tools?}`."""
    out: dict[str, Any] = {"role": msg.get("role"), "content": content,
                           "toolCalls": [dict(c) for c in calls_of(msg)]}
    for key in _WIRE_KEYS:
        if msg.get(key) is not None:
            out[key] = msg[key]
    return out


def with_calls(item: Item, calls: list[dict]) -> Item:
    return Item({**item.msg, "toolCalls": calls}, item.sources, item.mergeable)
