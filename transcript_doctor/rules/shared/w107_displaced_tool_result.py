"""W107 displaced-tool-result: a tool result separated from its call. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .support import ConversationView, Hit

RULE = define(
    "W107",
    "displaced-tool-result",
    "warning",
    ("all",),
    "unsafe",
    "Tool result separated from its call by another message",
    r"""
## What it detects
A tool result stored after a non-tool message (a prompt, an injected note) that came between it and its call.

## Why it breaks a session
Strict APIs want the result right after the call. kimi pulls it up on every request (`tool_result_reordered`);
Hermes and most other runtimes replay the stored order verbatim.

## Example
```text
id=30  role='assistant'  content=''  tool_calls='[{"id": "call_4", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"release notes\"}"}}]'
id=31  role='user'  content='Also check the changelog.'
id=32  role='tool'  tool_call_id='call_4'  content='5 results'
```
tdoc reports W107 on row 32 with an unsafe fix.

## Fix safety
Unsafe: the fix moves the result up to sit right after its call. That changes the order the model reads: the
message in between was written before the result existed, and after the move it appears to follow it.

## Provider errors
- Anthropic: ``messages.{N}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.``
- Bedrock-hosted Claude: `messages.{N}: Did not find 1 tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`
- OpenAI Chat Completions: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}`
""",
    provider_errors=(
        "messages.{N}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        "messages.{N}: Did not find 1 tool_result block(s) at the beginning of this message. "
        "Messages following tool_use blocks must begin with a matching number of tool_result blocks.",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    ),
    availability="never",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    """The `displaced-result` hits of the shared tool-exchange pass (`tool_exchange.py`)."""
    yield from view.tool_exchange.of("displaced-result")
