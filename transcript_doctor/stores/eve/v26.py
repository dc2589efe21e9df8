"""Decode stream versions <= 26: one `{"type", "data", "meta"}` event per line.

Text appends are deltas (`messageDelta`, v25+) or cumulative snapshots (`message`, v21-v24); both
are read. `meta.id` (v20+) identifies an event: a second copy of one id (overlapping fetches of the
same stream) is skipped. A durable step retry re-emits events with *new* ids; the builder folds those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ... import values
from .builder import Builder
from .events import SHALLOW, GeneralPath, failure, input_text, is_human_kind, key_of, opt_str, text_of
from .sniff import EVENT_TYPES as EVENT_TYPES  # the record types this decoder reads

# A handler gets the event's `data`, its `turnId` (`opt_str`) and its `stepIndex` as a key (`key_of`).
Handler = Callable[[dict[str, Any], "str | None", "str | None"], object]


class V26Decoder:
    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self._seen: set[str] = set()
        self._handlers: dict[str, Handler] = {
            "session.started": self._session_started,
            "turn.started": lambda d, t, k: self.b.start_turn(t, d.get("trigger")),
            "message.received": self._received,
            "step.started": self._step_started,
            "message.appended": self._appended,
            "message.completed": self._completed,
            "reasoning.appended": self._reasoning,
            "reasoning.completed": self._reasoning_completed,
            "actions.requested": self._actions,
            "action.result": self._action_result,
            "step.completed": self._step_completed,
            "step.failed": self._step_failed,
            "turn.completed": lambda d, t, k: self.b.end_turn(t, "completed"),
            "turn.failed": self._turn_failed,
            "turn.cancelled": lambda d, t, k: self.b.end_turn(t, "cancelled"),
            "compaction.requested": lambda d, t, k: self._context(d, t, "compaction", "requested"),
            "compaction.completed": lambda d, t, k: self._context(d, t, "compaction", "completed"),
            "context.cleared": lambda d, t, k: self._context(d, t, "clear", "completed"),
            "session.failed": self._session_failed,
            "session.completed": self._session_completed,
        }

    def read_lines(self, lines: Iterator[bytes], number: int, offset: int, general: GeneralPath) -> int:
        """Apply the rest of the stream, `number` lines (`offset` bytes) in; how many lines were
        applied here. The common line, a shallow event whose `data` is an object, is parsed and
        applied inline (`apply`, the builder's `start_line`, the event count); any other goes to
        `general` (the reader's `feed`). A version <= 26 line holds one event: it touches one
        step at most, never a step and something else, so no step of it is `shared`."""
        loads, decode_error, may_be_deep = orjson.loads, orjson.JSONDecodeError, values.may_be_deep
        b, seen, handlers = self.b, self._seen, self._handlers
        first, general_lines, duplicates = number, 0, 0  # counted here: no count per inline line
        for raw in lines:
            number += 1
            try:
                event = loads(raw)
            except decode_error:
                event = None
            kind = event.get("type") if event.__class__ is dict else None
            data = event.get("data") if kind.__class__ is str else None
            if data.__class__ is not dict or "facts" in event or (len(raw) >= SHALLOW and may_be_deep(raw, event)):
                general(number, offset, raw.rstrip(b"\r\n"), raw.endswith(b"\n"))
                general_lines += 1
                offset += len(raw)
                continue
            offset += len(raw)
            meta = event.get("meta")
            if meta.__class__ is dict:
                event_id = meta.get("id")
                if event_id.__class__ is str:
                    if event_id in seen:
                        duplicates += 1
                        continue
                    seen.add(event_id)
            turn = data.get("turnId")
            if turn.__class__ is not str:
                turn = None
            key = data.get("stepIndex")
            if key is not None and key.__class__ is not str:
                key = str(key) if key.__class__ is int else key_of(key)
            b.line, b._line_step, b._line_other = number, None, False  # `b.start_line(number)`
            handler = handlers.get(kind)
            if handler is not None:
                handler(data, turn, key)
            elif "stepIndex" in data:  # `_step_scoped`, inline
                b.step(turn, key)
            else:
                b._line_other = True  # `b.other()` on a line that touched nothing yet
        inline = number - first - general_lines
        b.stream.duplicates += duplicates
        b.stream.events += inline - duplicates
        return inline

    def apply(self, event: dict[str, Any]) -> str | None:
        """Apply one event; a reason string when the event cannot be used. (JSON gives exact
        `str`/`dict` values, so the type tests compare classes: no call per test.)"""
        kind = event.get("type")
        if kind.__class__ is not str:
            return "event without a string `type`"
        data = event.get("data")
        if data is None:
            data = {}
        elif data.__class__ is not dict:
            return f"`{kind}` event whose `data` is not an object"
        meta = event.get("meta")
        if meta.__class__ is dict:
            event_id = meta.get("id")
            if event_id.__class__ is str:
                if event_id in self._seen:
                    self.b.stream.duplicates += 1
                    return None
                self._seen.add(event_id)
        turn = data.get("turnId")  # `opt_str` and `key_of` inline: once per event
        if turn.__class__ is not str:
            turn = None
        key = data.get("stepIndex")
        if key is not None and key.__class__ is not str:
            key = str(key) if key.__class__ is int else key_of(key)
        handler = self._handlers.get(kind)
        if handler is None:
            self._step_scoped(data, turn, key)
            return None
        handler(data, turn, key)
        self.b.stream.events += 1
        return None

    def close(self) -> None:
        """Drop the handler table (bound methods of this decoder: a reference cycle)."""
        self._handlers.clear()

    # ------------------------------------------------------------------ handlers

    def _step_scoped(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        """An event the rules do not read: attribute its line to its step when it names one."""
        self.b.stream.events += 1
        if "stepIndex" in data:
            self.b.step(turn, key)
        else:
            self.b.other()

    def _session_started(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        self.b.other()
        session_id = opt_str(data.get("sessionId"))
        if session_id and not self.b.stream.session_id:
            self.b.stream.session_id = session_id

    def _received(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        kind = data.get("kind")  # `opt_str`, inline (as in the handlers below)
        if kind.__class__ is not str:
            kind = None
        message = data.get("message")  # a string message is what `input_text` finds first
        text = message if message.__class__ is str else input_text(data)
        self.b.add_input(turn, kind, text, kind is None or is_human_kind(kind))

    def _step_started(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        reason = data.get("retryReason")
        self.b.start_step(turn, key or "0", reason if reason.__class__ is str else None)

    def _appended(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        step = self.b.step(turn, key)
        part = data.get("sequence")
        if part.__class__ is not str:
            part = str(part) if part.__class__ is int else key_of(part)  # `key_of`, its common case inline
        part = part or "0"
        delta = data.get("messageDelta")
        if delta.__class__ is str:  # the common append, inline: `_mode("delta")`, `append_text`
            stream = self.b.stream
            if stream.text_mode is None:
                stream.text_mode = "delta"
            chunks = step.chunks.get(part)
            if chunks is None:
                step.chunks[part] = [delta]
            else:
                chunks.append(delta)
        elif isinstance(data.get("message"), str):
            self._mode("cumulative")
            self.b.append_text(step, part, data["message"], cumulative=True)

    def _mode(self, mode: str) -> None:
        if self.b.stream.text_mode is None:
            self.b.stream.text_mode = mode

    def _completed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        step = self.b.step(turn, key)
        message = data.get("message")
        text = message if message is None or message.__class__ is str else text_of(message)
        finish = data.get("finishReason")
        if finish.__class__ is not str:
            finish = None
        phase = data.get("phase")
        if phase.__class__ is not str or not phase:
            phase = "narration" if finish == "tool-calls" else "reply"
        part = data.get("sequence")
        if part.__class__ is not str:
            part = str(part) if part.__class__ is int else key_of(part)
        self.b.complete_reply(step, part or "0", text, phase, finish)

    def _reasoning(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        step = self.b.step(turn, key)
        if isinstance(data.get("reasoningDelta"), str):
            self.b.append_reasoning(step, data["reasoningDelta"])
        elif isinstance(data.get("reasoning"), str):
            self.b.append_reasoning(step, data["reasoning"], cumulative=True)

    def _reasoning_completed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        step = self.b.step(turn, key)
        text = data.get("reasoning", data.get("text"))
        if isinstance(text, str):
            self.b.append_reasoning(step, text, cumulative=True)

    def _actions(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        step = self.b.step(turn, key)
        actions = data.get("actions")
        for action in actions if isinstance(actions, list) else ():
            if isinstance(action, dict) and isinstance(action.get("callId"), str):
                name = opt_str(action.get("toolName")) or ""
                self.b.request_call(step, action["callId"], name, action.get("input"))

    def _action_result(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        call_id = opt_str(data.get("callId"))
        if call_id is None:
            self.b.other()
            return
        failed = data.get("error") is not None or data.get("isError") is True
        outcome = opt_str(data.get("outcome")) or ("failed" if failed else "completed")
        self.b.settle_call(turn, call_id, outcome, data.get("output"), data.get("error"))

    def _step_completed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        finish = data.get("finishReason")
        step = self.b.settle_step(turn, key, "completed", finish if finish.__class__ is str else None)
        usage = data.get("usage")
        if usage.__class__ is dict and isinstance(usage.get("outputTokens"), int):
            step.output_tokens = usage["outputTokens"]

    def _step_failed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        error = failure(self.b.line, "step", data)
        self.b.settle_step(turn, key, "failed", None, error)

    def _turn_failed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        error = failure(self.b.line, "turn", data)
        error.turn = self.b.turn(turn).id
        self.b.end_turn(turn, "failed", error)

    def _context(self, data: dict[str, Any], turn: str | None, op: str, status: str) -> None:
        self.b.context_op(turn, op, status, opt_str(data.get("summary")))

    def _session_failed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        self.b.stream.outcome = "failed"
        self.b.session_failure(failure(self.b.line, "session", data))

    def _session_completed(self, data: dict[str, Any], turn: str | None, key: str | None) -> None:
        self.b.other()
        self.b.stream.outcome = "completed"
