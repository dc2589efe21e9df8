"""W108 leading-non-user: a history that does not start with a user message. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ...text import indefinite
from ..registry import conversation_check, define
from .support import ConversationView, Hit, intent

RULE = define(
    "W108",
    "leading-non-user",
    "warning",
    ("all",),
    "unsafe",
    "History that does not open with a user message",
    r"""
## What it detects
A history whose first message after the system prompt is not from the user (a seeded greeting, or what a
compaction or trimmed window left at the front).

## Why it breaks a session
Anthropic and Gemini require the user to speak first. kimi drops leading non-user messages only in its strict
resend, after a 400; other runtimes send them every time.

## Example
```jsonl
{"type":"metadata","protocol_version":"1.4","created_at":1}
{"type":"context.append_message","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"toolCalls":[]},"time":2}
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"u1"}],"toolCalls":[],"origin":{"kind":"user"}},"time":3}
```
tdoc reports W108 on line 2 with an unsafe fix that deletes it.

## Fix safety
Unsafe: the fix deletes every message before the first user message, and the model loses whatever they said.

## Provider errors
- Anthropic: `messages: first message must use the "user" role`
- Gemini: `Please ensure that function call turn comes immediately after a user turn or after a function response turn.`
- Mistral: `Unexpected role 'tool' after role 'system'`
""",
    provider_errors=(
        'messages: first message must use the "user" role',
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        "Unexpected role 'tool' after role 'system'",
    ),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    first = next((m for m in view.messages if m.role not in ("system", "developer")), None)
    if first is None or first.role == "user":  # the common case, found without a walk of the history
        return
    body = [m for m in view.messages if m.role not in ("system", "developer")]
    before = next((k for k, m in enumerate(body) if m.role == "user"), len(body))
    yield Hit(
        body[0],
        f"the history starts with {indefinite(body[0].role)} message, not a user message",
        {"first_role": body[0].role, "messages_before_first_user": before},
        edit=intent("remove_leading", body[0]),
    )
