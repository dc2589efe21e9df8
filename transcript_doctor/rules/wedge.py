"""W1xx, wedge: histories a provider refuses, so that every later request fails the same way."""

from .registry import define

define(
    "W101",
    "vacuous-assistant",
    "error",
    ("kimi", "hermes", "opencode"),
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
)

define(
    "W102",
    "blank-text-part",
    "warning",
    ("all",),
    "safe",
    "Empty or whitespace-only text part beside real content",
    r"""
## What it detects
A text part that is empty or whitespace (ECMAScript `trim()` set, never Python's `str.strip()`) inside a
message that also holds something real: other text, an image, signed reasoning or a tool call. When every part
of an assistant message is blank, the message is W101 instead.

## Why it breaks a session
Anthropic and Bedrock refuse a request that contains an empty or whitespace-only text block, wherever it sits
in the history, and the stored block goes out again on every retry. kimi's projection strips blank parts
before sending (it reports `whitespace_text_dropped`), so in kimi logs the part only matters to other tools
that replay the file.

## Example
A Hermes `messages` row whose list content (NUL-prefixed JSON) starts with a one-space text part:
```text
id=27  role='assistant'  finish_reason='stop'
content='\x00json:[{"type": "text", "text": " "}, {"type": "text", "text": "The chart shows a decline."}]'
```
tdoc reports W102 on row 27 with a safe fix that drops the blank part and keeps the answer.

## Fix safety
Safe: the part holds nothing a model could read and the message keeps its other content.

## Provider errors
- Anthropic: `messages: text content blocks must be non-empty`
- Anthropic (and Bedrock-hosted Claude): `messages: text content blocks must contain non-whitespace text`
- Bedrock Converse: `The text field in the ContentBlock object at messages.{N}.content.{M} is blank. Add text to the text field, and try again.`
- Volcengine Ark: `MissingParameter: input.content.text`
""",
    provider_errors=(
        "messages: text content blocks must be non-empty",
        "messages: text content blocks must contain non-whitespace text",
        "The text field in the ContentBlock object at messages.{N}.content.{M} is blank. "
        "Add text to the text field, and try again.",
        "MissingParameter: input.content.text",
    ),
)

define(
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
)

define(
    "W104",
    "orphan-tool-result",
    "error",
    ("all",),
    "safe",
    "Tool result with no matching call",
    r"""
## What it detects
A tool result whose call id matches no earlier tool call in the history. A result stored before its call
counts: kimi v2 drops it as an orphan, while v1 leaves it where it is.

## Why it breaks a session
Providers take a tool result only as the answer to a call just before it. A stray one (its call cut away by a
compaction, or a crashed writer) is rejected on every request.

## Example
A Hermes tool row answering a call id no assistant row ever issued:
```text
id=14  role='tool'  tool_call_id='call_zz'  tool_name='terminal'
       content='{"output": "3 passed", "exit_code": 0, "error": null}'
```
tdoc reports W104 on row 14 with a safe fix that removes the row (Hermes: `active=0`, as its rewind does).

## Fix safety
Safe: it answers nothing the model asked in this history, and kimi's projection drops such results anyway.

## Provider errors
- Anthropic: ``messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.``
- OpenAI Chat Completions: `messages with role 'tool' must be a response to a preceeding message with 'tool_calls'` (sic)
- OpenAI Responses: `No tool call found for function call output with call_id {call_id}.`
- Gemini: `Please ensure that function response turn comes immediately after a function call turn.`
- Local chat templates: `Message has tool role, but there was no previous assistant message with a tool call!`
""",
    provider_errors=(
        "messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
        "No tool call found for function call output with call_id {call_id}.",
        "Please ensure that function response turn comes immediately after a function call turn.",
        "Message has tool role, but there was no previous assistant message with a tool call!",
    ),
)

define(
    "W105",
    "duplicate-tool-call-id",
    "error",
    ("all",),
    "unsafe",
    "Two tool calls sharing one id",
    r"""
## What it detects
Two tool calls in the history with the same call id (a reused counter, a replayed step); the later is reported.

## Why it breaks a session
Anthropic requires tool call ids to be unique across the request. kimi's strict resend removes the later call,
but if that call was the only real content of its message, what remains is an empty assistant message: the
strict resend re-creates the W101 wedge it was meant to escape.

## Example
Two kimi steps both calling `c1`; the second step has nothing else but an empty think part:
```jsonl
{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"t1","turnId":"1","step":1,"stepUuid":"a","toolCallId":"c1","name":"Bash","args":{}},"time":103}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p2","turnId":"1","step":2,"stepUuid":"b","part":{"type":"think","think":""}},"time":107}
{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"t2","turnId":"1","step":2,"stepUuid":"b","toolCallId":"c1","name":"Bash","args":{}},"time":108}
```
tdoc reports W105 on the second `tool.call` line with an unsafe fix.

## Fix safety
Unsafe: the fix drops the later call together with its result, and drops the whole message (for kimi, every
record of the step) when that leaves it vacuous. Whatever the second call returned disappears from the history,
and later turns may have relied on it.

## Provider errors
- Anthropic: ``messages.{N}.content.{M}: `tool_use` ids must be unique``
""",
    provider_errors=("messages.{N}.content.{M}: `tool_use` ids must be unique",),
)

