"""W105 duplicate-tool-call-id: a tool call id used twice. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .support import ConversationView, Hit

RULE = define(
    "W105",
    "duplicate-tool-call-id",
    "error",
    ("all",),
    "unsafe",
    "Two tool calls sharing one id",
    r"""
## What it detects
Two tool calls in the history with the same call id (a reused counter, a replayed step); the later is reported.

## Why it breaks a session
Anthropic requires tool call ids to be unique across the request. kimi's strict resend removes the later call,
but if that call was the only real content of its message, what remains is an empty assistant message: the
strict resend re-creates the W101 wedge it was meant to escape.

## Example
Two kimi steps both calling `c1`; the second step has nothing else but an empty think part:
```jsonl
{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"t1","turnId":"1","step":1,"stepUuid":"a","toolCallId":"c1","name":"Bash","args":{}},"time":103}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p2","turnId":"1","step":2,"stepUuid":"b","part":{"type":"think","think":""}},"time":107}
{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"t2","turnId":"1","step":2,"stepUuid":"b","toolCallId":"c1","name":"Bash","args":{}},"time":108}
```
tdoc reports W105 on the second `tool.call` line with an unsafe fix.

## Fix safety
Unsafe: the fix drops the later call together with its result, and drops the whole message (for kimi, every
record of the step) when that leaves it vacuous. Whatever the second call returned disappears from the history,
and later turns may have relied on it.

## Provider errors
- Anthropic: ``messages.{N}.content.{M}: `tool_use` ids must be unique``
""",
    provider_errors=("messages.{N}.content.{M}: `tool_use` ids must be unique",),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    """The `reused-call-id` hits of the shared tool-exchange pass (`tool_exchange.py`)."""
    yield from view.tool_exchange.of("reused-call-id")
