"""kimi-code agent-core wire journals (`wire.jsonl`), replayed by both engines (v1 and v2)."""

from . import checks  # noqa: F401  (registers the kimi checks)
from .store import KimiKind, KimiStore

KINDS = [KimiKind()]

__all__ = ["KINDS", "KimiKind", "KimiStore"]
