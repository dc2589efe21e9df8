"""W103 orphan-tool-call: a tool call with no result right after it. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .support import ConversationView, Hit

RULE = define(
    "W103",
    "orphan-tool-call",
    "error",
    ("all",),
    "unsafe",
    "Tool call with no result",
    r"""
## What it detects
A tool call whose result never arrives before the next non-tool message or the end of the history. It is a
warning where the runtime closes such calls itself on resume (kimi adds "interrupted" results). A turn-ending
assistant message with text and an unanswered call is both W103 and T403.

## Why it breaks a session
Tool-using APIs pair each call with a result in the next message. A call left open (agent killed mid-tool,
result never written) makes every later request fail with a pairing error.

## Example
A Hermes session where the user spoke again before the tool call was answered:
```text
id=18  role='assistant'  content=''  finish_reason='tool_calls'
       tool_calls='[{"id": "call_7", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"make test\"}"}}]'
id=19  role='user'  content='Any news?'
```
tdoc reports W103 on row 18 for `call_7`, with the request position of the assistant message.

## Fix safety
Unsafe: the fix adds an error result right after the call saying it was interrupted and its outcome is
unknown. The model sees a result it never received, and the tool may in fact have run (a file written, a
command executed), so the added text never claims success. Use `--unsafe-fixes` to apply it.

## Provider errors
- Anthropic: ``messages.{N}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.``
- OpenAI Chat Completions: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}`
- Moonshot / Kimi: `an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}`
- DeepSeek: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)`
- OpenAI Responses: `No tool output found for function call {call_id}.`
- Bedrock-hosted Claude: `messages.{N}: Did not find 1 tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`
- Mistral: `Not the same number of function calls and responses`
""",
    provider_errors=(
        "messages.{N}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
        "an assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. (insufficient tool messages following tool_calls message)",
        "No tool output found for function call {call_id}.",
        "messages.{N}: Did not find 1 tool_result block(s) at the beginning of this message. "
        "Messages following tool_use blocks must begin with a matching number of tool_result blocks.",
        "Not the same number of function calls and responses",
    ),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    """The `unanswered-call` hits of the shared tool-exchange pass (`tool_exchange.py`)."""
    yield from view.tool_exchange.of("unanswered-call")
