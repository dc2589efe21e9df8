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

# Codex rollouts: items the Responses API rejects when Codex resends them (docs/codex.md §5);
# checked by the Codex store (`stores/codex/issues.py`).

define(
    "W121",
    "rejected-web-search-action",
    "error",
    ("codex",),
    "safe",
    "Persisted web search with an action type the API no longer accepts",
    r"""
## What it detects
A `web_search_call` item in the request Codex rebuilds whose `action.type` is not one the Responses API
accepts (`search`, `open_page`, `find_in_page`). Codex builds before 0.63 recorded searches they could not
classify as `{"type": "other"}`.

## Why it breaks a session
Codex sends every persisted item back on each request. The API validates the action and answers every
request of the session with `400 Invalid value: 'other'` at `input[N].action.type`.

## Example
```jsonl
{"timestamp":"2025-11-02T10:00:05Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"other"}}}
```
tdoc reports W121 on that line with the item's `input[N]` position.

## Fix safety
Safe: the action becomes `{"type": "search", "query": ...}` (the query kept when there is one). The search
already happened and its results are in the later items; only the label the API checks changes. The
line keeps its byte length (padded with spaces) so Codex's offset cache stays valid; when the new
action cannot fit (there is no `status` to give up), the fix changes the length and needs `--unsafe-fixes`.

## Provider errors
- OpenAI Responses: `Invalid value: 'other'. Supported values are: 'search', 'open_page', and 'find_in_page'.`
""",
    provider_errors=("Invalid value: 'other'. Supported values are: 'search', 'open_page', and 'find_in_page'.",),
)

define(
    "W122",
    "foreign-reasoning",
    "error",
    ("codex",),
    "safe",
    "Reasoning the OpenAI API did not issue (foreign or plaintext)",
    r"""
## What it detects
A `reasoning` item sent to OpenAI whose `encrypted_content` does not look like OpenAI's own ciphertext (it
starts `gAAAA`), or which carries plaintext reasoning `content`. Both come from sessions that ran part of the
time against another provider or account (a proxy, an open-weights model) and were resumed against OpenAI.
Sessions whose recorded provider is not OpenAI are not checked.

## Why it breaks a session
The API decrypts every reasoning item it is sent: a foreign ciphertext fails verification on every request,
and plaintext `content` is refused as too long an array.

## Example
```jsonl
{"timestamp":"2026-03-01T09:00:02Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Let me think"}],"encrypted_content":"eyJhbGciOi..."}}
```
tdoc reports W122 twice on that line (the foreign ciphertext and the plaintext content), with its `input[N]`.

## Fix safety
Safe: the `content` and the foreign `encrypted_content` are removed; the summary stays. The model loses a
reasoning trace it could not read anyway. The line keeps its byte length (padded with spaces).

## Provider errors
- OpenAI Responses: `The encrypted content for item {id} could not be verified.`
- OpenAI Responses: `Invalid 'input[{N}].content': array too long. Expected an array with maximum length 0, but got an array with length {M} instead.`
""",
    provider_errors=(
        "The encrypted content for item {id} could not be verified.",
        ("Invalid 'input[{N}].content': array too long. Expected an array with maximum length 0, "
         "but got an array with length {M} instead."),
    ),
)

define(
    "W123",
    "invalid-item-id-prefix",
    "error",
    ("codex",),
    "safe",
    "Item id whose prefix does not fit its item type",
    r"""
## What it detects
A persisted Responses item whose `id` does not start with the prefix the API issues for its type (`msg_`
for messages, `rs_` reasoning, `fc_` function calls, `ws_` web searches). Ids like these come from other
providers' or proxies' responses written into the rollout.

## Why it breaks a session
The API checks the ids of input items and rejects the whole request with `invalid_id_prefix`.

## Example
```jsonl
{"timestamp":"2026-04-01T08:00:03Z","type":"response_item","payload":{"type":"message","id":"chatcmpl-91","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}
```
tdoc reports W123 on that line: a message id must start `msg_`.

## Fix safety
Safe: the `id` is removed (input items need none; Codex sends without storing them). The line keeps its byte
length.

## Provider errors
- OpenAI Responses (code `invalid_id_prefix`): `Invalid 'input[{N}].id': '{id}'. Expected an ID that begins with '{prefix}'.`
""",
    provider_errors=("Invalid 'input[{N}].id': '{id}'. Expected an ID that begins with '{prefix}'.",),
)
