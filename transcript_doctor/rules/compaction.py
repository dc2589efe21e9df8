"""C2xx, compaction and replay consistency: one log, two kimi engines, and what each makes of it."""

from .registry import define

define(
    "C201",
    "legacy-compaction-misaligned",
    "error",
    ("kimi",),
    "safe",
    "Legacy compaction count that skips real messages under v2",
    r"""
## What it detects
A legacy `context.apply_compaction` record (no numeric `keptUserMessageCount`: the oldest v1 form with
`compactedCount`, or the pre-release v2 form with a message-object `summary` and `count`). It replays as the
summary followed by `history[C:]`. The v1 writer counted C over a history that keeps every step assistant,
vacuous ones included; v2 drops those steps when they settle, so when D of them sit below the cut its slice
starts D messages too late and D real messages vanish. tdoc replays the log with both engines and, at each such
record, compares what each engine really keeps there, message by message (docs/kimi-code.md §Legacy compaction
alignment): `lost` names v1's messages v2 does not keep, `extra` the messages v2 keeps and v1 does not. The
histories can also differ for other reasons (an earlier kept-users compaction keeps different heads in the two
engines, an undo v2 refuses), and then the finding says that lowering the count would not by itself align v2,
and why. When both engines keep the same messages there, nothing is reported.

## Why it breaks a session
Nothing fails loudly: after the upgrade to the v2 engine, the resumed conversation is missing messages the user
and the model both saw, and the v2 messages view computes a wrong `foldedLength` (C202). kimi-code has no
compensation for this at HEAD.

## Example
```jsonl
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"u1"}],"toolCalls":[],"origin":{"kind":"user"}},"time":101}
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s1","turnId":"1","step":1},"time":102}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p","turnId":"1","step":1,"stepUuid":"s1","part":{"type":"think","think":""}},"time":103}
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"s1","turnId":"1","step":1,"finishReason":"filtered"},"time":104}
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"u2"}],"toolCalls":[],"origin":{"kind":"user"}},"time":105}
{"type":"context.apply_compaction","summary":"SUM","compactedCount":2,"tokensBefore":10,"tokensAfter":5,"time":106}
```
v1 resumes to `[SUM, u2]`, v2 to `[SUM]`. tdoc reports C201 on the compaction line with D = 1 (u2 lost) and a
safe fix: delete the three step lines and write `compactedCount` 1, after which both engines give `[SUM, u2]`.

## Fix safety
Safe: it removes only steps that hold nothing sendable (each is also W101) and lowers the count by exactly the
number of them below the cut, writing back the field that was read (`compactedCount` or `count`); every other
line stays byte-identical. The fix is offered only when that count makes v2 keep exactly v1's messages
(`aligned_by_fix`; an earlier compaction's aligned fix counts as applied); otherwise no count serves both
engines and the finding has no fix. tdoc accepts an edit only if replaying the healed log gives, under each
engine, the original v1 history minus the removed steps. Plain removal fails that check when every message after
the cut is a removed step (v1 would switch to its kept-users shape and bring back dropped prompts), when the
removed `step.begin` closed pending tool calls or flushed deferred messages in v1, or when it settled an earlier
failed step in v2; such steps are kept and the finding is marked not safely fixable. One side effect remains:
removing the step with the highest `turnId` can lower the turn counter the engines restore on resume.

## Provider errors
None: the lost messages go missing silently. The removed steps are the ones W101 reports.
""",
    availability="sometimes",
)

define(
    "C202",
    "folded-length-mismatch",
    "warning",
    ("kimi",),
    "none",
    "Cold transcript length disagreeing with the live history",
    r"""
## What it detects
kimi's cold transcript reducer (the full messages view behind the UI and REST API) keeps a `foldedLength`: the
length it believes the live history has. tdoc compares it with the live history each engine rebuilds and reports
a difference.

## Why it breaks a session
The messages view splices the unflushed live tail in at `foldedLength`. With the wrong value the user sees
messages twice or not at all, although the request sent to the model is not affected by this alone.

## Example
The log of C201's example: the v2 transcript holds `[u1, u2, SUM]` and falls back to `foldedLength` 3 while the
v2 live history is `[SUM]` (length 1). Another source is kimi-code's own `sample-compaction` fixture, a legacy
record whose count equals the history length:
```jsonl
{"type":"context.apply_compaction","summary":"compacted summary","compactedCount":2,"tokensBefore":40,"tokensAfter":10,"time":5}
```
Both transcripts say 3 there, while v2's live history has 2 messages. tdoc reports C202 with both numbers.

## Fix safety
None: the mismatch follows from C201 (heal that and it goes away) or from the engines' own rules (legacy
compaction branches, an undo that leaves a later injection in the transcript), which tdoc does not change.

## Provider errors
None: the mismatch is in the display path, not in what is sent to a provider.
""",
)

