"""Whether a file is a Codex rollout, by its first bytes and its name.

Imported by the package at discovery, before any file has matched: the standard library and orjson
only. The response-item kinds are defined here (and imported by `items.py`), so a scan of another
store's file never loads the item classes.
"""

from __future__ import annotations

from pathlib import Path

import orjson

# A call kind -> the output kind Codex synthesises for it when the output is missing.
CALL_OUTPUT = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "function_call_output",
    "tool_search_call": "tool_search_output",
}
OUTPUT_KINDS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
# Items Codex puts in the request; anything else (ghost snapshots, unknown variants) stays local.
API_KINDS = frozenset({"message", "reasoning", "web_search_call", "image_generation_call", *CALL_OUTPUT, *OUTPUT_KINDS})

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
