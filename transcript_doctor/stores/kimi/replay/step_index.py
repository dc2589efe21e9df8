"""Where each step's records are in the journal: what heal removes and findings point at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engines.vacuous import is_vacuous_part
from ..read.reader import Record

# The fields of a step as the index keeps it while the journal streams by: one flat list per step,
# made at its first record and dropped at a normal `step.end` (most steps), so a `StepRecords` is
# built only for the steps that are left when the replay ends (vacuous, failed, never ended).
BEGIN, OFFSET, OTHERS, CALLS, RESULTS, ENDS, FINISH, TURN, VACUOUS, CALL_IDS = range(10)


def _fresh() -> list[Any]:
    """The flat record of a step first seen at another record than its step.begin."""
    return [None, None, [], 0, 0, 0, None, None, True, []]


class StepRecords:
    """The journal lines of one step's records."""

    __slots__ = ("uuid", "begin", "begin_offset", "others", "calls", "results", "ends", "finish", "turn_id",
                 "vacuous", "call_ids")

    def __init__(self, uuid: Any, flat: list[Any] | None = None) -> None:
        flat = flat if flat is not None else _fresh()
        self.uuid = uuid
        self.begin: int | None = flat[BEGIN]
        self.begin_offset: int | None = flat[OFFSET]
        self.others: list[int] = flat[OTHERS]  # lines of its parts, calls, results and ends, as read
        self.calls, self.results, self.ends = flat[CALLS], flat[RESULTS], flat[ENDS]  # how many of each
        self.finish: str | None = flat[FINISH]
        self.turn_id: Any = flat[TURN]
        self.vacuous: bool = flat[VACUOUS]  # every content part recorded so far is vacuous
        self.call_ids: list[Any] = flat[CALL_IDS]

    @property
    def lines(self) -> list[int]:
        return sorted(self.others if self.begin is None else [self.begin, *self.others])

    def __repr__(self) -> str:
        return f"StepRecords({self.uuid!r}, lines={self.lines})"


class StepIndex:
    """Step uuid -> its records, built as the journal streams by.

    One method per loop-event kind, each taking the event and its record's line and offset; the
    replay's hot path calls them directly (or does what they do inline), `observe` dispatches any
    record. `steps` is the index as `StepRecords` (fixed by `seal()` once the replay ends).
    """

    def __init__(self, prune: bool = False) -> None:
        self.prune = prune  # forget steps that settled normally with content: no rule needs them
        self.records: dict[Any, list[Any]] = {}  # step uuid -> its flat record (see BEGIN ...)
        self._call_step: dict[Any, Any] = {}
        self.max_turn: int | None = None
        self.max_turn_steps: set[Any] = set()  # the steps of the turn with the highest number
        self._last_turn_id: Any = _NO_TURN  # the previous step.begin's turnId ...
        self._last_turn_max = False  # ... and whether it is max_turn
        self._by_begin: dict[int, Any] | None = None
        self._sealed: dict[Any, StepRecords] | None = None

    @property
    def steps(self) -> dict[Any, StepRecords]:
        """Step uuid -> its records, in the order the steps were first seen."""
        if self._sealed is not None:
            return self._sealed
        return {uuid: StepRecords(uuid, flat) for uuid, flat in self.records.items()}

    def seal(self) -> None:
        """The replay has ended: build the `StepRecords` of the steps left, once."""
        self._sealed = None
        self._sealed = self.steps

    def by_begin_line(self) -> dict[int, Any]:
        """step.begin line -> step uuid (built on first use, rebuilt after a later step.begin)."""
        if self._by_begin is None:
            self._by_begin = {flat[BEGIN]: uuid for uuid, flat in self.records.items() if flat[BEGIN] is not None}
        return self._by_begin

    def record(self, uuid: Any) -> list[Any]:
        """The flat record of a step, made empty when the step was not seen yet."""
        flat = self.records.get(uuid)
        if flat is None:
            flat = self.records[uuid] = _fresh()
        return flat

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
        turn_id = event.get("turnId")
        flat = self.records.get(uuid)
        if flat is None:
            self.records[uuid] = [line, offset, [], 0, 0, 0, None, turn_id, True, []]
        else:
            if flat[BEGIN] is not None:  # the uuid began before: that begin is one of its records too
                flat[OTHERS].append(flat[BEGIN])
            flat[BEGIN], flat[OFFSET], flat[TURN] = line, offset, turn_id
        self._by_begin = None
        if turn_id != self._last_turn_id:
            self._turn(turn_id)
        if self._last_turn_max:
            self.max_turn_steps.add(uuid)

    def step_end(self, event: dict[str, Any], line: int, offset: int) -> None:
        uuid = event.get("uuid")
        flat = self.records.get(uuid) or self.record(uuid)
        flat[OTHERS].append(line)
        flat[ENDS] += 1
        flat[FINISH] = finish = event.get("finishReason")
        if self.prune and finish not in ("error", "interrupted") and (flat[CALLS] or not flat[VACUOUS]):
            self._forget(uuid, flat)

    def content_part(self, event: dict[str, Any], line: int, offset: int) -> None:
        flat = self.record(event.get("stepUuid"))
        flat[OTHERS].append(line)
        if flat[VACUOUS]:
            flat[VACUOUS] = is_vacuous_part(event.get("part"))

    def tool_call(self, event: dict[str, Any], line: int, offset: int) -> None:
        step_uuid = event.get("stepUuid")
        flat = self.record(step_uuid)
        flat[OTHERS].append(line)
        flat[CALLS] += 1
        call_id = event.get("toolCallId")
        flat[CALL_IDS].append(call_id)
        self._call_step[call_id] = step_uuid

    def tool_result(self, event: dict[str, Any], line: int, offset: int) -> None:
        owner = self._call_step.get(event.get("toolCallId"))
        if owner is not None:
            flat = self.record(owner)
            flat[OTHERS].append(line)
            flat[RESULTS] += 1

    def _forget(self, uuid: Any, flat: list[Any]) -> None:
        for call_id in flat[CALL_IDS]:
            try:
                if self._call_step.get(call_id) == uuid:
                    del self._call_step[call_id]
            except TypeError:
                continue  # an unhashable id (from an invalid record) was never mapped
        del self.records[uuid]
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