define(
    "C203",
    "phantom-step",
    "warning",
    ("kimi", "eve"),
    "safe",
    "Step that never settled",
    r"""
## What it detects
A model step that started and never settled: in kimi a `step.begin` with no `step.end`, or one ended with
`finishReason` `error` or `interrupted`; in eve a `step.started` (v27: `model.requested`/`model.started`) whose
attempt failed, never completed before a retry or the turn's end, or is still open when the stream ends (no
`step.completed`/`step.failed`, v27 no `model.settled`). Every step that never settled counts, whether it left
partial text or nothing, and each failed retry attempt is its own finding. For an attempt open at the end of the
stream the finding says whether the stream may still be live (no later turn, no session end): the step may yet
settle, though eve rebuilds it as a partial or phantom assistant if it does not.

## Why it breaks a session
kimi v2 leaves such a step in the history as `partial: true` forever: the projection skips it, so the prompts
around it merge, while v1 keeps the partial text as a real assistant turn. A vacuous phantom in v1 is an empty
assistant message (W101). In eve the failed attempt's events stay in the stream beside the retry's.

## Example
```jsonl
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"a","turnId":"1","step":1},"time":102}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p","turnId":"1","step":1,"stepUuid":"a","part":{"type":"text","text":"half"}},"time":103}
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"a","turnId":"1","step":1,"finishReason":"error"},"time":104}
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"u2"}],"toolCalls":[],"origin":{"kind":"user"}},"time":105}
```
tdoc reports C203 on the `step.begin` line. v2 sends `u1` and `u2` as one merged prompt; v1 sends `half` as an
assistant turn. This step has text, so no fix is offered.

## Fix safety
Safe only when the step is vacuous (no parts, or only blank text and unsigned empty reasoning): the fix deletes
its records (its lines, in an eve stream), which removes nothing either engine could send. A phantom with text
gets no fix: the engines disagree about whether the model saw it, and deleting it would change v1's history.

## Provider errors
None directly; a vacuous phantom in the v1 history is also reported as W101.
""",
    availability="sometimes",
)

define(
    "C204",
    "engine-divergence",
    "info",
    ("kimi",),
    "none",
    "Log that the two kimi engines replay differently",
    r"""
## What it detects
A wire log that kimi v1 and v2 rebuild into different histories for a reason other than C201. Known causes: a
legacy compaction whose count is not below the history length (v1 takes its kept-users shape, v2 always the
legacy tail), a failed step that v2 keeps partial and v1 shows, an undo that v1 applies around later injections
while v2 cuts them, and head/tail versus tail-only selection of kept user messages over 20,000 tokens. tdoc
reports the first index where the two histories differ.

## Why it breaks a session
A log written by one engine and resumed by the other continues a different conversation. There is no single
expected history, so the finding tells you which engine's view other findings refer to.

## Example
```jsonl
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"before compaction"}],"toolCalls":[]},"time":2}
{"type":"context.append_message","message":{"role":"assistant","content":[{"type":"text","text":"assistant reply"}],"toolCalls":[]},"time":3}
{"type":"context.apply_compaction","summary":"compacted summary","compactedCount":2,"tokensBefore":40,"tokensAfter":10,"time":4}
```
v1 keeps `before compaction` ahead of the summary, v2 does not; tdoc reports C204 at index 0.

## Fix safety
None: each engine follows its own rules correctly, and tdoc cannot tell which one the user will resume with.

## Provider errors
None: both histories are valid requests; they just differ.
""",
)

define(
    "C205",
    "unknown-step-event",
    "error",
    ("kimi",),
    "unsafe",
    "Step event naming a step that is not open",
    r"""
## What it detects
A `content.part` or `tool.call` loop event whose `stepUuid` is not the step currently open: a step that already
ended, or one that never began.

## Why it breaks a session
kimi v1 throws on such an event while replaying, so the whole session fails to resume. v2 and the v1 transcript
reducer ignore the event, which means the two engines already disagree about it.

## Example
```jsonl
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"a","turnId":"2","step":1},"time":210}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p9","turnId":"2","step":1,"stepUuid":"a","part":{"type":"text","text":"late text"}},"time":211}
```
tdoc reports C205 on the second line with an unsafe fix that deletes it.

## Fix safety
Unsafe: dropping the event lets v1 load the session again, but whatever it carried (text, or a tool call whose
result then becomes an orphan) is gone from v1's history. v2 never used it, so v2 is unchanged.

## Provider errors
None: v1 fails before any request is built.
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
