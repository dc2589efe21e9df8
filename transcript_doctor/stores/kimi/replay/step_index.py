"""Where each step's records are in the journal: what heal removes and findings point at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engines.vacuous import is_vacuous_part
from ..read.reader import Record


class StepRecords:
    """The journal lines of one step's records (a plain slots class: one is built per step)."""

    __slots__ = ("uuid", "begin", "begin_offset", "others", "calls", "results", "ends", "finish", "turn_id",
                 "vacuous", "call_ids")

    def __init__(self, uuid: Any) -> None:
        self.uuid = uuid
        self.begin: int | None = None
        self.begin_offset: int | None = None
        self.others: list[int] = []  # lines of its parts, calls, results and ends, as read
        self.calls = self.results = self.ends = 0  # how many of each
        self.finish: str | None = None
        self.turn_id: Any = None
        self.vacuous = True  # every content part recorded so far is vacuous
        self.call_ids: list[Any] = []

    @property
    def lines(self) -> list[int]:
        return sorted(self.others if self.begin is None else [self.begin, *self.others])

    def __repr__(self) -> str:
        return f"StepRecords({self.uuid!r}, lines={self.lines})"


class StepIndex:
    """Step uuid -> its records, built as the journal streams by.

    One method per loop-event kind, each taking the event and its record's line and offset; the replay's hot path
    calls them directly (`handler(kind)`), `observe` dispatches any record.
    """

    def __init__(self, prune: bool = False) -> None:
        self.prune = prune  # forget steps that settled normally with content: no rule needs them
        self.steps: dict[Any, StepRecords] = {}
        self._call_step: dict[Any, Any] = {}
        self.max_turn: int | None = None
        self.max_turn_steps: set[Any] = set()  # the steps of the turn with the highest number
        self._last_turn_id: Any = _NO_TURN  # the previous step.begin's turnId ...
        self._last_turn_max = False  # ... and whether it is max_turn
        self._by_begin: dict[int, Any] | None = None

    def by_begin_line(self) -> dict[int, Any]:
        """step.begin line -> step uuid (built on first use, rebuilt after a later step.begin)."""
        if self._by_begin is None:
            self._by_begin = {step.begin: uuid for uuid, step in self.steps.items() if step.begin is not None}
        return self._by_begin

    def get(self, uuid: Any) -> StepRecords:
        step = self.steps.get(uuid)
        if step is None:
            step = self.steps[uuid] = StepRecords(uuid)
        return step

    def observe(self, rec: Record) -> None:
        if rec.type != "context.append_loop_event":
            return
        event = rec.data.get("event")
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        handler = self.handler(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(event, rec.line, rec.offset)

    def handler(self, kind: str) -> Callable[[dict[str, Any], int, int], None] | None:
        """The bound method indexing loop events of this kind (None for kinds that index nothing)."""
        name = _HANDLERS.get(kind)
        return getattr(self, name) if name else None

    def step_begin(self, event: dict[str, Any], line: int, offset: int) -> None:
        uuid = event.get("uuid")
        step = self.steps.get(uuid) or self.get(uuid)
        step.begin = line
        step.begin_offset = offset
        self._by_begin = None
        step.turn_id = turn_id = event.get("turnId")
        if turn_id != self._last_turn_id:
            self._turn(turn_id)
        if self._last_turn_max:
            self.max_turn_steps.add(uuid)

    def step_end(self, event: dict[str, Any], line: int, offset: int) -> None:
        uuid = event.get("uuid")
        step = self.steps.get(uuid) or self.get(uuid)
        step.others.append(line)
        step.ends += 1
        step.finish = finish = event.get("finishReason")
        if self.prune and finish not in ("error", "interrupted") and (step.calls or not step.vacuous):
            self._forget(step)

    def content_part(self, event: dict[str, Any], line: int, offset: int) -> None:
        uuid = event.get("stepUuid")
        step = self.steps.get(uuid) or self.get(uuid)
        step.others.append(line)
        if step.vacuous:
            step.vacuous = is_vacuous_part(event.get("part"))

    def tool_call(self, event: dict[str, Any], line: int, offset: int) -> None:
        step_uuid = event.get("stepUuid")
        step = self.steps.get(step_uuid) or self.get(step_uuid)
        step.others.append(line)
        step.calls += 1
        call_id = event.get("toolCallId")
        step.call_ids.append(call_id)
        self._call_step[call_id] = step_uuid

    def tool_result(self, event: dict[str, Any], line: int, offset: int) -> None:
        owner = self._call_step.get(event.get("toolCallId"))
        if owner is not None:
            step = self.get(owner)
            step.others.append(line)
            step.results += 1

    def _forget(self, step: StepRecords) -> None:
        for call_id in step.call_ids:
            try:
                if self._call_step.get(call_id) == step.uuid:
                    del self._call_step[call_id]
            except TypeError:
                continue  # an unhashable id (from an invalid record) was never mapped
        del self.steps[step.uuid]
        self._by_begin = None

    def _turn(self, turn_id: Any) -> None:
        """A step of another turn than the previous step's begins: is it the newest turn?"""
        self._last_turn_id = turn_id
        try:
            value = int(turn_id)
        except (TypeError, ValueError, OverflowError):  # not a number, or an infinite one
            self._last_turn_max = False
            return
        if self.max_turn is None or value > self.max_turn:
            self.max_turn = value
            self.max_turn_steps = set()
        self._last_turn_max = value == self.max_turn


class NoStepIndex(StepIndex):
    """An index that records nothing (a heal's acceptance replay only compares histories)."""

    def observe(self, rec: Record) -> None:
        pass

    def handler(self, kind: str) -> Callable[[dict[str, Any], int, int], None] | None:
        return _ignore if kind in _HANDLERS else None


def _ignore(event: dict[str, Any], line: int, offset: int) -> None:
    pass


_NO_TURN = object()
_HANDLERS = {
    "step.begin": "step_begin",
    "step.end": "step_end",
    "content.part": "content_part",
    "tool.call": "tool_call",
    "tool.result": "tool_result",
}
