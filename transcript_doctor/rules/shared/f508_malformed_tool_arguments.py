"""F508 malformed-tool-arguments: tool-call arguments that are not valid JSON. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ...text import excerpt
from ..registry import conversation_check, define
from .predicates import arguments_error
from .support import ConversationView, Hit

RULE = define(
    "F508",
    "malformed-tool-arguments",
    "warning",
    ("all",),
    "none",
    "Tool-call arguments that are not valid JSON",
    r"""
## What it detects
Tool-call arguments stored as a string that does not parse as JSON: a Hermes `tool_calls[].function.arguments`,
a kimi `toolCalls[].arguments`. Missing arguments (kimi stores `null` when the model sent none) are not
malformed.

## Why it breaks a session
Some servers parse the arguments of every replayed call; vLLM answers such a history with a 400 on each request.
Others pass it on, and the model sees a call it cannot make sense of.

## Example
```text
messages id=40  role='assistant'
tool_calls='[{"id": "call_3", "type": "function", "function": {"name": "write_file", "arguments": "{\"path\": \"a.txt\", \"text\": \"hi"}}]'
```
tdoc reports F508 on row 40 for `call_3`.

## Fix safety
None: the arguments the model meant cannot be reconstructed.

## Provider errors
None recorded verbatim; vLLM rejects such a request with a JSON parse error.
""",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    for msg in view.messages:
        if not msg.tool_calls:  # most messages: no `enumerate` object to build
            continue
        for index, call in enumerate(msg.tool_calls):
            error = arguments_error(call.arguments)
            if error:
                yield Hit(
                    msg,
                    f"arguments of tool call {call.id!r} ({call.name or 'unnamed'}) are not valid JSON",
                    {"tool_call_id": call.id, "call_index": index, "error": excerpt(error),
                     "arguments": excerpt(call.arguments or "")},
                )
