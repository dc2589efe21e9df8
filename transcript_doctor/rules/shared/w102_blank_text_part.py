"""W102 blank-text-part: a blank text part beside real content. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ...text import JS_WHITESPACE, excerpt, is_blank
from ..registry import conversation_check, define
from .predicates import is_vacuous, part_is_vacuous
from .support import ConversationView, Hit, describe, intent

RULE = define(
    "W102",
    "blank-text-part",
    "warning",
    ("all",),
    "safe",
    "Empty or whitespace-only text part beside real content",
    r"""
## What it detects
A text part that is empty or whitespace (ECMAScript `trim()` set, never Python's `str.strip()`) inside a
message that also holds something real: other text, an image, signed reasoning or a tool call. When every part
of an assistant message is blank, the message is W101 instead.

## Why it breaks a session
Anthropic and Bedrock refuse a request that contains an empty or whitespace-only text block, wherever it sits
in the history, and the stored block goes out again on every retry. kimi's projection strips blank parts
before sending (it reports `whitespace_text_dropped`), so in kimi logs the part only matters to other tools
that replay the file.

## Example
A Hermes `messages` row whose list content (NUL-prefixed JSON) starts with a one-space text part:
```text
id=27  role='assistant'  finish_reason='stop'
content='\x00json:[{"type": "text", "text": " "}, {"type": "text", "text": "The chart shows a decline."}]'
```
tdoc reports W102 on row 27 with a safe fix that drops the blank part and keeps the answer.

## Fix safety
Safe: the part holds nothing a model could read and the message keeps its other content.

## Provider errors
- Anthropic: `messages: text content blocks must be non-empty`
- Anthropic (and Bedrock-hosted Claude): `messages: text content blocks must contain non-whitespace text`
- Bedrock Converse: `The text field in the ContentBlock object at messages.{N}.content.{M} is blank. Add text to the text field, and try again.`
- Volcengine Ark: `MissingParameter: input.content.text`
""",
    provider_errors=(
        "messages: text content blocks must be non-empty",
        "messages: text content blocks must contain non-whitespace text",
        "The text field in the ContentBlock object at messages.{N}.content.{M} is blank. "
        "Add text to the text field, and try again.",
        "MissingParameter: input.content.text",
    ),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    empty_vacuous = view.conversation.empty_parts_vacuous
    for msg in view.messages:
        for p in msg.parts:
            # a blank text is empty or starts with whitespace: `is_blank` is asked only then
            if p.kind == "text" and (not (text := p.text) or text[0] in JS_WHITESPACE) and is_blank(text):
                break
        else:
            continue  # no blank text part
        if is_vacuous(msg, empty_parts_vacuous=empty_vacuous):
            continue  # the whole message is W101
        if not (msg.tool_calls or any(not part_is_vacuous(p) for p in msg.parts)):
            continue
        for index, part in enumerate(msg.parts):
            if part.kind == "text" and is_blank(part.text):
                yield Hit(
                    msg,
                    f"{describe(msg)} has a blank text part (index {index}) beside other content",
                    {"part_index": index, "text": excerpt(part.text)},
                    part=index,
                    edit=intent("drop_part", msg, index),
                )
