"""One `response_item` as tdoc keeps it: what the rules and the reconstruction need, not the payload.

A rollout can be hundreds of megabytes of tool output. Each item keeps its kind, role, call id and
name, the line it was read from (with the byte offset, for heal), and a compact view of its text:
short texts whole, long ones cut to head and tail (still non-blank), and any text a JSON parser
rejects kept whole so F507 can point into it. The full payload is kept only for `tdoc replay`.
See docs/codex.md §2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...model import Part, ToolCall
from ...text import is_blank
from .sniff import API_KINDS, CALL_OUTPUT, OUTPUT_KINDS  # the item kinds live with the sniffer

ASSISTANT_SIDE = frozenset({"reasoning", "web_search_call", "image_generation_call", *CALL_OUTPUT})

# User messages Codex writes itself (context, instructions, interrupt markers): not user turns.
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skill>",
    "<instructions>",
)
_IMPLIED_NAMES = {"local_shell_call": "local_shell", "tool_search_call": "tool_search"}
COMPACT_CHARS = 240
# The one character a parsed string can hold that the provider rejects: orjson (like Codex's
# serde_json) refuses lone surrogates, so such a line never parses and is F502 instead.
NUL = "\x00"


@dataclass(slots=True)
class Item:
    """A response item in the history Codex rebuilds. `source`: line | replacement | rebuilt | synthetic."""

    kind: str
    line: int
    role: str | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    parts: list[Part] = field(default_factory=list)
    source: str = "line"
    index: int | None = None  # index inside a compacted line's replacement_history
    payload: dict[str, Any] | None = None  # the item as written, only when a replay is printed

    @property
    def is_call(self) -> bool:
        return self.kind in CALL_OUTPUT and bool(self.call_id)

    @property
    def is_output(self) -> bool:
        return self.kind in OUTPUT_KINDS

    @property
    def sent(self) -> bool:
        return self.kind in API_KINDS and not (self.kind == "message" and self.role == "system")

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == "text")

    def is_user_turn(self) -> bool:
        """A real user prompt (rollbacks count these), not context Codex injected."""
        if self.kind != "message" or self.role != "user" or self.source == "summary":
            return False
        head = self.text.lstrip()[:40].lower()
        return not head.startswith(CONTEXT_PREFIXES)


def compact(text: str) -> str:
    """A stand-in for `text` with the same blankness and the same JSON-rejected characters."""
    if len(text) <= COMPACT_CHARS or NUL in text:
        return text
    if is_blank(text):
        return ""
    half = COMPACT_CHARS // 2
    return text[:half] + "\u2026" + text[-half:]


def _content_parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [Part("text", compact(content))]
    parts: list[Part] = []
    if not isinstance(content, list):
        return parts
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("input_text", "output_text", "text"):
            text = block.get("text")
            parts.append(Part("text", compact(text) if isinstance(text, str) else ""))
        elif kind in ("input_image", "image", "input_file"):
            parts.append(Part("media"))
        else:
            parts.append(Part("other"))
    return parts


def _reasoning_parts(payload: dict[str, Any]) -> list[Part]:
    texts = [s.get("text") for s in _list(payload.get("summary")) if isinstance(s, dict)]
    for c in _list(payload.get("content")):
        if isinstance(c, dict):
            texts.append(c.get("text"))
    text = "\n".join(t for t in texts if isinstance(t, str))
    return [Part("reasoning", compact(text), signed=bool(payload.get("encrypted_content")))]


def _list(value: Any) -> list[Any]:
    """`value` when it is a list, else empty (a mutated field may be any JSON value)."""
    return value if isinstance(value, list) else []


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _call_arguments(kind: str, payload: dict[str, Any]) -> str | None:
    if kind in ("function_call", "tool_search_call"):
        args = payload.get("arguments")
        if isinstance(args, str):
            return args if len(args) <= COMPACT_CHARS or NUL in args else _big_arguments(args)
    return None  # custom tools take free text; local shell calls carry an action object


def _big_arguments(args: str) -> str:
    """Long arguments: kept whole only when they are not valid JSON (F508 quotes them)."""
    import orjson

    try:
        orjson.loads(args)
    except orjson.JSONDecodeError:
        return args
    return "{}"


def make_item(payload: dict[str, Any], line: int, *, keep: bool, source: str = "line",
              index: int | None = None) -> Item | None:
    """The item of a `response_item` payload; None when the payload is not an object with a type."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        return None
    item = Item(kind, line, source=source, index=index, payload=payload if keep else None)
    if kind == "message":
        item.role = _string(payload.get("role"))
        item.parts = _content_parts(payload.get("content"))
    elif kind == "reasoning":
        item.parts = _reasoning_parts(payload)
    elif kind in CALL_OUTPUT:
        shell = kind == "local_shell_call"
        item.call_id = _string(payload.get("call_id")) or (_string(payload.get("id")) if shell else None)
        item.name = _string(payload.get("name")) or _IMPLIED_NAMES.get(kind)
        item.arguments = _call_arguments(kind, payload)
    elif kind in OUTPUT_KINDS:
        item.call_id = _string(payload.get("call_id"))
        output = payload.get("output")
        item.parts = _content_parts(output) if output is not None else []
    return item


def user_message(text: str, line: int, source: str) -> Item:
    """A user message Codex builds itself (the rebuilt history of a compaction)."""
    payload = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return Item("message", line, role="user", parts=[Part("text", compact(text))], source=source, payload=payload)


def synthetic_output(call: Item) -> Item:
    """The output Codex adds before sending for a call that has none (docs/codex.md §4)."""
    kind = CALL_OUTPUT[call.kind]
    payload: dict[str, Any] = {"type": kind, "call_id": call.call_id}
    if kind == "tool_search_output":
        payload.update(status="completed", tools=[])
    else:
        payload["output"] = "aborted"
    parts = [] if kind == "tool_search_output" else [Part("text", "aborted")]
    return Item(kind, call.line, call_id=call.call_id, parts=parts, source="synthetic", payload=payload)


def tool_call(item: Item) -> ToolCall:
    return ToolCall(id=item.call_id or "", name=item.name or "", arguments=item.arguments)
