"""How fixes are written into a rollout: line rewrites that keep every line's byte length.

Codex caches byte offsets into rollouts (`thread_history_*.sqlite`); a line that changes length
breaks them. A rewritten line is therefore serialised compactly and padded with spaces (JSON
whitespace) up to its old length before the line ending. A fix that cannot keep the length (a line
added or removed, a rewrite that does not fit) is unsafe and says that Codex must rebuild its offset
cache. docs/codex.md §6.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ...model import Edit, Fix, Message, ToolCall
from .items import CALL_OUTPUT
from .reader import Rollout

OFFSETS_NOTE = ("changes byte offsets: Codex's thread_history cache must be rebuilt "
                "(move ~/.codex/thread_history_*.sqlite aside; Codex re-indexes on the next start)")


def read_line(path: Path, rollout: Rollout, line: int) -> bytes:
    """The raw bytes of `line`, without its line ending."""
    offset, length = rollout.span(line)
    with open(path, "rb") as fh:
        fh.seek(offset)
        raw = fh.read(length)
    return raw.rstrip(b"\n").rstrip(b"\r")


def padded(obj: Any, width: int) -> str | None:
    """`obj` as compact JSON padded with spaces to exactly `width` bytes; None when it is longer."""
    text = orjson.dumps(obj)
    if len(text) > width:
        return None
    return (text + b" " * (width - len(text))).decode("utf-8")


def rewrite_line(path: Path, rollout: Rollout, line: int,
                 change: Callable[[dict[str, Any], bool], bool]) -> tuple[str, bool] | None:
    """The new text of `line` after `change(obj, lean)`; (text, same_length), None if nothing changed.

    `change` is tried first as is, then `lean` (allowed to give up optional keys) when the result
    does not fit the line's length; if neither fits, the compact text is returned, not same-length.
    """
    raw = read_line(path, rollout, line)
    best = None
    for lean in (False, True):
        obj = orjson.loads(raw)
        if not change(obj, lean):
            return None
        text = padded(obj, len(raw))
        if text is not None:
            return text, True
        best = best or orjson.dumps(obj).decode("utf-8")
    return (best, False) if best is not None else None


class CodexEditor:
    """The shared rules' fixes, written as rollout line edits."""

    def __init__(self, path: Path, rollout: Rollout) -> None:
        self.path = path
        self.rollout = rollout

    def remove_message(self, msg: Message) -> Fix | None:
        """An output that must not be sent: its line is overwritten with spaces (same byte length;
        Codex and tdoc skip blank lines), so no offset moves."""
        if msg.role != "tool" or not msg.extra.get("written") or msg.loc.line is None:
            return None
        line = msg.loc.line
        width = len(read_line(self.path, self.rollout, line))
        return Fix("safe", f"blank line {line} with spaces (same byte length)", (Edit("replace", line=line, text=" " * width),))

    def drop_part(self, msg: Message, index: int) -> Fix | None:
        return None

    def answer_call(self, msg: Message, call: ToolCall) -> Fix | None:
        line = (msg.extra.get("call_lines") or {}).get(call.id)
        if line is None or not msg.extra.get("written"):
            return None
        raw = read_line(self.path, self.rollout, line)
        try:
            envelope = orjson.loads(raw)
            kind = envelope["payload"]["type"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return None
        output = aborted_output(kind, call.id)
        added = {"timestamp": envelope.get("timestamp"), "type": "response_item", "payload": output}
        text = raw.decode("utf-8") + "\n" + orjson.dumps(added).decode("utf-8")
        return Fix("unsafe", f"add an \"aborted\" output for {call.id!r} after line {line} (adds a line; "
                             f"{OFFSETS_NOTE})", (Edit("replace", line=line, text=text),))


def aborted_output(call_kind: object, call_id: str) -> dict[str, Any]:
    """The output Codex itself would send for an unanswered call of `call_kind` (any JSON value)."""
    kind = CALL_OUTPUT.get(call_kind, "function_call_output") if isinstance(call_kind, str) else "function_call_output"
    if kind == "tool_search_output":
        return {"type": kind, "call_id": call_id, "status": "completed", "tools": []}
    return {"type": kind, "call_id": call_id, "output": "aborted"}
