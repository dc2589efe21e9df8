"""The v27 decoder's inline path: one loop over the lines, and fused handlers for their facts.

`read_lines` parses each line once and, for the common record (a shallow commit whose `facts` is a
list, or a progress record), has `V27Decoder.apply_facts` apply its facts with the handlers of
`fused` (the ids every handler needs are `apply_facts`' own rule, one copy). The handlers here
are the decoder's (`v27.py`, the reference) with their field checks and the builder's common case
inline: JSON gives exact `str`, `dict` and `int` values, so types are tested by class. Kinds
without one here use the decoder's own handler. `tests/eve/test_v27_fused.py` pins each handler
to the reference on positive and near-miss facts; `tests/test_eve_reader_fast.py` pins the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from ... import values
from .events import SHALLOW, GeneralPath, failure

if TYPE_CHECKING:
    from .v27 import V27Decoder

FactHandler = Callable[[dict[str, Any], "str | None", "str | None"], object]


def read_lines(
    decoder: V27Decoder,
    lines: Iterator[bytes],
    number: int,
    offset: int,
    general: GeneralPath,
    reject: Callable[[int, str], None],
) -> int:
    """`V27Decoder.read_lines`: the rest of the stream, `number` lines (`offset` bytes) in; how
    many lines were applied here. Any line but the common record goes to `general`."""
    loads, decode_error, may_be_deep = orjson.loads, orjson.JSONDecodeError, values.may_be_deep
    b, handlers, apply_facts = decoder.b, decoder.fused_handlers(), decoder.apply_facts
    inline = 0
    for raw in lines:
        number += 1
        try:
            record = loads(raw)
        except decode_error:
            record = None
        facts: Any = None
        size = len(raw)
        if record.__class__ is dict and (size < SHALLOW or not may_be_deep(raw, record)):
            if "facts" in record:
                facts = record["facts"]
            elif record.get("type").__class__ is not str and record.get("progress").__class__ is dict:
                facts = (record["progress"],)
        if facts.__class__ is not list and facts.__class__ is not tuple:
            general(number, offset, raw.rstrip(b"\r\n"), raw.endswith(b"\n"))
        else:
            inline += 1
            b.line, b._line_step, b._line_other = number, None, False  # `b.start_line(number)`
            reason = apply_facts(facts, handlers)
            if reason:
                reject(number, reason)
        offset += size
    return inline


def fused(decoder: V27Decoder) -> dict[str, FactHandler]:
    """The fused handlers of `decoder`, by fact kind (the common kinds of a v27 stream)."""
    b = decoder.b
    began = decoder._began

    def model_requested(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        reason = data.get("retryReason")
        b.start_step(turn, run or f"run@{b.line}", reason if reason.__class__ is str else None)

    def model_started(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = None
        if run is not None:
            recent, current = b._recent, b._current
            # `b.turn(turn).last_step(run)` when the open turn is the one named: `_recent`, the
            # last step of its key in its turn, when it is that turn's step of `run`
            if (recent is not None and current is not None and recent.key == run and recent.turn == current.id
                    and (turn is None or turn == current.id)):  # fmt: skip
                step = recent
            else:
                step = b.turn(turn).last_step(run)
        if step is None or step.status != "open" or id(step) in began:
            step = b.start_step(turn, run or f"run@{b.line}")
        else:
            lines = step.lines  # `b._own(step)`, inline
            if not lines or lines[-1] != b.line:
                lines.append(b.line)
                b._touch(step)
        began.add(id(step))
        if step.retry_reason is None:
            reason = data.get("retryReason")
            step.retry_reason = reason if reason.__class__ is str else None

    def model_settled(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        outcome = data.get("outcome")
        finish = data.get("finishReason")
        if finish.__class__ is not str:
            finish = None
        if outcome == "completed" or outcome.__class__ is not str or not outcome:
            b.settle_step(turn, run, "completed", finish)
        elif outcome == "failed" or data.get("error").__class__ is dict:
            b.settle_step(turn, run, "failed", finish, failure(b.line, "step", data))
        else:  # cancelled, interrupted, abandoned
            b.settle_step(turn, run, "abandoned", finish)

    def usage_recorded(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = b.step(turn, run)
        tokens = data.get("outputTokens")
        if isinstance(tokens, int):  # a bool too, as in the reference
            step.output_tokens = tokens

    def content_completed(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = b.step(turn, run)
        kind = data.get("kind", "text")
        value = data.get("value")
        if kind == "text" and (value is None or value.__class__ is str):
            phase = data.get("phase")
            part = data.get("partId")
            b.complete_reply(step, part if part.__class__ is str and part else "0", value,
                             phase if phase.__class__ is str and phase else "reply", None)  # fmt: skip
        elif kind == "reasoning" and value.__class__ is str:
            step.reasoning_chunks[:] = [value]  # `append_reasoning(cumulative=True)`

    def call_requested(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        step = b.step(turn, run)
        call_id = data.get("callId")
        if call_id.__class__ is not str:
            return
        capability = data.get("capability")
        name = capability.get("name") if capability.__class__ is dict else None
        b.request_call(step, call_id, name if name.__class__ is str and name else "", data.get("input"))

    def call_settled(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        call_id = data.get("callId")
        if call_id.__class__ is not str:
            b.other()
            return
        outcome = data.get("outcome")
        outcome = outcome if outcome.__class__ is str and outcome else "completed"
        b.settle_call(turn, call_id, outcome, data.get("output"), data.get("error"))

    def turn_settled(data: dict[str, Any], turn: str | None, run: str | None) -> None:
        if not turn:
            turn = data.get("turnId")
            if turn.__class__ is not str:
                turn = None
        outcome = data.get("outcome")
        if outcome.__class__ is not str or not outcome:
            outcome = "completed"
        error = None
        if outcome == "failed" or data.get("error").__class__ is dict:
            error = failure(b.line, "turn", data)
            error.turn = b.turn(turn).id
        b.end_turn(turn, outcome, error, data.get("reply"))

    return {
        "model.requested": model_requested,
        "model.started": model_started,
        "model.settled": model_settled,
        "usage.recorded": usage_recorded,
        "content.completed": content_completed,
        "call.requested": call_requested,
        "call.settled": call_settled,
        "turn.settled": turn_settled,
    }
