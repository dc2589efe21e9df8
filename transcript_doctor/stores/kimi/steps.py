"""Where each step's records are in the journal: what heal removes and findings point at."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .reader import Record
from .vacuous import is_vacuous_part


@dataclass
class StepRecords:
    uuid: Any
    begin: int | None = None
    begin_offset: int | None = None
    parts: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    results: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    finish: str | None = None
    turn_id: Any = None
    vacuous: bool = True  # every content part recorded so far is vacuous
    call_ids: list[Any] = field(default_factory=list)

    @property
    def lines(self) -> list[int]:
        found = [self.begin] if self.begin is not None else []
        return sorted(found + self.parts + self.calls + self.results + self.ends)


class StepIndex:
    """Step uuid -> its records, built as the journal streams by."""

    def __init__(self, prune: bool = False) -> None:
        self.prune = prune  # forget steps that settled normally with content: no rule needs them
        self.steps: dict[Any, StepRecords] = {}
        self._call_step: dict[Any, Any] = {}
        self.max_turn: int | None = None
        self.max_turn_steps: set[Any] = set()

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
        if kind == "step.begin":
            step = self.get(event.get("uuid"))
            step.begin = rec.line
            step.begin_offset = rec.offset
            step.turn_id = event.get("turnId")
            self._turn(event.get("turnId"), event.get("uuid"))
        elif kind == "step.end":
            step = self.get(event.get("uuid"))
            step.ends.append(rec.line)
            step.finish = event.get("finishReason")
            if self.prune and step.finish not in ("error", "interrupted") and (step.calls or not step.vacuous):
                self._forget(step)
        elif kind == "content.part":
            step = self.get(event.get("stepUuid"))
            step.parts.append(rec.line)
            step.vacuous = step.vacuous and is_vacuous_part(event.get("part"))
        elif kind == "tool.call":
            step = self.get(event.get("stepUuid"))
            step.calls.append(rec.line)
            step.call_ids.append(event.get("toolCallId"))
            self._call_step[event.get("toolCallId")] = event.get("stepUuid")
        elif kind == "tool.result":
            owner = self._call_step.get(event.get("toolCallId"))
            if owner is not None:
                self.get(owner).results.append(rec.line)

    def _forget(self, step: StepRecords) -> None:
        for call_id in step.call_ids:
            if self._call_step.get(call_id) == step.uuid:
                del self._call_step[call_id]
        del self.steps[step.uuid]

    def _turn(self, turn_id: Any, uuid: Any) -> None:
        try:
            value = int(turn_id)
        except (TypeError, ValueError):
            return
        if self.max_turn is None or value > self.max_turn:
            self.max_turn = value
            self.max_turn_steps = {uuid}
        elif value == self.max_turn:
            self.max_turn_steps.add(uuid)
