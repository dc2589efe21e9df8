"""The v2 (agent-core-v2) loop-event fold: steps, tool exchanges, deferred messages, settle/drop.

One kernel serves both the live history and the v2 transcript reducer; they differ only in the
`Sink` that receives pushes and drops (the transcript counts `foldedLength`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .messages import Msg, interrupted_message, step_assistant, tool_call, tool_message
from .vacuous import is_vacuous_part

FAILED_FINISH = ("interrupted", "error")


class Sink:
    """Where folded messages go. Subclasses count or observe."""

    def __init__(self, messages: list[Msg]) -> None:
        self.messages = messages

    def push(self, msg: Msg) -> None:
        self.messages.append(msg)

    def drop(self, msg: Msg) -> None:
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i] is msg:
                del self.messages[i]
                return


class LoopFold:
    """Folds loop events and appended messages into a sink, v2 rules."""

    def __init__(self, sink: Sink, on_drop: Callable[[Any, int], None] | None = None, light: bool = False) -> None:
        self.sink = sink
        # Pushing is the commonest thing a fold does: straight onto the list when the sink is plain.
        self._push = sink.messages.append if type(sink) is Sink else sink.push
        self.light = light  # count-only mode: track steps and calls, build no message content
        self.on_drop = on_drop
        self.pending: dict[Any, None] = {}
        self.deferred: list[Msg] = []
        self.begin_settles: dict[Any, Any] | None = None  # step uuid -> the open step its begin settled
        self.reset()

    def reset(self) -> None:
        self.open_step: Any = None
        self.open_msg: Msg | None = None
        self.open_has_calls = False
        self.open_vacuous = True
        self.pending.clear()
        self.deferred = []

    # -- messages -------------------------------------------------------------------------

    def append_message(self, msg: Msg) -> None:
        if self.pending:
            self.deferred.append(msg)
        else:
            self._push(msg)

    def flush_deferred(self) -> None:
        if not self.pending and self.deferred:
            waiting, self.deferred = self.deferred, []
            for msg in waiting:
                self._push(msg)

    # -- loop events ----------------------------------------------------------------------

    def event_handlers(self) -> dict[str, Callable[[dict[str, Any], int], None]]:
        """The bound loop-event handlers by kind, for a driver that dispatches once per event."""
        return {kind: handler.__get__(self) for kind, handler in self._HANDLERS.items()}

    def event(self, event: Any, line: int) -> None:
        if not isinstance(event, dict):  # unchecked by v2's schema: JS reads `.type` of it
            if event is None:
                raise TypeError("a loop event record without an event")
            return  # a number, string or list has no `type`: no handler
        handler = self._HANDLERS.get(event.get("type"))
        if handler:
            handler(self, event, line)

    def _step_begin(self, event: dict[str, Any], line: int) -> None:
        uuid = event.get("uuid")
        if self.open_step is not None:
            if self.begin_settles is not None:
                try:
                    note_settle(self.begin_settles, uuid, self.open_step)
                except TypeError:
                    pass  # an unhashable uuid (an invalid record): it names no step a heal removes
            self.settle(line)
        msg = step_assistant(uuid, line, partial=True)
        self._push(msg)
        self.open_step = uuid
        self.open_msg = msg
        self.open_has_calls = False
        self.open_vacuous = True

    def _step_end(self, event: dict[str, Any], line: int) -> None:
        if event.get("finishReason") in FAILED_FINISH:
            return  # a failed step stays open until something settles it
        if self.open_step is not None:
            self.settle(line)
        if self.deferred and not self.pending:
            self.flush_deferred()

    def _content_part(self, event: dict[str, Any], line: int) -> None:
        msg = self.open_msg
        if msg is None or self.open_step is None or event.get("stepUuid") != self.open_step:
            return
        part = event.get("part")
        if not self.light:
            msg["content"].append(part)
        if self.open_vacuous:
            self.open_vacuous = is_vacuous_part(part)

    def _tool_call(self, event: dict[str, Any], line: int) -> None:
        msg = self.open_msg
        if msg is None or self.open_step is None or event.get("stepUuid") != self.open_step:
            return
        if not self.light:
            msg["toolCalls"].append(tool_call(event))
        self.pending[event.get("toolCallId")] = None
        self.open_has_calls = True

    def _tool_result(self, event: dict[str, Any], line: int) -> None:
        call_id = event.get("toolCallId")
        if call_id not in self.pending:
            return  # stale, duplicate or orphan: ignored
        del self.pending[call_id]
        self._push({"role": "tool", "toolCallId": call_id} if self.light else tool_message(event, line))
        if self.deferred and not self.pending:
            self.flush_deferred()

    _HANDLERS: dict[str, Callable[[LoopFold, dict[str, Any], int], None]] = {
        "step.begin": _step_begin,
        "step.end": _step_end,
        "content.part": _content_part,
        "tool.call": _tool_call,
        "tool.result": _tool_result,
    }

    # -- settle ---------------------------------------------------------------------------

    def settle(self, line: int) -> None:
        """Close the open step: interrupt its pending calls, then drop it if vacuous, else seal it."""
        if self.open_step is None:
            return
        if self.pending:
            for call_id in self.pending:
                self._push(interrupted_message(call_id))
            self.pending.clear()
        if self.deferred:
            self.flush_deferred()
        msg = self.open_msg
        if msg is not None:
            if not self.open_has_calls and self.open_vacuous:
                self.sink.drop(msg)
                if self.on_drop:
                    self.on_drop(self.open_step, line)
            else:
                msg.pop("partial", None)
        self.open_step = None
        self.open_msg = None


def note_settle(settles: dict[Any, Any], uuid: Any, settled: Any) -> None:
    """Record that a `step.begin` of `uuid` settled the open step `settled`: the first other step
    any begin of this uuid settled. (A uuid that begins again settles its own earlier begin,
    which says nothing about another step; a heal keeps a step whose begin settles a failed
    step that stays, heal/plan.py.)"""
    if settled != uuid and uuid not in settles:
        settles[uuid] = settled
