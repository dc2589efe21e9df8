"""Cold transcript reducers (the UI "messages" view) and their `foldedLength`, v1 and v2.

The transcript keeps every message: a compaction only adds a summary marker and a clear only
raises a floor. `foldedLength` is the length the reducer believes the live history has.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Any

from ..engines import compaction as cx
from ..engines.engine_v1 import EngineV1, undo_walk
from ..engines.loop_fold import LoopFold, Sink
from ..engines.messages import Msg, appended


class CountingSink(Sink):
    def __init__(self, messages: list[Msg]) -> None:
        super().__init__(messages)
        self.folded = 0

    def push(self, msg: Msg) -> None:
        super().push(msg)
        self.folded += 1

    def drop(self, msg: Msg) -> None:
        super().drop(msg)
        self.folded = max(0, self.folded - 1)


def _marker(text: Any, line: int) -> Msg:
    msg = cx.summary_message(text if isinstance(text, str) else "")
    msg["_src"] = ("rec", line)
    return msg


def _summary_text_v2(record: dict[str, Any]) -> str:
    for key in ("summary", "contextSummary"):
        value = record.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            parts = value.get("content") or []
            return "".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")
    return ""


class View:
    """The light view a compaction left: kept users (oldest first), then its marker.

    `pre[k]` is the running token estimate before `kept[k]` (`pre[-1]`: after the last), so the
    newest users' estimates sum by subtraction. The next compaction walks only what came after the
    marker: undo stops at a compaction marker and a clear raises the floor past it, so the kept
    users and the marker are still the first entries while the floor is 0 and the marker sits
    right after them.
    """

    __slots__ = ("kept", "marker", "pre")

    def __init__(self, kept: list[Msg], marker: Msg, pre: list[int]) -> None:
        self.kept, self.marker, self.pre = kept, marker, pre

    def holds(self, entries: list[Msg], floor: int) -> bool:
        n = len(self.kept)
        return floor == 0 and len(entries) > n and entries[n] is self.marker


def users_since(entries: list[Msg], floor: int, view: View | None) -> list[Msg]:
    """`compactable_users(entries, floor)`, reusing the kept users of a view that still holds."""
    if view is not None and view.holds(entries, floor):
        return view.kept + cx.compactable_users(entries, len(view.kept) + 1)
    return cx.compactable_users(entries, floor)


def compacted_view(entries: list[Msg], floor: int, view: View | None = None) -> tuple[list[Msg], View]:
    """What a reducer can still need once a compaction marker is its last entry (light mode).

    Undo stops at the marker, so nothing before it is walked again; a later compaction's fallback
    `foldedLength` needs only the newest compactable users up to the token budget. With the
    previous view (`view`) still in place, only the entries after its marker are walked.
    """
    reuse = view is not None and view.holds(entries, floor)
    stop = len(view.kept) + 1 if reuse and view is not None else floor
    # The newest users until their running total reaches the budget (the one reaching it too).
    users = cx.compactable_users(entries, stop)  # (the marker, last, is no user input)
    costs = cx.costs_of(users)
    newest = list(accumulate(reversed(costs)))
    k = bisect_left(newest, cx.MAX_USER_TOKENS)
    full = k < len(newest)
    taken = k + 1 if full else len(users)
    fresh, fresh_costs = users[len(users) - taken:], costs[len(costs) - taken:]
    total = newest[taken - 1] if taken else 0
    marker = entries[-1]
    if reuse and view is not None and not full:
        kept, pre = _newest_within(view, total)
    else:
        kept, pre = [], [0]
    base = pre[-1]
    pre.extend(accumulate(fresh_costs, initial=base))
    pre.pop(len(pre) - len(fresh) - 1)  # `initial` repeated the base
    kept = kept + fresh
    return [*kept, marker], View(kept, marker, pre)


def _newest_within(view: View, total: int) -> tuple[list[Msg], list[int]]:
    """The previous view's newest kept users a walk would take on top of `total` tokens: users
    are taken newest first until the running total reaches the budget (the one reaching it too)."""
    pre, n = view.pre, len(view.kept)
    target = pre[n] + total - cx.MAX_USER_TOKENS
    k = bisect_right(pre, target, 0, n) - 1  # the latest start whose suffix reaches the budget
    k = max(k, 0)
    return view.kept[k:], pre[k:]


class TranscriptV2:
    def __init__(self, light: bool = False) -> None:
        self.light = light  # keep only what later records can still need (bounded memory)
        self.entries: list[Msg] = []
        self.sink = CountingSink(self.entries)
        self.fold = LoopFold(self.sink, light=light)
        self.clear_floor = 0
        self.view: View | None = None  # the last light compaction's view

    @property
    def folded_length(self) -> int:
        return self.sink.folded

    def apply(self, rtype: str | None, data: dict[str, Any], line: int, msg: Msg | None = None) -> None:
        if rtype == "context.append_message":
            self.fold.append_message(msg if msg is not None else appended(data.get("message"), line))
        elif rtype == "context.append_loop_event":
            self.fold.event(data["event"], line)
        elif rtype == "context.apply_compaction":
            self._compaction(data, line)
        elif rtype == "context.undo":
            self._undo(data["count"])
        elif rtype == "context.clear":
            self.clear_floor = len(self.entries)
            self.sink.folded = 0
            self.fold.reset()

    def _compaction(self, record: dict[str, Any], line: int) -> None:
        if cx.is_number(record.get("keptUserMessageCount")):
            self.fold.settle(line)
        else:
            self.fold.reset()
        entries, floor, view = self.entries, self.clear_floor, self.view
        v2_view = {k: v for k, v in record.items() if k != "count"}
        self.sink.folded = cx.recover_folded_length(v2_view, lambda: users_since(entries, floor, view),
                                                    self.sink.folded)  # fmt: skip
        self.entries.append(_marker(_summary_text_v2(record), line))
        if self.light:
            self.entries[:], self.view = compacted_view(self.entries, self.clear_floor, self.view)
            self.clear_floor = 0

    def _undo(self, count: int) -> None:
        remaining = count
        i = len(self.entries) - 1
        while i >= self.clear_floor and remaining > 0:
            m = self.entries[i]
            if cx.is_injection(m):
                i -= 1
                continue
            if cx.origin_kind(m) == "compaction_summary":
                break
            del self.entries[i]
            self.sink.folded -= 1
            if cx.is_real_user_input(m):
                i = self._remove_owned(i, m.get("id"))
                remaining -= 1
            i -= 1
        self.fold.reset()

    def _remove_owned(self, i: int, owner: Any) -> int:
        """Remove injections right before index `i` owned by the prompt `owner`; the new index."""
        while owner is not None and i - 1 >= self.clear_floor:
            prev = self.entries[i - 1]
            origin = prev.get("origin")
            if not (cx.is_injection(prev) and isinstance(origin, dict) and origin.get("ownerPromptId") == owner):
                break
            del self.entries[i - 1]
            self.sink.folded -= 1
            i -= 1
        return i


class TranscriptV1(EngineV1):
    """v1's reducer: the v1 fold without drops, lenient about unknown steps, floor-bounded undo."""

    def __init__(self, light: bool = False) -> None:
        super().__init__(light=light)
        self.folded = 0
        self.clear_floor = 0
        self.view: View | None = None  # the last light compaction's view

    @property
    def entries(self) -> list[Msg]:
        return self.history

    def apply(self, rtype: str | None, data: dict[str, Any], line: int, msg: Msg | None = None) -> None:
        before = len(self.history)
        if rtype == "context.apply_compaction":
            self._transcript_compaction(data, line)
            return
        if rtype == "context.clear":
            self.clear_floor = len(self.history)
            self.folded = 0
            self.reset()
            return
        if rtype == "context.undo":
            self._transcript_undo(data, line)
            return
        if rtype == "swarm_mode.exit":
            return
        super().apply(rtype, data, line, msg)
        self.folded += len(self.history) - before

    def error(self, line: int, text: str) -> None:
        """Unknown steps are ignored by the transcript reducer."""

    def _transcript_compaction(self, record: dict[str, Any], line: int) -> None:
        history, floor, view = self.history, self.clear_floor, self.view
        self.folded = cx.recover_folded_length(record, lambda: users_since(history, floor, view), self.folded, v1=True)
        marker = cx.summary_message(record.get("summary"))  # the raw summary, an object included
        marker["_src"] = ("rec", line)
        self.history.append(marker)
        self.reset()
        if self.light:
            self.history[:], self.view = compacted_view(self.history, self.clear_floor, self.view)
            self.clear_floor = 0

    def _transcript_undo(self, data: dict[str, Any], line: int) -> None:
        self.folded -= undo_walk(self.history, data.get("count"), self.clear_floor)
        self.reset()
