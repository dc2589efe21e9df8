"""`JSON.stringify` as JavaScript does it: compact, key order kept, JS number formatting."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from ....text import compiled

_encode_str = json.JSONEncoder(ensure_ascii=False).encode
# A str holds surrogates only when unpaired; an ASCII one holds none (compiled for the first that is not).
_LONE_SURROGATE = "[\ud800-\udfff]"


def _js_string(text: str) -> str:
    """A JSON string literal as JSON.stringify writes it (lone surrogates escaped, lowercase)."""
    out = _encode_str(text)
    if out.isascii():
        return out
    lone = compiled(_LONE_SURROGATE)
    if lone.search(out) is None:
        return out
    return lone.sub(_escape, out)


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def js_number(value: float) -> str:
    """Number.prototype.toString for doubles (JSON.stringify writes NaN/Infinity as null)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    text = repr(value)  # the shortest round-trip digits, as JS uses
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    exp = int(exponent)
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    if 0 <= exp < 21:
        whole = exp + 1
        if len(digits) <= whole:
            return sign + digits + "0" * (whole - len(digits))
        return f"{sign}{digits[:whole]}.{digits[whole:]}"
    if -7 < exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    return f"{mantissa}e{'+' if exp > 0 else '-'}{abs(exp)}"


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 4294967295


def js_key_order(obj: dict[str, Any]) -> list[str]:
    """JS property order: array-index keys ascending first, then the others as inserted."""
    keys = [str(k) for k in obj]
    indices = sorted((k for k in keys if _is_array_index(k)), key=int)
    if not indices:
        return keys
    return indices + [k for k in keys if not _is_array_index(k)]


_PLAIN_TYPES = frozenset((str, int, bool, type(None)))


def js_stringify(value: Any) -> str:
    """Fast path: a flat object whose JS serialisation is orjson's - no float values (JS writes
    1.0 as 1), no key that could be an array index (JS orders those first: here no key may even
    start below ':'), no integer past 53 bits (orjson refuses those, JS would round them).
    orjson escapes strings exactly as JSON.stringify does (tests compare code points)."""
    if value.__class__ is dict:
        try:
            if not value or (min(value) >= ":" and _PLAIN_TYPES.issuperset(map(type, value.values()))):
                return orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER).decode()
        except (TypeError, orjson.JSONEncodeError):  # a non-string key; a lone surrogate; a big int
            pass
    return _stringify(value)


def _stringify(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        # JSON.parse reads every number as a double: big integers lose digits.
        return str(value) if abs(value) <= 2**53 else js_number(float(value))
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_js_string(k)}:{_stringify(value[k])}" for k in js_key_order(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_stringify(v) for v in value) + "]"
    return "null"
