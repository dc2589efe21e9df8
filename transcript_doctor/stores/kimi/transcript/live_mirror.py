"""Transcript reducers that follow their live engine instead of folding every record (scans).

Between records that treat the live history and the transcript differently (compaction, undo,
clear, swarm-mode exit) a transcript reducer pushes exactly the messages its engine's live fold
pushes: same fold rules, same records. So in a scan the reducer can stay idle and, when such a
record arrives, take the messages the live engine pushed since the last one ("sync"), adopt the
live fold's state, and apply the record itself.

If afterwards the two folds are not both at rest (no open step, no pending call, no deferred
message) - an undo that v2 refuses, a swarm-mode exit that pops a deferred reminder - the
reducer folds records itself ("active") until both are at rest again. Tests pin that a mirrored
reducer ends with the same `foldedLength` as one that folds every record.
"""

from __future__ import annotations

from typing import Any

DIVERGENT = frozenset(("context.apply_compaction", "context.undo", "context.clear", "swarm_mode.exit"))


class Mirror:
    """Drives a light transcript reducer (`real`) from a live engine (`live`) of the same engine."""

    def __init__(self, real: Any, live: Any, side: str) -> None:
        self.real = real
        self.live = live
        self.v2 = side == "v2"
        self.base = 0  # len(live.history) when the reducer last caught up
        self.active = False

    def before(self, rtype: str, data: dict[str, Any], line: int, msg: Any) -> None:
        """Called with each record before the live engine applies it."""
        if self.active:
            self.real.apply(rtype, data, line, msg)
        elif rtype in DIVERGENT:
            self.sync()
            self._adopt_live_state()
            self.real.apply(rtype, data, line, msg)
            self.active = True  # settled in after()

    def after(self) -> None:
        """Called after the live engine applied the record."""
        if self.active and self._at_rest(self.live) and self._at_rest(self.real_fold):
            self.active = False
            self.base = len(self.live.history)

    def sync(self) -> None:
        """Take the messages the live fold pushed since the last catch-up."""
        if self.active:
            return
        fresh = self.live.history[self.base :]
        self.base = len(self.live.history)
        if not fresh:
            return
        entries = self.real.entries
        entries.extend(fresh)
        if self.v2:
            self.real.sink.folded += len(fresh)
        else:
            self.real.folded += len(fresh)

    @property
    def real_fold(self) -> Any:
        return self.real.fold if self.v2 else self.real

    def _adopt_live_state(self) -> None:
        if self.v2:
            live, real = self.live.fold, self.real.fold
            real.open_step, real.open_msg = live.open_step, self._own(live.open_msg)
            real.open_has_calls, real.open_vacuous = live.open_has_calls, live.open_vacuous
        else:
            live, real = self.live, self.real
            real.open_steps = dict(live.open_steps)
        real.pending = dict(live.pending)
        real.deferred = list(live.deferred)

    def _own(self, msg: Any) -> Any:
        """The reducer's own copy of the live fold's open step message, in place of the shared
        one in its entries: settling it there (unmarking it partial) must not touch the live one."""
        if msg is None:
            return None
        own = dict(msg)
        entries = self.real.entries
        for i in range(len(entries) - 1, -1, -1):
            if entries[i] is msg:
                entries[i] = own
                break
        return own

    def _at_rest(self, engine: Any) -> bool:
        fold = engine.fold if self.v2 and hasattr(engine, "fold") else engine
        if self.v2:
            return fold.open_step is None and not fold.pending and not fold.deferred
        return not fold.open_steps and not fold.pending and not fold.deferred


class NoTranscript:
    """A mirror for replays that only need the live engines (a heal's acceptance check): the
    transcript reducers are left empty and never folded."""

    active = False

    def before(self, rtype: str, data: dict[str, Any], line: int, msg: Any) -> None:
        pass

    def after(self) -> None:
        pass

    def sync(self) -> None:
        pass
