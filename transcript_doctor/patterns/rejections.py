"""The structural-rejection table: provider errors that mean "this history is malformed", each
naming the provider that words it so and the tdoc rule whose finding is the cause (see the
package docstring for the linear-time matching)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..rules import lookup
from .unwrap import unwrap


@dataclass(frozen=True)
class Pattern:
    id: str
    parts: tuple[re.Pattern[str], ...]
    provider: str
    rule: str  # the tdoc rule whose finding this error is the symptom of (E601: no cause rule yet)
    description: str
    related: tuple[str, ...] = ()  # other rules whose findings draw the same error

    def search(self, lowered: str) -> bool:
        """Whether every part occurs in `lowered`, in order, without overlapping."""
        pos = 0
        for part in self.parts:
            m = part.search(lowered, pos)
            if m is None:
                return False
            pos = m.end()
        return True


@dataclass(frozen=True)
class RejectionMatch:
    pattern: Pattern
    position: int | None  # the message index the error names, if any
    position_kind: str | None  # "position" | "messages" | "input" | "contents" | "index"
    content_index: int | None = None  # Anthropic/Bedrock `messages.N.content.M`
    role: str | None = None  # the role the error says the message has ("with role 'assistant'")


def _code(name: str) -> str:
    rule = lookup(name)
    if rule is None:
        raise ValueError(f"pattern names an unknown rule: {name}")
    return rule.code


def _p(id: str, provider: str, rule: str, description: str, *parts: str, related: str = "") -> Pattern:
    """A pattern whose cause is rule `rule` (named by its kebab name, like `related`)."""
    return Pattern(id, tuple(re.compile(p) for p in parts), provider, _code(rule), description,
                   tuple(_code(r) for r in related.split()))


_Q = "['\"`]?"  # optional quote around a quoted identifier: ' " or `
_ORPHAN_CALL = "a tool call without its result"
_ORPHAN_RESULT = "a tool result with no matching call before it"
_EMPTY_MESSAGE = "an empty message (no content and no tool calls)"
_BLANK_PART = "an empty or whitespace-only text block"
_THINKING = "a thinking/reasoning block that was altered, emptied or carried across models"

# Order matters: the first match wins, so exact provider wordings come before the generic
# kimi-code fallbacks at the end (which would also match several of them).
PATTERNS: list[Pattern] = [
    # Moonshot / Kimi
    _p("empty-message-at-position", "moonshot", "vacuous-assistant", _EMPTY_MESSAGE,
       rf"message at position \d+ with role {_Q}[a-z]+{_Q} must not be empty"),
    # Anthropic Messages API (also via Vertex, Bedrock and proxies)
    _p("anthropic-tool-use-without-result", "anthropic", "orphan-tool-call", _ORPHAN_CALL,
       r"tool_use`? ids were found without `?tool_result`? blocks", related="displaced-tool-result"),
    _p("anthropic-unexpected-tool-use-id", "anthropic", "orphan-tool-result", _ORPHAN_RESULT,
       r"unexpected `?tool_use_id`? found in `?tool_result", related="duplicate-tool-result"),
    _p("anthropic-tool-result-count", "anthropic", "orphan-tool-call", "tool results missing right after their calls",
       r"did not find \d+ tool_result block", related="displaced-tool-result"),
    _p("tool-use-ids-unique", "anthropic", "duplicate-tool-call-id", "two tool calls share an id", r"tool_use", r"ids must be unique"),
    _p("anthropic-empty-content", "anthropic", "vacuous-assistant", _EMPTY_MESSAGE,
       r"all messages must have non-empty content"),
    _p("text-blocks-non-empty", "anthropic", "blank-text-part", _BLANK_PART, r"text content blocks must be non-empty"),
    _p("text-blocks-non-whitespace", "anthropic", "blank-text-part", _BLANK_PART,
       r"text content blocks must contain non-whitespace"),
    _p("anthropic-invalid-signature", "anthropic", "recorded-provider-rejection", _THINKING,
       r"invalid `?signature`? in `?thinking`? block"),
    _p("anthropic-thinking-modified", "anthropic", "recorded-provider-rejection", _THINKING,
       r"redacted_thinking`? blocks in the latest assistant message cannot be modified", related="interleaved-thinking"),
    _p("anthropic-thinking-expected", "anthropic", "recorded-provider-rejection", "a final tool-loop turn whose thinking was stripped",
       r"expected `?thinking`? or `?redacted_thinking`?, but found"),
    _p("anthropic-thinking-first", "anthropic", "recorded-provider-rejection", "thinking blocks out of order",
       r"the first block must be `?thinking`? or `?redacted_thinking"),
    _p("anthropic-thinking-disabled", "anthropic", "recorded-provider-rejection", "thinking replayed to a request without thinking",
       r"when thinking is disabled, an `?assistant`? message in the final position cannot contain"),
    _p("anthropic-final-thinking", "anthropic", "think-only-final", "an assistant message that ends in a thinking block",
       r"the final block in an assistant message cannot be `?thinking"),
    _p("lone-surrogate", "anthropic", "bad-text-encoding", "a lone UTF-16 surrogate in stored text",
       r"no (?:low|high) surrogate in string"),
    _p("request-not-json", "anthropic", "bad-text-encoding", "text the provider's JSON parser rejects (NUL bytes, binary)",
       r"the request body is not valid json"),
    # Claude Code CLI wrappers (docs/claude-code-sessions.md §5): the CLI's own words for a pairing error
    _p("claude-code-orphaned-tool-result", "anthropic", "orphan-tool-result", _ORPHAN_RESULT,
       r"orphaned `?tool_result`? (?:block )?in (?:the )?conversation history", related="duplicate-tool-result"),
    _p("claude-code-duplicate-tool-use-id", "anthropic", "duplicate-tool-call-id", "two tool calls share an id",
       r"duplicate `?tool_use`? id in (?:the )?conversation history"),
    # end of the Claude Code wrappers
    _p("claude-code-tool-concurrency", "anthropic", "orphan-tool-call",
       "Claude Code's wording for a tool pairing error (orphan call or result, or a duplicate id)",
       r"due to tool use concurrency issues", related="orphan-tool-result duplicate-tool-call-id"),
    # OpenAI Chat Completions and compatible gateways (Kimi and DeepSeek use the same words)
    _p("tool-calls-need-results", "openai", "orphan-tool-call", _ORPHAN_CALL,
       rf"assistant message with\s{{1,8}}{_Q}tool_calls{_Q}\s{{1,8}}must be followed by tool messages", related="displaced-tool-result"),
    _p("tool-call-ids-no-response", "openai", "orphan-tool-call", _ORPHAN_CALL, r"tool_call_ids? did not have response messages",
       related="displaced-tool-result"),
    _p("tool-role-needs-call", "openai", "orphan-tool-result", _ORPHAN_RESULT,
       rf"role\s{{1,8}}{_Q}tool{_Q}\s{{1,8}}must be a response to a prece?eding message"),
    _p("openai-null-content", "openai", "vacuous-assistant", _EMPTY_MESSAGE,
       r"invalid value for 'content': expected a string, got null"),
    # Codex CLI rollouts resent to the OpenAI Responses API (docs/codex.md §5); before the generic
    # Responses entries, which name no cause rule for these.
    _p("codex-web-search-action", "openai-responses", "rejected-web-search-action", "a persisted web search whose action the API rejects",
       r"invalid value: '?other'?", r"supported values are: '?search'?"),
    _p("codex-encrypted-content", "openai-responses", "foreign-reasoning", "reasoning encrypted by another provider or account",
       r"encrypted content", r"could not be verified", related="recorded-provider-rejection"),
    _p("codex-reasoning-content", "openai-responses", "foreign-reasoning", "a reasoning item carrying plaintext content",
       r"input\[\d+\]\.content'?: array too long"),
    _p("codex-invalid-id-prefix", "openai-responses", "invalid-item-id-prefix", "a stored item id with another provider's prefix",
       r"invalid_id_prefix|expected an id that begins with"),
    _p("codex-offset-cache", "codex", "recorded-provider-rejection",
       "Codex's thread_history cache holds byte offsets the rollout no longer has (its lines were rewritten at "
       "another length): quit Codex and move ~/.codex/thread_history_*.sqlite aside so it is rebuilt",
       r"invalid paginated history lineage|cutoff byte offset is past the source rollout"),
    # OpenAI Responses API
    _p("responses-no-tool-output", "openai-responses", "orphan-tool-call", _ORPHAN_CALL, r"no tool output found for function call"),
    _p("responses-no-tool-call", "openai-responses", "orphan-tool-result", _ORPHAN_RESULT,
       r"no tool call found for function call output"),
    _p("responses-item-not-found", "openai-responses", "recorded-provider-rejection", "a server-side item id replayed with store=false",
       r"item with id '?[a-z0-9_-]{0,200}'? not found"),
    _p("responses-missing-reasoning", "openai-responses", "recorded-provider-rejection", _THINKING,
       r"was provided without its required 'reasoning' item"),
    _p("responses-encrypted-content", "openai-responses", "recorded-provider-rejection", _THINKING,
       r"encrypted content", r"could not be verified"),
    _p("responses-encrypted-caller", "openai-responses", "recorded-provider-rejection", _THINKING,
       r"encrypted_content`? was not issued to this caller"),
    _p("responses-reasoning-content", "openai-responses", "recorded-provider-rejection", "a reasoning item carrying plaintext content",
       r"input\[\d+\]\.content'?: array too long"),
    _p("responses-bad-item-id", "openai-responses", "recorded-provider-rejection", "a stored item id the API does not accept",
       r"invalid 'input\[\d+\]\.id'"),
    # DeepSeek
    _p("insufficient-tool-messages", "deepseek", "orphan-tool-call", _ORPHAN_CALL, r"insufficient tool messages following"),
    _p("deepseek-missing-reasoning", "deepseek", "recorded-provider-rejection", "thinking-mode reasoning not passed back",
       r"missing `?reasoning_content`? field in the assistant message"),
    _p("deepseek-reasoning-passback", "deepseek", "recorded-provider-rejection", "thinking-mode reasoning not passed back",
       r"in the thinking mode must be passed back to the api"),
    # Google Gemini / Vertex
    _p("gemini-call-placement", "google", "leading-non-user",
       "a function call turn not right after a user or function-response turn: the history starts with it (W108), "
       "it follows another model turn (W109, or a vacuous one: W101) or a call turn left without responses (W103)",
       r"function call turn comes immediately after a user turn",
       related="consecutive-assistants orphan-tool-call vacuous-assistant"),
    _p("gemini-response-placement", "google", "orphan-tool-result", _ORPHAN_RESULT,
       r"function response turn comes immediately after a function call turn"),
    _p("gemini-thought-signature", "google", "recorded-provider-rejection", _THINKING, r"thought signature is not valid"),
    # Amazon Bedrock Converse
    _p("bedrock-blank-text", "bedrock", "blank-text-part", _BLANK_PART,
       r"text field in the contentblock object at", r"is blank"),
    _p("bedrock-alternate", "bedrock", "consecutive-assistants", "two messages of one role in a row",
       r"conversation must alternate between user and assistant roles"),
    _p("bedrock-empty-content", "bedrock", "vacuous-assistant", _EMPTY_MESSAGE,
       r"content field in the message object at", r"is empty"),
    # Mistral
    _p("mistral-tool-call-id", "mistral", "recorded-provider-rejection", "a tool call id written by another provider",
       r"tool call id was", r"but must be a-z, a-z, 0-9, with a length of 9"),
    _p("mistral-tool-first", "mistral", "leading-non-user", "a tool result right after the system prompt",
       r"unexpected role '?tool'? after role '?system"),
    _p("mistral-tool-order", "mistral", "orphan-tool-result", _ORPHAN_RESULT, r"unexpected role '?(?:roleenum\.)?tool"),
    _p("mistral-user-after-tool", "mistral", "recorded-provider-rejection", "a user message right after tool results, with no assistant turn",
       r"unexpected role '?user'? after role '?tool"),
    _p("mistral-pairing", "mistral", "orphan-tool-call", "tool calls and results that do not pair up",
       r"not the same number of function calls and responses", related="orphan-tool-result duplicate-tool-result"),
    _p("mistral-empty-assistant", "mistral", "vacuous-assistant", _EMPTY_MESSAGE,
       r"assistant message must have either content or tool_calls"),
    # Others
    _p("ark-missing-text", "volcengine", "blank-text-part", _BLANK_PART, r"missingparameter: input\.content\.text"),
    _p("chat-template-tool-role", "local", "orphan-tool-result", _ORPHAN_RESULT,
       r"message has tool role, but there was no previous assistant message with a tool call"),
    # -- Structural rejections measured on stores tdoc had not seen (issue 19), one provider at a time.
    # OpenAI Chat Completions: an empty content string or array.
    _p("openai-content-string-too-short", "openai", "vacuous-assistant", "a message whose content is an empty string",
       rf"invalid {_Q}messages\[\d{{1,9}}\]\.content{_Q}: string too short", related="blank-text-part"),
    _p("openai-content-empty-array", "openai", "vacuous-assistant", "a message whose content is an empty list of parts",
       rf"invalid {_Q}messages\[\d{{1,9}}\]\.content{_Q}: empty array", related="blank-text-part"),
    # OpenAI Responses
    _p("responses-content-empty-string", "openai-responses", "vacuous-assistant",
       "an input item whose content is an empty string",
       rf"invalid {_Q}input\[\d{{1,9}}\]\.content{_Q}: empty string", related="blank-text-part"),
    _p("responses-reasoning-without-following-item", "openai-responses", "think-only-final",
       "a reasoning item with nothing after it: a turn that ended (or was cut off) after its reasoning",
       rf"of type {_Q}reasoning{_Q} was provided without its required following item",
       related="phantom-step vacuous-assistant"),
    # Anthropic
    _p("anthropic-signature-required", "anthropic", "recorded-provider-rejection",
       "a thinking block stored without its signature",
       rf"thinking\.signature{_Q}: field required"),
    _p("anthropic-final-trailing-whitespace", "anthropic", "phantom-step",
       "a request that ends on an assistant message (a cut-off or partial reply) whose text ends in whitespace",
       r"final assistant content cannot end with trailing whitespace", related="vacuous-assistant non-terminal-final"),
    _p("anthropic-empty-error-result", "anthropic", "recorded-provider-rejection",
       "an error tool result with no content",
       r"tool_result`? content cannot be empty when `?is_error`? is true"),
    # Amazon Bedrock Converse
    _p("bedrock-first-user", "bedrock", "leading-non-user", "the history does not start with a user message",
       r"conversation must start with a user message"),
    _p("bedrock-expected-tool-result", "bedrock", "orphan-tool-call", "tool results missing right after their calls",
       r"expected toolresult blocks at messages\.\d{1,9}\.content", related="displaced-tool-result"),
    _p("bedrock-tool-result-count", "bedrock", "orphan-tool-result", "more tool results than the calls before them",
       r"number of toolresult blocks at messages\.\d{1,9}\.content exceeds the number of tooluse blocks",
       related="duplicate-tool-result"),
    # Google Gemini / Vertex
    _p("gemini-response-count", "google", "orphan-tool-call", "function calls and responses that do not pair up",
       r"number of function response parts is equal to the number of function call parts",
       related="orphan-tool-result duplicate-tool-result"),
    _p("gemini-empty-parts", "google", "vacuous-assistant", _EMPTY_MESSAGE, r"contents\.parts must not be empty",
       related="blank-text-part"),
    _p("gemini-no-parts-field", "google", "vacuous-assistant", _EMPTY_MESSAGE, r"must include at least one parts field",
       related="blank-text-part"),
    _p("gemini-missing-thought-signature", "google", "recorded-provider-rejection", _THINKING,
       r"function call is missing a `?thought_signature"),
    # Generic kimi-code strict-resend fallbacks (docs/kimi-replay.md §8)
    _p("tool-call-id-not-found", "openai", "orphan-tool-result", _ORPHAN_RESULT, r"tool_call_id", r"not found"),
    _p("unexpected-tool-result", "anthropic", "orphan-tool-result", _ORPHAN_RESULT, r"unexpected\s{1,8}`?tool_result"),
    _p("tool-use-without-result", "anthropic", "orphan-tool-call", _ORPHAN_CALL, r"tool_use", r"tool_result"),
    _p("tool-result-without-use", "anthropic", "orphan-tool-result", _ORPHAN_RESULT, r"tool_result", r"tool_use"),
    _p("first-message-user", "anthropic", "leading-non-user", "the history does not start with a user message",
       r"first message must use the ", r"user", r" role"),
    _p("roles-alternate", "anthropic", "consecutive-assistants", "two messages of one role in a row", r"roles must alternate"),
    _p("multiple-roles-in-a-row", "anthropic", "consecutive-assistants", "two messages of one role in a row",
       r"multiple ", r"user|assistant", r" roles in a row"),
]  # fmt: skip

_POSITION = [
    (re.compile(r"position (\d{1,9})"), "position"),
    (re.compile(r"messages\.\[?(\d{1,9})"), "messages"),
    (re.compile(r"messages\[(\d{1,9})\]"), "messages"),  # OpenAI `messages[N]`
    (re.compile(r"input\[(\d{1,9})\]"), "input"),
    (re.compile(r"contents\[(\d{1,9})\]"), "contents"),  # Gemini `contents[N]`
    (re.compile(r"message index (\d{1,9})"), "index"),
]
_CONTENT_INDEX = re.compile(r"messages\.\[?\d{1,9}\]?\.content\.(\d{1,9})")
_ROLE = re.compile(r"with role ['\"`]?([a-z]{1,20})")


def match_rejection(text: str) -> RejectionMatch | None:
    """The first structural-rejection pattern `text` matches, with the index it names.

    Wrapped errors (`API Error: 400 {...}`, OpenRouter `metadata.raw`, `Error code: 400 - {...}`)
    are unwrapped first; the position may also come from the error's `param` field.
    """
    unwrapped = unwrap(text)
    for candidate in dict.fromkeys((unwrapped.message, text)):
        lowered = candidate.lower()
        for pattern in PATTERNS:
            if pattern.search(lowered):
                return _match(pattern, lowered, unwrapped.param)
    return None


def _match(pattern: Pattern, lowered: str, param: str | None) -> RejectionMatch:
    position, kind = find_position(lowered)
    if position is None and param:
        position, kind = find_position(param.lower())
    content = _CONTENT_INDEX.search(lowered)
    role = _ROLE.search(lowered)
    return RejectionMatch(
        pattern,
        position,
        kind,
        int(content.group(1)) if content else None,
        role.group(1) if role else None,
    )


def find_position(lowered: str) -> tuple[int | None, str | None]:
    """The request index a (lower-cased) error names, and how it names it."""
    for regex, kind in _POSITION:
        m = regex.search(lowered)
        if m:
            return int(m.group(1)), kind
    return None, None
