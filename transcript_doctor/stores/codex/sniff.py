"""Whether a file is a Codex rollout, by its first bytes and its name.

Imported by the package at discovery, before any file has matched: orjson and the response-item
kinds (`items.py`) only.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from .items import API_KINDS

LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})


def sniff(path: Path, head: bytes) -> bool:
    """A rollout's first readable line is a typed envelope with a payload (or, by name, a legacy one)."""
    for raw in head.split(b"\n")[:5]:
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # a long first line cut by the head, or a broken one: try the next
        if not isinstance(obj, dict):
            return False
        kind = obj.get("type")
        if not isinstance(kind, (str, type(None))):  # a type that is an object or a list: not Codex's
            return False
        if kind in LINE_TYPES and isinstance(obj.get("payload"), dict):
            return True
        legacy = path.name.startswith("rollout-") and path.suffix == ".jsonl"
        return legacy and ("id" in obj and "timestamp" in obj and "type" not in obj or kind in API_KINDS)
    return b'"type":"session_meta","payload":' in head[:4096]
