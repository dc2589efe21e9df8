"""Rules first seen in Claude Code transcripts: F509, C206, W110 (see docs/claude-code.md)."""

from .registry import define

define(
    "F509",
    "concatenated-records",
    "error",
    ("jsonl",),
    "safe",
    "Two or more records written on one line",
    r"""
## What it detects
A line of a JSONL store that holds two or more complete JSON objects back to back, with no newline between
them: two writers raced on the same file. tdoc decodes the line value by value and reports how many records it
holds, which of them are written again on another line (a twin), and how much of the session the resume loses
because of it (records whose parent is on the line cannot be reached).

## Why it breaks a session
Claude Code parses its transcript line by line: a line that is not one JSON value is skipped, so every record on
it is lost on resume, and the chain breaks at the first record that names one of them as its parent. A peer
tool that drops the line makes the loss permanent.

## Example
```jsonl
{"parentUuid":"u1","type":"assistant","uuid":"a1","sessionId":"s","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Done."}]}}{"parentUuid":"a1","type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"next"}}
```
tdoc reports F509 for line 1 (2 records) and a safe fix that writes the two records on two lines.

## Fix safety
Safe: the split writes the exact text of each record on its own line, nothing is re-encoded, and a record whose
`uuid` another line already holds is written once only, so every record of the original is present exactly once.

## Provider errors
None: the records are lost before any request is built.
""",
)

define(
    "C206",
    "broken-parent-chain",
    "error",
    ("claude-code",),
    "safe",
    "Parent link that names no record in the session",
    r"""
## What it detects
A record whose `parentUuid` names no record of the session file, so a resume walking back from the newest leaf
stops there and cannot reach the records above the break. The evidence gives the records the resume reaches and
the total (`reachable`/`total`) and whether the break is on the resumed chain. A dangling parent on the first
record of a file is where a copy of the session starts, not a break, and is not reported; a parent that is on a
concatenated line (F509) is reported as F509.

## Why it breaks a session
The resumed conversation silently starts at the break: everything above it is gone from the model's context,
and what remains may begin with a tool result whose call is above the break (W104) or an assistant message.

## Example
```jsonl
{"parentUuid":null,"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}
{"parentUuid":"u1","type":"assistant","uuid":"a1","sessionId":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}]}}
{"parentUuid":"gone","type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"and now?"}}
```
tdoc reports C206 for line 3 (reachable 1 of 3 records) and a safe fix that re-links it to the record of line 2.

## Fix safety
Safe: the record is re-linked to the nearest earlier record of the file (never one of its own descendants), which
restores the history the session had before the link was lost; no record is removed.

## Provider errors
None: the request is valid, it only lacks the history above the break.
""",
)

define(
    "W110",
    "interleaved-thinking",
    "error",
    ("claude-code",),
    "safe",
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
Safe when the intruding response is vacuous (whitespace text only): removing it restores the turn the API
returned. Unsafe when it is thinking-only (an interrupted response): the fix removes that thinking. When both
responses carry text or tool calls tdoc reports the finding with no automatic fix.

## Provider errors
- Anthropic: `messages.{N}.content.{M}: thinking or redacted_thinking blocks in the latest assistant message cannot be modified`
""",
    provider_errors=(
        "messages.{N}.content.{M}: thinking or redacted_thinking blocks in the latest assistant message cannot be modified",
    ),
)
