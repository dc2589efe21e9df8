"""Whether a file is an eve session stream, by its first bytes; which stream format a record has.

Imported by the package at discovery, before any file has matched: standard library and orjson only.
The record types are the ones the decoders (`v26.py`, `v27.py`) know.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import orjson

EVENT_TYPES = frozenset(
    {
        "session.started", "turn.started", "message.received", "step.started", "action.input.appended",
        "actions.requested", "action.partial", "action.result", "input.requested", "input.resolved",
        "task.started", "task.settled", "task.detached", "reasoning.appended", "reasoning.completed",
        "message.appended", "message.completed", "result.completed", "compaction.requested",
        "compaction.completed", "context.cleared", "authorization.required", "authorization.completed",
        "step.completed", "step.failed", "turn.completed", "turn.failed", "turn.cancelled",
        "session.waiting", "session.failed", "session.completed",
    }
)  # fmt: skip

FACT_TYPES = frozenset(
    {
        "session.started", "session.ended", "turn.started", "turn.settled", "turn.resumed",
        "delivery.admitted", "delivery.consumed", "delivery.settled", "message.received",
        "model.requested", "model.started", "model.settled", "usage.recorded",
        "content.delta", "content.completed", "call.requested", "call.started", "call.settled",
        "context.started", "context.settled",
    }
)  # fmt: skip

V26 = "<=26"
V27 = "27"
_SNIFF_LINES = 5


@cache
def _long_heads() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """The start of a first line too long to fit in the sniffed head, v26 and v27 (compiled for
    the first such line: a scan of another store's file need not pay for them, issue 20)."""
    return (re.compile(rb'\s*\{\s*"type"\s*:\s*"([a-z.]+)"'),
            re.compile(rb'\s*\{\s*"(?:at"\s*:\s*"[^"]*"\s*,\s*"facts|progress)"\s*:'))  # fmt: skip


def shape_of(record: Any) -> str | None:
    """Which stream format a parsed line belongs to, if any."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("type"), str) and "facts" not in record:
        return V26
    if record_shape(record):
        return V27
    return None


def sniff(head: bytes) -> bool:
    """Whether the first records in `head` are eve stream records of a known event type."""
    lines = head.split(b"\n")
    complete = lines[:-1] if len(lines) > 1 else []
    tried = 0
    for raw in complete:
        if not raw.strip():
            continue
        try:
            return _known(orjson.loads(raw))
        except orjson.JSONDecodeError:
            tried += 1  # a corrupt first line: decide on the next one
            if tried >= _SNIFF_LINES:
                return False
    tail = lines[-1]
    head_v26, head_v27 = _long_heads()
    m = head_v26.match(tail)
    if m:
        return m.group(1).decode() in EVENT_TYPES
    return bool(head_v27.match(tail))


def _known(record: Any) -> bool:
    shape = shape_of(record)
    if shape == V26:
        return record["type"] in EVENT_TYPES
    if shape == V27:
        facts = record.get("facts") if "facts" in record else [record.get("progress")]
        return isinstance(facts, list) and any(isinstance(f, dict) and _is_fact_type(f.get("type")) for f in facts)
    return False


def record_shape(record: dict[str, Any]) -> bool:
    return "facts" in record or isinstance(record.get("progress"), dict)


def sniff_stream(path: Path, head: bytes) -> bool:
    return sniff(head)


def _is_fact_type(kind: object) -> bool:
    """A known fact type (a mutated `type` may be any JSON value, lists and objects included)."""
    return isinstance(kind, str) and kind in FACT_TYPES
