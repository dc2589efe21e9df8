"""Rebuild turns from stream events, one event at a time, without counting a retry twice.

Both format decoders (`v26`, `v27`) translate their records into calls on `Builder`. The builder
owns the bookkeeping both formats share:

* a second start of the same step key opens a new *attempt*; an attempt left open is `abandoned`;
* streamed text accumulates per attempt and per reply key, so a retry that streams the same reply
  again starts from empty instead of doubling the text;
* a reply, tool call or result re-emitted with the same key replaces the earlier copy;
* events that name a turn or step never started get one, opened at that line (streams are often
  fetched from a cursor in the middle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .turns import Call, ContextOp, Failure, Input, Reply, Step, Stream, Turn


class Builder:
    def __init__(self, version: str) -> None:
        self.stream = Stream(version=version)
        self.line = 0
        self._turns: dict[str, Turn] = {}
        self._current: Turn | None = None
        self._recent: Step | None = None  # the step `step` or `start_step` returned last
        self._line_step: Step | None = None  # the first step the current line touched
        self._line_other = False  # the current line holds a record that belongs to no step

    # ------------------------------------------------------------------ lines

    def apply_line(self, line: int, apply: Callable[[dict[str, Any]], str | None], record: dict[str, Any]) -> str | None:
        """`apply(record)` (a decoder's) as the record of `line`; its result. A line whose records
        touch several steps, or a step and something else, marks those steps `shared`."""
        self.start_line(line)
        return apply(record)

    def start_line(self, line: int) -> None:
        """The records that follow are those of `line`."""
        self.line = line
        self._line_step = None
        self._line_other = False

    def _own(self, step: Step) -> Step:
        """`step` touched by the current line. Lines only grow and only this appends to
        `step.lines`, so its last entry says whether the line already touched it."""
        lines = step.lines
        if not lines or lines[-1] != self.line:
            lines.append(self.line)
            self._touch(step)
        return step

    def _touch(self, step: Step) -> None:
        """The current line touches `step` for the first time: every step of a line that touches
        several, or a step and something else, is `shared` (marked as soon as it is known)."""
        first = self._line_step
        if first is None:
            self._line_step = step
            if self._line_other:
                step.shared = True
        else:
            first.shared = step.shared = True

    def other(self) -> None:
        """The current record belongs to the turn or session, not to a step."""
        self._line_other = True
        if self._line_step is not None:
            self._line_step.shared = True

    # ------------------------------------------------------------------ turns

    def turn(self, turn_id: str | None) -> Turn:
        """The turn named (or the open one), opened here when the stream never started it."""
        current = self._current
        if turn_id is None:
            if current is not None:
                return current
            turn_id = f"turn@{self.line}"
        elif current is not None and current.id == turn_id:
            return current  # the common case: the open turn again
        turn = self._turns.get(turn_id)
        if turn is None:
            turn = Turn(turn_id, self.line)  # positional: cheaper than by name
            self._turns[turn_id] = turn
            self.stream.turns.append(turn)
        self._current = turn
        return turn

    def start_turn(self, turn_id: str | None, trigger: Any = None) -> Turn:
        self._line_other = True  # `other()`, inline (here and in the other calls of every turn)
        if self._line_step is not None:
            self._line_step.shared = True
        turn = self.turn(turn_id or f"turn@{self.line}")
        if isinstance(trigger, dict) and turn.trigger is None:
            turn.trigger = trigger
        return turn

    def end_turn(
        self, turn_id: str | None, outcome: str, error: Failure | None = None, reply_parts: Any = None
    ) -> None:
        self._line_other = True
        if self._line_step is not None:
            self._line_step.shared = True
        turn = self.turn(turn_id)
        turn.outcome = outcome
        turn.end_line = self.line
        if isinstance(reply_parts, list):
            turn.reply_parts = [p for p in reply_parts if isinstance(p, str)]
        if error is not None:
            turn.failures.append(error)
        for step in turn.steps:
            if step.status == "open":
                step.status = "abandoned"

    def add_input(self, turn_id: str | None, kind: str | None, text: str, human: bool) -> None:
        self._line_other = True
        if self._line_step is not None:
            self._line_step.shared = True
        self.turn(turn_id).inputs.append(Input(self.line, kind, text, human))

    # ------------------------------------------------------------------ steps

    def start_step(self, turn_id: str | None, key: str, retry_reason: str | None = None) -> Step:
        turn = self.turn(turn_id)
        recent = self._recent  # the last step of its key in its turn (`_lookup`)
        if recent is not None and recent.key == key and recent.turn == turn.id:
            previous: Step | None = recent
        else:
            previous = turn.last_step(key)
        if previous is not None and previous.status == "open":
            previous.status = "abandoned"
        attempt = previous.attempt + 1 if previous else 1
        # positional, its lines given: a third cheaper than by name; `_own(step)` for a new step
        step = Step(key, turn.id, attempt, self.line, [self.line])
        step.retry_reason = retry_reason
        turn.steps.append(step)
        self._recent = step
        self._touch(step)
        return step

    def step(self, turn_id: str | None, key: str | None) -> Step:
        """The current attempt of step `key` (the turn's latest step when `key` is None)."""
        step = self._recent  # the common case: the step the previous call returned, in the open turn
        current = self._current
        if (
            step is None
            or step.key != key
            or current is None
            or step.turn != current.id
            or (turn_id is not None and turn_id != step.turn)
        ):
            step = self._lookup(turn_id, key)
        lines = step.lines  # `_own(step)` and `_touch(step)`, inline: the common call of every step-scoped record
        if not lines or lines[-1] != self.line:
            lines.append(self.line)
            first = self._line_step
            if first is None:
                self._line_step = step
                if self._line_other:
                    step.shared = True
            else:
                first.shared = step.shared = True
        return step

    def _lookup(self, turn_id: str | None, key: str | None) -> Step:
        """`step` without its shortcut: the turn's last step of `key`, opened when there is none.
        (Only `start_step` and this append to a turn's steps, and both leave the new step in
        `_recent`: so `_recent` is always the last step of its key in its turn.)"""
        turn = self.turn(turn_id)
        step = turn.last_step(key) if key is not None else (turn.steps[-1] if turn.steps else None)
        if step is None:
            step = Step(key=key or f"step@{self.line}", turn=turn.id, attempt=1, line=self.line)
            turn.steps.append(step)
        self._recent = step
        return step

    def settle_step(
        self,
        turn_id: str | None,
        key: str | None,
        status: str,
        finish_reason: str | None = None,
        error: Failure | None = None,
    ) -> Step:
        step = self.step(turn_id, key)
        if step.status in ("completed", "failed"):
            return step  # a re-emitted settle: the first one stands
        step.status = status
        step.finish_reason = finish_reason
        if error is not None:
            error.turn, error.step = step.turn, step.key
            step.error = error
        for reply in step.replies:
            if reply.finish_reason is None:
                reply.finish_reason = finish_reason
        return step

    # ------------------------------------------------------------------ content

    def append_text(self, step: Step, part: str, text: str, cumulative: bool = False) -> None:
        if cumulative:
            step.chunks[part] = [text]
        else:
            step.chunks.setdefault(part, []).append(text)

    def append_reasoning(self, step: Step, text: str, cumulative: bool = False) -> None:
        if cumulative:
            step.reasoning_chunks[:] = [text]
        else:
            step.reasoning_chunks.append(text)

    def complete_reply(
        self, step: Step, part: str, text: str | None, phase: str, finish_reason: str | None
    ) -> Reply:
        earlier = self._earlier_reply(step, part)
        streamed = "".join(step.chunks.pop(part, ()))
        reemitted = earlier.reemitted + 1 if earlier else 0
        # positional (line, turn, step, attempt, key, text, phase, finish_reason, streamed, reemitted)
        reply = Reply(self.line, step.turn, step.key, step.attempt, part, text, phase, finish_reason, streamed, reemitted)
        if earlier is not None and earlier in step.replies:
            step.replies.remove(earlier)
        step.replies.append(reply)
        return reply

    def _earlier_reply(self, step: Step, part: str) -> Reply | None:
        turn = self._turns[step.turn]
        for other in reversed(turn.steps):
            if other.key != step.key:
                continue
            for reply in other.replies:
                if reply.key == part:
                    return reply
        return None

    def request_call(self, step: Step, call_id: str, name: str, arguments: Any) -> Call:
        for call in step.calls:
            if call.id == call_id:
                return call  # re-emitted request
        call = Call(id=call_id, name=name, input=arguments, line=self.line)
        step.calls.append(call)
        return call

    def settle_call(
        self, turn_id: str | None, call_id: str, outcome: str, output: Any = None, error: Any = None
    ) -> Call | None:
        turn = self.turn(turn_id)
        for step in reversed(turn.steps):
            for call in step.calls:
                if call.id == call_id:
                    self._own(step)
                    if call.result_line is None:  # a re-emitted result does not replace the first
                        call.result_line, call.outcome = self.line, outcome
                        call.output, call.error = output, error
                    return call
        self.other()
        return None

    # ------------------------------------------------------------------ session

    def context_op(self, turn_id: str | None, op: str, status: str, summary: str | None = None) -> None:
        self.other()
        entry = ContextOp(self.line, op, status, turn_id, summary)
        if turn_id is not None or (self._current is not None and self._current.outcome is None):
            turn = self.turn(turn_id)
            entry.turn = turn.id
            turn.context.append(entry)
        else:
            self.stream.context.append(entry)

    def session_failure(self, error: Failure) -> None:
        self.other()
        self.stream.failures.append(error)

    def finish(self) -> Stream:
        return self.stream
