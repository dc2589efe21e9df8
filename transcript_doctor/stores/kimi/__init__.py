"""kimi-code agent-core wire journals (`wire.jsonl`), replayed by both engines (v1 and v2)."""

KINDS: list = []
