"""Engine v2 (`packages/agent-core-v2`) projection: pairing, then flattening (docs/kimi-replay.md §4).

Pairing walks the history once and attaches every tool result to the open call it answers (or
drops it as an orphan); flattening emits blocks, merging runs of user prompts and giving every
call exactly one result in call order. The strict resend is dedupe -> assistant merge -> leading
drop on top of that, with the passes shared with v1.
"""

from __future__ import annotations

from typing import Any

from .request_shape import (
    Item,
    anomaly,
    call_id,
    drop_blank_texts,
    is_mergeable_user,
    merge_user_runs,
    result_id,
    sendable_content,
    synthetic_result,
    wire_message,
)
from .v1 import dedupe, drop_leading_non_user, keep_sendable, merge_assistants

Anomalies = list[dict]


class Exchange:
    """An assistant with tool calls and, per call slot, the result paired to it so far."""

    __slots__ = ("item", "owner", "results")

    def __init__(self, item: Item, owner: int, results: list[Item | None] | None = None) -> None:
        self.item = item
        self.owner = owner  # history index of the assistant
        self.results: list[Item | None] = [] if results is None else results


class OpenCall:
    """A tool call of the request still waiting for its result."""

    __slots__ = ("exchange", "slot", "opened_at")

    def __init__(self, exchange: Exchange, slot: int, opened_at: int) -> None:
        self.exchange = exchange
        self.slot = slot  # index of the call in the assistant's toolCalls
        self.opened_at = opened_at  # the pairing's foreign-message count when the call was opened

    def answer(self, result: Item) -> None:
        self.exchange.results[self.slot] = result


Block = Item | Exchange


class Pairing:
    """Where v2's pairing of tool calls with their results stands while the request is built."""

    __slots__ = ("last", "sizing", "prefix", "out", "blocks", "open", "foreign")

    def __init__(self, last: int, sizing: bool, prefix: bool, out: Anomalies, blocks: list[Block] | None = None,
                 open: dict[Any, OpenCall] | None = None, foreign: int = 0) -> None:  # fmt: skip
        self.last = last  # history index of the last sent non-tool message
        self.sizing = sizing  # no real assistant yet: tool messages are plain messages
        self.prefix = prefix
        self.out = out
        self.blocks: list[Block] = [] if blocks is None else blocks
        self.open: dict[Any, OpenCall] = {} if open is None else open
        self.foreign = foreign  # messages seen so far that answer none of the open calls

    def see_foreign(self) -> None:
        """Every call open now has seen a foreign message (a counter keeps this O(1))."""
        self.foreign += 1

    def attach(self, index: int, msg: dict) -> None:
        """A tool result: pair it with its open call, or drop it as an orphan."""
        rid = result_id(msg)
        if rid is None:
            return
        call = self.open.pop(rid, None)
        if call is None:
            self.see_foreign()
            self.out.append(anomaly("orphan_tool_result_dropped", toolCallId=msg.get("toolCallId")))
            return
        content = drop_blank_texts(sendable_content(msg), "tool", self.out)
        call.answer(Item(wire_message(msg, content), [index]))
        if self.foreign > call.opened_at:
            self.out.append(anomaly("tool_result_reordered", toolCallId=msg.get("toolCallId")))

    def add(self, index: int, msg: dict) -> None:
        """Any other message: a plain block, or an exchange that opens its calls."""
        role = msg.get("role")
        content = drop_blank_texts(sendable_content(msg), role, self.out)
        if not keep_sendable(msg, content, role, self.prefix, self.out):
            return
        self.see_foreign()
        item = Item(wire_message(msg, content), [index], is_mergeable_user(msg))
        if not item.calls:
            self.blocks.append(item)
            return
        exchange = Exchange(item, index, [None] * len(item.calls))
        for slot, call in enumerate(item.calls):
            self._reopen(call)
            self.open[call_id(call)] = OpenCall(exchange, slot, self.foreign)
        self.blocks.append(exchange)

    def _reopen(self, call: dict) -> None:
        """A call id reused while still open (even in the same assistant): the earlier call
        gets a placeholder now."""
        earlier = self.open.pop(call_id(call), None)
        if earlier is None:
            return
        earlier.answer(synthetic_result(call.get("id")))
        trailing = earlier.exchange.owner >= self.last
        self.out.append(anomaly("tool_result_synthesized", toolCallId=call.get("id"), trailing=trailing))


def _pair(history: list[dict], prefix: bool, out: Anomalies) -> Pairing:
    sent = [(i, m) for i, m in enumerate(history) if not m.get("partial")]
    sizing = not any(m.get("role") == "assistant" for _, m in sent)
    last = max((i for i, m in sent if m.get("role") != "tool"), default=-1)
    pairing = Pairing(last, sizing, prefix, out)
    for index, msg in sent:
        if msg.get("role") == "tool" and not sizing:
            pairing.attach(index, msg)
        else:
            pairing.add(index, msg)
    return pairing


# --------------------------------------------------------------------------- flattening


def _emit_exchange(exchange: Exchange, last: int, out: Anomalies) -> list[Item]:
    emitted = [exchange.item]
    for call, result in zip(exchange.item.calls, exchange.results):
        if result is None:
            trailing = exchange.owner >= last
            out.append(anomaly("tool_result_synthesized", toolCallId=call.get("id"), trailing=trailing))
            result = synthetic_result(call.get("id"))
        emitted.append(result)
    return emitted


def _flatten(pairing: Pairing) -> list[Item]:
    """Emit the blocks in order, then merge runs of user prompts (an exchange breaks a run)."""
    items: list[Item] = []
    for block in pairing.blocks:
        if isinstance(block, Exchange):
            items += _emit_exchange(block, pairing.last, pairing.out)
        else:
            items.append(block)
    return merge_user_runs(items, "v2")


def project_v2(history: list[dict], strict: bool, prefix: bool) -> tuple[list[Item], Anomalies]:
    out: Anomalies = []
    items = _flatten(_pair(history, prefix, out))
    if strict:
        items = dedupe(items, prefix, out, upgrade=True)
        items = merge_assistants(items, out)
        items = drop_leading_non_user(items, out)
    return items, out
