"""How Hermes stores message content and what it treats as visible text.

* `decode_content`: the `\\x00json:` prefix marks list/dict content serialised with `json.dumps`.
* `flatten_message_text` / `visible_text_for_sentinel_check`: Hermes' flattening, with reasoning
  parts excluded for the sentinel guard (a `thinking` part holding "(empty) …" is not a leak).
* `leaked_empty_sentinel`: both revisions of the PR's prefix test (literal, and the later
  case-insensitive regex). Nothing here raises on hostile shapes.
* `sanitize_context`: the memory-context fencing Hermes strips from user/assistant text on resume.
"""

from __future__ import annotations

import re
from typing import Any

from ... import values
from ...text import js_trim
from .thinking import has_content_after_think_block

JSON_PREFIX = "\x00json:"
EMPTY_RESPONSE_SENTINEL = "(empty)"
# The later revision: "(", optional whitespace, the word "empty" in any case, a word boundary.
LEAKED_SENTINEL_PREFIX_RE = re.compile(r"\(\s*empty\b", re.IGNORECASE)
EMPTY_TOOL_RESPONSE_NUDGE = (
    "You just executed tool calls but returned an empty response. "
    "Please process the tool results above and continue with the task."
)

NON_VISIBLE_PART_TYPES = frozenset({"thinking", "reasoning", "redacted_thinking", "reasoning_content"})
MEDIA_PART_TYPES = frozenset({"image", "image_url", "input_image", "audio", "input_audio"})
TEXT_KEYS = ("text", "content", "input_text", "output_text", "summary_text")
# v30 blanks an assistant tool-call row whose content is only a stale `[toolname]` marker (#78148).
STALE_MARKER_RE = re.compile(r"\[[A-Za-z_][A-Za-z0-9_.-]*\]")
MEMORY_NOTE = "[System note: The following is recalled memory context, NOT new user input."


def decode_content(value: Any) -> tuple[Any, str | None]:
    """(decoded content, error). `\\x00json:` text becomes the list/dict it encodes."""
    if isinstance(value, str) and value.startswith(JSON_PREFIX):
        try:
            return values.loads(value[len(JSON_PREFIX) :]), None
        except ValueError as exc:  # not JSON, or a value outside the reader-boundary rule
            return value[len(JSON_PREFIX) :], f"undecodable \\x00json: content ({str(exc)[:120]})"
    return value, None


def encode_content(content: Any) -> Any:
    """The inverse, byte-compatible with Hermes (stdlib `json.dumps` defaults, as Hermes writes)."""
    import json

    if isinstance(content, (list, dict)):
        return JSON_PREFIX + json.dumps(content)
    return content


def part_type(part: Any) -> str:
    raw = part.get("type") if isinstance(part, dict) else getattr(part, "type", None)
    try:
        return str(raw).strip().lower() if raw is not None else ""
    except Exception:  # a hostile __str__
        return ""


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if part_type(part) in MEDIA_PART_TYPES:
        return ""
    if isinstance(part, dict):
        for key in TEXT_KEYS:
            value = part.get(key)
            if isinstance(value, str):
                return value
    return ""


def flatten_message_text(content: Any, sep: str = "\n") -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(t for t in (_part_text(p) for p in content) if t)
    if isinstance(content, dict):
        return _part_text(content)
    try:
        return str(content)
    except Exception:
        return ""


def visible_text_for_sentinel_check(content: Any) -> str:
    """Flattened text without thinking/reasoning parts; never raises (failure -> "")."""
    if content.__class__ is str:  # the common case: the text itself
        return content
    try:
        if isinstance(content, list):
            kept = [p for p in content if not (isinstance(p, dict) and part_type(p) in NON_VISIBLE_PART_TYPES)]
            return flatten_message_text(kept)
        if isinstance(content, dict) and part_type(content) in NON_VISIBLE_PART_TYPES:
            return ""
        if isinstance(content, (bool, int, float)) or content is None:
            return ""
        return flatten_message_text(content)
    except Exception:
        return ""


def head_startswith(text: str, prefix: str | tuple[str, ...]) -> bool:
    """`text.lstrip().startswith(prefix)`, without copying a text that starts with no space."""
    if text and not text[0].isspace():
        return text.startswith(prefix)
    return text.lstrip().startswith(prefix)


def starts_with_sentinel(visible: str, *, literal: bool = False) -> bool:
    """The prefix test on the (left-trimmed) visible text: earlier literal or later regex revision."""
    head = visible.lstrip() if visible[:1].isspace() else visible
    if head[:1] != "(":  # both revisions start with a literal parenthesis
        return False
    if literal:
        return head.startswith(EMPTY_RESPONSE_SENTINEL)
    return LEAKED_SENTINEL_PREFIX_RE.match(head) is not None


def leaked_empty_sentinel(content: Any, *, literal: bool = False) -> bool:
    """Whether `content` (a final answer) is a leaked `(empty)` sentinel: prefix and visible content."""
    visible = visible_text_for_sentinel_check(content)
    if not starts_with_sentinel(visible, literal=literal):
        return False
    # Hermes applies the think-block gate to string content, or to the flattened visible text.
    return has_content_after_think_block(content if isinstance(content, str) else visible)


def _drop_block(text: str, open_tag: str, close_tag: str) -> str:
    out: list[str] = []
    cursor = 0
    while True:
        start = text.find(open_tag, cursor)
        if start < 0:
            break
        end = text.find(close_tag, start + len(open_tag))
        if end < 0:
            break
        out.append(text[cursor:start])
        cursor = end + len(close_tag)
    out.append(text[cursor:])
    return "".join(out)


def sanitize_context(text: str) -> str:
    """Strip `<memory-context>` blocks, the recalled-memory note line and stray fence tags."""
    if "memory-context" not in text and MEMORY_NOTE not in text:
        return text
    text = _drop_block(text, "<memory-context>", "</memory-context>")
    lines = [ln for ln in text.split("\n") if not ln.lstrip().startswith(MEMORY_NOTE)]
    return "\n".join(lines).replace("<memory-context>", "").replace("</memory-context>", "")


def resumed_text(text: str) -> str:
    """String content of a user/assistant row as Hermes replays it: sanitised, then stripped."""
    return sanitize_context(text).strip()


def is_stale_marker(content: Any) -> bool:
    return isinstance(content, str) and STALE_MARKER_RE.fullmatch(content) is not None


def is_blank_text(text: str | None) -> bool:
    return not text or not js_trim(text)
