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
class ToolExchange:
    """The hits of the pairing pass, by kind of break, in request order."""

    hits: dict[str, list[Hit]] = field(default_factory=dict)

    def add(self, kind: str, hit: Hit) -> None:
        self.hits.setdefault(kind, []).append(hit)

    def of(self, kind: str) -> list[Hit]:
        return self.hits.get(kind, [])


def analyse(messages: list[Message]) -> ToolExchange:
    """The hits of one pass in request order. A call is registered where it is issued (`issued`:
    call id -> index of its assistant message) and answered by the first tool message that names
    it (`answered`: call id -> index of that tool message); the tool messages right after an
    assistant message are looked at when it is reached, for the calls they leave unanswered."""
    out = ToolExchange()
    issued: dict[str, int] = {}
    answered: dict[str, int] = {}
    reported: set[str] = set()  # call ids already reported unanswered
    for i, msg in enumerate(messages):
        role = msg.role
        if role == "assistant":
            if msg.tool_calls:  # half of the assistant messages carry none
                _register_calls(messages, msg, i, issued, out)
                _unanswered(messages, msg, i, reported, out)
        elif role == "tool":
            _match_result(messages, msg, i, issued, answered, out)
    return out


def _register_calls(messages: list[Message], msg: Message, i: int, issued: dict[str, int], out: ToolExchange) -> None:
    for k, call in enumerate(msg.tool_calls):
        first = issued.get(call.id)
        if first is None:
            issued[call.id] = i
            continue
        position = messages[first].position
        out.add("reused-call-id", Hit(
            msg,
            f"{describe(msg)} reuses tool call id {call.id!r} (first issued at position {position})",
            {"tool_call_id": call.id, "call_index": k, "tool_name": call.name, "first_position": position},
            edit=intent("drop_call", msg, k),
        ))


def _match_result(messages: list[Message], msg: Message, i: int, issued: dict[str, int], answered: dict[str, int],
                  out: ToolExchange) -> None:
    call_id = msg.tool_call_id or ""
    site = issued.get(call_id)
    if site is None:
        out.add("orphan-result", Hit(
            msg,
            f"tool result at request position {msg.position} answers {call_id!r}, which no earlier call issued",
            {"tool_call_id": call_id},
            edit=intent("remove_message", msg),
        ))
        return
    earlier = answered.get(call_id)
    if earlier is not None:
        answered[call_id] = _second_result(messages, msg, i, earlier, out)
        return
    answered[call_id] = i
    if i == site + 1:  # the result right after its call (the common case)
        return
    between = [m for m in messages[site + 1 : i] if m.role != "tool"]
    if between:
        out.add("displaced-result", Hit(
            msg,
            f"tool result for {call_id!r} is separated from its call by {len(between)} non-tool message(s)",
            {"tool_call_id": call_id, "call_position": messages[site].position,
             "separating_roles": [m.role for m in between]},
        ))


def _second_result(messages: list[Message], msg: Message, i: int, answered_by: int, out: ToolExchange) -> int:
    """A second result: a real one replaces an "interrupted" placeholder, else the later copy goes.
    Returns the index of the result kept."""
    call_id = msg.tool_call_id or ""
    earlier = messages[answered_by]
    replaces = is_placeholder_result(earlier) and not is_placeholder_result(msg)
    target, kept = (earlier, i) if replaces else (msg, answered_by)
    kept_position = messages[kept].position
    out.add("second-result", Hit(
        target,
        f"second tool result for call {call_id!r}; the one at request position {kept_position} is kept",
        {"tool_call_id": call_id, "kept_position": kept_position, "dropped_placeholder": target is earlier},
        edit=intent("remove_message", target),
    ))
    return kept


def _unanswered(messages: list[Message], msg: Message, i: int, reported: set[str], out: ToolExchange) -> None:
    """The calls of `msg` (at `i`) with no result among the tool messages that directly follow it."""
    j = i + 1
    n = len(messages)
    calls = msg.tool_calls
    if len(calls) == 1 and j < n:  # the commonest exchange: one call, answered by the next message
        following_msg = messages[j]
        if following_msg.role == "tool" and (following_msg.tool_call_id or "") == calls[0].id:
            return
    following: set[str] = set()
    while j < n and messages[j].role == "tool":
        following.add(messages[j].tool_call_id or "")
        j += 1
    for call in msg.tool_calls:
        if call.id in following or call.id in reported:
            continue
        reported.add(call.id)
        trailing = j >= n
        where = "at the end of the history" if trailing else f"before the next {messages[j].role} message"
        out.add("unanswered-call", Hit(
            msg,
            f"tool call {call.id!r} ({call.name or 'unnamed'}) in {describe(msg)} has no result {where}",
            {"tool_call_id": call.id, "tool_name": call.name, "where": "trailing" if trailing else "mid-history",
             "next_role": None if trailing else messages[j].role},
            edit=intent("answer_call", msg, call),
        ))
