"""Hermes' think-block stripping (`strip_think_blocks`), rebuilt to run in linear time.

Hermes removes, case-insensitively and in this order: closed reasoning pairs; tool-call XML blocks;
Gemma-style `<function name=…>…</function>` blocks that start a line or follow `. ! ? :`; an
unterminated reasoning opener at the start of a line (to the end of the text); stray reasoning tags;
stray tool-call closers. Hermes does this with non-greedy regexes, which rescan the rest of the text
for every unclosed opener; here each closer is searched for at most once per tag name, so hostile
model text (thousands of `<think>` with no close) costs one pass.
"""

from __future__ import annotations

import re

from ...text import is_blank

REASONING_TAGS = ("think", "thinking", "reasoning", "thought", "reasoning_scratchpad")
TOOL_BLOCK_TAGS = ("tool_call", "tool_calls", "tool_result", "function_call", "function_calls")

_REASONING = "|".join(REASONING_TAGS)
_TOOL_BLOCK = "|".join(TOOL_BLOCK_TAGS)
_REASONING_OPEN_ATTR = re.compile(rf"<({_REASONING})(?=[\s>])[^>]{{0,2000}}>", re.IGNORECASE)
_REASONING_OPEN = re.compile(rf"<({_REASONING})>", re.IGNORECASE)
_TOOL_OPEN = re.compile(rf"<({_TOOL_BLOCK})(?=[\s>])[^>]{{0,2000}}>", re.IGNORECASE)
_FUNCTION_OPEN = re.compile(r"<function\s[^>]{0,2000}>", re.IGNORECASE)
_STRAY_REASONING = re.compile(rf"</?(?:{_REASONING})>\s*", re.IGNORECASE)
_STRAY_CLOSERS = re.compile(rf"</(?:{_TOOL_BLOCK}|function)>", re.IGNORECASE)
_INLINE_THINKING = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
# str.lower() can change a string's length (e.g. 'İ'); tags are ASCII, so lower ASCII only.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def _remove_pairs(text: str, opener: re.Pattern[str], closer_for: dict[str, str] | None = None) -> str:
    """Remove `<tag …>…</tag>` spans (shortest match), scanning left to right once."""
    lower = _lower(text)
    out: list[str] = []
    cursor = 0
    unclosed: set[str] = set()
    pos = 0
    while True:
        m = opener.search(text, pos)
        if m is None:
            break
        name = m.group(1).lower()
        if name in unclosed:
            pos = m.end()
            continue
        close = (closer_for or {}).get(name, f"</{name}>")
        end = lower.find(close, m.end())
        if end < 0:
            unclosed.add(name)  # no later opener of this name can find a closer either
            pos = m.end()
            continue
        out.append(text[cursor : m.start()])
        cursor = pos = end + len(close)
    out.append(text[cursor:])
    return "".join(out)


def _starts_line_or_sentence(text: str, index: int) -> bool:
    """Whether only spaces/tabs separate `index` from the text start, a newline, or `.!?:`."""
    j = index - 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    return j < 0 or text[j] in "\n.!?:"


def _remove_function_blocks(text: str) -> str:
    lower = _lower(text)
    out: list[str] = []
    cursor = pos = 0
    closer_missing = False
    while not closer_missing:
        m = _FUNCTION_OPEN.search(text, pos)
        if m is None:
            break
        pos = m.end()
        if "name=" not in _lower(m.group()) or not _starts_line_or_sentence(text, m.start()):
            continue
        end = lower.find("</function>", m.end())
        if end < 0:
            closer_missing = True
            break
        out.append(text[cursor : m.start()])
        cursor = pos = end + len("</function>")
    out.append(text[cursor:])
    return "".join(out)


def _cut_unterminated(text: str) -> str:
    """Drop from a reasoning opener that starts a line (and never closes) to the end."""
    for m in _REASONING_OPEN_ATTR.finditer(text):
        j = m.start() - 1
        while j >= 0 and text[j] in " \t":
            j -= 1
        if j < 0 or text[j] == "\n":
            return text[: m.start()]
    return text


def strip_think_blocks(content: str) -> str:
    if "<" not in content:
        return content  # every step removes tags
    text = _remove_pairs(content, _REASONING_OPEN)
    text = _remove_pairs(text, _TOOL_OPEN)
    text = _remove_function_blocks(text)
    text = _cut_unterminated(text)
    text = _STRAY_REASONING.sub("", text)
    return _STRAY_CLOSERS.sub("", text)


def has_content_after_think_block(content: str | None) -> bool:
    """Hermes' gate: False for empty content, else whether anything visible survives stripping."""
    if not content:
        return False
    return not is_blank(strip_think_blocks(content))  # js_trim(...) non-empty, without the copy


def has_inline_thinking(content: str | None) -> bool:
    return bool(content) and _INLINE_THINKING.search(content or "") is not None
