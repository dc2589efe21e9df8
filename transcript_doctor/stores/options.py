"""Store-specific option objects, one class per store family, passed in `Options.settings`.

The shared `Options` carries only what every store understands; a flag that one store family
reads lives here and is read by that family with `options.get(...)`. The classes sit outside
the store packages so that a front end can build them without importing any store.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KimiOptions:
    """`engine`: the kimi-code replay engine whose view is checked or printed: auto (both), v1, v2."""

    engine: str = "auto"


@dataclass(frozen=True)
class SqliteOptions:
    """`deep`: SQLite stores run `PRAGMA integrity_check` (every page) instead of `quick_check`."""

    deep: bool = False


@dataclass(frozen=True)
class RowHealOptions:
    """`purge`: a database heal deletes rows instead of deactivating them (Hermes `--purge`)."""

    purge: bool = False


@dataclass(frozen=True)
class CodexOptions:
    """`target`: what Codex rollouts are judged against: `codex` (the request Codex sends, after its
    own repairs) or `responses` (a raw Responses API replay of the history, nothing repaired)."""

    target: str = "codex"
