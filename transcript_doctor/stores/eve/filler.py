"""S306's text test: is a delivered reply conversational filler rather than an answer?

An unattended eve run whose model returned nothing was retried with a nudge, and the retry answered
with a sentence about itself ("I now have all the data I need.") or a promise of content that
never came ("Here is the report:"). Such a reply is short, carries no data, and either ends with a
colon or narrates the agent's own progress. Real short answers carry data (counts, times, ids,
lists, code, links) or state a finding, and are left alone.

The text is at most `MAX_CHARS` long before any pattern runs, so no pattern sees a long input; the
patterns are still written without nested quantifiers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...text import js_trim

MAX_CHARS = 120

# Data: any digit (counts, times, ids), code, a link, a table row or a list item.
_DATA = re.compile(r"\d|`|https?://|www\.|\|[^|\n]*\||^[ \t]*[-*+\u2022][ \t]", re.MULTILINE)
# Interjections a model opens filler with; removed before the narration patterns run.
_OPENER = re.compile(
    r"^(?:(?:alright|all right|ok|okay|great|perfect|good|got it|right|so|now|done|excellent)[,.!]?\s+)+"
)
_NARRATION = [
    # "I now have all the data I need", "I have gathered everything I need", "I've got what I need"
    (
        "has-what-it-needs",
        re.compile(
            r"\b(?:i|we)(?: now)?(?: have|'ve)?(?: now)?(?: got| gathered| collected| obtained| retrieved| pulled)?"
            r" (?:all (?:of )?(?:the )?(?:data|information|info|details|results|context)|everything"
            r"|enough (?:data|information|info|context)|what)"
            r"(?: (?:that )?(?:i|we) (?:need|needed|require)\b| (?:needed|required)\b| (?:to|for) [a-z]|[.!]?\Z)"
        ),
    ),
    # "Let me compile the report", "I'll now summarise", "I am going to put together ..."
    (
        "announces-next-step",
        re.compile(
            r"^(?:let me|let's|i(?:'ll| will| am going to|'m going to|'m about to| am about to| can now| shall))"
            r" (?:now )?(?:compile|summari[sz]e|put together|pull together|prepare|write|draft|generate"
            r"|create|assemble|format|present|share|send|post|deliver|provide|give|report|put)\b"
        ),
    ),
    # "Compiling the weekly numbers now", "Putting together the digest"
    (
        "progress-gerund",
        re.compile(
            r"^(?:compiling|preparing|generating|assembling|summari[sz]ing|drafting|writing up"
            r"|putting together|pulling together|formatting|finali[sz]ing|gathering|collecting)\b"
        ),
    ),
    # "Here is the report.", "Here's the summary!" -- a presentation with nothing presented
    ("presents-nothing", re.compile(r"^(?:here(?:'s| is| are)|below (?:is|are))(?: [a-z'-]+){1,5}[.!]?\Z")),
]


@dataclass(frozen=True)
class FillerVerdict:
    kind: str  # "promise" (ends with ':') or a narration pattern name
    text: str


def _normalise(text: str) -> str:
    text = js_trim(text).lower().replace("\u2019", "'")
    return _OPENER.sub("", text)


def filler_kind(text: str | None) -> FillerVerdict | None:
    """The kind of filler `text` is, or None for a real (or empty) answer."""
    if text is None:
        return None
    body = js_trim(text)
    if not body or len(body) >= MAX_CHARS or _DATA.search(body):
        return None
    if body.endswith(":"):
        return FillerVerdict("promise", body)
    plain = _normalise(body)
    for name, pattern in _NARRATION:
        if pattern.search(plain):
            return FillerVerdict(name, body)
    return None
