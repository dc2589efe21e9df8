"""A share of one store's sessions, for a scan split across worker processes (`transcript_doctor.shards`).

A database store (Hermes `state.db`, `opencode.db`) holds every session its runtime ever ran, so
one store can be most of a scan's work. Its sessions are independent of each other: a scan may
split them over `count` workers, shard `index` taking the sessions whose id hashes to `index`.
The hash is of the id alone (CRC-32 of its bytes), so each worker decides which sessions are
its own from its own read of the store, and a session belongs to one shard whatever else the
store holds: no session is scanned twice or left out when another is added meanwhile.

What belongs to the store as a whole (its integrity check, its schema version, its record
count) is reported by shard 0 alone. A store kind that splits this way says so with
`StoreKind.splits_sessions`; the scan never splits any other.
"""

from __future__ import annotations

import zlib
from typing import Any

from ..value_types import FrozenValue


class Shard(FrozenValue):
    """Shard `index` of `count` (0 <= index < count)."""

    __slots__ = ("index", "count")
    index: int
    count: int

    def __init__(self, index: int, count: int) -> None:
        if not 0 <= index < count:
            raise ValueError(f"shard {index} of {count}")
        self.assign(index, count)

    def holds(self, session_id: Any) -> bool:
        """Whether the session with this id (as the store reads it: text, bytes, a number or None) is this shard's."""
        return shard_of(session_id, self.count) == self.index


def shard_of(session_id: Any, count: int) -> int:
    """The shard of `count` that a session id belongs to. None and "" are one id (the stores read
    a row with no session id as the session "")."""
    if session_id.__class__ is bytes:
        key = session_id
    else:
        key = ("" if session_id is None else str(session_id)).encode("utf-8", "surrogatepass")
    return zlib.crc32(key) % count


def owns_store(shard: Shard | None) -> bool:
    """Whether a store read for `shard` (None: the whole store) reports what belongs to the store."""
    return shard is None or shard.index == 0
