"""OpenCode session stores: `opencode.db` (SQLite) and `opencode export` JSON (see `docs/opencode.md`).

Discovery imports only the sniffers; `store.py` loads when a file matches.
"""

from ..lazy import LazyKind
from .sniff import sniff_db, sniff_export

KINDS = [
    LazyKind("opencode-db", "opencode", sniff_db, f"{__name__}.store:OpencodeDbKind", splits_sessions=True),
    LazyKind("opencode-export", "opencode", sniff_export, f"{__name__}.store:OpencodeExportKind"),
]

__all__ = ["KINDS"]
