"""Hermes agent stores: `state.db` (every schema generation v6 … v30) and the session export.

Detection is by content: a SQLite file with Hermes' `sessions`/`messages` tables, or JSONL whose
lines are exported session objects. See `docs/hermes.md`. Discovery imports only the sniffers;
`store.py` loads when a file matches.
"""

from __future__ import annotations

from ..lazy import LazyKind
from .sniff import sniff_db, sniff_export

KINDS = [
    LazyKind("hermes-db", "hermes", sniff_db, f"{__name__}.store:HermesDbKind", splits_sessions=True),
    LazyKind("hermes-export", "hermes", sniff_export, f"{__name__}.store:HermesExportKind", jsonl=True),
]
