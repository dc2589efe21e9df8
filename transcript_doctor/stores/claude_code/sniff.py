"""Whether a file is a Claude Code session transcript, by its first bytes.

Imported by the package at discovery, before any file has matched: the standard library and orjson
only. The record types are defined here (and imported by `records.py`), so a scan of another
store's file never loads the record classes.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import orjson

# Record types that take part in the parentUuid chain (docs/claude-code-sessions.md, section "How the request is rebuilt on resume").
CHAIN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
# Every record type Claude Code is known to write; others are read and ignored.
KNOWN_TYPES = CHAIN_TYPES | frozenset(
    {"file-history-snapshot", "summary", "last-prompt", "mode", "permission-mode", "ai-title",
     "queue-operation", "pr-link", "custom-title", "tag", "agent-name"}
)  # fmt: skip

_SNIFF_LINES = 8


@cache
def _long_head() -> re.Pattern[bytes]:
    """The start of a first line too long for the sniffed head: Claude Code writes `parentUuid`
    first on chain records and `type` first on the others. Compiled for the first such line
    (some two million instructions, which a scan of any other file need not pay: start-up, issue 20)."""
    return re.compile(
        rb'\s*\{"(?:parentUuid"\s*:\s*(?:null|"[^"]{1,100}")\s*,\s*"(?:isSidechain|logicalParentUuid)"'
        rb'|type"\s*:\s*"(?:file-history-snapshot|summary|queue-operation|last-prompt|permission-mode)")'
    )


def sniff(head: bytes) -> bool:
    """Whether the first records in `head` are Claude Code transcript records."""
    lines = head.split(b"\n")
    complete = lines[:-1] if len(lines) > 1 else []
    seen = 0
    for raw in complete:
        if not raw.strip():
            continue
        seen += 1
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            obj = None
        if looks_like_claude_code(obj):
            return True
        if seen >= _SNIFF_LINES:
            return False
    if complete:
        return False
    return bool(_long_head().match(lines[-1]))


def sniff_transcript(path: Path, head: bytes) -> bool:
    return sniff(head)


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
