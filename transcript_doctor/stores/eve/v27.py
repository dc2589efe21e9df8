"""Decode stream version 27: commits `{"at", "facts": [...]}` and progress `{"progress": fact}`.

A fact is `{"type", "data", "scope"?}`; `scope` carries `turnId` and `runId`. A model run
(`model.requested`/`model.started` ... `model.settled`) is one step keyed by its run id; a run
retried after an empty reply is a new run whose `model.started` names `retryReason`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import v27_fused
from .builder import Builder
from .events import GeneralPath, failure, input_text, is_human_kind, key_of, opt_str
from .sniff import FACT_TYPES as FACT_TYPES  # the record types this decoder reads
from .turns import Step
from .v27_fused import FactHandler

_HUMAN_DELIVERIES = ("delivery.consumed", "message.received")


class V27Decoder:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self._began: set[int] = set()  # steps whose `model.started` was seen
        self._handlers: dict[str, FactHandler] = {
            "session.started": self._session_started,
            "session.ended": self._session_ended,
            "turn.started": lambda d, t, r: self.b.start_turn(t, d.get("trigger")),
            "turn.settled": self._turn_settled,
            "delivery.consumed": self._delivery,
            "message.received": self._delivery,
            "model.requested": self._model_requested,
            "model.started": self._model_started,
            "model.settled": self._model_settled,
            "usage.recorded": self._usage,
            "content.delta": self._delta,
            "content.completed": self._content,
            "call.requested": self._call_requested,
            "call.settled": self._call_settled,
            "context.started": lambda d, t, r: self._context(d, t, "started"),
            "context.settled": lambda d, t, r: self._context(d, t, "completed"),
        }

    def read_lines(
        self, lines: Iterator[bytes], number: int, offset: int, general: GeneralPath, reject: Callable[[int, str], None]
    ) -> int:
        """Apply the rest of the stream, `number` lines (`offset` bytes) in; how many lines were
        applied here. The common line, a shallow commit whose `facts` is a list or a progress
        record, is parsed in the loop and its facts applied by `apply_facts` with the fused handlers
        (`v27_fused.read_lines`); `reject(number, reason)` hears of its facts that cannot be used.
        Any other line goes to `general` (the reader's `feed`)."""
        return v27_fused.read_lines(self, lines, number, offset, general, reject)

    def fused_handlers(self) -> dict[str, FactHandler]:
        """The handler of each fact kind on the inline path: `v27_fused`'s where it has one."""
        return {**self._handlers, **v27_fused.fused(self)}

    def apply_record(self, record: dict[str, Any]) -> str | None:
        """Apply a commit or progress record; a reason string when it cannot be used."""
        if "facts" in record:
            facts = record["facts"]
            if facts.__class__ is not list:
                return "commit whose `facts` is not a list"
        else:
            facts = [record.get("progress")]
        return self.apply_facts(facts)

    def apply_facts(self, facts: Sequence[Any], handlers: dict[str, FactHandler] | None = None) -> str | None:
        """Apply a record's facts (each with `handlers`' handler of its kind, the decoder's own by
        default); a reason string when some cannot be used."""
        bad = 0
        builder = self.b
        if handlers is None:
            handlers = self._handlers
        for fact in facts:
            # A fact is an object with a string `type`, its `data` and `scope` objects or absent
            # (`dict_or_empty`, inline: once per fact); `opt_str`/`key_of` inline for the ids: the
            # scope's when it is a usable string (a run id may be a number), else the data's.
            # JSON gives exact `str`, `dict` and `list` values: types are tested by class.
            kind = fact.get("type") if fact.__class__ is dict else None
            if kind.__class__ is not str:
                bad += 1
                continue
            data = fact.get("data")
            if data.__class__ is not dict:
                if data is not None:
                    bad += 1
                    continue
                data = {}
            scope = fact.get("scope")
            if scope.__class__ is dict:
                turn = scope.get("turnId")
                run = scope.get("runId")
                if turn.__class__ is not str or not turn:
                    turn = data.get("turnId")
                    if turn.__class__ is not str:
                        turn = None
                if run.__class__ is not str or not run:
                    run = _run_id(run, data)
            elif scope is None:
                turn = data.get("turnId")
                if turn.__class__ is not str:
                    turn = None
                run = data.get("runId")
                if run is not None and run.__class__ is not str:
                    run = key_of(run)
            else:
                bad += 1
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(data, turn, run)
            elif run is not None:
                builder.step(turn, run)
            else:
                builder.other()
        builder.stream.events += len(facts) - bad
        return f"{bad} of {len(facts)} facts are not objects with a string `type`" if bad else None

    def close(self) -> None:
        """Drop the handler table (bound methods of this decoder: a reference cycle)."""
        self._handlers.clear()

    # ------------------------------------------------------------------ handlers

    def _session_started(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        self.b.other()
        session_id = opt_str(data.get("sessionId"))
        if session_id and not self.b.stream.session_id:
            self.b.stream.session_id = session_id

    def _session_ended(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        outcome = opt_str(data.get("outcome")) or "completed"
        self.b.stream.outcome = outcome
        if outcome == "failed":
            self.b.session_failure(failure(self.b.line, "session", data))
        else:
            self.b.other()

    def _turn_settled(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        turn = turn or opt_str(data.get("turnId"))
        outcome = opt_str(data.get("outcome")) or "completed"
        error = None
        if outcome == "failed" or isinstance(data.get("error"), dict):
            error = failure(self.b.line, "turn", data)
            error.turn = self.b.turn(turn).id
        self.b.end_turn(turn, outcome, error, data.get("reply"))

    def _delivery(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        delivery = data.get("delivery")
        payload: dict[str, Any] = delivery if isinstance(delivery, dict) else data
        kind = opt_str(payload.get("kind"))
        self.b.add_input(turn, kind, input_text(payload), is_human_kind(kind))

    def _model_requested(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        self.b.start_step(turn, run or f"run@{self.b.line}", opt_str(data.get("retryReason")))

    def _model_started(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = self.b.turn(turn).last_step(run) if run is not None else None
        if step is None or step.status != "open" or id(step) in self._began:
            step = self.b.start_step(turn, run or f"run@{self.b.line}")
        else:
            self.b._own(step)  # what `self.b.step(turn, run)` does: the turn and step are current
        self._began.add(id(step))
        if step.retry_reason is None:
            step.retry_reason = opt_str(data.get("retryReason"))

    def _model_settled(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        outcome = opt_str(data.get("outcome")) or "completed"
        finish = opt_str(data.get("finishReason"))
        if outcome == "completed":
            self.b.settle_step(turn, run, "completed", finish)
        elif outcome == "failed" or isinstance(data.get("error"), dict):
            self.b.settle_step(turn, run, "failed", finish, failure(self.b.line, "step", data))
        else:  # cancelled, interrupted, abandoned
            self.b.settle_step(turn, run, "abandoned", finish)

    def _usage(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = self.b.step(turn, run)
        if isinstance(data.get("outputTokens"), int):
            step.output_tokens = data["outputTokens"]

    def _delta(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = self.b.step(turn, run)
        delta = data.get("delta")
        if delta.__class__ is not str:
            return
        kind = data.get("kind", "text")
        if kind == "text":  # the common delta, inline: `append_text`
            part = data.get("partId")
            if part.__class__ is not str or not part:
                part = "0"
            chunks = step.chunks.get(part)
            if chunks is None:
                step.chunks[part] = [delta]
            else:
                chunks.append(delta)
        elif kind == "reasoning":
            self.b.append_reasoning(step, delta)

    def _content(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = self.b.step(turn, run)
        kind = data.get("kind", "text")
        value = data.get("value")
        if kind == "reasoning" and isinstance(value, str):
            self.b.append_reasoning(step, value, cumulative=True)
        elif kind == "text" and (value is None or isinstance(value, str)):
            phase = opt_str(data.get("phase")) or "reply"
            self.b.complete_reply(step, opt_str(data.get("partId")) or "0", value, phase, None)

    def _call_requested(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step: Step = self.b.step(turn, run)
        call_id = opt_str(data.get("callId"))
        if call_id is None:
            return
        capability = data.get("capability")
        name = opt_str(capability.get("name")) if isinstance(capability, dict) else None
        self.b.request_call(step, call_id, name or "", data.get("input"))

    def _call_settled(self, data: dict[str, Any], turn: str | None, run: str | None) -> None:
        call_id = opt_str(data.get("callId"))
        if call_id is None:
            self.b.other()
            return
        outcome = opt_str(data.get("outcome")) or "completed"
        self.b.settle_call(turn, call_id, outcome, data.get("output"), data.get("error"))

    def _context(self, data: dict[str, Any], turn: str | None, status: str) -> None:
        raw = opt_str(data.get("kind")) or opt_str(data.get("operation")) or "compaction"
        op = "clear" if raw.startswith("clear") else "compaction"
        self.b.context_op(turn, op, status, opt_str(data.get("summary")))


def _run_id(scoped: Any, data: dict[str, Any]) -> str | None:
    """A fact's run id when its scope's `runId` is not a non-empty string: that one as a key
    (`key_of`) when it makes one, else the data's."""
    run = key_of(scoped) if scoped is not None else None
    if not run:
        run = data.get("runId")
        if run is not None and run.__class__ is not str:
            run = key_of(run)
    return run
