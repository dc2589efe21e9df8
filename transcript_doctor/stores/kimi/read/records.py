"""Record validity, from the shipped JSON Schema (`schemas/kimi-wire.schema.json`).

The schema is the single source of what a valid history record is. Engine v2 skips a record
that fails it (as its zod schemas do); engine v1 applies it anyway (or fails); F504 reports it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

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
    from jsonschema import Draft202012Validator  # only when a fast check is unsure (it costs start-up)

    from ....schema import load

    root = load("kimi-wire")
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": root["$defs"]})


def is_valid_v2(rtype: str, data: dict[str, Any]) -> bool:
    """Whether a record passes its schema. A fast check accepts the common valid shapes; anything
    it does not accept goes to the schema validator, which decides (tests pin fast => valid)."""
    fast = _FAST.get(rtype)
    if fast is not None and _envelope_ok(data) and fast(data):
        return True
    return _validator(rtype).is_valid(data)


# --------------------------------------------------------------------------- fast path
# Each predicate below only ever says "valid" for records the schema accepts; when unsure it
# says False and the schema validator runs.

_ROLES = frozenset(("system", "user", "assistant", "tool"))
_MEDIA = {"image_url": "imageUrl", "audio_url": "audioUrl", "video_url": "videoUrl"}


_MISSING = object()


def _opt(obj: dict[str, Any], key: str, kind: type) -> bool:
    """`key` is absent, or present with exactly this type (a JSON null is not absent)."""
    value = obj.get(key, _MISSING)
    return value is _MISSING or type(value) is kind


def _one_of(value: Any, choices: frozenset[str]) -> bool:
    return type(value) is str and value in choices


def _envelope_ok(data: dict[str, Any]) -> bool:
    """`time` absent or a number, `agentId` absent or a string (written out: this runs per record)."""
    if data.get("time").__class__ is int and "agentId" not in data:
        return True  # the commonest envelope
    time = data.get("time", _MISSING)
    if time is not _MISSING and time.__class__ is not int and time.__class__ is not float:
        return False
    agent = data.get("agentId", _MISSING)
    return agent is _MISSING or agent.__class__ is str


def _part_ok(p: Any) -> bool:
    if type(p) is not dict:
        return False
    kind = p.get("type")
    if kind == "text":
        return type(p.get("text")) is str
    if kind == "think":
        enc = p.get("encrypted", "")
        return type(p.get("think")) is str and (enc is None or type(enc) is str)
    key = _MEDIA.get(kind) if type(kind) is str else None
    if key is None:
        return False
    url = p.get(key)
    return type(url) is dict and type(url.get("url")) is str and _opt(url, "id", str)


def _parts_ok(parts: Any) -> bool:
    return type(parts) is list and all(_part_ok(p) for p in parts)


def _call_ok(c: Any) -> bool:
    if type(c) is not dict or type(c.get("id")) is not str:
        return False
    args = c.get("arguments")
    return _opt(c, "type", str) and _opt(c, "name", str) and (args is None or type(args) is str)


def _message_ok(m: Any) -> bool:
    if type(m) is not dict or not _one_of(m.get("role"), _ROLES) or not _parts_ok(m.get("content")):
        return False
    calls = m.get("toolCalls", _MISSING)
    if calls is not _MISSING and (type(calls) is not list or not all(_call_ok(c) for c in calls)):
        return False
    origin = m.get("origin", _MISSING)
    if origin is not _MISSING and (type(origin) is not dict or type(origin.get("kind")) is not str):
        return False
    return _opt(m, "toolCallId", str) and _opt(m, "isError", bool) and _opt(m, "partial", bool)


def _step_event_ok(e: dict[str, Any]) -> bool:
    turn = e.get("turnId", _MISSING)
    step = e.get("step", _MISSING)
    finish = e.get("finishReason", _MISSING)
    return (
        e.get("uuid").__class__ is str
        and (turn is _MISSING or turn.__class__ is str)
        and (step is _MISSING or step.__class__ is int)
        and (finish is _MISSING or finish.__class__ is str)
    )


def _part_event_ok(e: dict[str, Any]) -> bool:
    return e.get("stepUuid").__class__ is str and _part_ok(e.get("part"))


def _call_event_ok(e: dict[str, Any]) -> bool:
    return type(e.get("stepUuid")) is str and type(e.get("toolCallId")) is str and type(e.get("name")) is str


def _result_event_ok(e: dict[str, Any]) -> bool:
    result = e.get("result")
    if type(e.get("toolCallId")) is not str or type(result) is not dict:
        return False
    output = result.get("output")
    return (type(output) is str or _parts_ok(output)) and _opt(result, "isError", bool)


# Per loop-event kind: a fast "certainly valid" check of the event object (a dict). The replay's
# hot path calls these directly, together with `envelope_ok` for the record around the event.
EVENT_FAST: dict[str, Any] = {
    "step.begin": _step_event_ok,
    "step.end": _step_event_ok,
    "content.part": _part_event_ok,
    "tool.call": _call_event_ok,
    "tool.result": _result_event_ok,
}
envelope_ok = _envelope_ok
message_ok = _message_ok
part_ok = _part_ok
parts_ok = _parts_ok


def _event_ok(e: Any) -> bool:
    if type(e) is not dict:
        return False
    kind = e.get("type")
    check = EVENT_FAST.get(kind) if type(kind) is str else None
    return check is not None and check(e)


_NUMBERS = ("count", "keptUserMessageCount", "keptHeadUserMessageCount", "tokensBefore", "tokensAfter",
            "droppedCount", "summaryOutputTokens")


def _number_ok(value: Any) -> bool:
    """Absent, or a JSON number (a null is not absent: it fails the record)."""
    return value is _MISSING or value.__class__ is int or value.__class__ is float


def _compaction_ok(d: dict[str, Any]) -> bool:
    """String summaries with their `compactedCount` (other forms go to the schema)."""
    count = d.get("compactedCount")
    return (
        d.get("summary").__class__ is str
        and (count.__class__ is int or count.__class__ is float)
        and _opt(d, "contextSummary", str)
        and _opt(d, "legacyTail", bool)
        and all(_number_ok(d.get(key, _MISSING)) for key in _NUMBERS)
    )


def _undo_ok(d: dict[str, Any]) -> bool:
    count = d.get("count")
    return count.__class__ is int and 1 <= count <= 2**53 - 1


_FAST: dict[str, Any] = {
    "context.apply_compaction": _compaction_ok,
    "context.undo": _undo_ok,
    "context.append_message": lambda d: _message_ok(d.get("message")),
    "context.append_loop_event": lambda d: _event_ok(d.get("event")),
    "context.clear": lambda d: True,
    "swarm_mode.exit": lambda d: True,
}


def problems(rtype: str, data: dict[str, Any]) -> list[str]:
    """Human-readable schema violations of a record (empty when valid)."""
    if rtype not in HISTORY_TYPES and rtype != "metadata":
        return []
    out = []
    for err in _validator(rtype).iter_errors(data):
        where = "/".join(str(p) for p in err.absolute_path) or "record"
        out.append(f"{where}: {err.message[:160]}")
    return out
