"""One Claude Code transcript record, reduced to what the resume replay and the rules read.

A record is one JSON object of the session file (docs/claude-code-sessions.md, section "Records"). The reader keeps the
envelope (type, uuid, parentUuid, ...) and a slim copy of the message content: text is kept whole
only when a rule must look at it (blank, or carrying a NUL or a lone surrogate, or short), else an
excerpt, so memory stays small on transcripts of hundreds of megabytes. `keep_text` keeps it all
(`tdoc replay`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...text import excerpt, is_blank
from .sniff import CHAIN_TYPES  # the record types live with the sniffer (discovery loads no record class)

# Records a heal must never remove: resume needs them (docs/claude-code-sessions.md, section "How the request is rebuilt on resume").
PROTECTED_SUBTYPES = frozenset({"compact_boundary"})
PROTECTED_TYPES = frozenset({"permission-mode", "last-prompt"})
SYNTHETIC_MODEL = "<synthetic>"
NO_RESPONSE = "No response requested."
INTERRUPT_PREFIX = "[Request interrupted by user"
KEEP_CHARS = 160  # text up to this long is kept whole (else an excerpt)


@dataclass(slots=True)
class Block:
    """One content block of a message (Anthropic Messages API shape, slimmed)."""

    kind: str  # text | thinking | redacted_thinking | tool_use | tool_result | image | document | other
    text: str = ""
    signed: bool = False  # thinking: a signature; redacted_thinking: always
    id: str | None = None  # tool_use id, or the tool_use_id a tool_result answers
    name: str = ""
    arguments: str | None = None  # tool_use input when it is not an object (F508), else None
    is_error: bool = False
    blank: bool = False  # text/thinking text is empty or whitespace (ECMAScript trim)


@dataclass(slots=True, eq=False)
class Record:
    """One record of the file, where it was read, and the facts the replay needs."""

    index: int  # order in the file, 0-based, counting every record of a concatenated line
    line: int  # 1-based line number
    piece: int = 0  # index of the record on its line (a concatenated line holds several)
    offset: int = 0  # byte offset of the line in the file
    type: str = ""
    uuid: str | None = None
    parent: str | None = None
    subtype: str | None = None
    sidechain: bool = False
    session: str | None = None
    role: str | None = None
    msg_id: str | None = None
    model: str | None = None
    api_error: bool = False
    compact_summary: bool = False
    string_content: bool = False  # message.content was a plain string
    blocks: Sequence[Block] = ()  # a record with no message shares the empty tuple
    meta: dict[str, Any] | None = None  # compaction metadata, error details, tool ids cleared
    readable: bool = True  # False for records of a concatenated line: Claude Code cannot read them
    raw_content: list[Any] | None = None  # the message's content blocks as written (`tdoc replay` only)

    @property
    def chained(self) -> bool:
        """Takes part in the parentUuid chain (a subagent's own file chains its sidechain records)."""
        return self.uuid is not None and self.type in CHAIN_TYPES

    @property
    def synthetic(self) -> bool:
        """Written by the CLI, not the model: API error notices and `No response requested.`."""
        return self.type == "assistant" and (self.api_error or self.model == SYNTHETIC_MODEL)

    @property
    def protected(self) -> bool:
        return self.type in PROTECTED_TYPES or self.subtype in PROTECTED_SUBTYPES

    def text(self) -> str:
        return "".join(b.text for b in self.blocks if b.kind == "text")


class Names:
    """One string object per distinct envelope value of a file (type, session, model, ...), and a
    `parentUuid` that names the previous record shares that record's `uuid` string: the index of a
    long transcript holds each repeated value once instead of once per record."""

    __slots__ = ("known", "last_uuid")

    def __init__(self) -> None:
        self.known: dict[str, str] = {}
        self.last_uuid: str | None = None

    def name(self, value: Any) -> str | None:
        if type(value) is not str:
            return None
        return self.known.setdefault(value, value)

    def parent(self, value: Any) -> str | None:
        if type(value) is not str:
            return None
        return self.last_uuid if value == self.last_uuid else value


def _keep(text: str, keep_text: bool, suspect: bool) -> str:
    if keep_text or suspect or len(text) <= KEEP_CHARS:
        return text
    return excerpt(text, KEEP_CHARS)


def _result_text(content: Any) -> str:
    if type(content) is str:
        return content
    if type(content) is list:
        if len(content) == 1:  # the common shape: one text item, taken as it is (no copy of a long result)
            item = content[0]
            text = item.get("text") if type(item) is dict else None
            return text if type(text) is str else ""
        return "".join(c.get("text", "") for c in content if type(c) is dict and type(c.get("text")) is str)
    return ""


def _block(raw: Any, keep_text: bool, suspect: bool, names: Names) -> Block:
    if type(raw) is not dict:
        return Block("other")
    kind = raw.get("type")
    if kind == "text":
        text = raw.get("text")
        text = text if type(text) is str else ""
        return Block("text", _keep(text, keep_text, suspect), blank=is_blank(text))
    if kind == "tool_result":
        text = _result_text(raw.get("content"))
        return Block("tool_result", _keep(text, keep_text, suspect), id=_str(raw.get("tool_use_id")),
                     is_error=raw.get("is_error") is True, blank=is_blank(text))  # fmt: skip
    if kind == "tool_use":
        args = raw.get("input")
        name = names.name(raw.get("name"))
        return Block("tool_use", id=_str(raw.get("id")), name=name or "",
                     arguments=args if type(args) is str else None)  # fmt: skip
    if kind == "thinking":
        text = raw.get("thinking")
        text = text if type(text) is str else ""
        sig = raw.get("signature")
        return Block("thinking", _keep(text, keep_text, suspect), signed=bool(sig), blank=is_blank(text))
    if kind == "redacted_thinking":
        return Block("redacted_thinking", signed=True, blank=True)
    if kind in ("image", "document"):
        return Block(kind)
    return Block("other", name=kind if isinstance(kind, str) else "")


def _str(value: Any) -> str | None:
    return value if type(value) is str else None


def _meta(obj: dict[str, Any], kind: str, subtype: str | None) -> dict[str, Any] | None:
    if subtype == "compact_boundary":
        meta = obj.get("compactMetadata")
        seg = meta.get("preservedSegment") if isinstance(meta, dict) else None
        return {"logical_parent": _str(obj.get("logicalParentUuid")),
                "preserved": {k: _str(seg.get(k)) for k in ("headUuid", "anchorUuid", "tailUuid")}
                if isinstance(seg, dict) else None}  # fmt: skip
    if subtype == "microcompact_boundary":
        meta = obj.get("microcompactMetadata")
        ids = meta.get("compactedToolIds") if isinstance(meta, dict) else None
        return {"cleared": [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []}
    if subtype == "api_error":
        return {"error": obj.get("error")}
    if kind == "assistant" and (obj.get("isApiErrorMessage") or obj.get("error")):
        return {"error": obj.get("error"), "status": obj.get("apiErrorStatus")}
    return None


def parse_record(obj: dict[str, Any], index: int, line: int, piece: int = 0, *, keep_text: bool = False,
                 suspect: bool = False) -> Record:  # fmt: skip
    """A `Record` from one decoded JSON object (any type; unknown fields are ignored)."""
    return make_record(obj, index, line, piece, 0, keep_text, suspect, Names())


def make_record(obj: dict[str, Any], index: int, line: int, piece: int, offset: int, keep_text: bool, suspect: bool,
                names: Names) -> Record:  # fmt: skip
    """`parse_record` for the reader's hot loop: positional, with the file's shared `Names`."""
    get, known = obj.get, names.known
    kind, subtype, session, uuid = get("type"), get("subtype"), get("sessionId"), get("uuid")
    kind = known.setdefault(kind, kind) if type(kind) is str else ""
    subtype = known.setdefault(subtype, subtype) if type(subtype) is str else None
    session = known.setdefault(session, session) if type(session) is str else None
    uuid = uuid if type(uuid) is str else None
    rec = Record(index, line, piece, offset, kind, uuid, names.parent(get("parentUuid")), subtype,
                 get("isSidechain") is True, session)  # fmt: skip
    if uuid is not None:
        names.last_uuid = uuid
    if kind == "user" or kind == "assistant":
        message = get("message")
        if type(message) is dict:
            _message(rec, obj, message, keep_text, suspect, names)
    if subtype is not None or rec.api_error or (kind == "assistant" and "error" in obj):
        rec.meta = _meta(obj, kind, subtype)
    return rec


def _message(rec: Record, obj: dict[str, Any], message: dict[str, Any], keep_text: bool, suspect: bool,
             names: Names) -> None:  # fmt: skip
    mget, known = message.get, names.known
    role, msg_id, model = mget("role"), mget("id"), mget("model")
    rec.role = known.setdefault(role, role) if type(role) is str and role else rec.type
    rec.msg_id = msg_id if type(msg_id) is str else None
    rec.model = known.setdefault(model, model) if type(model) is str else None
    content = mget("content")
    if keep_text:
        rec.raw_content = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content if isinstance(content, list) else [])
    if type(content) is str:
        rec.string_content = True
        rec.blocks = [Block("text", _keep(content, keep_text, suspect), blank=is_blank(content))]
    elif type(content) is list:
        rec.blocks = [_block(b, keep_text, suspect, names) for b in content]
    get = obj.get
    rec.api_error = get("isApiErrorMessage") is True
    rec.compact_summary = get("isCompactSummary") is True
