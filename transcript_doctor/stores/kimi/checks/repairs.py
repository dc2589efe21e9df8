"""Tool-exchange and shape problems the kimi projections repair themselves, as `Repair`s.

Each engine's projection reports the repairs it made (the 9 anomaly kinds; the vacuous-message
one is W101's, reported from the steps). A repair made on every normal request means the
provider never sees the problem; one made only in the strict resend means every request first
fails with a 400 and is sent again. The rule engine sets the severity from that (`Repair.when`).
A repair seen under both engines, or in both passes, is reported once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ....conversation import Repair
from ....model import Loc
from ....rules.shared import w102_blank_text_part as w102
from ....rules.shared import w103_orphan_tool_call as w103
from ....rules.shared import w104_orphan_tool_result as w104
from ....rules.shared import w105_duplicate_tool_call_id as w105
from ....rules.shared import w106_duplicate_tool_result as w106
from ....rules.shared import w107_displaced_tool_result as w107
from ....rules.shared import w108_leading_non_user as w108
from ....rules.shared import w109_consecutive_assistants as w109
from ....text import indefinite
from ..replay.driver import projected

# anomaly kind -> (rule, what the runtime does about it)
REPAIRS = {
    "whitespace_text_dropped": (w102.RULE, "a whitespace-only text part is dropped from {a_role} message"),
    "tool_result_synthesized": (w103.RULE, "tool call {toolCallId} has no recorded result; "
                                "the runtime sends a placeholder or interrupted result"),
    "orphan_tool_result_dropped": (w104.RULE, "tool result {toolCallId} answers no earlier call; the projection drops it"),
    "duplicate_tool_call_dropped": (w105.RULE, "tool call id {toolCallId} is used twice; the strict resend drops the later call"),
    "duplicate_tool_result_dropped": (w106.RULE, "tool call {toolCallId} has a second result; the strict resend drops it"),
    "tool_result_reordered": (w107.RULE, "the result of tool call {toolCallId} is separated from its call; "
                              "the projection moves it up"),
    "leading_non_user_dropped": (w108.RULE, "the history starts with {a_role} message; the strict resend drops it"),
    "consecutive_assistants_merged": (w109.RULE, "two assistant messages follow each other; the strict resend merges them"),
}
KIND_TO_CODE = {kind: rule.code for kind, (rule, _) in REPAIRS.items()}
DESCRIBE = {rule.code: text for rule, text in REPAIRS.values()}
# Tool results (not calls) are where these problems sit in the journal.
_ON_RESULT = frozenset({w104.RULE.code, w106.RULE.code, w107.RULE.code})


def repairs(state: Any, engines: tuple[str, ...], member: str | None = None) -> Iterator[Repair]:
    """The repairs the selected engines' projections make (normal request and strict resend)."""
    where: dict[int, CallLines] = {}  # id(history) -> its call index, built on the first repair that asks
    for (code, _call, _role), entry in _merged_anomalies(state, engines).items():
        history = entry["history"]
        index = where.get(id(history))
        if index is None:
            index = where[id(history)] = CallLines(history)
        yield _repair(code, entry, member, index)


def _merged_anomalies(state: Any, engines: tuple[str, ...]) -> dict[tuple[Any, ...], dict[str, Any]]:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for engine in engines:
        if engine in state.crash:
            continue
        history = state.v1.history if engine == "v1" else state.v2.history
        for m in history:  # calls the engine itself closed with an "interrupted" result
            if (m.get("_src") or ("",))[0] == "synth":
                key = (w103.RULE.code, repr(m.get("toolCallId")), repr(None))
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
    return seen


def _repair(code: str, entry: dict[str, Any], member: str | None, index: CallLines) -> Repair:
    anomaly = entry["anomaly"]
    engines = entry["engines"]
    text = DESCRIBE[code].format(toolCallId=anomaly.get("toolCallId"), a_role=indefinite(anomaly.get("role")))
    where = "every request" if entry["normal"] else "the strict resend after a 400"
    lines = _lines_for(entry["history"], code, anomaly, index)
    evidence: dict[str, Any] = {"anomaly": anomaly, "repaired_in": "normal" if entry["normal"] else "strict"}
    if member:
        evidence["member"] = member
    return Repair(
        code, f"{text} (repaired by kimi-code in {where})",
        "every-request" if entry["normal"] else "strict-resend",
        source=Loc(line=min(lines) if lines else None, end_line=max(lines) if lines else None),
        evidence=evidence, engine="both" if len(engines) == 2 else next(iter(engines)),
    )


class CallLines:
    """Where each tool call id sits in one history: the journal lines of the messages that make a
    call with that id, and of the tool messages that answer it, in history order. One pass over
    the history serves every repair of it (a search per repair grew with the square of a history
    of orphan calls). Ids that are not strings or integers are searched for as before."""

    def __init__(self, history: list[dict[str, Any]]) -> None:
        self.calls: dict[Any, list[int]] = {}
        self.results: dict[Any, list[int]] = {}
        for m in history:
            line = _line(m)
            if line is None:
                continue
            if m.get("role") == "tool":
                _add(self.results, m.get("toolCallId"), line)
            calls = m.get("toolCalls")
            if isinstance(calls, list):
                for call_id in {_key(c.get("id")) for c in calls if isinstance(c, dict)}:
                    _add(self.calls, call_id, line)

    def lines(self, call_id: str | int, want_tool: bool) -> list[int]:
        return (self.results if want_tool else self.calls).get(call_id, [])


def _key(value: Any) -> Any:
    """A call id as an index key (an unhashable one, which no string or integer equals, as None)."""
    try:
        hash(value)
    except TypeError:
        return None
    return value


def _add(index: dict[Any, list[int]], key: Any, line: int) -> None:
    key = _key(key)
    if key is not None:
        index.setdefault(key, []).append(line)


def _lines_for(history: list[dict[str, Any]], code: str, anomaly: dict[str, Any], index: CallLines) -> list[int]:
    call_id = anomaly.get("toolCallId")
    if call_id is not None:
        want_tool = code in _ON_RESULT
        if call_id.__class__ is str or call_id.__class__ is int:
            return index.lines(call_id, want_tool)
        return _known_lines(m for m in history if _matches(m, call_id, want_tool))
    if code == w102.RULE.code:
        return _known_lines(m for m in history if _has_whitespace_part(m))[:1]
    if code == w108.RULE.code:
        first = next((m for m in history if not m.get("partial")), None)
        return _known_lines([first] if first is not None else [])
    return []


def _known_lines(messages: Iterable[dict[str, Any]]) -> list[int]:
    return [line for m in messages if (line := _line(m)) is not None]


def _matches(m: dict[str, Any], call_id: Any, want_tool: bool) -> bool:
    if want_tool:
        return m.get("role") == "tool" and m.get("toolCallId") == call_id
    calls = m.get("toolCalls")
    return isinstance(calls, list) and any(isinstance(c, dict) and c.get("id") == call_id for c in calls)


def _has_whitespace_part(m: dict[str, Any]) -> bool:
    from ....text import js_trim

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
