"""Text helpers shared by every layer: JS whitespace, excerpts, terminal-safe escaping."""

from __future__ import annotations

import re
from functools import cache
from typing import TypeVar, cast

# ECMAScript String.prototype.trim() whitespace (WhiteSpace + LineTerminator), not str.strip()'s set.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
EXCERPT_CHARS = 200
T = TypeVar("T")

# C0/C1 controls (except tab/newline), DEL, and bidi/format characters that can reorder or hide text.
# Also the Arabic letter mark, line/paragraph separators (a log viewer may break lines there), BOM,
# and lone surrogates (a terminal cannot show them and UTF-8 cannot encode them).
_UNSAFE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
# The characters of `_UNSAFE` an ASCII text can hold.
_UNSAFE_ASCII = "[\x00-\x08\x0b-\x1f\x7f]"


@cache
def compiled(pattern: str) -> re.Pattern[str]:
    """`re.compile(pattern)`, on first use. A class with a range above U+00FF takes the regex
    compiler millions of instructions, which a small scan of ASCII text never needs to pay
    (start-up, issue 20): such patterns are compiled here, for the first text that needs them."""
    return re.compile(pattern)


def js_trim(s: str) -> str:
    return s.strip(JS_WHITESPACE)


def is_blank(s: str | None) -> bool:
    # A text that starts or ends with a non-blank character is not blank: no copy of a long text.
    return not s or (s[0] in JS_WHITESPACE and s[-1] in JS_WHITESPACE and not js_trim(s))


def excerpt(s: str, limit: int = EXCERPT_CHARS) -> str:
    """At most `limit` characters of `s`, marked with an ellipsis when cut."""
    return s if len(s) <= limit else s[: limit - 1] + "\u2026"


def terminal_safe(s: str) -> str:
    """Make model text inert for a terminal: escape control and bidi characters as \\uXXXX.

    Rich markup is not interpreted by callers (they print with markup disabled or via Text).
    """
    return compiled(_UNSAFE_ASCII if s.isascii() else _UNSAFE).sub(_escape, s)


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def json_safe(value: T) -> T:
    """`value` with every string a JSON encoder accepts: lone surrogates shown as U+FFFD.

    Store ids and text reach findings as read; a lone surrogate (half of a cut emoji) would make
    orjson refuse the whole report. Lists, dicts and bytes are converted recursively.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return cast(T, "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value))
    if isinstance(value, bytes):
        return cast(T, json_safe(value.decode("utf-8", "replace")))
    if isinstance(value, list):
        return cast(T, [json_safe(v) for v in value])
    if isinstance(value, dict):
        return cast(T, {k: json_safe(v) for k, v in value.items()})
    return value


def iso_seconds(value: object) -> float | None:
    """An ISO-8601 timestamp as runtimes record it (`2026-05-01T12:00:00.123Z`) in Unix seconds,
    or None for anything else (not text, not a date, no time zone: a local time names no instant).

    The same answer on every supported interpreter: `datetime.fromisoformat` reads a `Z` zone and
    a fraction of any length only from CPython 3.11 on (3.10 takes `+00:00` and 3 or 6 digits), and
    no version takes RFC 3339's lowercase `z`; so the zone and the fraction are put in the form
    every version reads first (a fraction beyond microseconds is cut there)."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    from datetime import datetime

    text = value[:-1] + "+00:00" if value[-1] in "Zz" else value
    fraction = _FRACTION.search(text)
    if fraction is not None and len(fraction.group(2)) != 6:
        text = f"{text[:fraction.start()]}.{fraction.group(2)[:6]:0<6}{text[fraction.end():]}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


_FRACTION = re.compile(r"(?<=:[0-9]{2})([.,])([0-9]+)")  # the seconds' fraction: one run of digits, no backtracking


def indefinite(word: object) -> str:
    """`word` with its indefinite article, as the message roles read: "an assistant", "a tool"."""
    text = str(word)
    head = text[:2].lower()
    vowel = head[:1] in ("a", "e", "i", "o") or head == "un"  # "a user": the u of "user" is a consonant
    return f"{'an' if vowel else 'a'} {text}"
