"""Engine v2 (agent-core-v2): the live history, record by record.

The loop-event fold drops settled vacuous steps; `context.*` records run the v2 context
operations (undo with the fully-undoable precheck, legacy/kept-users compaction, clear,
swarm-mode exit). There is no settle at the end of a replay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..read.records import is_valid_v2
from . import compaction as cx
from .loop_fold import LoopFold, Sink
from .messages import Msg, appended, interrupted_message, is_swarm_reminder


class EngineV2:
    name = "v2"

    def __init__(self, agent_id: str | None = None, on_drop: Callable[[Any, int], None] | None = None) -> None:
        self.history: list[Msg] = []
        self.fold = LoopFold(Sink(self.history), on_drop)
        self.fold.begin_settles = self.begin_settles = {}  # step uuid -> the open step its begin settled
        self.agent_id = agent_id
        self.kept = cx.KeptUsers()  # the users the last compaction kept (an O(new) user walk)
        self.skipped: list[int] = []  # lines of records v2 skips (schema or agent mismatch)

    def apply(self, rtype: str | None, data: dict[str, Any], line: int, msg: Msg | None = None,
              valid: bool | None = None) -> None:
        """Apply one record. `msg` is the tagged appended message when the caller built it already;
        `valid` the schema verdict when the caller checked it already."""
        if valid and rtype == "context.append_loop_event":  # the common case first
            self.fold.event(data.get("event"), line)
            return
        if rtype not in _OPS:
            return
        if valid is None:
            valid = is_valid_v2(rtype, data)
        if not valid or not self.same_agent(data):
            self.skipped.append(line)
            return
        if msg is not None:
            self.fold.append_message(msg)
            return
        _OPS[rtype](self, data, line)

    def same_agent(self, data: dict[str, Any]) -> bool:
        agent = data.get("agentId")
        return agent is None or self.agent_id is None or agent == self.agent_id

    def _append_message(self, data: dict[str, Any], line: int) -> None:
        self.fold.append_message(appended(data.get("message"), line))

    def _loop_event(self, data: dict[str, Any], line: int) -> None:
        self.fold.event(data.get("event"), line)

    def _clear(self, data: dict[str, Any], line: int) -> None:
        if self.history:
            self.history.clear()
            self.fold.reset()

    def _undo(self, data: dict[str, Any], line: int) -> None:
        if not self.history:
            return
        cut = undo_cut(self.history, data["count"])
        if cut is not None:
            del self.history[cut:]
            self.fold.reset()

    def _compaction(self, data: dict[str, Any], line: int) -> None:
        self.history[:] = compaction_shape_v2(self.history, data, line, self.kept)
        self.fold.reset()

    def _swarm_exit(self, data: dict[str, Any], line: int) -> None:
        if self.history and is_swarm_reminder(self.history[-1]):
            self.history.pop()
            self.fold.reset()

    def settled_history(self) -> list[Msg]:
        """The history as the next live step would find it: a synthetic settle closes pending
        calls, flushes deferred messages and drops (or seals) the open step. Nothing is changed."""
        fold = self.fold
        out = list(self.history)
        if fold.open_step is None:
            return out + list(fold.deferred)
        out.extend(interrupted_message(call_id) for call_id in fold.pending)
        out.extend(fold.deferred)
        if fold.open_msg is not None and not fold.open_has_calls and fold.open_vacuous:
            out = [m for m in out if m is not fold.open_msg]
        return out


def undo_cut(history: list[Msg], count: int) -> int | None:
    """Index to cut the history at for `undo count`, or None when it is not fully undoable."""
    remaining, removed, cut = count, 0, -1
    i = len(history) - 1
    while i >= 0 and remaining > 0:
        m = history[i]
        if cx.is_injection(m):
            i -= 1
            continue
        if cx.origin_kind(m) == "compaction_summary":
            break
        if cx.is_real_user_input(m):
            remaining -= 1
            removed += 1
            cut = i
            owner = m.get("id")
            while owner is not None and cut > 0 and _owned_injection(history[cut - 1], owner):
                cut -= 1
            i = cut
        i -= 1
    return cut if cut >= 0 and removed >= count else None


def _owned_injection(m: Msg, owner: Any) -> bool:
    origin = m.get("origin")
    return cx.is_injection(m) and isinstance(origin, dict) and origin.get("ownerPromptId") == owner


def compaction_shape_v2(history: list[Msg], record: dict[str, Any], line: int,
                        kept: cx.KeptUsers | None = None) -> list[Msg]:
    """v2's shape (`kept`: the live history's ledger of kept users, read, then updated)."""
    summary_obj = record.get("summary")
    legacy = record.get("legacyTail")
    if not isinstance(legacy, bool):
        legacy = not cx.is_number(record.get("keptUserMessageCount"))
    if isinstance(summary_obj, dict):
        summary = dict(summary_obj)
    else:
        summary = cx.summary_message(cx.live_summary_text(record))
    summary["_src"] = ("rec", line)
    if legacy:
        start = record.get("compactedCount")
        if not cx.is_number(start):
            start = record.get("count")
        shape = [summary, *history[cx.slice_start(start, len(history)) :]]
        if kept is not None:
            kept.remember(shape, 0, [])
        return shape
    selection = cx.select_head_tail(kept.users_of(history) if kept is not None else cx.compactable_users(history))
    shape = _tag(cx.kept_users_shape(selection, summary), line)
    if kept is not None:
        kept.remember(shape, len(shape) - 1, selection.head + selection.tail)
    return shape


def _tag(messages: list[Msg], line: int) -> list[Msg]:
    for m in messages:
        m.setdefault("_src", ("rec", line))
    return messages


_OPS: dict[str, Callable[[EngineV2, dict[str, Any], int], None]] = {
    "context.append_message": EngineV2._append_message,
    "context.append_loop_event": EngineV2._loop_event,
    "context.clear": EngineV2._clear,
    "context.undo": EngineV2._undo,
    "context.apply_compaction": EngineV2._compaction,
    "swarm_mode.exit": EngineV2._swarm_exit,
}
