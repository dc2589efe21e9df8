"""One pass over a conversation's tool exchanges, shared by the tool-pairing rules.

Every call must be answered once, right after it, and every result must answer an earlier call.
The pass pairs calls with results in request order and records each break of that contract as a
`Hit` under the name of the break (`unanswered-call`, `orphan-result`, `reused-call-id`,
`second-result`, `displaced-result`); each rule module takes the hits of its break.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model import Message
from .predicates import is_placeholder_result
from .support import Hit, describe, intent


@dataclass
class _CallSite:
    index: int  # index in the messages of the assistant message carrying the call
    name: str
    position: int | None = None
    answered_by: int | None = None  # index of the tool message that answers it


@dataclass
class ToolExchange:
    """The hits of the pairing pass, by kind of break, in request order."""

    hits: dict[str, list[Hit]] = field(default_factory=dict)

    def add(self, kind: str, hit: Hit) -> None:
        self.hits.setdefault(kind, []).append(hit)

    def of(self, kind: str) -> list[Hit]:
        return self.hits.get(kind, [])


def analyse(messages: list[Message]) -> ToolExchange:
    out = ToolExchange()
    calls: dict[str, _CallSite] = {}
    for i, msg in enumerate(messages):
        if msg.role == "assistant":
            if msg.tool_calls:  # half of the assistant messages carry none
                _register_calls(msg, i, calls, out)
        elif msg.role == "tool":
            _match_result(messages, msg, i, calls, out)
    for hit in _unanswered(messages):
        out.add("unanswered-call", hit)
    return out


def _register_calls(msg: Message, i: int, calls: dict[str, _CallSite], out: ToolExchange) -> None:
    for k, call in enumerate(msg.tool_calls):
        if call.id in calls:
            first = calls[call.id]
            out.add("reused-call-id", Hit(
                msg,
                f"{describe(msg)} reuses tool call id {call.id!r} (first issued at position {first.position})",
                {"tool_call_id": call.id, "call_index": k, "tool_name": call.name, "first_position": first.position},
                edit=intent("drop_call", msg, k),
            ))
            continue
        calls[call.id] = _CallSite(i, call.name, msg.position)


def _match_result(messages: list[Message], msg: Message, i: int, calls: dict[str, _CallSite], out: ToolExchange) -> None:
    call_id = msg.tool_call_id or ""
    site = calls.get(call_id)
    if site is None:
        out.add("orphan-result", Hit(
            msg,
            f"tool result at request position {msg.position} answers {call_id!r}, which no earlier call issued",
            {"tool_call_id": call_id},
            edit=intent("remove_message", msg),
        ))
        return
    if site.answered_by is not None:
        _second_result(messages, msg, i, site, out)
        return
    site.answered_by = i
    if i == site.index + 1:  # the result right after its call (the common case)
        return
    between = [m for m in messages[site.index + 1 : i] if m.role != "tool"]
    if between:
        out.add("displaced-result", Hit(
            msg,
            f"tool result for {call_id!r} is separated from its call by {len(between)} non-tool message(s)",
            {"tool_call_id": call_id, "call_position": site.position, "separating_roles": [m.role for m in between]},
        ))


def _second_result(messages: list[Message], msg: Message, i: int, site: _CallSite, out: ToolExchange) -> None:
    """A second result: a real one replaces an "interrupted" placeholder, else the later copy goes."""
    call_id = msg.tool_call_id or ""
    earlier = messages[site.answered_by] if site.answered_by is not None else msg
    replaces = is_placeholder_result(earlier) and not is_placeholder_result(msg)
    target, kept = (earlier, i) if replaces else (msg, site.answered_by)
    kept_position = messages[kept].position if kept is not None else None
    out.add("second-result", Hit(
        target,
        f"second tool result for call {call_id!r}; the one at request position {kept_position} is kept",
        {"tool_call_id": call_id, "kept_position": kept_position, "dropped_placeholder": target is earlier},
        edit=intent("remove_message", target),
    ))
    site.answered_by = kept


def _unanswered(messages: list[Message]) -> list[Hit]:
    """A call with no result among the tool messages that directly follow it."""
    hits: list[Hit] = []
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        if msg.role != "assistant" or not msg.tool_calls:
            continue
        j = i + 1
        answered: set[str] = set()
        while j < len(messages) and messages[j].role == "tool":
            answered.add(messages[j].tool_call_id or "")
            j += 1
        trailing = j >= len(messages)
        for call in msg.tool_calls:
            if call.id in answered or call.id in seen:
                continue
            seen.add(call.id)
            where = "at the end of the history" if trailing else f"before the next {messages[j].role} message"
            hits.append(Hit(
                msg,
                f"tool call {call.id!r} ({call.name or 'unnamed'}) in {describe(msg)} has no result {where}",
                {"tool_call_id": call.id, "tool_name": call.name, "where": "trailing" if trailing else "mid-history",
                 "next_role": None if trailing else messages[j].role},
                edit=intent("answer_call", msg, call),
            ))
    return hits
