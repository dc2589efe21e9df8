"""Pausing the cyclic garbage collector while a reader builds many short-lived, acyclic objects.

What the readers build (rows, parsed JSON, messages, turns) holds no reference cycles, so
reference counting frees it; the collector's young-generation passes over those allocations cost
a tenth or more of a scan and find nothing. The collector is paused while a reader works and
resumed after: whatever was made meanwhile goes to the oldest generation without a pass (freeze
then unfreeze), so the next young collection does not walk it. Cyclic garbage made while paused is
collected as usual once the collector runs again, so memory stays bounded by what is alive.

That move is skipped while something else holds objects frozen (an open Claude Code store
freezes its index: stores/claude_code/reader.py): `gc.unfreeze()` would thaw those too.

One session at a time: a store of many sessions (OpenCode, Hermes) hands the rule engine one
session's objects after another, and nothing on the way (this pause, `session_pass.SessionPass`,
`rules.engine.check_store`, the stores' own generators) holds a session once the engine is done
with it. Its objects are then freed before the next session is read, so the next one is built
in the memory just freed, still in the processor's cache, instead of beside it; the scan's
working set is one session instead of two. Measured in one process, alternating the two ways
(docs/performance.md): about a tenth of an OpenCode scan's wall time, with the same
instructions; no clear change for Hermes.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block (when it was on), then back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():  # unfreeze would also thaw what another store froze
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def paused_per_item(items: Iterable[T]) -> Iterator[T]:
    """`items`, with the collector paused while each one is produced and running while the
    consumer works on it (a session is read and rebuilt paused; the rules over it run as usual).
    An item is not held while the next one is produced (see "One session at a time" above)."""
    iterator = iter(items)
    while True:
        with collector_paused():
            item = next(iterator, _END)
        if item is _END:
            return
        yield item  # type: ignore[misc]
        del item


_END: object = object()
