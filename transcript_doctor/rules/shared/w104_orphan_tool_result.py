"""W104 orphan-tool-result: a tool result that answers no earlier call. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .support import ConversationView, Hit

RULE = define(
    "W104",
    "orphan-tool-result",
    "error",
    ("all",),
    "safe",
    "Tool result with no matching call",
    r"""
## What it detects
A tool result whose call id matches no earlier tool call in the history. A result stored before its call
counts: kimi v2 drops it as an orphan, while v1 leaves it where it is.

## Why it breaks a session
Providers take a tool result only as the answer to a call just before it. A stray one (its call cut away by a
compaction, or a crashed writer) is rejected on every request.

## Example
A Hermes tool row answering a call id no assistant row ever issued:
```text
id=14  role='tool'  tool_call_id='call_zz'  tool_name='terminal'
       content='{"output": "3 passed", "exit_code": 0, "error": null}'
```
tdoc reports W104 on row 14 with a safe fix that removes the row (Hermes: `active=0`, as its rewind does).

## Fix safety
Safe: it answers nothing the model asked in this history, and kimi's projection drops such results anyway.

## Provider errors
- Anthropic: ``messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.``
- OpenAI Chat Completions: `messages with role 'tool' must be a response to a preceeding message with 'tool_calls'` (sic)
- OpenAI Responses: `No tool call found for function call output with call_id {call_id}.`
- Gemini: `Please ensure that function response turn comes immediately after a function call turn.`
- Local chat templates: `Message has tool role, but there was no previous assistant message with a tool call!`
""",
    provider_errors=(
        "messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
        "No tool call found for function call output with call_id {call_id}.",
        "Please ensure that function response turn comes immediately after a function call turn.",
        "Message has tool role, but there was no previous assistant message with a tool call!",
    ),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    """The `orphan-result` hits of the shared tool-exchange pass (`tool_exchange.py`)."""
    yield from view.tool_exchange.of("orphan-result")
