"""A store kind that exists only in the tests: a plain chat log, one message object per line.

Each line is `{"role": ..., "content": ...}` (content a string or a list of `{"type": "text" |
"reasoning", "text": ...}` parts), optionally with OpenAI-style `tool_calls` (`id`, `name`,
`arguments`) and `tool_call_id`. The runtime sends every line, in order.

It is the demonstration that a new store kind gets the shared rules (W101-W109, F507, F508)
for free: it reads its format, rebuilds the request as a `Conversation`, says how a message is
removed (`LineEditor`) and is registered with one call, `stores.register(ChatLogKind())`. No
shared file names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from transcript_doctor import values
from transcript_doctor.conversation import Conversation, NoEdits
from transcript_doctor.model import Edit, Fix, Loc, Message, Part, TdocError, ToolCall
from transcript_doctor.stores import Options, Store, StoreKind, register

FORMAT = "chat-log"


def _parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [Part("text", content)]
    if isinstance(content, list):
        return [Part("reasoning" if p.get("type") == "reasoning" else "text", str(p.get("text", ""))) for p in content]
    return []


def _message(obj: dict[str, Any], line: int, position: int) -> Message:
    calls = [ToolCall(str(c.get("id")), str(c.get("name", "")), c.get("arguments")) for c in obj.get("tool_calls") or ()]
    return Message(
        role=str(obj.get("role")), parts=_parts(obj.get("content")), tool_calls=calls,
        tool_call_id=obj.get("tool_call_id"), is_error=bool(obj.get("is_error")),
        loc=Loc(line=line, end_line=line), position=position,
    )


def _record(raw: bytes, display: str, line: int) -> dict[str, Any]:
    """One message line, through the project's reader-boundary rule (`values.loads`): a line that
    is not such a message is a clear file error, as in any store kind."""
    try:
        obj = values.loads(raw)
    except ValueError as exc:
        raise TdocError(f"{display}: line {line}: not a chat-log record ({exc})") from None
    ok = isinstance(obj, dict) and isinstance(obj.get("role"), str)
    ok = ok and all(isinstance(c, dict) for c in obj.get("tool_calls") or ())
    ok = ok and (isinstance(obj.get("content"), str)
                 or isinstance(obj.get("content"), list) and all(isinstance(p, dict) for p in obj["content"]))
    ok = ok and (obj.get("tool_call_id") is None or isinstance(obj.get("tool_call_id"), str))
    if not ok:
        raise TdocError(f"{display}: line {line}: not a chat-log record")
    return obj


class LineEditor(NoEdits):
    """A removed message is its deleted line; nothing else is offered."""

    def remove_message(self, msg: Message) -> Fix | None:
        return Fix("safe", f"delete line {msg.loc.line}", (Edit("delete", line=msg.loc.line),))


class ChatLogStore(Store):
    format = FORMAT
    system = FORMAT

    def __init__(self, path: Path, display: str) -> None:
        super().__init__(path, display)
        self.messages: list[Message] = []
        try:
            lines = path.read_bytes().splitlines()
        except OSError as exc:
            raise TdocError(f"{display}: cannot read: {exc.strerror or exc}") from None
        for number, raw in enumerate(lines, start=1):
            if raw.strip():
                self.messages.append(_message(_record(raw, display, number), number, len(self.messages)))

    @property
    def session_count(self) -> int:
        return 1

    @property
    def record_count(self) -> int:
        return len(self.messages)

    def replay(self, options: Options) -> Any:
        return [{"role": m.role, "content": m.visible_text} for m in self.messages]

    def conversations(self, options: Options) -> Iterator[Conversation]:
        yield Conversation(self.display, self.format, None, self.messages, editor=LineEditor())


class ChatLogKind(StoreKind):
    format = FORMAT
    system = FORMAT
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        try:
            first = values.loads(head.split(b"\n", 1)[0])
        except ValueError:
            return False
        return isinstance(first, dict) and "role" in first and "content" in first and "type" not in first

    def open(self, path: Path, display: str, options: Options) -> Store:
        return ChatLogStore(path, display)


KIND = register(ChatLogKind())