define(
    "W106",
    "duplicate-tool-result",
    "error",
    ("all",),
    "safe",
    "Second result for an already answered tool call",
    r"""
## What it detects
A tool result for a call that already has one. The later copy is reported, with one exception: when the
earlier result is an "interrupted" placeholder and the later one is the real output, the placeholder is the one
to go (a real result replaces a placeholder, never the reverse).

## Why it breaks a session
Each call takes exactly one result. kimi v1 sends the copy as is and APIs that count results refuse it; kimi v2
drops it as an orphan.

## Example
A Hermes session that stored the same tool answer twice:
```text
id=11  role='assistant'  content=''  tool_calls='[{"id": "call_b2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"setup.cfg\"}"}}]'
id=12  role='tool'  tool_call_id='call_b2'  content='[metadata]\nname = demo'
id=13  role='tool'  tool_call_id='call_b2'  content='[metadata]\nname = demo'
```
tdoc reports W106 on row 13 with a safe fix that removes it.

## Fix safety
Safe: the model keeps the one answer runtimes already keep (kimi's strict dedupe makes the same choice).

## Provider errors
- Mistral: `Not the same number of function calls and responses`
- Anthropic, when the copy lands in a later message: ``messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.``
""",
    provider_errors=(
        "Not the same number of function calls and responses",
        "messages.{N}.content.{M}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
)

define(
    "W107",
    "displaced-tool-result",
    "warning",
    ("all",),
    "unsafe",
    "Tool result separated from its call by another message",
    r"""
## What it detects
A tool result stored after a non-tool message (a prompt, an injected note) that came between it and its call.

## Why it breaks a session
Strict APIs want the result right after the call. kimi pulls it up on every request (`tool_result_reordered`);
Hermes and most other runtimes replay the stored order verbatim.

## Example
```text
id=30  role='assistant'  content=''  tool_calls='[{"id": "call_4", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"release notes\"}"}}]'
id=31  role='user'  content='Also check the changelog.'
id=32  role='tool'  tool_call_id='call_4'  content='5 results'
```
tdoc reports W107 on row 32 with an unsafe fix.

## Fix safety
Unsafe: the fix moves the result up to sit right after its call. That changes the order the model reads: the
message in between was written before the result existed, and after the move it appears to follow it.

## Provider errors
- Anthropic: ``messages.{N}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.``
- Bedrock-hosted Claude: `messages.{N}: Did not find 1 tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`
- OpenAI Chat Completions: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}`
""",
    provider_errors=(
        "messages.{N}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        "messages.{N}: Did not find 1 tool_result block(s) at the beginning of this message. "
        "Messages following tool_use blocks must begin with a matching number of tool_result blocks.",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    ),
)

define(
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
)

define(
    "W109",
    "consecutive-assistants",
    "info",
    ("all",),
    "unsafe",
    "Two assistant messages in a row",
    r"""
## What it detects
Two assistant messages next to each other with no tool result between them, for example a reply cut by an
output limit and continued in a second step.

## Why it breaks a session
Most current APIs accept it, hence `info`; endpoints enforcing strict alternation (Bedrock Converse, older
Anthropic versions) reject it. kimi merges such pairs only in its strict resend.

## Example
```jsonl
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p1","turnId":"1","step":1,"stepUuid":"a","part":{"type":"text","text":"First half"}},"time":103}
{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"a","turnId":"1","step":1,"finishReason":"max_tokens"},"time":104}
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"b","turnId":"1","step":2},"time":105}
{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p2","turnId":"1","step":2,"stepUuid":"b","part":{"type":"text","text":"second half"}},"time":106}
```
tdoc reports W109 for step `b`.

## Fix safety
Unsafe: the fix merges the two (content and calls concatenated); the model sees one turn where it made two.

## Provider errors
- Anthropic: `messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row`
- Bedrock Converse: `A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.`
""",
    provider_errors=(
        'messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row',
        "A conversation must alternate between user and assistant roles. "
        "Make sure the conversation alternates between user and assistant roles and try again.",
    ),
)
