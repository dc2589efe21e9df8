"""W109 consecutive-assistants: two assistant messages in a row. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .support import ConversationView, Hit, describe

RULE = define(
    "W109",
    "consecutive-assistants",
    "info",
    ("all",),
    "unsafe",
    "Two assistant messages in a row",
    r"""
## What it detects
Two assistant messages next to each other with no tool result between them, for example a reply cut by an
output limit and continued in a second step.

## Why it breaks a session
Most current APIs accept it, hence `info`; endpoints enforcing strict alternation (Bedrock Converse, older
Anthropic versions) reject it. kimi merges such pairs only in its strict resend.

## Example
```jsonl
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p1","turnId":"1","step":1,"stepUuid":"a","part":{"type":"text","text":"First half"}},"time":103}
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"a","turnId":"1","step":1,"finishReason":"max_tokens"},"time":104}
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"b","turnId":"1","step":2},"time":105}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p2","turnId":"1","step":2,"stepUuid":"b","part":{"type":"text","text":"second half"}},"time":106}
```
tdoc reports W109 for step `b`.

## Fix safety
Unsafe: the fix merges the two (content and calls concatenated); the model sees one turn where it made two.

## Provider errors
- Anthropic: `messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row`
- Bedrock Converse: `A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.`
""",
    provider_errors=(
        'messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row',
        "A conversation must alternate between user and assistant roles. "
        "Make sure the conversation alternates between user and assistant roles and try again.",
    ),
    availability="never",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    messages = view.messages
    for prev, msg in zip(messages, messages[1:]):
        if prev.role == "assistant" and msg.role == "assistant":
            yield Hit(msg, f"{describe(msg)} directly follows another assistant message",
                      {"previous_position": prev.position})
