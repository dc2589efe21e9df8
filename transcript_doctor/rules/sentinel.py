"""S3xx, sentinels: runtime control text delivered to users or stored as if the model had said it."""

from .registry import define

define(
    "S301",
    "leaked-empty-sentinel",
    "error",
    ("hermes",),
    "unsafe",
    "Turn-ending answer that starts with the (empty) sentinel",
    r"""
## What it detects
A turn-ending assistant message whose visible text opens with Hermes' `(empty)` sentinel: after leading
whitespace, an opening parenthesis, optional whitespace and the word `empty` in any case, ending at a word
boundary (`(Empty again? Need tool call)` matches). Something must remain after think blocks are stripped.
Visible text leaves out reasoning parts (`thinking`, `reasoning`, `redacted_thinking`, `reasoning_content`), so a
thinking part reading `(empty) scratch note` is not a leak. Only a prefix counts: prose that mentions `(empty)`
later on is fine, and an empty string is the ordinary empty path, not a leak.

A turn ends at the last assistant row before the next real user prompt, or at the end of the session. User rows
that are runtime scaffolding (v30 `display_kind='hidden'`, `[System: …]` continuation prompts, the empty-response
nudge) continue the turn. Inactive rows (`active=0`) are ignored. When the `(empty)` row is followed by the
recovery nudge, the pair is reported once as S305 and S301 stays silent. Other stores are checked the same way
where their shape allows it.

## Why it breaks a session
The model sent its own shorthand instead of an answer, the runtime took it as the final reply, and the task
stopped. On resume the row is replayed verbatim and the model learns to start answers with `(empty)`; reports
describe sessions where every later completion came back with zero output tokens.

## Example
```text
messages id=4  session='20260810_120000_a1b2c3'  role='assistant'  finish_reason='stop'  active=1
content='(empty) again risk. Need progress + tool. Already can. Use execute.'
```
tdoc reports S301 on row 4 with an unsafe fix.

## Fix safety
Unsafe: the fix deactivates the row (`active=0`, `compacted=0`), exactly like Hermes' own rewind, so the history
stands where it was before the answer and the prompt can be retried. The user already received the text and the
model will no longer see that it answered, hence opt-in.

## Provider errors
None: the provider accepted the request; the damage is in the content.
""",
    availability="sometimes",
)

define(
    "S302",
    "mangled-delivery-marker",
    "error",
    ("eve",),
    "none",
    "Reply that is a corrupted empty-delivery marker",
    r"""
## What it detects
An eve reply that, as a whole, is a tag shaped like the `<eve-empty-delivery/>` marker without being exactly it
(or its escaped twin `&lt;eve-empty-delivery/&gt;`): a corrupted `eve…` name such as `<evedev-empty-delivery/>`,
the closing or paired form, other casing, `_` separators, whitespace inside the brackets, attributes,
HTML-escaped brackets, wrapping backticks or a code fence (with or without an info string), or a trailing `.` or
`!`. Not a marker: `<eve-empty/>`, `<eve-empty-deliveryx/>`, a marker-shaped tag wrapped around content, or a
sentence that quotes one.

The matcher runs in linear time on hostile input: its patterns cannot backtrack, and trailing punctuation is
stripped with a loop, not with the quadratic `/[.!\s]+$/` regex.

## Why it breaks a session
The model meant "nothing to report". eve builds that compare the reply exactly posted the garbled tag to the team
channel as a message.

## Example
A v27 stream commit:
```jsonl
{"at":"2026-08-20T03:00:03.615Z","facts":[{"type":"content.completed","data":{"partId":"part_de25","kind":"text","phase":"reply","value":"<EVEDEV-EMPTY-DELIVERY></EVEDEV-EMPTY-DELIVERY>"},"scope":{"turnId":"turn_1"}}]}
```
tdoc reports S302 on this line for `turn_1`.

## Fix safety
None: the stream is an append-only record and the message was already posted. The finding tells you which
delivery to retract; eve builds with the tolerant matcher (PR #2386) silence such replies instead.

## Provider errors
None: this is a delivery problem, not a rejection.
""",
)

define(
    "S303",
    "delivery-marker-in-prose",
    "warning",
    ("eve",),
    "none",
    "Empty-delivery marker inside a longer reply",
    r"""
## What it detects
The exact `<eve-empty-delivery/>` marker, or `&lt;eve-empty-delivery/&gt;`, somewhere inside a reply that also
holds other text.

## Why it breaks a session
It goes wrong either way. eve versions that look for the marker anywhere in the reply silenced a real answer;
versions that require the marker to be the whole reply posted the answer with the literal tag in it.

## Example
```jsonl
{"type":"message.completed","data":{"message":"Two tickets closed today. <eve-empty-delivery/>","finishReason":"stop","sequence":0,"stepIndex":1,"turnId":"turn_2"},"meta":{"id":"evt_01M0A","at":"2026-08-18T09:00:02.100Z"}}
```
tdoc reports S303 on this line.

## Fix safety
None: what was delivered depends on the eve version that ran, and the stream is not rewritten.

## Provider errors
None: this is a delivery problem, not a rejection.
""",
)

