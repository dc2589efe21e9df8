"""The replay's hot path: one dispatch per record for the records a journal is made of.

Most records are well-formed loop events of the five known kinds and appended messages; many of
the rest are types no replay reads (`turn.prompt`, `usage.record`, ...). The general path
(`driver._feed`) handles each record through several layers: validate it, index its step, then
hand it to each engine's `apply`, which dispatches on the record type and again on the event
kind. Here the reader offers each record before it even makes a `Record` of it; a loop event's
kind is looked up once and its four handlers - the schema's fast "certainly valid" check, the
step index, the v1 fold and the v2 fold - are called directly, and a message goes straight to
both folds.

Anything unusual returns False and takes the general path instead: a record the fast check is
not sure about, a record for another agent, an engine that already failed, a transcript reducer
that is folding by itself (see transcript/live_mirror.py), any other history record (compaction, undo, clear,
swarm mode). The reader never offers the journal's first record. Both paths leave the same state
behind; `tests/kimi/test_route.py` pins that on generated journals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engines.engine_v1 import crash_text
from ..engines.messages import appended
from ..read.records import EVENT_FAST, HISTORY_TYPES, envelope_ok, message_ok

if TYPE_CHECKING:
    from .driver import KimiReplay

LOOP = "context.append_loop_event"
MESSAGE = "context.append_message"
Handler = Callable[[dict[str, Any], int], None]


class HotPath:
    """Per event kind: (fast validity check, step-index handler, v1 handler, v2 handler)."""

    def __init__(self, state: KimiReplay) -> None:
        assert state.m1 is not None and state.m2 is not None, "the hot path serves light replays"
        self.state = state
        self.crash = state.crash
        self.open = True  # both engines healthy, both transcript reducers mirroring: see reopen()
        self.same_agent = state.v2.same_agent
        on_v1 = state.v1.event_handlers()
        on_v2 = state.v2.fold.event_handlers()
        self.routes: dict[str, tuple[Callable[[dict[str, Any]], bool], Any, Handler, Handler]] = {
            kind: (check, state.steps.handler(kind), on_v1[kind], on_v2[kind]) for kind, check in EVENT_FAST.items()
        }
        self.push_v1 = state.v1.push_appended
        self.push_v2 = state.v2.fold.append_message

    def reopen(self) -> None:
        """Called after the general path applied a record: it may have failed an engine or set a
        transcript reducer folding by itself, and then the hot path stays out of the way."""
        m1, m2 = self.state.m1, self.state.m2
        self.open = not self.crash and not m1.active and not m2.active  # type: ignore[union-attr]

    def take(self, line: int, offset: int, rtype: str | None, data: dict[str, Any]) -> bool:
        """Apply a record (never the journal's first); False when the general path must do it."""
        if rtype != LOOP:
            if rtype == MESSAGE:
                return self._message(line, data)
            return rtype not in HISTORY_TYPES and rtype != "swarm_mode.enter"  # no replay reads these
        event = data.get("event")
        if not self.open or event.__class__ is not dict:
            return False
        kind = event.get("type")
        route = self.routes.get(kind) if kind.__class__ is str else None
        if route is None or not self._envelope(data):
            return False
        check, index, on_v1, on_v2 = route
        if not check(event):
            return False
        try:
            index(event, line, offset)
        except TypeError:
            pass  # an unhashable id an earlier, invalid record left behind: as in the general path
        try:
            on_v1(event, line)
        except Exception as exc:  # noqa: BLE001 - as in the general path: that engine fails here
            self._failed("v1", exc, line, LOOP)
        try:
            on_v2(event, line)
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line, LOOP)
        return True

    def _envelope(self, data: dict[str, Any]) -> bool:
        """A valid envelope of this agent (another agent's record is one v2 skips: the general
        path notes it)."""
        return envelope_ok(data) and ("agentId" not in data or self.same_agent(data))

    def _message(self, line: int, data: dict[str, Any]) -> bool:
        message = data.get("message")
        if not self.open or not self._envelope(data) or not message_ok(message):
            return False
        msg = appended(message, line)  # one tagged copy serves both folds, as in the general path
        try:
            self.push_v1(msg)
        except Exception as exc:  # noqa: BLE001
            self._failed("v1", exc, line, MESSAGE)
        try:
            self.push_v2(msg)
        except Exception as exc:  # noqa: BLE001
            self._failed("v2", exc, line, MESSAGE)
        return True

    def _failed(self, engine: str, exc: Exception, line: int, rtype: str) -> None:
        self.crash[engine] = crash_text(exc, line, rtype)
        self.open = False
