"""kimi-code agent-core wire journals (`wire.jsonl`), replayed by both engines (v1 and v2); see `docs/kimi-code.md`."""

from .store import KimiKind, KimiStore

KINDS = [KimiKind()]

__all__ = ["KINDS", "KimiKind", "KimiStore"]
