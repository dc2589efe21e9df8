"""Record validity, from the shipped JSON Schema (`schemas/kimi-wire.schema.json`).

The schema is the single source of what a valid history record is. Engine v2 skips a record
that fails it (as its zod schemas do); engine v1 applies it anyway (or fails); F504 reports it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from ...schema import load

HISTORY_TYPES = (
    "context.append_message",
    "context.append_loop_event",
    "context.apply_compaction",
    "context.undo",
    "context.clear",
    "swarm_mode.exit",
)


@lru_cache(maxsize=None)
def _validator(name: str) -> Draft202012Validator:
    root = load("kimi-wire")
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": root["$defs"]})


def is_valid_v2(rtype: str, data: dict[str, Any]) -> bool:
    return _validator(rtype).is_valid(data)


def problems(rtype: str, data: dict[str, Any]) -> list[str]:
    """Human-readable schema violations of a record (empty when valid)."""
    if rtype not in HISTORY_TYPES and rtype != "metadata":
        return []
    out = []
    for err in _validator(rtype).iter_errors(data):
        where = "/".join(str(p) for p in err.absolute_path) or "record"
        out.append(f"{where}: {err.message[:160]}")
    return out
