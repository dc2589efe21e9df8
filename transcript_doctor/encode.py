"""Writing what readers accepted: JSON and text that never fail on a value a reader let through.

Readers keep what `JSON.parse` keeps (lone surrogates, integers past 64 bits read from SQLite
arithmetic, file names that are not UTF-8), so every output goes through here:

* `dumps`: orjson when it can; otherwise the stdlib with every non-ASCII character escaped, so
  a lone surrogate becomes `\\udcff` (valid JSON that decodes back to the same string), an
  integer of any size is written as its digits, and a non-finite float is `null` (as orjson
  writes it). Nesting deeper than orjson writes is cut at `CUT_DEPTH` with a marker string.
* `printable`: text for a terminal or a workflow command, lone surrogates escaped.

See docs/errors.md §"Writing what was read".
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from .text import compiled

CUT_DEPTH = 240
CUT_MARKER = "[nested too deeply to print]"
_SURROGATE = "[\ud800-\udfff]"  # compiled for the first text that is not ASCII (`text.compiled`)


def dumps(value: Any, *, indent: bool = False) -> str:
    """`value` as JSON text that encodes to UTF-8, whatever a reader let through."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        return orjson.dumps(value, option=option).decode()
    except (orjson.JSONEncodeError, TypeError):
        pass
    return json.dumps(_plain(value), ensure_ascii=True, indent=2 if indent else None,
                      separators=None if indent else (",", ":"))


def _plain(value: Any, depth: int = 0) -> Any:
    """A copy the stdlib encoder writes: finite numbers, string keys, bounded depth."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= CUT_DEPTH and isinstance(value, (dict, list, tuple)):
        return CUT_MARKER
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if hasattr(value, "as_dict"):
        return _plain(value.as_dict(), depth)
    return str(value)


def printable(text: str) -> str:
    """`text` with every lone surrogate written as `\\uXXXX`, so it encodes to UTF-8."""
    if text.isascii():
        return text
    surrogate = compiled(_SURROGATE)
    if surrogate.search(text) is None:
        return text
    return surrogate.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"
