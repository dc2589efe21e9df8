"""Normalise kimi-code messages the way fixtures/kimi-code/golden/README.md says to compare them."""

from __future__ import annotations

from typing import Any

_MEDIA = ("imageUrl", "audioUrl", "videoUrl")


def part(p: Any) -> Any:
    if not isinstance(p, dict):
        return p
    kind = p.get("type")
    out: dict[str, Any] = {"type": kind}
    if kind == "text":
        out["text"] = p.get("text")
    elif kind == "think":
        out["think"] = p.get("think")
        if "encrypted" in p:  # presence alone means "signed"
            out["encrypted"] = p["encrypted"]
    else:
        for key in _MEDIA:
            if key in p:
                out["url"] = (p[key] or {}).get("url")
    return out


def message(m: Any) -> Any:
    if not isinstance(m, dict):
        return m
    content = m.get("content")
    out: dict[str, Any] = {
        "role": m.get("role"),
        "content": [part(p) for p in content] if isinstance(content, list) else content,
    }
    calls = [(c.get("id"), c.get("name"), c.get("arguments")) for c in m.get("toolCalls") or []]
    if calls:
        out["toolCalls"] = calls
    if m.get("toolCallId"):
        out["toolCallId"] = m["toolCallId"]
    if m.get("isError"):
        out["isError"] = True
    origin = m.get("origin")
    if isinstance(origin, dict):
        out["origin"] = (origin.get("kind"), origin.get("variant"))
    if m.get("partial"):
        out["partial"] = True
    return out


def messages(ms: list[Any]) -> list[Any]:
    return [message(m) for m in ms]


def anomalies(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: a[k] for k in ("kind", "toolCallId", "role", "trailing") if k in a} for a in items]
