"""Tool-exchange and shape problems the kimi projections repair themselves (W102–W109).

Each engine's projection reports the repairs it made (the 9 anomaly kinds). A repair made on
every normal request means the provider never sees the problem: the finding is one severity level
lower than the rule's default. A repair made only in the strict resend means every request first
fails with a 400 and is sent again: the finding keeps the rule's severity.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...model import Finding
from ...rules import RULES
from .replay import projected

KIND_TO_CODE = {
    "whitespace_text_dropped": "W102",
    "tool_result_synthesized": "W103",
    "orphan_tool_result_dropped": "W104",
    "duplicate_tool_call_dropped": "W105",
    "duplicate_tool_result_dropped": "W106",
    "tool_result_reordered": "W107",
    "leading_non_user_dropped": "W108",
    "consecutive_assistants_merged": "W109",
}
LOWER = {"error": "warning", "warning": "info", "info": "info"}
DESCRIBE = {
    "W102": "a whitespace-only text part is dropped from a {role} message",
    "W103": "tool call {toolCallId} has no recorded result; the runtime sends a placeholder or interrupted result",
    "W104": "tool result {toolCallId} answers no earlier call; the projection drops it",
    "W105": "tool call id {toolCallId} is used twice; the strict resend drops the later call",
    "W106": "tool call {toolCallId} has a second result; the strict resend drops it",
    "W107": "the result of tool call {toolCallId} is separated from its call; the projection moves it up",
    "W108": "the history starts with a {role} message; the strict resend drops it",
    "W109": "two assistant messages follow each other; the strict resend merges them",
}


def anomaly_findings(mk: Any, state: Any, engines: tuple[str, ...]) -> Iterator[Finding]:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for engine in engines:
        if engine in state.crash:
            continue
        history = state.v1.history if engine == "v1" else state.v2.history
        for m in history:  # calls the engine itself closed with an "interrupted" result
            if (m.get("_src") or ("",))[0] == "synth":
                key = ("W103", repr(m.get("toolCallId")), repr(None))
                entry = seen.setdefault(key, {"anomaly": {"kind": "interrupted_result_added",
                                                          "toolCallId": m.get("toolCallId")},
                                              "engines": set(), "normal": True, "history": history})
                entry["engines"].add(engine)
        for strict in (False, True):
            projection = projected(state, engine, strict=strict)
            for anomaly in projection.anomalies if projection else ():
                code = KIND_TO_CODE.get(anomaly["kind"])
                if code is None:
                    continue  # vacuous_message_dropped is W101's
                key = (code, repr(anomaly.get("toolCallId")), repr(anomaly.get("role")))
                entry = seen.setdefault(key, {"anomaly": anomaly, "engines": set(), "normal": False, "history": history})
                entry["engines"].add(engine)
                entry["normal"] = entry["normal"] or not strict
    for (code, _, _), entry in seen.items():
        yield _finding(mk, code, entry)


def _finding(mk: Any, code: str, entry: dict[str, Any]) -> Finding:
    anomaly = entry["anomaly"]
    engines = entry["engines"]
    engine = "both" if len(engines) == 2 else next(iter(engines))
    default = RULES[code].severity
    severity = LOWER[default] if entry["normal"] else default
    text = DESCRIBE[code].format(toolCallId=anomaly.get("toolCallId"), role=anomaly.get("role"))
    where = "every request" if entry["normal"] else "the strict resend after a 400"
    lines = _lines_for(entry["history"], code, anomaly)
    return mk(code, f"{text} (repaired by kimi-code in {where})", line=min(lines) if lines else None,
              end_line=max(lines) if lines else None, engine=engine, severity=severity,
              evidence={"anomaly": anomaly, "repaired_in": "normal" if entry["normal"] else "strict"})


def _lines_for(history: list[dict[str, Any]], code: str, anomaly: dict[str, Any]) -> list[int]:
    call_id = anomaly.get("toolCallId")
    if call_id is not None:
        want_tool = code in ("W104", "W106", "W107")
        return [_line(m) for m in history if _matches(m, call_id, want_tool) and _line(m) is not None]
    if code == "W102":
        return [_line(m) for m in history if _has_whitespace_part(m) and _line(m) is not None][:1]
    if code == "W108":
        first = next((m for m in history if not m.get("partial")), None)
        return [_line(first)] if first is not None and _line(first) is not None else []
    return []


def _matches(m: dict[str, Any], call_id: Any, want_tool: bool) -> bool:
    if want_tool:
        return m.get("role") == "tool" and m.get("toolCallId") == call_id
    calls = m.get("toolCalls")
    return isinstance(calls, list) and any(isinstance(c, dict) and c.get("id") == call_id for c in calls)


def _has_whitespace_part(m: dict[str, Any]) -> bool:
    from ...text import js_trim

    content = m.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        and p["text"] and not js_trim(p["text"])
        for p in content
    )


def _line(m: dict[str, Any]) -> int | None:
    src = m.get("_src") or ()
    if not src or src[0] == "synth":
        return None
    return src[-1]