define(
    "S304",
    "scaffolding-leak",
    "warning",
    ("all",),
    "none",
    "Runtime scaffolding text in assistant content",
    r"""
## What it detects
Text that a runtime writes for itself, found in assistant content: Hermes `[System: …]` nudges and continuation
prompts, `[Tool loop warning: …]` and `[Tool loop hard stop: …]`, the `<untrusted_tool_result …>` wrapper,
interrupt scaffolding (`[This response was interrupted by a user correction.]` and its companions),
`<memory-context>` blocks and the recalled-memory note, background-review prompts (`Review the conversation above
and …`), a regurgitated compaction summary (`[CONTEXT COMPACTION — REFERENCE ONLY]`, `[CONTEXT SUMMARY]:`), and
library placeholders such as LiteLLM's `[System: Empty message content sanitised to satisfy protocol]`.

Not reported: rows already reported as S301 or S305, and a bare `[toolname]` as the content of an assistant row
that has tool calls (Hermes blanks it on replay).

## Why it breaks a session
The model treats its own earlier turns as examples. Scaffolding stored there is copied into new answers (the
interrupt marker has been seen replicating itself turn after turn) and is read back as instructions.

## Example
```text
messages id=21  role='assistant'  finish_reason='stop'
content='Deployed to staging.\n\n[Tool loop warning: repeated_exact_failure_warning; count=3; stop retrying]'
```
tdoc reports S304 on row 21, naming the `[Tool loop warning:` pattern.

## Fix safety
None: the scaffolding sits inside real answer text, and cutting it out automatically could remove part of the
answer. Edit or rewind the row by hand.

## Provider errors
None directly. OpenRouter's moderation has refused histories holding bracketed role-like text (`HTTP 403: Request
blocked: prompt injection patterns detected`), which stored scaffolding resembles.
""",
)

define(
    "S305",
    "persisted-recovery-nudge",
    "warning",
    ("hermes",),
    "safe",
    "Persisted empty-response recovery pair",
    r"""
## What it detects
Hermes' empty-response recovery pair stored as history: an assistant row `(empty)` followed by the user nudge
`You just executed tool calls but returned an empty response. Please process the tool results above and continue
with the task.` Older Hermes builds persisted it; current ones mark both rows as ephemeral and never write them.
The `(empty)` row of such a pair is reported here only, not also as S301 or S304.

## Why it breaks a session
The pair was meant for a single request. Replayed on every resume, it shows the model an example of answering
`(empty)` and makes it repeat the sentinel.

## Example
```text
messages id=8  role='assistant'  content='(empty)'
messages id=9  role='user'  content='You just executed tool calls but returned an empty response. Please process the tool results above and continue with the task.'
```
tdoc reports S305 for rows 8 and 9 with a safe fix.

## Fix safety
Safe: the fix deactivates both rows (`active=0`), leaving the history as current Hermes builds write it. Neither
row is something the user or the model said.

## Provider errors
None: the provider accepted the request; the damage is in the content.
""",
    availability="sometimes",
)

define(
    "S306",
    "retry-filler",
    "warning",
    ("eve",),
    "none",
    "Filler delivered after an unattended empty-response retry",
    r"""
## What it detects
In an unattended eve run, the reply delivered after an empty-response retry is filler: short (under 120
characters), with no data (no digits, lists, code or links), carrying nothing from the turn itself (no word of
its tool results or runtime deliveries, no assertion such as `no alerts` or `healthy`), and made of the agent's
talk about its own work: a past or present-perfect self-report (`I now have all the data I need.`, `Finished
gathering the results.`), an announcement (`Let me compile the report.`), a promise with or without a colon
(`Here is the report:`, `The summary will follow shortly.`) or a bare acknowledgement (`Got it.`). The
judgement is by word sets and the turn's evidence, not by listed phrasings; its precision and recall on the
labelled sets in `tests/data/eve-filler/` are in the README. A turn is unattended when no human input started it: no `message.received`
carrying a human message (a `data.kind: "task.result"` delivery is not human) and, in v27, no
`delivery.consumed` of one; trigger metadata on `turn.started`, such as a schedule, agrees where present. A v27
`model.started` with `retryReason: "empty-response"` marks the retry.

## Why it breaks a session
eve retried the empty reply once with a nudge, the retry produced narration, and eve posted it to the channel as
the report. Nobody was watching, and the real report never arrived.

## Example
```jsonl
{"at":"2026-08-20T02:00:02.935Z","facts":[{"type":"content.completed","data":{"partId":"part_a62f","kind":"text","phase":"reply","value":"Compiling the weekly numbers now:"},"scope":{"turnId":"turn_0"}}]}
```
tdoc reports S306 on this line in a scheduled session.

## Fix safety
None: the filler was already delivered. The marker matcher rightly does not treat filler as a marker; the
retry path must either return the report or stay silent.

## Provider errors
None: the provider answered; the answer was not a report.
""",
)

define(
    "S307",
    "provider-placeholder",
    "warning",
    ("opencode",),
    "unsafe",
    "Upstream empty-response placeholder stored as text",
    r"""
## What it detects
An OpenCode text part holding the placeholder some providers produce when the model returns no text: it starts
with `Empty response: {'` (a Python repr of the raw response) and contains `'stop_reason'`. Any store with
assistant text parts is checked the same way.

## Why it breaks a session
The placeholder is shown and stored as if the model had written it, hides an empty completion from checks that
only look for blank text, and is replayed to the model as its own words.

## Example
A `part` row's `data`:
```json
{"type":"text","text":"Empty response: {'id': 'msg_01x', 'content': [], 'stop_reason': 'end_turn', 'usage': {'output_tokens': 0}}"}
```
tdoc reports S307 on the part with an unsafe fix.

## Fix safety
Unsafe: the fix drops the part. The message may then be empty and fall under T401/T402, and the model no longer
sees the text it was shown as having said.

## Provider errors
None: the provider accepted the request; its empty answer was stored as text.
""",
)
