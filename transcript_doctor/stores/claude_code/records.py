"""One Claude Code transcript record, reduced to what the resume replay and the rules read.

A record is one JSON object of the session file (`docs/claude-code.md` §2). The reader keeps the
envelope (type, uuid, parentUuid, ...) and a slim copy of the message content: text is kept whole
only when a rule must look at it (blank, or carrying a NUL or a lone surrogate, or short), else an
excerpt, so memory stays small on transcripts of hundreds of megabytes. `keep_text` keeps it all
(`tdoc replay`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...text import excerpt, is_blank

# Record types that take part in the parentUuid chain (docs/claude-code.md §3).
CHAIN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
# Every record type Claude Code is known to write; others are read and ignored.
KNOWN_TYPES = CHAIN_TYPES | frozenset(
    {"file-history-snapshot", "summary", "last-prompt", "mode", "permission-mode", "ai-title",
     "queue-operation", "pr-link", "custom-title", "tag", "agent-name"}
)  # fmt: skip
# Records a heal must never remove: resume needs them (docs/claude-code.md §3).
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
    blocks: list[Block] = field(default_factory=list)
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


def _keep(text: str, keep_text: bool, suspect: bool) -> str:
    if keep_text or suspect or len(text) <= KEEP_CHARS:
        return text
    return excerpt(text, KEEP_CHARS)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _block(raw: Any, keep_text: bool, suspect: bool) -> Block:
    if not isinstance(raw, dict):
        return Block("other")
    kind = raw.get("type")
    if kind == "text":
        text = raw.get("text")
        text = text if isinstance(text, str) else ""
        return Block("text", _keep(text, keep_text, suspect), blank=is_blank(text))
    if kind == "thinking":
        text = raw.get("thinking")
        text = text if isinstance(text, str) else ""
        sig = raw.get("signature")
        return Block("thinking", _keep(text, keep_text, suspect), signed=bool(sig), blank=is_blank(text))
    if kind == "redacted_thinking":
        return Block("redacted_thinking", signed=True, blank=True)
    if kind == "tool_use":
        args = raw.get("input")
        arguments = args if isinstance(args, str) else None
        name = raw.get("name")
        return Block("tool_use", id=_str(raw.get("id")), name=name if isinstance(name, str) else "",
                     arguments=arguments)  # fmt: skip
    if kind == "tool_result":
        text = _result_text(raw.get("content"))
        return Block("tool_result", _keep(text, keep_text, suspect), id=_str(raw.get("tool_use_id")),
                     is_error=raw.get("is_error") is True, blank=is_blank(text))  # fmt: skip
    if kind in ("image", "document"):
        return Block(kind)
    return Block("other", name=kind if isinstance(kind, str) else "")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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
    get = obj.get
    kind = get("type")
    kind = kind if type(kind) is str else ""
    subtype = _str(get("subtype"))
    uuid, parent, session = get("uuid"), get("parentUuid"), get("sessionId")
    rec = Record(index, line, piece, type=kind, uuid=uuid if type(uuid) is str else None,
                 parent=parent if type(parent) is str else None, subtype=subtype,
                 sidechain=get("isSidechain") is True, session=session if type(session) is str else None)
    message = get("message")
    if kind in ("user", "assistant") and type(message) is dict:
        rec.role = _str(message.get("role")) or kind
        rec.msg_id = _str(message.get("id"))
        rec.model = _str(message.get("model"))
        content = message.get("content")
        if keep_text:
            rec.raw_content = [{"type": "text", "text": content}] if isinstance(content, str) else (
                content if isinstance(content, list) else [])
        if type(content) is str:
            rec.string_content = True
            rec.blocks = [Block("text", _keep(content, keep_text, suspect), blank=is_blank(content))]
        elif type(content) is list:
            rec.blocks = [_block(b, keep_text, suspect) for b in content]
        rec.api_error = get("isApiErrorMessage") is True
        rec.compact_summary = get("isCompactSummary") is True
    if subtype is not None or rec.api_error or (kind == "assistant" and "error" in obj):
        rec.meta = _meta(obj, kind, subtype)
    return rec


def looks_like_claude_code(obj: Any) -> bool:
    """A Claude Code record: a known type with the envelope keys only Claude Code writes."""
    if not isinstance(obj, dict):
        return False
    kind = obj.get("type")
    if not isinstance(kind, str):  # an object or list as type: not hashable, and not Claude Code's
        return False
    if kind in CHAIN_TYPES:
        return "uuid" in obj and ("parentUuid" in obj or "sessionId" in obj)
    if kind == "file-history-snapshot":
        return "messageId" in obj and "snapshot" in obj
    if kind == "summary":
        return "leafUuid" in obj
    return kind in KNOWN_TYPES and "sessionId" in obj
