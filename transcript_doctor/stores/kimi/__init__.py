"""kimi-code agent-core wire journals (`wire.jsonl`), replayed by both engines (v1 and v2); see `docs/kimi-code.md`.

Discovery imports only the sniffer; `store.py` (and the replay under it) loads when a file matches.
"""

from ..lazy import LazyKind
from .sniff import sniff_wire

KINDS = [LazyKind("kimi-wire", "kimi", sniff_wire, f"{__name__}.store:KimiKind", jsonl=True)]

__all__ = ["KINDS"]
