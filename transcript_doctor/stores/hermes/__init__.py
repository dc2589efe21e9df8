"""Hermes agent stores: `state.db` (every schema generation v6 … v30) and the session export.

Detection is by content: a SQLite file with Hermes' `sessions`/`messages` tables, or JSONL whose
lines are exported session objects. See `docs/hermes.md`.
"""

from __future__ import annotations

from .store import HermesDbKind, HermesExportKind

KINDS = [HermesDbKind(), HermesExportKind()]
