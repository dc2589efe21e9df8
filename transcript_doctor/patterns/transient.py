"""Errors that say nothing about the history's structure (the request was too large, or the
provider was busy or broken): `tdoc explain --error` tells them apart from rejections."""

from __future__ import annotations

import re

from .unwrap import MAX_UNWRAP_CHARS, unwrap

# Errors that say nothing about the history's structure: the request was too large, or the
# provider was busy or broken. Phrases are matched as plain substrings of the lower-cased text
# (one pass each); a status counts only when the text leads with it or a JSON body names it.
TRANSIENT_KINDS: dict[str, tuple[str, ...]] = {
    "context-length": (
        "context length", "context_length", "context window", "maximum context", "prompt is too long",
        "input is too long", "too many tokens", "request too large", "request_too_large", "reduce the length",
        "maximum number of tokens", "token limit", "tokens exceed", "exceeds the limit of", "payload too large",
    ),
    "rate-limit": (
        "rate limit", "rate_limit", "ratelimit", "too many requests", "resource_exhausted", "resource exhausted",
        "quota", "throttl",
    ),
    "overloaded": ("overloaded", "over capacity", "at capacity", "temporarily unavailable"),
    "server-error": (
        "internal server error", "internal error", "bad gateway", "service unavailable", "gateway timeout",
        "timed out", "timeout", "connection reset", "econnreset", "upstream connect error", "server_error",
        "did not return a response",
    ),
}  # fmt: skip
_STATUS_KINDS = {413: "context-length", 429: "rate-limit", 529: "overloaded"}
_LEADING_STATUS = re.compile(
    r"[ \t]{0,4}(?:(?:api error|error code|http(?: error)?|status(?: code)?|error)[ \t]{0,4}[:=]?[ \t]{0,4})?"
    r"([45]\d\d)\b",
    re.IGNORECASE,
)


def transient_kind(text: str) -> str | None:
    """`context-length`, `rate-limit`, `overloaded` or `server-error` when the error is about the
    request's size or the provider's state rather than the history's structure; else None."""
    error = unwrap(text)
    lowered = f"{error.message}\n{text[:MAX_UNWRAP_CHARS]}".lower()
    for kind, phrases in TRANSIENT_KINDS.items():
        if any(phrase in lowered for phrase in phrases):
            return kind
    lead = _LEADING_STATUS.match(text)
    status = int(lead.group(1)) if lead else (error.status if "{" in text else None)
    if status is None:
        return None
    if status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    return "server-error" if 500 <= status <= 599 else None
