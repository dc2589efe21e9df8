"""The one-pass tool-exchange analysis is pinned to the two-pass reference it replaced.

`analyse` registers calls, matches results and finds unanswered calls in one walk over the
messages. The reference below keeps the earlier shape (a call-site record per issued call, then a
second walk for unanswered calls); every kind of break must come out with the same hits in the same
order, on conversations drawn from few call ids so that reuse, second results, orphans, displaced
and unanswered calls all occur.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.model import Message, Part, ToolCall
from transcript_doctor.rules.shared.predicates import is_placeholder_result
from transcript_doctor.rules.shared.support import Hit, describe, intent
from transcript_doctor.rules.shared.tool_exchange import ToolExchange, analyse

KINDS = ("unanswered-call", "orphan-result", "reused-call-id", "second-result", "displaced-result")


@dataclass
class _Site:
    index: int
    position: int | None
    answered_by: int | None = None


def reference(messages: list[Message]) -> ToolExchange:
    out = ToolExchange()
    calls: dict[str, _Site] = {}
    for i, msg in enumerate(messages):
        if msg.role == "assistant":
            for k, call in enumerate(msg.tool_calls):
                if call.id in calls:
                    first = calls[call.id]
                    out.add("reused-call-id", Hit(
                        msg, f"{describe(msg)} reuses tool call id {call.id!r} (first issued at position {first.position})",
                        {"tool_call_id": call.id, "call_index": k, "tool_name": call.name, "first_position": first.position},
                        edit=intent("drop_call", msg, k)))
                    continue
                calls[call.id] = _Site(i, msg.position)
        elif msg.role == "tool":
            _match(messages, msg, i, calls, out)
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
            out.add("unanswered-call", Hit(
                msg, f"tool call {call.id!r} ({call.name or 'unnamed'}) in {describe(msg)} has no result {where}",
                {"tool_call_id": call.id, "tool_name": call.name, "where": "trailing" if trailing else "mid-history",
                 "next_role": None if trailing else messages[j].role},
                edit=intent("answer_call", msg, call)))
    return out


def _match(messages: list[Message], msg: Message, i: int, calls: dict[str, _Site], out: ToolExchange) -> None:
    call_id = msg.tool_call_id or ""
    site = calls.get(call_id)
    if site is None:
        out.add("orphan-result", Hit(
            msg, f"tool result at request position {msg.position} answers {call_id!r}, which no earlier call issued",
            {"tool_call_id": call_id}, edit=intent("remove_message", msg)))
        return
    if site.answered_by is not None:
        earlier = messages[site.answered_by]
        replaces = is_placeholder_result(earlier) and not is_placeholder_result(msg)
        target, kept = (earlier, i) if replaces else (msg, site.answered_by)
        kept_position = messages[kept].position
        out.add("second-result", Hit(
            target, f"second tool result for call {call_id!r}; the one at request position {kept_position} is kept",
            {"tool_call_id": call_id, "kept_position": kept_position, "dropped_placeholder": target is earlier},
            edit=intent("remove_message", target)))
        site.answered_by = kept
        return
    site.answered_by = i
    between = [m for m in messages[site.index + 1 : i] if m.role != "tool"]
    if between:
        out.add("displaced-result", Hit(
            msg, f"tool result for {call_id!r} is separated from its call by {len(between)} non-tool message(s)",
            {"tool_call_id": call_id, "call_position": site.position, "separating_roles": [m.role for m in between]}))


IDS = st.sampled_from(["a", "b", "c", ""])
TEXTS = st.sampled_from(["", "ok", "interrupted", "[Tool execution was interrupted]", "done"])


@st.composite
def conversations(draw: Any) -> list[Message]:
    messages: list[Message] = []
    for position in range(draw(st.integers(0, 9))):
        role = draw(st.sampled_from(["user", "assistant", "assistant", "tool", "tool", "system"]))
        calls = [ToolCall(draw(IDS), draw(st.sampled_from(["", "bash"]))) for _ in range(draw(st.integers(0, 2)))]
        messages.append(Message(
            role, [Part("text", draw(TEXTS))], calls if role == "assistant" else [],
            draw(st.one_of(st.none(), IDS)) if role == "tool" else None,
            position=draw(st.one_of(st.none(), st.just(position))),
        ))
    return messages


def _shape(exchange: ToolExchange) -> dict[str, list[tuple[Any, ...]]]:
    """Each kind's hits as comparable values (the message by identity, the edit by what it does)."""
    return {kind: [(id(h.msg), h.message, h.evidence, h.part, h.edit is None) for h in exchange.of(kind)]
            for kind in KINDS}


@settings(max_examples=600, deadline=None)
@given(conversations())
def test_one_pass_matches_the_two_pass_reference(messages: list[Message]) -> None:
    assert _shape(analyse(messages)) == _shape(reference(messages))


def test_every_kind_of_break_is_found() -> None:
    """A labelled conversation with one break of each kind (so the comparison above is not vacuous)."""
    def call(i: str) -> ToolCall:
        return ToolCall(i, "bash")

    convo = [
        Message("user", [Part("text", "go")], position=0),
        Message("assistant", [], [call("a"), call("b")], position=1),
        Message("tool", [Part("text", "interrupted")], tool_call_id="a", position=2),
        Message("tool", [Part("text", "real")], tool_call_id="a", position=3),  # second result, replaces
        Message("tool", [Part("text", "x")], tool_call_id="z", position=4),  # orphan
        Message("assistant", [], [call("a"), call("c")], position=5),  # reuses a; c displaced below
        Message("user", [Part("text", "and?")], position=6),
        Message("tool", [Part("text", "late")], tool_call_id="c", position=7),
    ]
    found = _shape(analyse(convo))
    assert found == _shape(reference(convo))
    assert {kind: len(hits) for kind, hits in found.items()} == {
        "unanswered-call": 3, "orphan-result": 1, "reused-call-id": 1, "second-result": 1, "displaced-result": 1}
