"""Store-specific option objects, one class per store family, passed in `Options.settings`.

The shared `Options` carries only what every store understands; a flag that one store family
reads lives here and is read by that family with `options.get(...)`. The classes sit outside
the store packages so that a front end can build them without importing any store.
"""

from __future__ import annotations

from ..value_types import FrozenValue


class KimiOptions(FrozenValue):
    """`engine`: the kimi-code replay engine whose view is checked or printed: auto (both), v1, v2."""

    __slots__ = ("engine",)
    engine: str

    def __init__(self, engine: str = "auto") -> None:
        self.assign(engine)


class SqliteOptions(FrozenValue):
    """`deep`: SQLite stores run `PRAGMA integrity_check` (every page) instead of `quick_check`."""

    __slots__ = ("deep",)
    deep: bool

    def __init__(self, deep: bool = False) -> None:
        self.assign(deep)


class RowHealOptions(FrozenValue):
    """`purge`: a database heal deletes rows instead of deactivating them (Hermes `--purge`)."""

    __slots__ = ("purge",)
    purge: bool

    def __init__(self, purge: bool = False) -> None:
        self.assign(purge)


class CodexOptions(FrozenValue):
    """`target`: what Codex rollouts are judged against: `codex` (the request Codex sends, after its
    own repairs) or `responses` (a raw Responses API replay of the history, nothing repaired)."""

    __slots__ = ("target",)
    target: str

    def __init__(self, target: str = "codex") -> None:
        self.assign(target)
