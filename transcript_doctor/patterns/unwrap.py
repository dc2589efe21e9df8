"""Taking a pasted or stored provider error apart: client prefixes (`API Error: 400`, `Error
code: 400 -`), JSON or Python-dict bodies, gateway wrappers (OpenRouter `metadata.raw`), down to
the innermost message, its status, `param` and type."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import orjson

MAX_UNWRAP_CHARS = 1_000_000
_STATUS = re.compile(r"\b([45]\d\d)\b")
_PREFIX = re.compile(
    r"(?:(?:api error|error code|capierror|apistatuserror|badrequesterror|validationexception|http|error)"
    r"[ \t]{0,8}:?[ \t]{0,8})?(?:[45]\d\d\b)?[ \t]{0,8}-?[ \t]{0,8}:?[ \t]{0,8}",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ProviderError:
    """A pasted or stored provider error with its wrappers taken off."""

    message: str  # the innermost human-readable message
    status: int | None = None  # HTTP status, when the text or the body names one
    param: str | None = None  # OpenAI `param` (e.g. `messages.[3].role`)
    upstream: str | None = None  # the provider a gateway (OpenRouter) names
    type: str | None = None  # the error type (`invalid_request_error`, ...)


def unwrap(text: str, depth: int = 0) -> ProviderError:
    """Take off client prefixes and JSON/Python-dict bodies, down to the innermost message."""
    status = _status(text)
    body = _body(text) if depth < 5 and len(text) <= MAX_UNWRAP_CHARS else None
    if body is None:
        return ProviderError(strip_prefixes(text), status)
    found = _dig(body, depth)
    if found is None:
        return ProviderError(strip_prefixes(text), status)
    return ProviderError(
        found.message,
        found.status or status,
        found.param,
        found.upstream,
        found.type,
    )


def strip_prefixes(text: str) -> str:
    """`API Error: 400 msg`, `Error code: 400 - msg`, `ValidationException: msg` -> `msg`."""
    out = text.strip()
    for _ in range(4):
        m = _PREFIX.match(out)
        if not m or m.end() == 0:
            break
        out = out[m.end() :].lstrip()
    return out


def _status(text: str) -> int | None:
    m = _STATUS.search(text[:200])
    return int(m.group(1)) if m else None


def _body(text: str) -> object | None:
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end <= start:
        return None
    chunk = text[start : end + 1]
    try:
        return orjson.loads(chunk)
    except orjson.JSONDecodeError:
        pass
    try:  # Python SDKs print the body as a dict repr: {'error': {'message': "..."}}
        return ast.literal_eval(chunk)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _dig(body: object, depth: int) -> ProviderError | None:
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return None
    err = body.get("error", body)
    if isinstance(err, str):
        return ProviderError(err, _int(body.get("status")) or _int(body.get("code")))
    if not isinstance(err, dict):
        return None
    meta = err.get("metadata")
    raw = meta.get("raw") if isinstance(meta, dict) else None
    if isinstance(raw, str) and raw.strip():
        inner = unwrap(raw, depth + 1)
        upstream = meta.get("provider_name") if isinstance(meta, dict) else None
        return ProviderError(inner.message, inner.status or _int(err.get("code")), inner.param,
                             upstream if isinstance(upstream, str) else inner.upstream, inner.type)  # fmt: skip
    message = next((err[k] for k in ("message", "detail", "Message") if isinstance(err.get(k), str)), None)
    if message is None:
        return None
    nested = unwrap(message, depth + 1) if "{" in message else None
    if nested is not None and nested.message != strip_prefixes(message):
        return nested
    param = err.get("param")
    kind = err.get("type")
    return ProviderError(
        message,
        _int(err.get("code")) or _int(body.get("status")),
        param if isinstance(param, str) else None,
        None,
        kind if isinstance(kind, str) else None,
    )


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) == 3:
        return int(value)
    return None
