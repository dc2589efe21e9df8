"""W1xx rules a store checks itself, outside the shared conversation model (see rules/shared/ for the rest)."""

from .registry import define

define(
    "W110",
    "interleaved-thinking",
    "error",
    ("claude-code",),
    "unsafe",
    "Assistant turn that mixes the blocks of different responses",
    r"""
## What it detects
The assistant turn a request builds holds blocks of more than one API response and at least one of them carries
a thinking block: consecutive assistant records with different `message.id`s between two user turns (the
provider merges them into one turn), or the blocks of one response split by another response's. The thinking
block is then no longer where the API returned it.

## Why it breaks a session
Thinking blocks of the latest assistant turn are checked against what the API produced; a turn whose thinking
moved is rejected on every request.

## Example
```jsonl
{"parentUuid":"u1","type":"assistant","uuid":"a1","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"thinking","thinking":"","signature":"c2ln"}]}}
{"parentUuid":"a1","type":"assistant","uuid":"a2","sessionId":"s","message":{"id":"msg_2","role":"assistant","content":[{"type":"thinking","thinking":"","signature":"c2ln"},{"type":"text","text":"Here it is."}]}}
```
tdoc reports W110 for lines 1-2 and an unsafe fix that removes the thinking-only response of line 1.

## Fix safety
Unsafe: the fix removes the intruding response. When it is vacuous (whitespace text only) W101's safe fix
removes it too, and the heal restores the turn the API returned; when it is thinking-only (an interrupted
response) its thinking is lost. When both responses carry text or tool calls there is no automatic fix.

## Provider errors
- Anthropic: `messages.{N}.content.{M}: thinking or redacted_thinking blocks in the latest assistant message cannot be modified`
""",
    provider_errors=(
        "messages.{N}.content.{M}: thinking or redacted_thinking blocks in the latest assistant message cannot be modified",
    ),
    availability="sometimes",
)
