"""The replay's hot path: one fused handler per record for the records a journal is made of.

Most records are well-formed loop events of the five known kinds and appended messages; many of
the rest are types no replay reads (`turn.prompt`, `usage.record`, ...). The general path
(`driver._feed`) handles each record through several layers: validate it, index its step, then
hand it to each engine's `apply`, which dispatches on the record type and again on the event
kind. Here the reader offers each record before it even makes a `Record` of it (a loop event
straight to the handler of its event's kind), and that handler does all of that inline: it
checks the envelope and the fields the schema's fast check reads
(exactly those, so it takes only records that check would call valid), indexes the step, and
applies the v1 and the v2 fold to the engines' state directly.

Anything unusual returns False before anything changed, and the general path takes the record:
a record the fast check is not sure about, a record for another agent, an engine that already
failed, a transcript reducer that is folding by itself (see transcript/live_mirror.py), any other
history record (compaction, undo, clear, swarm mode). The reader never offers the journal's first
record. Both paths leave the same state behind; `tests/kimi/test_route.py` pins that on generated
journals, hostile records mixed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ....text import JS_WHITESPACE, js_trim
from ..engines.engine_v1 import crash_text
from ..engines.loop_fold import note_settle
from ..engines.messages import appended, tool_call, tool_message
from ..read.reader import LOOP, Take, TakeEvent
from ..read.records import HISTORY_TYPES, envelope_ok, message_ok, part_ok, parts_ok
from .step_index import OTHERS, VACUOUS, NoStepIndex

if TYPE_CHECKING:
    from .driver import KimiReplay

MESSAGE = "context.append_message"
EVENT_KINDS = ("step.begin", "step.end", "content.part", "tool.call", "tool.result")  # the kinds with a handler
READ_TYPES = frozenset((*HISTORY_TYPES, "swarm_mode.enter"))  # the record types a replay reads
FAILED = ("interrupted", "error")  # finish reasons that leave a v2 step open (loop_fold.FAILED_FINISH)
_MISSING = object()


def _blank(text: str) -> bool:
    """`vacuous._blank` for a string (JS trim; a text starting with a non-blank is not blank)."""
    return not text or (text[0] in JS_WHITESPACE and not js_trim(text))


def _vacuous(part: dict[str, Any]) -> bool:
    """`vacuous.is_vacuous_part` for a part `_part_valid` accepted."""
    kind = part.get("type")
    if kind == "text":
        return _blank(part["text"])
    if kind == "think":
        return "encrypted" not in part and _blank(part["think"])
    return False


def _step_fields_valid(event: dict[str, Any]) -> bool:
    """`records._step_event_ok` but for the uuid (a string), for step.begin and step.end."""
    turn = event.get("turnId", _MISSING)
    step = event.get("step", _MISSING)
    finish = event.get("finishReason", _MISSING)
    return ((turn is _MISSING or turn.__class__ is str) and (step is _MISSING or step.__class__ is int)
            and (finish is _MISSING or finish.__class__ is str))


class HotPath:
    """The fused handlers, bound to one replay's engines and step index."""

    def __init__(self, state: KimiReplay) -> None:
        assert state.m1 is not None and state.m2 is not None, "the hot path serves light replays"
        self.state = state
        self.crash = state.crash
        self.open = True  # both engines healthy, both transcript reducers mirroring: see reopen()
        self.same_agent = state.v2.same_agent
        self.v1 = state.v1
        self.fold = state.v2.fold
        assert self.fold._push == state.v2.history.append, "the live v2 fold pushes onto its history"
        self.index = None if isinstance(state.steps, NoStepIndex) else state.steps
        # The containers the handlers touch, looked up once: none of them is ever replaced
        # (the engines clear them, or assign slices).
        self.records = self.index.records if self.index is not None else None
        self.open1, self.pending1, self.history1 = state.v1.open_steps, state.v1.pending, state.v1.history
        self.pending2, self.history2 = self.fold.pending, state.v2.history
        # The step v1 and v2 opened together at a step.begin taken here holds one message in both
        # histories while every record of it reaches both (see `split`).
        self.twin: dict[str, Any] | None = None
        self.twin_at = -1  # its index in the v2 history
        self.kinds: dict[str, TakeEvent] = dict(zip(EVENT_KINDS, (
            self._step_begin, self._step_end, self._content_part, self._tool_call, self._tool_result), strict=True))

    def reopen(self) -> None:
        """Called after the general path applied a record: it may have failed an engine or set a
        transcript reducer folding by itself, and then the hot path stays out of the way."""
        m1, m2 = self.state.m1, self.state.m2
        self.open = not self.crash and not m1.active and not m2.active  # type: ignore[union-attr]

    def release(self) -> None:
        """The replay has ended: v2 gets its own open step message back, and the handler table
        goes (its bound methods hold this object, a cycle that would keep the whole replay alive
        until the cyclic collector ran)."""
        self.split()
        self.kinds = {}

    def split(self) -> None:
        """End the sharing of the open step's message: v2 gets its own copy, marked partial.

        A step both engines opened at the same step.begin gets one message, in both histories:
        v2's differs from v1's only by its `partial` mark, which the v2 fold drops when it settles
        the step normally, and while each of the step's parts and calls reaches both engines they
        hold the same content. Before anything else happens to it (a record for only one of them,
        any record of the general path, a settle while v1 keeps the step open, a failed end, the
        end of the journal) v2 gets the message it would have had all along.
        """
        shared = self.twin
        if shared is None:
            return
        self.twin = None
        fold = self.fold
        if fold.open_msg is not shared:
            return
        own = {"role": shared["role"], "content": list(shared["content"]), "toolCalls": list(shared["toolCalls"]),
               "partial": True, "_src": shared["_src"]}
        history, at = self.history2, self.twin_at
        if not (0 <= at < len(history) and history[at] is shared):
            at = next(i for i in range(len(history) - 1, -1, -1) if history[i] is shared)
        history[at] = own
        fold.open_msg = own

    def routes(self) -> dict[str, Take]:
        """The handler of each record type the hot path applies, for the reader's loop (which
        skips the types no replay reads, and yields the rest: READ_TYPES); loop events have one
        handler per event kind (`loop_routes`)."""
        return {MESSAGE: self.message}

    def loop_routes(self) -> dict[str, TakeEvent]:
        """The handler of each loop-event kind, `handler(line, offset, record, event)`, which the
        reader calls for a loop-event record (never the journal's first) whose event is an object
        of that kind; False when the general path must apply the record. Each handler first tests
        that the hot path is open and the envelope is valid and this agent's: the common envelope
        (an int `time`, no `agentId`) inline, any other through `_envelope`. That test is written
        out in each handler, not called: a call costs as much as the test itself."""
        return self.kinds

    def _envelope(self, data: dict[str, Any]) -> bool:
        """A valid envelope of this agent (another agent's record is one v2 skips: the general
        path notes it). Only for a record whose `time` is not an int or that names an agent: the
        handlers test the common envelope inline (see loop_routes)."""
        return envelope_ok(data) and ("agentId" not in data or self.same_agent(data))

    # -- loop events: validity, step index, v1, v2 --------------------------------------------

    def _step_begin(self, line: int, offset: int, data: dict[str, Any], event: dict[str, Any]) -> bool:
        if not (self.open and ((data.get("time").__class__ is int and "agentId" not in data) or self._envelope(data))):
            return False  # closed, or not a valid envelope of this agent (see loop_routes)
        uuid = event.get("uuid")
        if uuid.__class__ is not str or not _step_fields_valid(event):
            return False
        if self.index is not None:
            self.index.step_begin(event, line, offset)
        if self.twin is not None:  # (most steps ended sharing nothing: no call)
            self.split()  # v1 keeps the previous step open; v2 settles it below
        src = ("step", uuid, line)
        v1 = self.v1
        shared: dict[str, Any] | None = None
        try:
            if v1.pending:
                v1.closed_at_begin[uuid] = list(v1.pending)
                v1.close_pending()
            msg: dict[str, Any] = {"role": "assistant", "content": [], "toolCalls": [], "_src": src}
            self.history1.append(msg)
            self.open1[uuid] = shared = msg
        except Exception as exc:  # noqa: BLE001 - as in the general path: that engine fails here
            self._failed("v1", exc, line)
        fold = self.fold
        try:
            if fold.open_step is not None:
                note_settle(fold.begin_settles, uuid, fold.open_step)  # type: ignore[arg-type]
                fold.settle(line)
            if shared is None:
                msg = {"role": "assistant", "content": [], "toolCalls": [], "partial": True, "_src": src}
            else:
                msg, self.twin, self.twin_at = shared, shared, len(self.history2)
            self.history2.append(msg)
            fold.open_step, fold.open_msg, fold.open_has_calls, fold.open_vacuous = uuid, msg, False, True
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line)
        return True

    def _step_end(self, line: int, offset: int, data: dict[str, Any], event: dict[str, Any]) -> bool:
        if not (self.open and ((data.get("time").__class__ is int and "agentId" not in data) or self._envelope(data))):
            return False  # closed, or not a valid envelope of this agent (see loop_routes)
        if event.get("uuid").__class__ is not str or not _step_fields_valid(event):
            return False
        if self.index is not None:
            self.index.step_end(event, line, offset)
        v1 = self.v1
        closed = None
        try:
            closed = self.open1.pop(event["uuid"], None)
            if v1.deferred and not self.pending1:
                v1.flush()
        except Exception as exc:  # noqa: BLE001
            self._failed("v1", exc, line)
        fold = self.fold
        settles = event.get("finishReason") not in FAILED
        if self.twin is not None and fold.open_msg is self.twin:
            if closed is self.twin and settles:
                self.twin = None  # both engines are done with it: it stays shared for good
            elif (closed is self.twin) != settles:
                self.split()  # one engine closes it and the other keeps it open
        try:
            if settles:
                msg = fold.open_msg
                if fold.open_step is None:
                    pass
                elif msg is not None and not self.pending2 and not fold.deferred and (
                        fold.open_has_calls or not fold.open_vacuous):
                    msg.pop("partial", None)  # the common settle: nothing to close, nothing dropped
                    fold.open_step = fold.open_msg = None
                else:
                    fold.settle(line)
                if fold.deferred and not fold.pending:
                    fold.flush_deferred()
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line)
        return True

    def _content_part(self, line: int, offset: int, data: dict[str, Any], event: dict[str, Any]) -> bool:
        if not (self.open and ((data.get("time").__class__ is int and "agentId" not in data) or self._envelope(data))):
            return False  # closed, or not a valid envelope of this agent (see loop_routes)
        owner = event.get("stepUuid")
        part = event.get("part")
        if owner.__class__ is not str or part.__class__ is not dict:
            return False
        kind = part.get("type")  # records._part_ok, its two commonest shapes written out
        if kind == "text":
            if part.get("text").__class__ is not str:
                return False
        elif kind == "think":
            enc = part.get("encrypted", "")
            if part.get("think").__class__ is not str or (enc is not None and enc.__class__ is not str):
                return False
        elif not part_ok(part):
            return False
        vacuous = None  # the part's verdict, worked out once for whoever needs it
        records = self.records
        if records is not None:  # StepIndex.content_part
            flat = records.get(owner) or self.index.record(owner)  # type: ignore[union-attr]
            flat[OTHERS].append(line)
            if flat[VACUOUS]:
                flat[VACUOUS] = vacuous = _vacuous(part)
        fold = self.fold
        mine = self.open1.get(owner)
        if self.twin is not None and (mine is self.twin) != (fold.open_msg is self.twin and fold.open_step == owner):
            self.split()  # the part reaches only one of the engines
        try:
            if mine is None:
                self.v1._not_open(event, line, "content part")
            else:
                mine["content"].append(part)
        except Exception as exc:  # noqa: BLE001
            self._failed("v1", exc, line)
        try:
            msg = fold.open_msg
            if msg is not None and fold.open_step == owner:
                if msg is not mine:  # (a shared message has it already)
                    msg["content"].append(part)
                if fold.open_vacuous:
                    fold.open_vacuous = _vacuous(part) if vacuous is None else vacuous
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line)
        return True

    def _tool_call(self, line: int, offset: int, data: dict[str, Any], event: dict[str, Any]) -> bool:
        if not (self.open and ((data.get("time").__class__ is int and "agentId" not in data) or self._envelope(data))):
            return False  # closed, or not a valid envelope of this agent (see loop_routes)
        owner = event.get("stepUuid")
        call_id = event.get("toolCallId")
        if owner.__class__ is not str or call_id.__class__ is not str or event.get("name").__class__ is not str:
            return False
        if self.index is not None:
            self.index.tool_call(event, line, offset)
        fold = self.fold
        mine = self.open1.get(owner)
        if self.twin is not None and (mine is self.twin) != (fold.open_msg is self.twin and fold.open_step == owner):
            self.split()  # the call reaches only one of the engines
        try:
            if mine is None:
                self.v1._not_open(event, line, "tool call")
            else:
                mine["toolCalls"].append(tool_call(event))
                self.pending1[call_id] = None
        except Exception as exc:  # noqa: BLE001
            self._failed("v1", exc, line)
        try:
            msg = fold.open_msg
            if msg is not None and fold.open_step == owner:
                if msg is not mine:  # (a shared message has it already)
                    msg["toolCalls"].append(tool_call(event))
                self.pending2[call_id] = None
                fold.open_has_calls = True
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line)
        return True

    def _tool_result(self, line: int, offset: int, data: dict[str, Any], event: dict[str, Any]) -> bool:
        if not (self.open and ((data.get("time").__class__ is int and "agentId" not in data) or self._envelope(data))):
            return False  # closed, or not a valid envelope of this agent (see loop_routes)
        call_id = event.get("toolCallId")
        result = event.get("result")
        if call_id.__class__ is not str or result.__class__ is not dict:
            return False
        output = result.get("output")
        error = result.get("isError", False)
        if (output.__class__ is not str and not parts_ok(output)) or error.__class__ is not bool:
            return False
        if self.index is not None:
            self.index.tool_result(event, line, offset)
        v1 = self.v1
        message = None
        try:
            pending = self.pending1
            if call_id in pending:
                del pending[call_id]
                self.history1.append(message := tool_message(event, line))
                if v1.deferred and not pending:
                    v1.flush()
        except Exception as exc:  # noqa: BLE001
            self._failed("v1", exc, line)
        fold = self.fold
        try:
            pending = self.pending2
            if call_id in pending:
                del pending[call_id]
                self.history2.append(message or tool_message(event, line))
                if fold.deferred and not pending:
                    fold.flush_deferred()
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line)
        return True

    # -- appended messages -----------------------------------------------------------------------

    def message(self, line: int, offset: int, data: dict[str, Any]) -> bool:
        """Apply an appended message (never the journal's first); False as for loop events."""
        message = data.get("message")
        if not self.open or not self._envelope(data) or not message_ok(message):
            return False
        msg = appended(message, line)  # one tagged copy serves both folds, as in the general path
        (self.v1.deferred if self.pending1 else self.history1).append(msg)
        (self.fold.deferred if self.pending2 else self.history2).append(msg)
        return True

    def _failed(self, engine: str, exc: Exception, line: int) -> None:
        self.crash[engine] = crash_text(exc, line, LOOP)
        self.open = False
