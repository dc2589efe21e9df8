"""Which kimi-code content parts carry nothing a provider can use (docs/kimi-replay.md §1).

Shared by the history folds (v2 drops a settled step whose parts are all vacuous) and by the
request projection (both engines drop vacuous messages since PR #1968).

Whitespace is the ECMAScript `trim()` set (`text.js_trim`), never `str.strip`. A think part is
*signed* as soon as its `encrypted` key exists, whatever the value (`null` and `""` included);
only a missing key makes it unsigned.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from transcript_doctor.text import JS_WHITESPACE, js_trim


def _blank(value: Any) -> bool:
    """A missing or non-string field counts as empty text; otherwise JS-trim it (a text that
    starts with a non-blank character is not blank: no copy of a long text)."""
    if value.__class__ is not str:
        return not isinstance(value, str)
    return not value or (value[0] in JS_WHITESPACE and js_trim(value) == "")


def is_blank_text(part: Any) -> bool:
    """A text part whose text is empty or whitespace only."""
    return isinstance(part, dict) and part.get("type") == "text" and _blank(part.get("text"))


def is_vacuous_part(part: Any) -> bool:
    """Blank text, or an unsigned think part with blank thinking. Media is never vacuous."""
    if not isinstance(part, dict):
        return False
    kind = part.get("type")
    if kind == "text":
        return _blank(part.get("text"))
    if kind == "think":
        return "encrypted" not in part and _blank(part.get("think"))
    return False


def is_vacuous_content(parts: Iterable[Any]) -> bool:
    """Every part is vacuous. An empty list is vacuous too (that is what the v2 fold needs;
    the projection tells "empty" and "all vacuous" apart itself). A loop, not `all()` over a
    generator: a third of the cost on the commonest content, whose first part says something."""
    for part in parts:
        if not is_vacuous_part(part):
            return False
    return True
