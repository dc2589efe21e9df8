"""Runtime scaffolding that must never appear in assistant content (S304).

Each marker is a literal matched with `str.find`/`startswith` (linear, no regex backtracking on
model text). `prefix` markers only count at the start of the (left-trimmed) text: a regurgitated
compaction summary starts the reply; prose may mention the words later. The `(empty)` sentinel and
the empty-response nudge pair belong to S301/S305, and a bare `[toolname]` on a tool-calling row
is blanked by Hermes on replay, so neither is listed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...text import excerpt


@dataclass(frozen=True)
class Marker:
    id: str
    text: str
    prefix: bool = False  # only at the start of the text
    source: str = ""


MARKERS: tuple[Marker, ...] = (
    Marker("system-nudge", "[System: ", prefix=True, source="continuation/recovery prompts (user role)"),
    Marker("empty-response-nudge", "You just executed tool calls but returned an empty response",
           source="post-tool empty-response nudge (user role)"),
    Marker("tool-loop-warning", "[Tool loop warning: ", source="tool guardrails, appended to tool results"),
    Marker("tool-loop-hard-stop", "[Tool loop hard stop: ", source="tool guardrails, appended to tool results"),
    Marker("untrusted-tool-result", "<untrusted_tool_result", source="wrapper around untrusted tool output"),
    Marker("memory-context", "<memory-context>", source="memory prefetch fencing"),
    Marker("memory-context-note", "[System note: The following is recalled memory context",
           source="memory prefetch fencing"),
    Marker("skill-invocation", "[IMPORTANT: The user has invoked the ", source="skill invocation prefix (user role)"),
    Marker("skill-session", "[IMPORTANT: The user launched this CLI session with the ",
           source="skill invocation prefix (user role)"),
    Marker("compaction-summary", "[CONTEXT COMPACTION", prefix=True, source="context compressor summary"),
    Marker("compaction-summary-legacy", "[CONTEXT SUMMARY]:", prefix=True, source="context compressor summary"),
    Marker("compaction-summary-end", "--- END OF CONTEXT SUMMARY", source="context compressor summary"),
    Marker("compaction-note", "[Note: Some earlier conversation turns have been compacted",
           source="compressor handoff note"),
    Marker("model-switch-note", "[Note: model was just switched from ", prefix=True, source="model switch note"),
    Marker("interrupt-correction", "[This response was interrupted by a user correction.]",
           source="interrupt scaffolding (belongs in the user row's api_content)"),
    Marker("interrupt-context", "[Context from the interrupted assistant response]", source="interrupt scaffolding"),
    Marker("operation-interrupted", "Operation interrupted", prefix=True,
           source="interrupt final response / close_interrupted_tool_sequence"),
    Marker("background-review", "Review the conversation above and update the skill library", prefix=True,
           source="background review harness"),
    Marker("background-memory-review", "Review the conversation above and consider saving to memory", prefix=True,
           source="background review harness"),
    Marker("no-response-placeholder", "(No response generated)", prefix=True, source="gateway delivery placeholder"),
    Marker("session-repaired", "[session repaired: ", source="third-party transcript repair placeholder"),
    Marker("empty-content-sanitised", "[System: Empty message content sanitised", source="LiteLLM placeholder"),
    Marker("gemini-mandate", "<--- Remember the mandate: Never return an empty text response",
           source="prompt text leaking as output"),
)


_PREFIXED = tuple(m for m in MARKERS if m.prefix)
_PREFIX_TEXTS = tuple(m.text for m in _PREFIXED)  # one `startswith` rules them all out
_ANYWHERE: dict[str, tuple[Marker, ...]] = {}
for _m in MARKERS:
    if not _m.prefix:
        _ANYWHERE[_m.text[0]] = _ANYWHERE.get(_m.text[0], ()) + (_m,)
_ANYWHERE_GROUPS = tuple(_ANYWHERE.items())


def find_markers(text: str) -> list[tuple[Marker, int]]:
    """Markers present in `text` with the offset of each (prefix markers first)."""
    found: list[tuple[Marker, int]] = []
    head_offset = len(text) - len(text.lstrip()) if text[:1].isspace() else 0
    if text.startswith(_PREFIX_TEXTS, head_offset):
        for marker in _PREFIXED:
            if text.startswith(marker.text, head_offset):
                found.append((marker, head_offset))
    for first, group in _ANYWHERE_GROUPS:
        if first not in text:
            continue  # one scan rules out the whole group
        for marker in group:
            at = text.find(marker.text)
            if at >= 0:
                found.append((marker, at))
    return found


def marker_evidence(text: str, found: list[tuple[Marker, int]]) -> dict[str, object]:
    first, offset = min(found, key=lambda f: f[1])
    return {
        "markers": [m.id for m, _ in found],
        "sources": sorted({m.source for m, _ in found}),
        "offset": offset,
        "text": excerpt(text[offset:]),
    }
