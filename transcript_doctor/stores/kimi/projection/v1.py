"""Engine v1 (`packages/agent-core`) projection: history -> request, as a chain of passes.

Normal request: prepare+merge, adjacency repair, orphan drop. Strict resend adds the call/result
dedupe before the adjacency repair, synthesizes every missing result, folds consecutive
assistants, and drops leading non-user messages (docs/kimi-replay.md §3). The dedupe, assistant-merge and
leading-drop passes are also the tail of the v2 strict projection.
"""

from __future__ import annotations

from bisect import bisect_left

from ..engines.vacuous import is_vacuous_content
from .request_shape import (
    Item,
    anomaly,
    call_id,
    calls_of,
    drop_blank_texts,
    has_tools,
    is_mergeable_user,
    is_placeholder,
    merge_user_runs,
    result_id,
    sendable_content,
    synthetic_result,
    wire_message,
    with_calls,
)

Anomalies = list[dict]


# --------------------------------------------------------------------------- 1. prepare


def keep_sendable(msg: dict, content: list, role: object, prefix: bool, out: Anomalies) -> bool:
    """Whether a cleaned message is sent (both engines use the same rule).

    Messages with tool calls or a tool list always go. An empty one is dropped silently; one made
    only of vacuous parts is dropped and reported, except by a pre-fix build (`prefix`).
    """
    if calls_of(msg) or has_tools(msg):
        return True
    if not content:
        return False
    if not prefix and is_vacuous_content(content):
        out.append(anomaly("vacuous_message_dropped", role=role))
        return False
    return True


def prepare(history: list[dict], prefix: bool, out: Anomalies) -> list[Item]:
    """Skip partial steps, render results, clean and filter content, then merge user prompts
    (v1 merges here, before any tool result moves)."""
    items: list[Item] = []
    for index, msg in enumerate(history):
        if msg.get("partial"):
            continue
        role = msg.get("role")
        parts = sendable_content(msg)
        _require_string_texts(parts)
        content = drop_blank_texts(parts, role, out)
        if keep_sendable(msg, content, role, prefix, out):
            items.append(Item(wire_message(msg, content), [index], is_mergeable_user(msg)))
    return merge_user_runs(items, "v1")


def _require_string_texts(parts: list) -> None:
    """v1 trims every text part; a text that is not a string (an object summary, an unchecked
    content part) makes the projection throw there, as upstream (`part.text.trim is not a function`)."""
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "text" and not isinstance(part.get("text"), str):
            raise TypeError("part.text.trim is not a function")


# --------------------------------------------------------------------------- 2. dedupe (strict)


def _dedupe_assistant(item: Item, seen: set, prefix: bool, out: Anomalies) -> Item | None:
    kept = []
    for call in item.calls:
        if call_id(call) in seen:
            out.append(anomaly("duplicate_tool_call_dropped", toolCallId=call.get("id")))
        else:
            seen.add(call_id(call))
            kept.append(call)
    if len(kept) == len(item.calls):
        return item
    # without calls the message stands on its content: any content before the fix, only
    # non-vacuous content after it
    has_substance = bool(item.content) if prefix else not is_vacuous_content(item.content)
    if kept or has_substance:
        return with_calls(item, kept)
    if item.content:
        out.append(anomaly("vacuous_message_dropped", role=item.role))
    return None


def dedupe(items: list[Item], prefix: bool, out: Anomalies, *, upgrade: bool = False) -> list[Item]:
    """First occurrence of a call id wins; a second result for an id is dropped.

    `upgrade` (v2): a later real result replaces a kept placeholder instead of being dropped.
    """
    seen_calls: set = set()
    answered: dict = {}  # result id -> index in `result`
    result: list[Item] = []
    for item in items:
        if item.role == "assistant" and item.calls:
            kept = _dedupe_assistant(item, seen_calls, prefix, out)
            if kept is not None:
                result.append(kept)
            continue
        rid = result_id(item.msg)
        if item.role != "tool" or rid is None:
            result.append(item)
        elif rid not in answered:
            answered[rid] = len(result)
            result.append(item)
        elif upgrade and is_placeholder(result[answered[rid]]) and not is_placeholder(item):
            result[answered[rid]] = item
        else:
            out.append(anomaly("duplicate_tool_result_dropped", toolCallId=item.msg.get("toolCallId")))
    return result


# --------------------------------------------------------------------------- 3. adjacency


