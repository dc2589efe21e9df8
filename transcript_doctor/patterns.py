"""One table of structural-rejection patterns: provider errors that mean "this history is malformed".

Used by E601 (stored errors in every store kind) and by `tdoc explain --error`. Patterns are
matched against the lower-cased message; each is written so that it cannot backtrack
catastrophically (no nested quantifiers, `[\\s\\S]*` only between literal anchors).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    id: str
    regex: re.Pattern[str]
    provider: str
    rule: str  # the tdoc rule whose finding this error is the symptom of
    description: str


@dataclass(frozen=True)
class RejectionMatch:
    pattern: Pattern
    position: int | None  # the message index the error names, if any
    position_kind: str | None  # "position" | "messages" | "input"


def _p(id: str, regex: str, provider: str, rule: str, description: str) -> Pattern:
    return Pattern(id, re.compile(regex), provider, rule, description)


# Order matters: the first match wins, so the more specific patterns come first.
PATTERNS: list[Pattern] = [
    _p(
        "empty-message-at-position",
        r"message at position \d+ with role ['\"`]?[a-z]+['\"`]? must not be empty",
        "moonshot",
        "W101",
        "an empty message (typically an assistant with only empty reasoning)",
    ),
    _p("tool-use-ids-unique", r"tool_use[\s\S]*ids must be unique", "anthropic", "W105", "duplicate tool call ids"),
    _p(
        "tool-calls-need-results",
        r"assistant message with\s+['\"`]?tool_calls['\"`]?\s+must be followed by tool messages",
        "openai",
        "W103",
        "a tool call without its result",
    ),
    _p(
        "tool-call-ids-no-response",
        r"tool_call_ids? did not have response messages",
        "openai",
        "W103",
        "a tool call without its result",
    ),
    _p(
        "insufficient-tool-messages",
        r"insufficient tool messages following",
        "deepseek",
        "W103",
        "a tool call without its result",
    ),
    _p(
        "tool-role-needs-call",
        r"role\s+['\"`]?tool['\"`]?\s+must be a response to a preceding message",
        "openai",
        "W104",
        "a tool result with no call before it",
    ),
    _p("tool-call-id-not-found", r"tool_call_id[\s\S]*not found", "openai", "W104", "a result for an unknown call"),
    _p("unexpected-tool-result", r"unexpected\s+`?tool_result", "anthropic", "W104", "a tool result out of place"),
    _p("tool-use-without-result", r"tool_use[\s\S]*tool_result", "anthropic", "W103", "tool_use/tool_result pairing"),
    _p("tool-result-without-use", r"tool_result[\s\S]*tool_use", "anthropic", "W104", "tool_result/tool_use pairing"),
    _p("text-blocks-non-empty", r"text content blocks must be non-empty", "anthropic", "W102", "an empty text block"),
    _p(
        "text-blocks-non-whitespace",
        r"text content blocks must contain non-whitespace",
        "anthropic",
        "W102",
        "a whitespace-only text block",
    ),
    _p("first-message-user", r"first message must use the .*user.* role", "anthropic", "W108", "history starts wrong"),
    _p("roles-alternate", r"roles must alternate", "anthropic", "W109", "two messages of one role in a row"),
    _p(
        "multiple-roles-in-a-row",
        r"multiple .*(?:user|assistant).* roles in a row",
        "anthropic",
        "W109",
        "two messages of one role in a row",
    ),
]

_POSITION = [
    (re.compile(r"position (\d+)"), "position"),
    (re.compile(r"messages\.(\d+)"), "messages"),
    (re.compile(r"input\[(\d+)\]"), "input"),
]


def match_rejection(text: str) -> RejectionMatch | None:
    """The first structural-rejection pattern `text` matches, with the index it names."""
    lowered = text.lower()
    for pattern in PATTERNS:
        if pattern.regex.search(lowered):
            return RejectionMatch(pattern, *_position(lowered))
    return None


def _position(lowered: str) -> tuple[int | None, str | None]:
    for regex, kind in _POSITION:
        m = regex.search(lowered)
        if m:
            return int(m.group(1)), kind
    return None, None
