"""OpenCode session stores: `opencode.db` (SQLite) and `opencode export` JSON (seed-systems.md §C)."""

from . import checks  # noqa: F401  (registers the OpenCode checks)
from .store import OpencodeDbKind, OpencodeDbStore, OpencodeExportKind, OpencodeExportStore

KINDS = [OpencodeDbKind(), OpencodeExportKind()]

__all__ = ["KINDS", "OpencodeDbKind", "OpencodeDbStore", "OpencodeExportKind", "OpencodeExportStore"]