class _Layout:
    """The working list while results move up: where each id's results sit, and which entries
    have already moved (a next-unmoved pointer per index, path-compressed, so skipping moved
    entries stays cheap on long histories)."""

    def __init__(self, items: list[Item]) -> None:
        self.items = items
        self.next = list(range(len(items) + 1))
        self.spots: dict = {}
        for j, item in enumerate(items):
            rid = result_id(item.msg)
            if item.role == "tool" and rid is not None:
                self.spots.setdefault(rid, []).append(j)

    def moved(self, j: int) -> bool:
        return self.next[j] != j

    def move(self, j: int) -> None:
        self.next[j] = j + 1

    def first_unmoved(self, j: int) -> int:
        root = j
        while self.next[root] != root:
            root = self.next[root]
        while self.next[j] != root:
            self.next[j], j = root, self.next[j]
        return root

    def first_result(self, rid, start: int) -> int | None:
        """The first unmoved result for `rid` at or after `start`."""
        spots = self.spots.get(rid, [])
        return next((j for j in spots[bisect_left(spots, start):] if not self.moved(j)), None)


def _pull_results(layout: _Layout, start: int, found: list[int], out: Anomalies) -> list[Item]:
    """Move the found results (record order) up behind their assistant. A result that had any
    other unmoved message before it, counting from the assistant, was reordered."""
    taken = set(found)
    other = layout.first_unmoved(start)
    while other in taken:
        other = layout.first_unmoved(other + 1)
    pulled = []
    for j in found:
        candidate = layout.items[j]
        if other < j:
            out.append(anomaly("tool_result_reordered", toolCallId=candidate.msg.get("toolCallId")))
        layout.move(j)
        pulled.append(candidate)
    return pulled


def _missing_results(item: Item, missing: list, trailing: bool, out: Anomalies) -> list[Item]:
    ids = {call_id(c): c.get("id") for c in item.calls}
    placeholders = []
    for key in missing:
        out.append(anomaly("tool_result_synthesized", toolCallId=ids[key], trailing=trailing))
        placeholders.append(synthetic_result(ids[key]))
    return placeholders


def repair_adjacency(items: list[Item], synthesize: bool, out: Anomalies) -> list[Item]:
    """Put each assistant's results right behind it; a missing result is synthesized mid-history
    (always in strict mode), while a trailing open exchange stays open in normal mode."""
    last = max((i for i, it in enumerate(items) if it.role != "tool"), default=-1)
    layout = _Layout(items)
    result: list[Item] = []
    for index, item in enumerate(items):
        if layout.moved(index):
            continue
        result.append(item)
        if item.role != "assistant" or not item.calls:
            continue
        pending = list(dict.fromkeys(call_id(c) for c in item.calls))  # a repeated id waits once
        spots = {key: layout.first_result(key, index + 1) for key in pending}
        found = sorted(j for j in spots.values() if j is not None)
        result += _pull_results(layout, index + 1, found, out)
        missing = [key for key in pending if spots[key] is None]
        if missing and (synthesize or index < last):
            result += _missing_results(item, missing, index >= last, out)
    return result


# --------------------------------------------------------------------------- 4-6. the rest


def merge_assistants(items: list[Item], out: Anomalies) -> list[Item]:
    """Fold adjacent assistants into one (content and calls concatenated, in order)."""
    result: list[Item] = []
    own_copy = False  # result[-1] is a merge result this pass built, safe to extend in place
    for item in items:
        prev = result[-1] if result else None
        if prev is None or prev.role != "assistant" or item.role != "assistant":
            result.append(item)
            own_copy = False
            continue
        if not own_copy:
            msg = {**prev.msg, "content": list(prev.content), "toolCalls": list(prev.calls)}
            prev = result[-1] = Item(msg, list(prev.sources))
            own_copy = True
        prev.content.extend(item.content)
        prev.calls.extend(item.calls)
        prev.sources.extend(item.sources)
        out.append(anomaly("consecutive_assistants_merged"))
    return result


def drop_orphans(items: list[Item], out: Anomalies) -> list[Item]:
    called = {call_id(c) for it in items if it.role == "assistant" for c in it.calls}
    result = []
    for item in items:
        rid = result_id(item.msg)
        if item.role == "tool" and rid is not None and rid not in called:
            out.append(anomaly("orphan_tool_result_dropped", toolCallId=item.msg.get("toolCallId")))
        else:
            result.append(item)
    return result


def drop_leading_non_user(items: list[Item], out: Anomalies) -> list[Item]:
    for index, item in enumerate(items):
        if item.role == "user":
            return items[index:]
        out.append(anomaly("leading_non_user_dropped", role=item.role))
    return []


# --------------------------------------------------------------------------- entry point


def project_v1(history: list[dict], strict: bool, prefix: bool) -> tuple[list[Item], Anomalies]:
    out: Anomalies = []
    items = prepare(history, prefix, out)
    if strict:
        items = dedupe(items, prefix, out)
    items = repair_adjacency(items, synthesize=strict, out=out)
    if strict:
        items = merge_assistants(items, out)
    items = drop_orphans(items, out)
    if strict:
        items = drop_leading_non_user(items, out)
    return items, out
