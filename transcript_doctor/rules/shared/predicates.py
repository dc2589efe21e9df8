"""Predicates over the shared message model that several rules (and stores) ask."""

from __future__ import annotations

import orjson

from ...model import Message, Part
from ...text import compiled, is_blank

# A character class: linear, cannot backtrack on model output. An ASCII text can hold a NUL, never
# a surrogate, so the class is compiled only for the first text that is not ASCII.
_BAD_CHAR = "[\x00\ud800-\udfff]"
# Words of the tool result a runtime writes when a call was cut off.
_PLACEHOLDER_WORDS = ("interrupted", "outcome unknown", "no result provided", "was cancelled", "aborted")


def part_is_vacuous(part: Part) -> bool:
    """Blank text, or unsigned reasoning with blank text. Media and other parts carry content."""
    if part.kind == "text":
        return is_blank(part.text)
    if part.kind == "reasoning":
        return not part.signed and is_blank(part.text)
    return False


def is_vacuous(msg: Message, *, empty_parts_vacuous: bool = True) -> bool:
    """An assistant message the provider rejects as empty (W101's test).

    `msg.extra["not_vacuous"]` lets a store veto the verdict (e.g. content kept out of the parts).
    """
    if msg.role != "assistant" or msg.tool_calls or msg.extra.get("not_vacuous"):
        return False
    if not msg.parts:
        return empty_parts_vacuous
    for part in msg.parts:  # (a loop, not `all()` over a generator: this runs for every assistant message)
        if not part_is_vacuous(part):
            return False
    return True


def is_placeholder_result(msg: Message) -> bool:
    """A synthetic 'interrupted / outcome unknown' tool result (stores may flag it in `extra`)."""
    if "placeholder" in msg.extra:
        return bool(msg.extra["placeholder"])
    if not msg.is_error:
        return False
    text = msg.visible_text.lower()
    return len(text) <= 300 and any(w in text for w in _PLACEHOLDER_WORDS)


def bad_char_at(text: str) -> int:
    """The index of the first character of `text` a JSON parser rejects (a NUL or a lone
    surrogate); -1 when there is none."""
    if text.isascii():
        return text.find("\x00")
    found = compiled(_BAD_CHAR).search(text)
    return -1 if found is None else found.start()


def encoding_problem(text: str) -> tuple[str, int] | None:
    """('nul' | 'lone-surrogate', index) for the first character a JSON parser rejects."""
    at = bad_char_at(text)
    if at < 0:
        return None
    return ("nul" if text[at] == "\x00" else "lone-surrogate", at)


def arguments_error(arguments: str | None) -> str | None:
    """Why tool-call arguments are not valid JSON; None when they parse (or are absent/blank)."""
    if arguments is None or is_blank(arguments):
        return None
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    except TypeError:
        return "not a string"
    return None
