"""The replay's hot path: one dispatch per loop event.

Most records of a journal are well-formed loop events of the five known kinds. The general path
(`replay._feed`) handles each of them through several layers: validate the record, index its
step, then hand it to each engine's `apply`, which dispatches on the record type and again on the
event kind. Here the reader hands over each loop-event record before it even makes a `Record`
of it, the event kind is looked up once and its four handlers - the schema's fast "certainly
valid" check, the step index, the v1 fold and the v2 fold - are called directly.

Anything unusual returns False and takes the general path instead: an event the fast check is
not sure about, a record for another agent, an engine that already failed, a transcript reducer
that is folding by itself (see mirror.py). The reader never offers the journal's first record.
Both paths leave the same state behind; `tests/kimi/test_route.py` pins that on generated
journals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .engine_v1 import crash_text
from .records import EVENT_FAST, envelope_ok

if TYPE_CHECKING:
    from .replay import KimiReplay

LOOP = "context.append_loop_event"
Handler = Callable[[dict[str, Any], int], None]


class LoopRoute:
    """Per event kind: (fast validity check, step-index handler, v1 handler, v2 handler)."""

    def __init__(self, state: KimiReplay) -> None:
        assert state.m1 is not None and state.m2 is not None, "the hot path serves light replays"
        self.state = state
        self.crash = state.crash
        self.mirrors = (state.m1, state.m2)
        self.same_agent = state.v2.same_agent
        on_v1 = state.v1.event_handlers()
        on_v2 = state.v2.fold.event_handlers()
        self.routes: dict[str, tuple[Callable[[dict[str, Any]], bool], Any, Handler, Handler]] = {
            kind: (check, state.steps.handler(kind), on_v1[kind], on_v2[kind]) for kind, check in EVENT_FAST.items()
        }

    def take(self, line: int, offset: int, data: dict[str, Any]) -> bool:
        """Apply a `context.append_loop_event` record (never the journal's first record);
        False when the general path must do it."""
        m1, m2 = self.mirrors
        if self.crash or m1.active or m2.active:
            return False
        event = data.get("event")
        if event.__class__ is not dict:
            return False
        kind = event.get("type")
        route = self.routes.get(kind) if kind.__class__ is str else None
        if route is None or not envelope_ok(data) or ("agentId" in data and not self.same_agent(data)):
            return False  # unsure, or another agent's record v2 skips: the general path notes it
        check, index, on_v1, on_v2 = route
        if not check(event):
            return False
        index(event, line, offset)
        try:
            on_v1(event, line)
        except Exception as exc:  # noqa: BLE001 - as in the general path: that engine fails here
            self.crash["v1"] = crash_text(exc, line, LOOP)
        try:
            on_v2(event, line)
        except Exception as exc:  # noqa: BLE001
            self.crash["v2"] = crash_text(exc, line, LOOP)
        return True
