"""W101 vacuous-assistant: an assistant message with nothing a provider accepts. The rule's documentation and its check."""

from __future__ import annotations

from collections.abc import Iterator

from ..registry import conversation_check, define
from .predicates import is_vacuous
from .support import ConversationView, Hit, describe, intent

RULE = define(
    "W101",
    "vacuous-assistant",
    "error",
    ("all",),
    "safe",
    "Assistant message with nothing a provider accepts",
    r"""
## What it detects
An assistant message with no tool calls (and, for kimi, no `tools` schema) whose parts are all vacuous: empty
or whitespace text, or unsigned think/reasoning with empty or whitespace text. Whitespace means the ECMAScript
`trim()` set (it strips U+FEFF and keeps U+0085, unlike Python's `str.strip()`).

Not vacuous: reasoning that is signed wherever the store keeps a signature (kimi: an `encrypted` key of any
value, `null` and `""` included; OpenCode: `metadata.<provider>.signature`; Anthropic blocks: `signature`),
reasoning with text, a Hermes row whose `api_content` or `reasoning_content` is non-empty, and an OpenCode
message made only of step markers (OpenCode's own replay skips it). For kimi the message exists in the v1 fold
and in any projection built before kimi-code PR #1968; the v2 fold drops the step when it settles.

## Why it breaks a session
It is sent as an assistant turn with no content, e.g. `{"role": "assistant", "reasoning_content": ""}`; the
provider answers 400, and as the message is stored, every later request gets the same 400.

## Example
A kimi step stopped by the content filter after streaming one empty think part (`wire.jsonl`):
```jsonl
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s1","turnId":"1","step":1},"time":102}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p1","turnId":"1","step":1,"stepUuid":"s1","part":{"type":"think","think":""}},"time":103}
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"s1","turnId":"1","step":1,"finishReason":"filtered"},"time":104}
```
tdoc reports W101 for these three lines (engine `v1`) with the request position the empty message takes, and
a safe fix that deletes them.

## Fix safety
Safe: nothing in the message can be sent, so no request a provider would accept changes. For kimi every record
of the step goes (a stray `content.part` makes v1 resume throw) and a legacy compaction count is lowered to match
(C201); an edit whose replay under either engine changes more than this message is skipped as not safely fixable.

## Provider errors
- Moonshot / Kimi: `Invalid request: the message at position {N} with role 'assistant' must not be empty`
- Anthropic: `messages.{N}: all messages must have non-empty content except for the optional final assistant message`
- Mistral: `Assistant message must have either content or tool_calls, but not none.`
- OpenAI Chat Completions: `Invalid value for 'content': expected a string, got null`
""",
    provider_errors=(
        "Invalid request: the message at position {N} with role 'assistant' must not be empty",
        "messages.{N}: all messages must have non-empty content except for the optional final assistant message",
        "Assistant message must have either content or tool_calls, but not none.",
        "Invalid value for 'content': expected a string, got null",
    ),
    availability="sometimes",
)


@conversation_check(RULE)
def check(view: ConversationView) -> Iterator[Hit]:
    empty_vacuous = view.conversation.empty_parts_vacuous
    for msg in view.messages:
        # role and calls: the cheap tests of `is_vacuous` first, without a call for most messages
        if msg.role == "assistant" and not msg.tool_calls and is_vacuous(msg, empty_parts_vacuous=empty_vacuous):
            kinds = [p.kind for p in msg.parts]
            detail = "has no content" if not kinds else "has only empty " + "/".join(sorted(set(kinds))) + " parts"
            yield Hit(
                msg,
                f"{describe(msg)} {detail} and no tool calls; the provider rejects it as empty",
                {"parts": kinds, "tool_calls": 0},
                edit=intent("remove_message", msg),
            )
