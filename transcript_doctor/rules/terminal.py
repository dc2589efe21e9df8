"""T4xx, terminality: runs recorded as finished whose last reply is empty or not an answer."""

from .registry import define

define(
    "T401",
    "empty-completion",
    "error",
    ("opencode",),
    "none",
    "Empty completion recorded as success, safe to retry",
    r"""
## What it detects
The final assistant message of a run is complete (`time.completed` set) yet empty, and there is no sign that any
work happened:
- no visible text (non-synthetic, non-ignored text parts, S307 placeholders left out; blank means the ECMAScript
  `trim()` set);
- input, output, reasoning, cache-read and cache-write tokens and the cost are all known zeros;
- the finish reason, trimmed and lower-cased, is missing, empty, `unknown`, `invalid`, `none` or `null`;
- no tool or reasoning activity in any assistant message of the run.

An empty message followed by a real answer in the same run is not reported. A message with `error` set is never
T401 or T402: it was not recorded as a success (see T403 and E601). Other stores are checked where their shape
holds the same facts.

## Why it breaks a session
The run is reported as completed, so the user is told the job is done and receives nothing.

## Example
A `message` row's `data` (its only part is a `step-finish` with reason `unknown` and zero tokens):
```json
{"role":"assistant","time":{"created":1786363201000,"completed":1786363203500},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"unknown"}
```
tdoc reports T401 with `retry_safe: true` in the evidence.

## Fix safety
None: nothing stored is wrong, something is missing. Since no tokens were spent and no tool ran, sending the
user's prompt again once is safe, which is what `retry_safe: true` says.

## Provider errors
None: the provider returned an empty answer rather than an error.
""",
)

define(
    "T402",
    "empty-completion-with-work",
    "error",
    ("opencode",),
    "none",
    "Empty completion recorded as success after work was done",
    r"""
## What it detects
The same empty, complete final message as T401, but with evidence that work happened: non-zero or unknown token
counts or cost, a tool or reasoning part anywhere in the run, or a known finish reason such as `stop`. Unknown
values count as evidence, so the check fails closed. A message with `error` set is never T402 (see T403).

## Why it breaks a session
The run is recorded as a success with no answer, but tools may have changed files or sent messages, and tokens
were paid for. Replaying it blindly could repeat those effects.

## Example
```json
{"role":"assistant","time":{"created":1786363201000,"completed":1786363209000},"cost":0.0121,"tokens":{"input":1840,"output":0,"reasoning":212,"cache":{"read":0,"write":0}},"finish":"stop"}
```
tdoc reports T402 with `retry_safe: false` in the evidence.

## Fix safety
None: there is nothing stored to repair, and no automatic retry either; a person must check what the
run did before asking again.

## Provider errors
None: the provider returned an empty answer rather than an error.
""",
)

define(
    "T403",
    "non-terminal-final",
    "warning",
    ("opencode", "kimi", "hermes", "eve"),
    "none",
    "Final reply that is not a terminal answer",
    r"""
## What it detects
The last assistant reply of a run has text but is not a finished answer: its finish reason is outside the
allowlist `stop` / `end_turn` (for example `length`, `tool-calls`, `content-filter`, `unknown` or missing), it
carries an error, it has tool activity, or a later assistant message supersedes it.

In Hermes a turn ends at the last assistant row before the next real user prompt; hidden rows and continuation
prompts (`[System: …]`) do not end it, so an answer cut by `length` and then continued is not the final answer.
An OpenCode message with `error` set is T403 (and E601 when the error is a structural rejection), never
T401/T402. A final message with text and an unanswered tool call is both T403 and W103.

## Why it breaks a session
Runners and bots deliver the text as the result of the run, although the model was cut off, filtered, or still
waiting for a tool.

## Example
An OpenCode `message` row's `data` for the last reply of a run:
```json
{"role":"assistant","time":{"created":1786363301000,"completed":1786363360000},"cost":0.09,"tokens":{"input":9000,"output":4096,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"length"}
```
tdoc reports T403 naming the finish reason `length`.

## Fix safety
None: the answer is incomplete, and only running the model again can complete it.

## Provider errors
None: nothing was rejected; the run stopped early.
""",
)

define(
    "T404",
    "dangling-tool-state",
    "warning",
    ("opencode", "kimi"),
    "none",
    "Tool call left pending or running in a finished message",
    r"""
## What it detects
A tool call still `pending` or `running` (or, in kimi, with no result) inside a message that is complete or
errored: the agent crashed or was stopped while the tool ran.

## Why it breaks a session
The stored state claims the tool is still working, so interfaces show it spinning forever and cannot say
whether it ran. The runtime replays it to the model as interrupted (OpenCode as `[Tool execution was
interrupted]`, kimi with an interrupted result), so the request itself stays valid.

## Example
An OpenCode `part` row's `data` in a message whose `time.completed` is set:
```json
{"type":"tool","callID":"call_1","tool":"bash","state":{"status":"running","input":{"command":"ls"},"time":{"start":1786363202000}}}
```
tdoc reports T404 on the part.

## Fix safety
None: the runtime already closes the call as interrupted on replay, and tdoc cannot know what the tool did.

## Provider errors
None: the runtime closes the call before sending, so no pairing error follows.
""",
)

define(
    "T405",
    "think-only-final",
    "warning",
    ("claude-code", "hermes", "kimi", "opencode"),
    "none",
    "Turn-ending message that holds only reasoning",
    r"""
## What it detects
A turn-ending assistant message whose only content is reasoning: inline `<think>…</think>` blocks (or their
`thinking`, `reasoning`, `thought`, `REASONING_SCRATCHPAD` siblings) with nothing after them, or think/reasoning
parts and no text. Hermes turn boundaries follow the rules of S301. A visible `(empty)` is S301, not T405. In a
Claude Code transcript: a turn that ends on a message holding only a (signed) thinking block, as an interrupt
while the thinking streamed leaves it.

## Why it breaks a session
The model thought and never answered; the runtime stored the thought as the final reply and the user got
nothing readable. Replayed later, a final block that is reasoning can also be refused outright.

## Example
```text
messages id=24  session='20260813_100000_d0d0d0'  role='assistant'  finish_reason='stop'
content='<think>weighing</think>'
```
tdoc reports T405 on row 24.

## Fix safety
None: the reasoning might hold the answer, but promoting it to visible text is a judgement call; run the turn
again.

## Provider errors
- Anthropic: ``messages.{N}: The final block in an assistant message cannot be `thinking`.``
""",
    provider_errors=("messages.{N}: The final block in an assistant message cannot be `thinking`.",),
)
