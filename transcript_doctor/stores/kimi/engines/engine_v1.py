"""Engine v1 (agent-core `ContextMemory`): the live history, record by record.

v1 never drops a step: every `step.begin` pushes an assistant that stays. A loop event for a step
that is not open is an error that makes the real engine refuse the whole session; tdoc records
it in `errors` and skips the record. The end of a resume closes pending calls and flushes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import compaction as cx
from .messages import Msg, appended, interrupted_message, is_swarm_reminder, step_assistant, tool_call, tool_message


class EngineCrash(Exception):
    """The engine's replay throws outright (not a per-record resume error)."""


def crash_text(exc: Exception, line: int, rtype: str | None) -> str:
    """What to report when applying a record makes an engine fail."""
    if isinstance(exc, EngineCrash):
        return str(exc)
    # Malformed input the real engine would also choke on: report it, never trace back.
    return f"line {line}: {type(exc).__name__} while applying {rtype}"


class EngineV1:
    name = "v1"

    def __init__(self, light: bool = False) -> None:
        self.light = light  # count-only mode (transcript reducer in scans): no message content
        self.history: list[Msg] = []
        self.errors: list[str] = []
        self.error_lines: list[int] = []
        self.unknown_step_lines: list[int] = []
        self.record_errors: list[tuple[int, str]] = []  # (line, text): records v1 throws on and skips
        self.closed_at_begin: dict[Any, list[Any]] = {}  # step uuid -> calls its step.begin interrupted
        self.open_steps: dict[Any, Msg] = {}
        self.pending: dict[Any, None] = {}
        self.deferred: list[Msg] = []
        self.swarm_trigger: Any = None
        self.kept = cx.KeptUsers()  # the users the last compaction kept (an O(new) user walk)
        self.seen_header = False

    def reset(self) -> None:
        self.open_steps.clear()
        self.pending.clear()
        self.deferred = []

    def event_handlers(self) -> dict[str, Callable[[dict[str, Any], int], None]]:
        """The bound loop-event handlers by kind, for a driver that dispatches once per event."""
        return {kind: handler.__get__(self) for kind, handler in _EVENTS.items()}

    def error(self, line: int, text: str) -> None:
        self.errors.append(f"line {line}: {text}")
        self.error_lines.append(line)

    # -- records ---------------------------------------------------------------------------

    def apply(self, rtype: str | None, data: dict[str, Any], line: int, msg: Msg | None = None) -> None:
        """Apply one record (`msg`: the tagged appended message, when the caller built it already)."""
        if rtype == "context.append_loop_event":  # the common case first
            self._loop_event(data, line)
            return
        if msg is not None:
            self.push_appended(msg)
            return
        if rtype == "swarm_mode.enter":
            self.swarm_trigger = data.get("trigger")
            return
        op = _OPS.get(rtype)  # type: ignore[arg-type]
        if op:
            op(self, data, line)

    def _append_message(self, data: dict[str, Any], line: int) -> None:
        self.push_appended(appended(data.get("message"), line))

    def push_appended(self, msg: Msg) -> None:
        if self.pending:
            self.deferred.append(msg)
        else:
            self.history.append(msg)

    def _loop_event(self, data: dict[str, Any], line: int) -> None:
        event = data.get("event")
        if not isinstance(event, dict):
            self.error(line, "loop event record without an event object")
            return
        handler = _EVENTS.get(event.get("type"))
        if handler:
            handler(self, event, line)

    def _clear(self, data: dict[str, Any], line: int) -> None:
        self.history.clear()
        self.reset()

    def _undo(self, data: dict[str, Any], line: int) -> None:
        undo_walk(self.history, data.get("count"))
        self.reset()

    def _compaction(self, data: dict[str, Any], line: int) -> None:
        summary = cx.live_summary(data)
        if not isinstance(summary, str) and data.get("tokensAfter") is None:
            # v1 estimates the tokens of a summary it cannot iterate and throws before any state
            # changes (docs/kimi-code.md §Compaction): one error for this record, nothing else.
            text = "compaction summary is not text and the record has no tokensAfter; v1 throws here and applies nothing"
            self.error(line, text)
            self.record_errors.append((line, text))
            return
        self.history[:] = compaction_shape_v1(self.history, data, line, self.kept)
        self.reset()

    def _swarm_exit(self, data: dict[str, Any], line: int) -> None:
        if self.swarm_trigger is None or self.swarm_trigger == "tool":
            return
        if self.deferred and is_swarm_reminder(self.deferred[-1]):
            self.deferred.pop()
        elif self.history and is_swarm_reminder(self.history[-1]):
            self.history.pop()

    # -- loop events -----------------------------------------------------------------------

    def _step_begin(self, event: dict[str, Any], line: int) -> None:
        uuid = event.get("uuid")
        if self.pending:
            self.closed_at_begin[uuid] = list(self.pending)
            self.close_pending()
        msg = step_assistant(uuid, line, partial=False)
        self.history.append(msg)
        self.open_steps[uuid] = msg

    def _step_end(self, event: dict[str, Any], line: int) -> None:
        self.open_steps.pop(event.get("uuid"), None)
        if self.deferred and not self.pending:
            self.flush()

    def _content_part(self, event: dict[str, Any], line: int) -> None:
        msg = self.open_steps.get(event.get("stepUuid"))
        if msg is None:
            self._not_open(event, line, "content part")
        elif not self.light:
            msg["content"].append(event.get("part"))

    def _tool_call(self, event: dict[str, Any], line: int) -> None:
        msg = self.open_steps.get(event.get("stepUuid"))
        if msg is None:
            self._not_open(event, line, "tool call")
            return
        if not self.light:
            msg["toolCalls"].append(tool_call(event))
        self.pending[event.get("toolCallId")] = None

    def _tool_result(self, event: dict[str, Any], line: int) -> None:
        call_id = event.get("toolCallId")
        if call_id not in self.pending:
            return
        del self.pending[call_id]
        self.history.append({"role": "tool", "toolCallId": call_id} if self.light else tool_message(event, line))
        if self.deferred and not self.pending:
            self.flush()

    def _not_open(self, event: dict[str, Any], line: int, what: str) -> None:
        self.unknown_step_lines.append(line)
        self.error(line, f"{what} for step {event.get('stepUuid')!r}, which is not open")

    # -- pending and deferred ----------------------------------------------------------------

    def close_pending(self) -> None:
        """Interrupted results for every pending call (as a live resume writes them)."""
        for call_id in list(self.pending):
            del self.pending[call_id]
            self.history.append(interrupted_message(call_id))
            self.flush()

    def flush(self) -> None:
        if not self.pending and self.deferred:
            self.history.extend(self.deferred)
            self.deferred = []

    def finish(self) -> None:
        """End of resume: close still-pending calls and flush deferred messages."""
        self.close_pending()
        self.flush()


