"""Whether a file is a Claude Code session transcript, by its first bytes.

Imported by the package at discovery, before any file has matched: orjson and the record-type
constants (`records.py`) only.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from .records import looks_like_claude_code

_SNIFF_LINES = 8
# The start of a first line too long for the sniffed head: Claude Code writes `parentUuid` first on
# chain records and `type` first on the others.
_LONG_HEAD = re.compile(
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
    return bool(_LONG_HEAD.match(lines[-1]))


def sniff_transcript(path: Path, head: bytes) -> bool:
    return sniff(head)
