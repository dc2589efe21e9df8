"""F5xx, integrity: files and databases that cannot be read, or read differently by different readers."""

from .registry import define

define(
    "F501",
    "torn-final-line",
    "warning",
    ("jsonl",),
    "safe",
    "Incomplete last line from an interrupted write",
    r"""
## What it detects
The last line of a JSON Lines file is incomplete JSON and has no trailing newline: the writer crashed or was
killed in the middle of appending it.

## Why it breaks a session
Nothing breaks: runtimes skip a torn last line on read. But whatever it held (a message, a tool result) is lost,
and the next append would glue a new record onto the fragment, producing a corrupt line (F502).

## Example
The final bytes of a `wire.jsonl`, with no newline after them:
```jsonl
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p7","turnId":"4","step":2,"stepUu
```
tdoc reports F501 on that line with a safe fix.

## Fix safety
Safe: the fix truncates the file where the torn line starts. Readers ignore the fragment already, so the
replayed history does not change, and later appends start on a clean line.

## Provider errors
None: this is a file problem; nothing is sent.
""",
    availability="sometimes",
)

define(
    "F502",
    "corrupt-line",
    "error",
    ("jsonl",),
    "none",
    "Unreadable line before the end of the file",
    r"""
## What it detects
A line anywhere but at the end that is not valid JSON, not a JSON object, or not valid UTF-8. tdoc reports the
line number and its byte offset.

## Why it breaks a session
kimi stops replaying at such a line (`wire.jsonl: corrupted line N`), so the whole session fails to resume, not
only the broken record.

## Example
Line 40 of a 120-line `wire.jsonl`, cut short and followed by a complete record on the next line:
```jsonl
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"run the tests"}
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s9","turnId":"7","step":1},"time":712}
```
tdoc reports F502 at line 40 with its byte offset.

## Fix safety
None: the line's content cannot be recovered, and deleting it may strand other records (a `content.part` whose
`step.begin` was on that line makes kimi v1 throw). Repair by hand, or restore from a backup.

## Provider errors
None: the session fails before any request is made.
""",
)

define(
    "F503",
    "missing-header",
    "error",
    ("kimi",),
    "none",
    "Wire journal without a valid metadata header",
    r"""
## What it detects
The first record of a kimi `wire.jsonl` is not a `metadata` header with a string `protocol_version` and a
numeric `created_at`.

## Why it breaks a session
kimi v1 refuses to replay a journal that does not start with the header. v2 accepts a header-less journal as
pre-1.5 and writes a fresh header when it rewrites the file, but treats a malformed header as corrupt.

## Example
```jsonl
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"u1"}],"toolCalls":[],"origin":{"kind":"user"}},"time":101}
```
as line 1; tdoc reports F503 on it.

## Fix safety
None: tdoc cannot know which protocol version wrote the records, and a guessed header would pick the wrong
migrations.

## Provider errors
None: the session fails before any request is made.
""",
)

define(
    "F504",
    "invalid-record",
    "warning",
    ("all",),
    "none",
    "Record that does not match its type's schema",
    r"""
## What it detects
A record that parses as JSON but fails the schema of its type: a missing or mistyped field, or a value out of
range.

## Why it breaks a session
Readers disagree about such a record. kimi v2 skips it; v1 applies whatever it can read, or crashes. Histories
then differ between engines in ways no other rule explains.

## Example
```jsonl
{"type":"context.undo","count":0,"time":900}
```
v2 requires `count` to be a positive integer and skips the record. tdoc reports F504 on the line.

## Fix safety
None: whether the record should count depends on which reader is right, and tdoc does not guess.

## Provider errors
None: the harm is in how the history is rebuilt, before any request.
""",
)

define(
    "F505",
    "unsupported-version",
    "warning",
    ("kimi", "hermes"),
    "none",
    "Store format version newer than tdoc knows",
    r"""
## What it detects
A format version newer than any tdoc knows: a kimi header `protocol_version` above 1.5, or a Hermes database
whose `schema_version` is above 30.

## Why it breaks a session
It may not: newer writers usually add fields. tdoc reads the records as they are, as kimi itself does with an
unknown version, but rules may miss new shapes, so a clean scan proves less.

## Example
```jsonl
{"type":"metadata","protocol_version":"1.6","created_at":1786363200000}
```
tdoc reports F505 on line 1 and scans the rest.

## Fix safety
None: there is nothing to repair; upgrade tdoc.

## Provider errors
None: this is a note about tdoc's own coverage.
""",
)

define(
    "F506",
    "store-integrity",
    "error",
    ("sqlite",),
    "none",
    "SQLite database failing its integrity check",
    r"""
## What it detects
A Hermes `state.db` or OpenCode `opencode.db` for which `PRAGMA quick_check` (or the slower
`PRAGMA integrity_check`, with `--deep`) reports problems.

## Why it breaks a session
Corrupt pages make queries fail or return partial rows, and each write can spread the damage. tdoc does not heal
a database in this state.

## Example
```text
sqlite> PRAGMA quick_check;
*** in database main ***
Page 37: btreeInitPage() returns error code 11
```
tdoc reports F506 with the first lines of that output.

## Fix safety
None: recovery needs SQLite's own tools on a copy (for example `.recover` in the `sqlite3` shell), with the agent
stopped, and judgement about what survived.

## Provider errors
None: the damage is local.
""",
)


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
