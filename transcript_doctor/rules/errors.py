"""E6xx, recorded errors: provider rejections already stored beside the history they point at."""

from .registry import define

define(
    "E601",
    "recorded-provider-rejection",
    "error",
    ("all",),
    "none",
    "Stored provider error that says the history is malformed",
    r"""
## What it detects
A stored error whose text matches one of tdoc's structural-rejection patterns: an eve `turn.failed` or
`step.failed` (v27: a failed `model.settled` or `turn.settled`), an OpenCode message whose `error` is an
`APIError`, a log line, or text passed to `tdoc explain --error`. Matching is on the lower-cased text. tdoc
reports the pattern, the provider and the rule it points to, and when the error names an index (`position N`,
`messages.N`, `input[N]`), the record at that index once the store's history is projected the way the runtime
sends it. Rate limits, 5xx errors, context overflow and body-size errors are not structural and not reported.

## Why it breaks a session
A structural rejection means the stored history itself is malformed, so every retry fails the same way. The
recorded error is direct evidence of a wedge; another rule usually names its cause.

## Example
An eve v26 stream from a chat with a person:
```jsonl
{"type":"turn.failed","data":{"turnId":"turn_5","code":"MODEL_CALL_FAILED","message":"400 Invalid request: the message at position 9 with role 'assistant' must not be empty"},"meta":{"id":"evt_01M0D36Q1J","at":"2026-08-19T13:26:08.690Z"}}
```
tdoc reports E601 with pattern `empty-message-at-position`, provider Moonshot, rule W101 and position 9.

## Fix safety
None: the error is a symptom. Heal the finding of the rule it points to (here W101) and the next request goes
through.

## Provider errors
None of its own: E601 recognises the errors listed under the W rules, and reports them instead of preventing
them.
""",
)