def undo_walk(messages: list[Msg], count: Any, floor: int = 0) -> int:
    """v1 undo: from the end down to `floor`, keep injections, stop at a compaction summary,
    remove everything else until `count` real user inputs are gone. Returns how many went."""
    remaining = count if isinstance(count, int) and not isinstance(count, bool) else 0
    removed = 0
    i = len(messages) - 1
    while i >= floor and remaining > 0:
        m = messages[i]
        i -= 1
        if cx.is_injection(m):
            continue
        if cx.origin_kind(m) == "compaction_summary":
            break
        del messages[i + 1]
        removed += 1
        if cx.is_real_user_input(m):
            remaining -= 1
    return removed


def compaction_shape_v1(history: list[Msg], record: dict[str, Any], line: int,
                        kept: cx.KeptUsers | None = None) -> list[Msg]:
    """v1's shape. The summary message's text is `contextSummary ?? summary` as it is: an object
    summary makes a text part whose text is that object (the v1 projection throws on it).
    `kept`: the live history's ledger of kept users (read, then updated)."""
    summary = cx.summary_message(cx.live_summary(record))
    summary["_src"] = ("rec", line)
    count = record.get("compactedCount")
    if "keptUserMessageCount" not in record and cx.is_number(count) and count < len(history):
        shape = [summary, *history[cx.slice_start(count, len(history)) :]]
        if kept is not None:
            kept.remember(shape, 0, [])
        return shape
    users = kept.users_of(history) if kept is not None else cx.compactable_users(history)
    if "keptHeadUserMessageCount" not in record:  # `=== undefined`: a null means head/tail
        selection = cx.Selection(tail=cx.select_recent(users))
    else:
        selection = cx.select_head_tail(users)
    shape = cx.kept_users_shape(selection, summary)
    for m in shape:
        m.setdefault("_src", ("rec", line))
    if kept is not None:
        kept.remember(shape, len(shape) - 1, selection.head + selection.tail)
    return shape


_OPS: dict[str, Callable[[EngineV1, dict[str, Any], int], None]] = {
    "context.append_message": EngineV1._append_message,
    "context.append_loop_event": EngineV1._loop_event,
    "context.clear": EngineV1._clear,
    "context.undo": EngineV1._undo,
    "context.apply_compaction": EngineV1._compaction,
    "swarm_mode.exit": EngineV1._swarm_exit,
}
_EVENTS: dict[str, Callable[[EngineV1, dict[str, Any], int], None]] = {
    "step.begin": EngineV1._step_begin,
    "step.end": EngineV1._step_end,
    "content.part": EngineV1._content_part,
    "tool.call": EngineV1._tool_call,
    "tool.result": EngineV1._tool_result,
}
