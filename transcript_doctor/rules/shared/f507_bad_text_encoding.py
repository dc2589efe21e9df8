"""F507 bad-text-encoding: text the provider's JSON parser rejects. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ...model import Message
from ...text import excerpt
from ..registry import conversation_check, define
from .predicates import bad_char_at, encoding_problem
from .support import ConversationView, Hit, describe, intent

RULE = define(
    "F507",
    "bad-text-encoding",
    "error",
    ("all",),
    "unsafe",
    "Text the provider's JSON parser rejects",
    r"""
## What it detects
Text bound for the provider that holds a lone UTF-16 surrogate (half of an emoji cut by a JavaScript string
slice, stored as an escape like `\ud83d`) or a NUL character (binary tool output). The NUL that opens Hermes'
`\x00json:` content encoding is part of the storage format, not a finding.

## Why it breaks a session
The request body is no longer valid JSON for the provider's parser, so every request that carries the text
fails before the model sees it.

## Example
```jsonl
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"caf\ud83d"}],"toolCalls":[],"origin":{"kind":"user"}},"time":330}
```
tdoc reports F507 on the line with an unsafe fix.

## Fix safety
Unsafe: the fix replaces each bad code unit with U+FFFD. That changes the stored text (tool output included) by
one character per replacement.

## Provider errors
- Anthropic: `The request body is not valid JSON: no low surrogate in string: line 1 column {C} (char {C-1})`
- Anthropic: `The request body is not valid JSON: unexpected end of data: line 1 column {N} (char {N-1})`
""",
    provider_errors=(
        "The request body is not valid JSON: no low surrogate in string: line 1 column {C} (char {C-1})",
        "The request body is not valid JSON: unexpected end of data: line 1 column {N} (char {N-1})",
    ),
    availability="sometimes",
)


def _texts(msg: Message) -> Iterator[tuple[str, str]]:
    for index, part in enumerate(msg.parts):
        yield f"parts[{index}]", part.text
    for index, call in enumerate(msg.tool_calls):
        if call.arguments:
            yield f"tool_calls[{index}].arguments", call.arguments
        if call.name:
            yield f"tool_calls[{index}].name", call.name


def _has_bad_char(msg: Message) -> bool:
    return any(bad_char_at(p.text) >= 0 for p in msg.parts) or any(
        bad_char_at(c.arguments or "") >= 0 or bad_char_at(c.name) >= 0 for c in msg.tool_calls
    )


def _escaped(text: str) -> str:
    return excerpt(text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00"))


def _any_bad_char(messages: list[Message]) -> bool:
    """Whether any message has a bad character: one search over all the texts joined (exact, as
    the class matches single code points; a joint cannot make or break one)."""
    texts = [p.text for m in messages for p in m.parts]
    for m in messages:
        for c in m.tool_calls:
            texts.append(c.name)
            if c.arguments:
                texts.append(c.arguments)
    return bad_char_at("".join(texts)) >= 0


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    if not _any_bad_char(view.messages):
        return
    for msg in view.messages:
        if not _has_bad_char(msg):
            continue
        for where, text in _texts(msg):
            problem = encoding_problem(text)
            if problem:
                kind, offset = problem
                label = "a NUL byte" if kind == "nul" else "a lone UTF-16 surrogate"
                yield Hit(
                    msg,
                    f"{describe(msg)} has {label} in {where} (offset {offset}); the request is not valid JSON",
                    {"field": where, "problem": kind, "offset": offset,
                     "text": _escaped(text[max(0, offset - 40) : offset + 40])},
                    edit=intent("scrub_text", msg),
                )
                break  # one finding per message
