"""Cold transcript reducers (the UI "messages" view) and their `foldedLength`, v1 and v2.

The transcript keeps every message: a compaction only adds a summary marker and a clear only
raises a floor. `foldedLength` is the length the reducer believes the live history has.
"""

from __future__ import annotations

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


def _users_since(entries: list[Msg], floor: int) -> list[Msg]:
    return cx.compactable_users(entries, floor)


def compacted_view(entries: list[Msg], floor: int) -> list[Msg]:
    """What a reducer can still need once a compaction marker is its last entry (light mode).

    Undo stops at the marker, so nothing before it is walked again; a later compaction's fallback
    `foldedLength` needs only the newest compactable users up to the token budget.
    """
    keep: list[Msg] = []
    total = 0
    for i in range(len(entries) - 2, floor - 1, -1):
        m = entries[i]
        if m.get("role") == "user" and cx.is_real_user_input(m):
            keep.append(m)
            total += m.get("_est") or cx.est_message(m)
            if total >= cx.MAX_USER_TOKENS:
                break
    keep.reverse()
    keep.append(entries[-1])
    return keep


class TranscriptV2:
    def __init__(self, light: bool = False) -> None:
        self.light = light  # keep only what later records can still need (bounded memory)
        self.entries: list[Msg] = []
        self.sink = CountingSink(self.entries)
        self.fold = LoopFold(self.sink, light=light)
        self.clear_floor = 0

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
        entries, floor = self.entries, self.clear_floor
        v2_view = {k: v for k, v in record.items() if k != "count"}
        self.sink.folded = cx.recover_folded_length(v2_view, lambda: _users_since(entries, floor), self.sink.folded)
        self.entries.append(_marker(_summary_text_v2(record), line))
        if self.light:
            self.entries[:] = compacted_view(self.entries, self.clear_floor)
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
        history, floor = self.history, self.clear_floor
        self.folded = cx.recover_folded_length(record, lambda: _users_since(history, floor), self.folded, v1=True)
        marker = cx.summary_message(record.get("summary"))  # the raw summary, an object included
        marker["_src"] = ("rec", line)
        self.history.append(marker)
        self.reset()
        if self.light:
            self.history[:] = compacted_view(self.history, self.clear_floor)
            self.clear_floor = 0

    def _transcript_undo(self, data: dict[str, Any], line: int) -> None:
        self.folded -= undo_walk(self.history, data.get("count"), self.clear_floor)
        self.reset()
