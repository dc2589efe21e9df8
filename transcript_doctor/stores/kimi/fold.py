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
        self.light = light  # count-only mode: track steps and calls, build no message content
        self.on_drop = on_drop
        self.pending: dict[Any, None] = {}
        self.deferred: list[Msg] = []
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
            self.sink.push(msg)

    def flush_deferred(self) -> None:
        if not self.pending and self.deferred:
            waiting, self.deferred = self.deferred, []
            for msg in waiting:
                self.sink.push(msg)

    # -- loop events ----------------------------------------------------------------------

    def event(self, event: dict[str, Any], line: int) -> None:
        handler = self._HANDLERS.get(event.get("type"))
        if handler:
            handler(self, event, line)

    def _step_begin(self, event: dict[str, Any], line: int) -> None:
        self.settle(line)
        msg = step_assistant(event.get("uuid"), line, partial=True)
        self.sink.push(msg)
        self.open_step = event.get("uuid")
        self.open_msg = msg
        self.open_has_calls = False
        self.open_vacuous = True

    def _step_end(self, event: dict[str, Any], line: int) -> None:
        if event.get("finishReason") in FAILED_FINISH:
            return  # a failed step stays open until something settles it
        self.settle(line)
        self.flush_deferred()

    def _content_part(self, event: dict[str, Any], line: int) -> None:
        if not self._accepts(event.get("stepUuid")) or self.open_msg is None:
            return
        part = event.get("part")
        if not self.light:
            self.open_msg["content"].append(part)
        self.open_vacuous = self.open_vacuous and is_vacuous_part(part)

    def _tool_call(self, event: dict[str, Any], line: int) -> None:
        if not self._accepts(event.get("stepUuid")) or self.open_msg is None:
            return
        if not self.light:
            self.open_msg["toolCalls"].append(tool_call(event))
        self.pending[event.get("toolCallId")] = None
        self.open_has_calls = True

    def _tool_result(self, event: dict[str, Any], line: int) -> None:
        call_id = event.get("toolCallId")
        if call_id not in self.pending:
            return  # stale, duplicate or orphan: ignored
        del self.pending[call_id]
        self.sink.push({"role": "tool", "toolCallId": call_id} if self.light else tool_message(event, line))
        self.flush_deferred()

    _HANDLERS: dict[str, Callable[[LoopFold, dict[str, Any], int], None]] = {
        "step.begin": _step_begin,
        "step.end": _step_end,
        "content.part": _content_part,
        "tool.call": _tool_call,
        "tool.result": _tool_result,
    }

    def _accepts(self, step_uuid: Any) -> bool:
        return self.open_step is not None and step_uuid == self.open_step

    # -- settle ---------------------------------------------------------------------------

    def settle(self, line: int) -> None:
        """Close the open step: interrupt its pending calls, then drop it if vacuous, else seal it."""
        if self.open_step is None:
            return
        for call_id in list(self.pending):
            self.sink.push(interrupted_message(call_id))
        self.pending.clear()
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
