"""Small helpers both decoders use to read event payloads defensively."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import values
from .turns import Failure

# A JSON text this short cannot nest deeper than values.MAX_DEPTH (so needs no depth check).
SHALLOW = 2 * (values.MAX_DEPTH + 1)

# The reader's general path for one line: `(number, offset, body without its line end, ended)`.
GeneralPath = Callable[[int, int, bytes, bool], None]

# `message.received` / `delivery.consumed` kinds that are runtime deliveries, not a person writing.
_NON_HUMAN_KINDS = frozenset(
    {"system", "schedule", "scheduled", "cron", "runtime", "notification", "webhook", "event", "trigger"}
)


def text_of(value: Any) -> str:
    """Text from a string, a `{text}`/`{value}` object or a list of parts (text parts only)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "value", "message", "content"):
            if key in value:
                return text_of(value[key])
        return ""
    if isinstance(value, list):
        pieces = []
        for part in value:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text":
                pieces.append(text_of(part.get("text", "")))
        return "".join(pieces)
    return ""


def input_text(data: dict[str, Any]) -> str:
    for key in ("message", "text", "value", "parts", "content"):
        if data.get(key) is not None:
            return text_of(data[key])
    return ""


def is_human_kind(kind: str | None) -> bool:
    """A delivery of this kind carries a person's message (None: a plain message)."""
    if kind is None:
        return True
    lowered = kind.lower()
    return not (lowered.startswith("task") or lowered in _NON_HUMAN_KINDS)


def opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def key_of(value: Any) -> str | None:
    """A step index or run id as a string key (None when absent)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, str)):
        return str(value)
    return None


def failure(line: int, scope: str, data: dict[str, Any]) -> Failure:
    """`{code, message, details?}` at the top of `data` or under `data.error`."""
    error = data.get("error")
    source: dict[str, Any] = error if isinstance(error, dict) else data
    message = source.get("message")
    if not isinstance(message, str):
        message = "" if message is None else str(message)
    code = source.get("code")
    details = source.get("details", source.get("hint"))
    # positional (line, scope, code, message, turn, step, details): cheaper than by name
    return Failure(line, scope, code if isinstance(code, str) else None, message, None, None, details)


def dict_or_empty(value: Any) -> dict[str, Any] | None:
    """`value` when it is an object, {} when absent, None when it is something else."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else None
