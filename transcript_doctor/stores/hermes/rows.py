"""Hermes `messages` rows as tdoc reads them: `Row`, and the decoding of a row's cells.

Cells arrive in MESSAGE_COLUMNS order (a database row, or an exported message's fields). Under the
reader-boundary rule every field is checked: text columns are text, numbers finite, nested values
within bounds, `\\x00json:` content decoded and `tool_calls` parsed as Hermes does (bad JSON ->
`[]`); each repair is recorded as a problem (F504). Rows whose cells need no repair take a plain
path, pinned to the checked one by tests/test_hermes_reader_fast.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import values
from ...fixes.sqlite import decode_text
from .content import decode_content

MESSAGE_COLUMNS = (
    "id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "effect_disposition",
    "timestamp", "token_count", "finish_reason", "reasoning", "reasoning_content", "reasoning_details",
    "codex_reasoning_items", "codex_message_items", "platform_message_id", "observed", "active", "compacted",
    "_compressed_summary", "api_content", "display_kind",
)


@dataclass(slots=True)
class Row:
    """One `messages` row (or one exported message), decoded the way Hermes reads it."""

    id: int | str | None
    session_id: str
    role: str
    content: Any = None  # decoded: str, list, dict or None
    content_raw: Any = None  # as stored
    api_content: Any = None  # decoded wire replacement (v30), None when unset
    tool_calls: list[Any] | None = None  # parsed; Hermes reads bad JSON as []
    tool_calls_raw: Any = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    reasoning_details: Any = None
    codex_reasoning_items: Any = None
    codex_message_items: Any = None
    active: bool = True
    compacted: bool = False
    compressed_summary: bool = False
    display_kind: str | None = None
    timestamp: float | None = None
    effect_disposition: str | None = None
    platform_message_id: str | None = None
    observed: Any = None
    token_count: Any = None
    problems: list[str] | tuple[()] = ()  # decoding problems (F504)
    line: int | None = None  # export line


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    try:
        return bool(int(value))
    except (TypeError, ValueError, OverflowError):  # OverflowError: an SQLite REAL infinity
        return default


def _parse_tool_calls(raw: Any, problems: list[str]) -> list[Any] | None:
    """Stored JSON text (database) or an already parsed list (export); Hermes reads junk as []."""
    if raw is None or raw == "":
        return None
    value = raw
    if isinstance(raw, (str, bytes)):
        try:
            value = values.loads(raw)
        except ValueError as exc:  # not JSON, or outside the reader-boundary rule
            problems.append(f"tool_calls is not valid JSON ({str(exc)[:120]}); Hermes reads it as []")
            return []
    elif values.problem(raw):  # an export's parsed list
        problems.append(f"tool_calls holds {values.problem(raw)}; read as []")
        return []
    if not isinstance(value, list):
        problems.append("tool_calls is not a JSON list; Hermes reads it as []")
        return []
    return [_checked_call(i, call, problems) for i, call in enumerate(value)]


_CALL_IDS = ("id", "call_id", "type")


def _checked_call(index: int, call: Any, problems: list[str]) -> Any:
    """A tool call whose ids are usable (text or integers; later code hashes them), else a copy
    with the bad ones set to None and a problem (F504) saying so."""
    if not isinstance(call, dict):
        return call
    bad = [k for k in _CALL_IDS if call.get(k) is not None and not values.is_id(call[k])]
    fn = call.get("function")
    bad_name = isinstance(fn, dict) and fn.get("name") is not None and not isinstance(fn["name"], str)
    if not bad and not bad_name:
        return call
    fixed = {**call, **{k: None for k in bad}}
    if bad_name and isinstance(fn, dict):  # (the test above, for the type checker)
        fixed["function"] = {**fn, "name": None}
        bad.append("function.name")
    problems.append(f"tool call {index} has {', '.join(bad)} of a type that is not text; read as null")
    return fixed


_TEXT_FIELDS = ("tool_call_id", "tool_name", "finish_reason", "reasoning", "reasoning_content", "display_kind",
                "effect_disposition", "platform_message_id")


def _all_text(*fields: Any) -> bool:
    return all(v is None or v.__class__ is str for v in fields)


def _all_plain(*fields: Any) -> bool:
    """No field that needs a closer look: every one is None, text or an integer (SQLite's usual)."""
    return all(v is None or v.__class__ is str or v.__class__ is int for v in fields)


def _nested_field(name: str, value: Any, problems: list[str]) -> Any:
    """A field that may hold parsed JSON (exports) or any SQLite value; None if it breaks the rule."""
    why = values.problem(value)
    if why is None:
        return value
    problems.append(f"{name} holds {why}")
    return None


def _text_field(name: str, value: Any, problems: list[str]) -> str | None:
    """A text column as text: bytes decoded, anything else (a number, an export's list) dropped."""
    if value is None or value.__class__ is str:
        return value
    if isinstance(value, bytes):
        return decode_text(value)
    problems.append(f"{name} is a {type(value).__name__}, not text")
    return None


def finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and values.problem(value) is None


def row_from_values(cells: tuple) -> Row:
    """A Row from the values of MESSAGE_COLUMNS, in that order."""
    signature = tuple(map(type, cells))
    plain = _PLAIN_SIGNATURES.get(signature)
    if plain is None:
        plain = _PLAIN_SIGNATURES[signature] = _is_plain_signature(signature)
    if plain:
        row = _plain_row(cells)
        if row is not None:
            return row
    return _checked_row(cells)


def rows_from_batch(batch: list[tuple]) -> list[Row]:
    """`row_from_values` of each cells tuple (a database row, all of MESSAGE_COLUMNS).

    The hot path of a scan: the cell types of `_PLAIN_COLUMN_TYPES` and the value checks of
    `_plain_row` are written out in one loop, and the Row is filled slot by slot (no `__init__`
    call per row); any other row goes through `row_from_values`. Pinned to it by
    tests/hermes/test_fast_paths.py."""
    out: list[Row] = []
    append = out.append
    new = Row.__new__
    int_min, int_max, plain_tool_calls, needs_repair = _INT_MIN, _INT_MAX, _plain_tool_calls, _NEEDS_REPAIR
    for cells in batch:
        (mid, session_id, role, content, tool_call_id, tool_calls_raw, tool_name, effect_disposition, timestamp,
         token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
         codex_message_items, platform_message_id, observed, active, compacted, compressed, api_raw,
         display_kind) = cells
        if not (
            (type(mid) is int and int_min <= mid <= int_max or type(mid) is str)
            and type(session_id) is str and type(role) is str
            and (content is None or type(content) is str and content[:1] != "\x00")
            and (tool_call_id is None or type(tool_call_id) is str)
            and (tool_calls_raw is None or type(tool_calls_raw) is str)
            and (tool_name is None or type(tool_name) is str)
            and (effect_disposition is None or type(effect_disposition) is str)
            and (timestamp is None or type(timestamp) is float and timestamp - timestamp == 0.0
                 or type(timestamp) is int and int_min <= timestamp <= int_max)
            and (token_count is None or type(token_count) is int or type(token_count) is str)
            and (finish_reason is None or type(finish_reason) is str)
            and (reasoning is None or type(reasoning) is str)
            and (reasoning_content is None or type(reasoning_content) is str)
            and (reasoning_details is None or type(reasoning_details) is str or type(reasoning_details) is int)
            and (codex_reasoning_items is None or type(codex_reasoning_items) is str
                 or type(codex_reasoning_items) is int)
            and (codex_message_items is None or type(codex_message_items) is str
                 or type(codex_message_items) is int)
            and (platform_message_id is None or type(platform_message_id) is str)
            and (observed is None or type(observed) is int or type(observed) is str)
            and (active is None or type(active) is int)
            and (compacted is None or type(compacted) is int)
            and (compressed is None or type(compressed) is int)
            and (api_raw is None or type(api_raw) is str and api_raw[:1] != "\x00")
            and (display_kind is None or type(display_kind) is str)
        ):
            append(row_from_values(cells))
            continue
        tool_calls = None
        if tool_calls_raw is not None:
            tool_calls = plain_tool_calls(tool_calls_raw)
            if tool_calls is needs_repair:
                append(_checked_row(cells))
                continue
        row = new(Row)
        row.id = mid
        row.session_id = session_id
        row.role = role
        row.content = content
        row.content_raw = content
        row.api_content = None if api_raw == "" else api_raw
        row.tool_calls = tool_calls
        row.tool_calls_raw = tool_calls_raw
        row.tool_call_id = tool_call_id
        row.tool_name = tool_name
        row.finish_reason = finish_reason
        row.reasoning = reasoning
        row.reasoning_content = reasoning_content
        row.reasoning_details = reasoning_details
        row.codex_reasoning_items = codex_reasoning_items
        row.codex_message_items = codex_message_items
        row.active = active is None or active != 0
        row.compacted = bool(compacted)
        row.compressed_summary = bool(compressed)
        row.display_kind = display_kind
        row.timestamp = timestamp
        row.effect_disposition = effect_disposition
        row.platform_message_id = platform_message_id
        row.observed = observed
        row.token_count = token_count
        row.problems = ()
        row.line = None
        append(row)
    return out


_NONE = type(None)
_TEXT = frozenset({_NONE, str})
_SCALAR = frozenset({_NONE, str, int})
_FLAG = frozenset({_NONE, int})
# What each column may hold for the plain path (per MESSAGE_COLUMNS position); anything else takes
# the checked path, which reports and repairs it.
_PLAIN_COLUMN_TYPES = (
    frozenset({int, str}), frozenset({str}), frozenset({str}), _TEXT, _TEXT, _TEXT, _TEXT, _TEXT,
    frozenset({_NONE, int, float}), _SCALAR, _TEXT, _TEXT, _TEXT, _SCALAR, _SCALAR, _SCALAR, _TEXT, _SCALAR,
    _FLAG, _FLAG, _FLAG, _TEXT, _TEXT,
)
_PLAIN_SIGNATURES: dict[tuple[type, ...], bool] = {}


def _is_plain_signature(signature: tuple[type, ...]) -> bool:
    return len(signature) == len(_PLAIN_COLUMN_TYPES) and all(
        kind in allowed for kind, allowed in zip(signature, _PLAIN_COLUMN_TYPES)
    )


def _plain_row(cells: tuple) -> Row | None:
    """The Row of cells whose types need no repair (the common case), or None when a value does
    (an id or time out of range, encoded content, bad tool calls): the checked path decides.
    Pinned to `_checked_row` by tests/test_hermes_reader_fast.py."""
    (mid, session_id, role, content, tool_call_id, tool_calls_raw, tool_name, effect_disposition, timestamp,
     token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
     codex_message_items, platform_message_id, observed, active, compacted, compressed, api_raw, display_kind) = cells
    if mid.__class__ is int and not _INT_MIN <= mid <= _INT_MAX:
        return None
    if timestamp is not None and not (timestamp.__class__ is float and timestamp - timestamp == 0.0
                                      or timestamp.__class__ is int and _INT_MIN <= timestamp <= _INT_MAX):
        return None
    if content is not None and content[:1] == "\x00" or api_raw is not None and api_raw[:1] == "\x00":
        return None
    tool_calls = None
    if tool_calls_raw is not None:
        tool_calls = _plain_tool_calls(tool_calls_raw)
        if tool_calls is _NEEDS_REPAIR:
            return None
    return Row(
        mid, session_id, role, content, content, None if api_raw == "" else api_raw, tool_calls, tool_calls_raw,
        tool_call_id, tool_name, finish_reason, reasoning, reasoning_content, reasoning_details,
        codex_reasoning_items, codex_message_items,
        active is None or active != 0, bool(compacted), bool(compressed),
        display_kind, timestamp, effect_disposition, platform_message_id, observed, token_count,
    )


_INT_MIN, _INT_MAX = values.INT_MIN, values.INT_MAX
_NEEDS_REPAIR: Any = object()


def _plain_tool_calls(raw: str) -> Any:
    """`_parse_tool_calls` of stored JSON text when it reports no problem, else `_NEEDS_REPAIR`.

    A call whose ids and function name are text or absent needs no check; any other goes through
    `_checked_call`, and one that reports a problem sends the row down the checked path."""
    if raw == "":
        return None
    try:
        value = values.loads(raw)
    except ValueError:
        return _NEEDS_REPAIR
    if not isinstance(value, list):
        return _NEEDS_REPAIR
    for call in value:
        if call.__class__ is dict:
            fn = call.get("function")
            if ((i := call.get("id")) is None or i.__class__ is str) and (
                    (c := call.get("call_id")) is None or c.__class__ is str) and (
                    (t := call.get("type")) is None or t.__class__ is str) and (
                    not isinstance(fn, dict) or (n := fn.get("name")) is None or n.__class__ is str):
                continue
        problems: list[str] = []
        _checked_call(0, call, problems)
        if problems:
            return _NEEDS_REPAIR
    return value


def _checked_row(cells: tuple) -> Row:
    """A Row from any values of MESSAGE_COLUMNS: every field checked, problems recorded (F504)."""
    (mid, session_id, role, content_raw, tool_call_id, tool_calls_raw, tool_name, effect_disposition, timestamp,
     token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items,
     codex_message_items, platform_message_id, observed, active, compacted, compressed, api_raw, display_kind) = cells
    problems: list[str] = []
    if not (mid is None or values.is_id(mid)):
        problems.append(f"id is a {type(mid).__name__}, not an integer or text")
        mid = None
    if not _all_text(tool_call_id, tool_name, finish_reason, reasoning, reasoning_content, display_kind,
                     effect_disposition, platform_message_id):
        (tool_call_id, tool_name, finish_reason, reasoning, reasoning_content, display_kind, effect_disposition,
         platform_message_id) = (_text_field(name, v, problems) for name, v in zip(_TEXT_FIELDS, (
            tool_call_id, tool_name, finish_reason, reasoning, reasoning_content, display_kind, effect_disposition,
            platform_message_id)))
    if timestamp is not None and not finite_number(timestamp):
        problems.append("timestamp is not a finite number")
        timestamp = None
    if not _all_plain(reasoning_details, codex_reasoning_items, codex_message_items, observed, token_count,
                      content_raw):
        reasoning_details = _nested_field("reasoning_details", reasoning_details, problems)
        codex_reasoning_items = _nested_field("codex_reasoning_items", codex_reasoning_items, problems)
        codex_message_items = _nested_field("codex_message_items", codex_message_items, problems)
        observed = _nested_field("observed", observed, problems)
        token_count = _nested_field("token_count", token_count, problems)
        content_raw = _nested_field("content", content_raw, problems)
    if isinstance(content_raw, bytes):
        problems.append("content is stored as a BLOB, not TEXT")
        content_raw = decode_text(content_raw)
    content = content_raw
    if isinstance(content_raw, str) and content_raw.startswith("\x00"):
        content, err = decode_content(content_raw)
        if err:
            problems.append(err)
    api_content = api_raw
    if isinstance(api_raw, str) and api_raw.startswith("\x00"):
        api_content, err = decode_content(api_raw)
        if err:
            problems.append(err.replace("content", "api_content", 1))
    tool_calls = None if tool_calls_raw is None else _parse_tool_calls(tool_calls_raw, problems)
    return Row(
        mid, session_id if isinstance(session_id, str) else str(session_id or ""),
        role if isinstance(role, str) else str(role),
        content, content_raw, None if api_content in (None, "") else api_content, tool_calls, tool_calls_raw,
        tool_call_id, tool_name, finish_reason, reasoning, reasoning_content, reasoning_details,
        codex_reasoning_items, codex_message_items,
        True if active is None else _flag(active, True),
        False if not compacted else _flag(compacted, False),
        False if not compressed else _flag(compressed, False),
        display_kind, timestamp, effect_disposition, platform_message_id, observed, token_count,
        problems or (),
    )


def row_from_mapping(d: dict[str, Any], *, line: int | None = None) -> Row:
    """A Row from an exported message (decoded content, parsed tool calls) or any column mapping."""
    row = row_from_values(tuple(d.get(c) for c in MESSAGE_COLUMNS))
    row.line = line
    return row
