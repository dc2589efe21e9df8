"""The reader-boundary rule: a value a reader hands on is one every later stage can use.

Later code re-serialises values (`orjson.dumps` in reporters and heals), hashes them (ids as
dict keys), converts them (`int()` of a turn id) and indexes them. So every reader parses JSON
through `loads` and checks the fields it passes on with `problem`/`is_id`: a value that fails is
reported by the reader as a record problem (F504) or a file error, never met as a crash later.
See docs/errors.md §"The reader boundary".

What is accepted:

* numbers: finite doubles, and integers in orjson's range (-2**63 .. 2**64-1). `JSON.parse`
  reads `1e400` as Infinity, which no JSON encoder writes back: refused. Integers beyond 64 bits
  become doubles, as orjson and `JSON.parse` read them.
* nesting: at most `MAX_DEPTH` (200) levels of arrays/objects; orjson writes no more than 254,
  and the difference leaves room for the documents tdoc builds around a record.
* text: any `str`, lone surrogates included (`JSON.parse` keeps them; the F507 rule reports
  them). Writers that need UTF-8 use `reporters.encode` or their own escaping.
* ids: a `str` or an in-range `int` (never bool, list, dict or float): hashable and printable.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

ORJSON_DEPTH = 254  # orjson.dumps refuses a 255th level of nesting
# What a reader accepts: the rest is headroom for what tdoc builds around a record (a finding's
# evidence, a replay document, a report), so that always stays within ORJSON_DEPTH.
MAX_DEPTH = 200
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
_MIN_DEEP_TEXT = 2 * (MAX_DEPTH + 1)  # the shortest JSON text nested MAX_DEPTH + 1 levels
LONG_TEXT = 1600  # from this length on, finding a text's braces one by one beats counting its characters
WALK_FIRST = 4096  # from this length on, walking a parsed value's containers beats counting the text's brackets


class ValueProblem(ValueError):
    """A JSON value a reader must not hand on; the message says why (no transcript text)."""


def _reject_constant(name: str) -> Any:
    raise ValueProblem(f"{name} is not JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueProblem("a number too large for a double (JSON.parse reads it as Infinity)")
    return value


def _parse_int(text: str) -> int | float:
    try:
        value = int(text)
    except ValueError:  # more digits than int() converts
        raise ValueProblem("an integer with too many digits") from None
    if INT_MIN <= value <= INT_MAX:
        return value
    return _parse_float(text)  # a double, as orjson and JSON.parse read it


DECODER = json.JSONDecoder(parse_float=_parse_float, parse_int=_parse_int, parse_constant=_reject_constant)


"""The stdlib decoder under the rule's number checks (for readers that walk a document with
`raw_decode`); the caller checks nesting with `problem` or `depth_exceeds`."""


def loads(raw: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON text as `JSON.parse` does, refusing what later stages cannot use.

    orjson first; the stdlib for what `JSON.parse` takes but orjson refuses (lone surrogates).
    Raises `ValueError`: `ValueProblem` for a value outside the rule, `json.JSONDecodeError`
    for text that is not JSON, `UnicodeDecodeError` for bytes that are not UTF-8.
    """
    if not isinstance(raw, (bytes, str)):
        raw = bytes(raw)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise ValueProblem(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        try:
            value = DECODER.decode(text)
        except RecursionError:
            raise ValueProblem(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        _check_depth(value)
        return value
    if len(raw) >= _MIN_DEEP_TEXT and may_be_deep(raw, value):  # `nested_too_deep`, written out: every row of a read
        _check_depth(value)
    return value


def nested_too_deep(raw: bytes | str, value: Any) -> bool:
    """Whether `value`, parsed from `raw`, nests beyond MAX_DEPTH: the text tests first (a short
    text or one with few brackets cannot), the walk only when they cannot rule it out."""
    return len(raw) >= _MIN_DEEP_TEXT and may_be_deep(raw, value) and depth_exceeds(value, MAX_DEPTH)


def may_be_deep(raw: bytes | str, value: Any = None) -> bool:
    """A cheap necessary condition for nesting beyond MAX_DEPTH: brackets enough in the text.

    It may say True for a shallow text (the exact `depth_exceeds` walk then says no), never
    False for one nested too deep. Cheaper tests first: counting a character is a plain loop
    over the text, while `in` and `find` of one character are a memchr. With no `[` (most
    records) the nesting is objects alone, each level but the innermost holding a key, so each
    takes at least five characters (`{"":` and its `}`); a long text is then searched for its
    few braces one at a time (docs/errors.md, "The reader boundary").

    `value`, the text as parsed (None: not given): a text of WALK_FIRST characters or more is
    first judged by the value's lists and objects, when it holds no more than MAX_DEPTH of them
    in all (`_few_containers`): such a value cannot nest deeper. That walk grows with the
    containers and the text tests with the characters, and a long record is mostly text in a
    few objects (a tool's output)."""
    limit = MAX_DEPTH
    if value is not None and len(raw) >= WALK_FIRST and _few_containers(value, limit):
        return False
    if isinstance(raw, str):
        if "[" in raw:
            return raw.count("[") + raw.count("{") > limit
        brace: bytes | str = "{"
    else:
        if 91 in raw:  # b"["
            return raw.count(b"[") + raw.count(b"{") > limit
        brace = b"{"
    size = len(raw)
    if size < 5 * limit:
        return False
    if size < LONG_TEXT:
        return raw.count(brace) > limit  # type: ignore[arg-type]
    at = -1
    for _ in range(limit + 1):
        at = raw.find(brace, at + 1)  # type: ignore[arg-type]
        if at < 0:
            return False
    return True


def _few_containers(value: Any, budget: int) -> bool:
    """Whether `value` holds at most `budget` lists, tuples and dicts in all (itself included):
    then none of them can sit deeper than `budget`. Stops at the first one over the budget."""
    stack = [value]
    pop, push = stack.pop, stack.append
    seen = 0
    while stack:
        item = pop()
        kind = item.__class__
        if kind is dict:
            children: Any = item.values()
        elif kind is list or kind is tuple:
            children = item
        elif isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        seen += 1
        if seen > budget:
            return False
        for child in children:
            kind = child.__class__
            if kind is dict or kind is list:
                push(child)
            elif kind is not str and kind is not int and kind is not float and kind is not bool and child is not None \
                    and isinstance(child, (dict, list, tuple)):  # (a subclass, or a tuple): what depth_exceeds walks
                push(child)
    return True


def _check_depth(value: Any) -> None:
    if depth_exceeds(value, MAX_DEPTH):
        raise ValueProblem(f"JSON nested deeper than {MAX_DEPTH} levels")


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists/dicts more than `limit` levels (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return False


def problem(value: Any) -> str | None:
    """Why `value` (parsed JSON or an SQLite cell) breaks the rule, or None when it does not.

    Checks every number (finite, 64-bit integers), the nesting depth and that dict keys are
    strings. Iterative, so a hostile value cannot exhaust the stack.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, (str, bool, bytes)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return "a number that is not finite"
        elif isinstance(item, int):
            if not INT_MIN <= item <= INT_MAX:
                return "an integer beyond 64 bits"
        elif isinstance(item, dict):
            if depth >= MAX_DEPTH:
                return f"JSON nested deeper than {MAX_DEPTH} levels"
            for key, child in item.items():
                if not isinstance(key, str):
                    return "an object key that is not a string"
                stack.append((child, depth + 1))
        elif isinstance(item, (list, tuple)):
            if depth >= MAX_DEPTH:
                return f"JSON nested deeper than {MAX_DEPTH} levels"
            stack.extend((child, depth + 1) for child in item)
    return None


def is_id(value: Any) -> bool:
    """A usable record id: a string or an integer in range (hashable, printable, comparable)."""
    kind = value.__class__
    return kind is str or (kind is int and INT_MIN <= value <= INT_MAX)


def text_or_none(value: Any) -> str | None:
    """`value` when it is a string, else None (for optional text fields a reader passes on)."""
    return value if value.__class__ is str else None


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a code point UTF-8 cannot encode (an unpaired surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def why_unparsable(raw: bytes) -> str:
    """What is wrong with a line (without its line end) that does not parse, in words a reader
    of the file can act on: where its UTF-8 breaks (a write cut inside a character ends in the
    middle of one), a byte-order mark, or the JSON error at a character of the line (not a "line 1"
    of its own)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return "starts with a UTF-8 byte-order mark, which JSON parsers reject (added by an editor?)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.end == len(raw) and err.reason == "unexpected end of data":
            return f"ends inside a multi-byte UTF-8 character (byte {err.start} of the line)"
        return f"not UTF-8 at byte {err.start} of the line"
    try:
        DECODER.decode(text)
    except json.JSONDecodeError as err:
        return f"invalid JSON at character {err.pos} of the line: {err.msg}"
    except (ValueError, RecursionError):
        pass
    return "invalid JSON"
