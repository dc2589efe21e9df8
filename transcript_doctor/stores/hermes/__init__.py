"""Hermes agent stores: `state.db` (every schema generation v6 … v30) and the session export.

Detection is by content: a SQLite file with Hermes' `sessions`/`messages` tables, or JSONL whose
lines are exported session objects. Importing this package registers the Hermes checks.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...model import Finding
from ...rules.registry import checker
from ..base import Options, Store
from .store import HermesDbKind, HermesExportKind

KINDS = [HermesDbKind(), HermesExportKind()]


@checker("hermes-db")
def check_hermes_db(store: Store, options: Options) -> Iterator[Finding]:
    """Store integrity and schema version, then every session as Hermes would resume it."""
    yield from store.store_findings(options.deep)  # type: ignore[attr-defined]
    yield from store.scan_sessions()  # type: ignore[attr-defined]


@checker("hermes-export")
def check_hermes_export(store: Store, options: Options) -> Iterator[Finding]:
    """Unreadable lines, then every exported session."""
    yield from store.line_findings()  # type: ignore[attr-defined]
    yield from store.scan_sessions()  # type: ignore[attr-defined]
