"""W106 duplicate-tool-result: a second result for one tool call. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .support import ConversationView, Hit

RULE = define(
    "W106",
    "duplicate-tool-result",
    "error",
    ("all",),
    "safe",
    "Second result for an already answered tool call",
    r"""
## What it detects
A tool result for a call that already has one. The later copy is reported, with one exception: when the
earlier result is an "interrupted" placeholder and the later one is the real output, the placeholder is the one
to go (a real result replaces a placeholder, never the reverse).

## Why it breaks a session
Each call takes exactly one result. kimi v1 sends the copy as is and APIs that count results refuse it; kimi v2
drops it as an orphan.

## Example
A Hermes session that stored the same tool answer twice:
```text
id=11  role='assistant'  content=''  tool_calls='[{"id": "call_b2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"setup.cfg\"}"}}]'
id=12  role='tool'  tool_call_id='call_b2'  content='[metadata]\nname = demo'
id=13  role='tool'  tool_call_id='call_b2'  content='[metadata]\nname = demo'
```
tdoc reports W106 on row 13 with a safe fix that removes it.

## Fix safety
Safe: the model keeps the one answer runtimes already keep (kimi's strict dedupe makes the same choice).

## Provider errors
- Mistral: `Not the same number of function calls and responses`
- Anthropic, when the copy lands in a later message: ``messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.``
""",
    provider_errors=(
        "Not the same number of function calls and responses",
        "messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    """The `second-result` hits of the shared tool-exchange pass (`tool_exchange.py`)."""
    yield from view.tool_exchange.of("second-result")
