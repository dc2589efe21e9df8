"""OpenCode session stores: `opencode.db` (SQLite) and `opencode export` JSON (see `docs/opencode.md`)."""

from .store import OpencodeDbKind, OpencodeDbStore, OpencodeExportKind, OpencodeExportStore

KINDS = [OpencodeDbKind(), OpencodeExportKind()]

__all__ = ["KINDS", "OpencodeDbKind", "OpencodeDbStore", "OpencodeExportKind", "OpencodeExportStore"]
